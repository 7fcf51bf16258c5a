import { effectiveStatus } from './domain/three-ds.js';
import type { GatewayDeps } from './state.js';

export interface TickReport {
  now: string;
  challenges_expired: number;
}

/**
 * Everything due at the current sandbox clock, run synchronously (sandbox.md section 10, tick):
 * challenges that timed out become `failed`; idempotency keys and rate windows past their time go.
 */
export function runDueWork(deps: GatewayDeps): TickReport {
  const { state } = deps;
  const now = deps.clock.now();
  let challengesExpired = 0;
  for (const v of state.verifications.values()) {
    if (v.status === 'pending' && effectiveStatus(v, now) === 'failed') {
      v.status = 'failed';
      v.updatedAt = now;
      challengesExpired++;
    }
  }
  state.idempotency.prune(now);
  state.apiRate.prune(now);
  state.pageRate.prune(now);
  return { now: new Date(now).toISOString(), challenges_expired: challengesExpired };
}
