import type { DeliveryReport } from '../delivery/dispatcher.js';
import type { GatewayDeps } from '../deps.js';
import { effectiveStatus } from '../domain/three-ds.js';
import { lapseDueAuths } from './auth-lapses.js';
import { expireDueSessions } from './session-moves.js';

export interface TickReport extends DeliveryReport {
  now: string;
  challenges_expired: number;
  sessions_expired: number;
  auths_lapsed: number;
  events_pruned: number;
}

/**
 * Everything due at the current sandbox clock (sandbox.md section 10, tick): challenges and sessions
 * that timed out, auths that lapsed (section 11), webhook attempts and replays, and the pruning of what outlived its window.
 */
export async function runDueWork(deps: GatewayDeps): Promise<TickReport> {
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
  const sessionsExpired = expireDueSessions(deps);
  const authsLapsed = lapseDueAuths(deps);
  const eventsPruned = state.webhooks.prune(now);
  state.idempotency.prune(now);
  state.apiRate.prune(now);
  state.pageRate.prune(now);
  for (const [merchantId, until] of state.outages) if (until <= now) state.outages.delete(merchantId);
  const delivery = await deps.dispatcher.deliverDue();
  return {
    now: new Date(now).toISOString(),
    challenges_expired: challengesExpired,
    sessions_expired: sessionsExpired,
    auths_lapsed: authsLapsed,
    events_pruned: eventsPruned,
    ...delivery,
  };
}
