import { z } from 'zod';
import { durationProblem, readDuration } from './shared/duration.js';

/* ORDER_TTL, read: no environment here (config.ts reads it); in a module of its own, as job-schedules.ts. */

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
/** The default: a day. */
export const DEFAULT_ORDER_TTL_MS = DAY_MS;

/**
 * ORDER_TTL, in the kit's duration format (`90s`, `15m`, `24h`, `7d`, `1h30m`): how old an order with
 * no money and no payment in flight may grow before the kit closes it (`expired`); `off`: never.
 * Returns milliseconds, null for `off`, or what is wrong with the text.
 */
export function parseOrderTtl(text: string): { ms: number | null } | { problem: string } {
  if (text.trim() === 'off') return { ms: null };
  const seconds = readDuration(text);
  if (seconds === null) return { problem: `${durationProblem(text)}, or off` };
  const ms = seconds * 1000;
  if (ms < MINUTE_MS || ms > 365 * DAY_MS)
    return { problem: `must be from 1m to 365d, or off (got "${text}")` };
  return { ms };
}

/** The setting's zod schema: milliseconds, or null for `off`. */
export const orderTtlSetting = z
  .string()
  .transform((v, ctx): number | null => {
    const parsed = parseOrderTtl(v);
    if ('ms' in parsed) return parsed.ms;
    ctx.addIssue({ code: 'custom', message: parsed.problem });
    return z.NEVER;
  })
  .default(DEFAULT_ORDER_TTL_MS);
