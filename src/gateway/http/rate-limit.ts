import type { Context, Next } from 'koa';
import type { Clock } from '../../shared/clock.js';
import type { RateWindows } from '../domain/rate-window.js';
import { principalOf, rateLimited } from './auth.js';

/** Counts a request against `windows` under the caller `callerOf` names; delays or refuses it. */
export function rateLimit(
  windows: RateWindows,
  clock: Clock,
  sleep: (ms: number) => Promise<void>,
  callerOf: (ctx: Context) => string,
) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const decision = windows.admit(callerOf(ctx), clock.now());
    ctx.state.rateRemaining = decision.remaining;
    if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds);
    if (decision.delayMs > 0) await sleep(decision.delayMs);
    await next();
  };
}

export const byApiKey = (ctx: Context): string => principalOf(ctx).key;
export const byIp = (ctx: Context): string => ctx.ip;
