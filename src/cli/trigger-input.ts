import { durationProblem, formatDuration, readDuration } from '../shared/duration.js';
import { type CurrencyCode, currencyExponent, parseMajor } from '../shared/money.js';

/**
 * What the sandbox triggers read from the command line (`npm run cli -- sandbox ...`), checked before
 * anything is asked of the gateway or the database. Pure: each answers a value or the one line an
 * operator reads.
 */

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** The sandbox's own bound on a clock advance or an outage (sandbox-controls.ts): refused here first. */
export const MAX_SANDBOX_SECONDS = 10 * 365 * 86_400;

/** `90s`, `15m`, `2h`, `7d`, `1h30m` -> seconds (shared/duration.ts). A bare number is refused: seconds or minutes? */
export function parseDuration(text: string): Parsed<number> {
  const seconds = readDuration(text);
  if (seconds === null) return { ok: false, message: durationProblem(text) };
  if (seconds === 0) return { ok: false, message: `must be longer than zero (got "${text}")` };
  if (seconds > MAX_SANDBOX_SECONDS)
    return { ok: false, message: `must be at most ten years, the sandbox's limit (got "${text}")` };
  return { ok: true, value: seconds };
}

export { formatDuration };

/**
 * `--amount` of a chargeback, in major units as the sandbox takes it: a positive decimal with at
 * most the currency's exponent of decimals, written as such (`5.000` EUR is refused, not read as
 * 5.00: the operator may have meant another currency). Without a currency (the order not read yet)
 * only the form is checked, so a typo is refused before anything is asked; the value is then null.
 */
export function parseAmount(text: string, currency: CurrencyCode | null): Parsed<number | null> {
  if (!/^\d+(\.\d+)?$/.test(text))
    return {
      ok: false,
      message: `must be a positive amount in major units, such as 5.00 (got "${text}")`,
    };
  if (!/[1-9]/.test(text)) return { ok: false, message: `must be greater than zero (got "${text}")` };
  if (currency === null) return { ok: true, value: null };
  const exponent = currencyExponent(currency);
  const decimals = text.split('.')[1]?.length ?? 0;
  if (decimals > exponent) {
    const rule = exponent === 0 ? 'must be a whole number' : `must have at most ${exponent} decimal places`;
    return { ok: false, message: `${rule} for ${currency}, the order's currency (got "${text}")` };
  }
  const parsed = parseMajor(text, currency);
  return parsed.ok ? { ok: true, value: parsed.minor } : { ok: false, message: parsed.message };
}

export const SETTLE_OUTCOMES = ['paid', 'failed', 'cancelled'] as const;
export type SettleOutcome = (typeof SETTLE_OUTCOMES)[number];

export function parseOutcome(text: string): Parsed<SettleOutcome> {
  return (SETTLE_OUTCOMES as readonly string[]).includes(text)
    ? { ok: true, value: text as SettleOutcome }
    : { ok: false, message: `must be paid, failed or cancelled (got "${text}")` };
}

/** `--wait`: how long to watch the order for the change, whole seconds from 0 to 60. */
export function parseWait(text: string): Parsed<number> {
  const n = Number(text);
  return /^\d{1,2}$/.test(text) && n <= 60
    ? { ok: true, value: n }
    : { ok: false, message: `must be a whole number of seconds from 0 to 60 (got "${text}")` };
}

/** What `settle` was given: the kit's order id, or the gateway's session id. */
export function settleTarget(id: string): { kind: 'order' | 'session'; id: string } {
  return { kind: id.startsWith('ps_') ? 'session' : 'order', id };
}
