import type { Transaction } from './transactions.js';

/**
 * sandbox.md section 11, Authorisation lifetime: an `auth` neither captured nor voided
 * `auth_lifetime_s` of sandbox clock after its creation lapses (`cancelled`, `transaction.cancelled`,
 * its reference released). Its record carries `capture_before`; every other record carries null.
 */

/** The published default: 7 days. */
export const DEFAULT_AUTH_LIFETIME_S = 7 * 24 * 60 * 60;

export const LAPSED_REASON = 'The authorisation lapsed: it was neither captured nor voided in time.';

/**
 * When a record must be captured or voided by: the creation time plus the lifetime for an approved
 * auth (one recorded `auth`, or since captured, voided, refunded or charged back), null for any other
 * record, a declined or risk-cancelled auth included.
 */
export function captureDeadline(
  t: Pick<Transaction, 'type' | 'status' | 'createdAt'>,
  lifetimeMs: number,
): number | null {
  if (t.type !== 'auth' || t.status === 'failed' || t.status === 'cancelled') return null;
  return t.createdAt + lifetimeMs;
}

/** Whether an auth's deadline has come: from that instant on it can no longer be captured or voided. */
export function pastDeadline(t: Pick<Transaction, 'captureBefore'>, now: number): boolean {
  return t.captureBefore !== null && now >= t.captureBefore;
}

/** An open auth whose deadline has come, cancelled; null when it is not one (not open, or not due). */
export function lapsed(t: Transaction, now: number): Transaction | null {
  if (t.type !== 'auth' || t.status !== 'auth' || !pastDeadline(t, now)) return null;
  return { ...t, status: 'cancelled', statusReason: LAPSED_REASON, updatedAt: now };
}
