import type { OrderStatus } from './status.js';
import { OPEN } from './status.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * When an open order is asked about again, counted from its last change (merchant.md, Background
 * work): after 2, 5, 15, 30 and 60 minutes, then every hour to a day, then every day to 30 days. A
 * payment the gateway finishes without telling us (no webhook) is found within about two minutes;
 * one that stays open costs 57 polls over a month.
 */
export const POLL_OFFSETS_MS: readonly number[] = [
  2 * MINUTE,
  5 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  ...Array.from({ length: 24 }, (_, i) => (i + 1) * HOUR),
  ...Array.from({ length: 29 }, (_, i) => (i + 2) * DAY),
];

/** The last poll of the schedule: an order still open after it is flagged for a person. */
export const POLL_HORIZON_MS = POLL_OFFSETS_MS.at(-1)!;

/** How long after a session's `expires_at` it is asked about: the gateway expires it on its own tick. */
export const AFTER_EXPIRY_MS = 5_000;

/**
 * The next time to poll an order last changed at `changedAt`, seen at `now`: the first point of the
 * schedule still ahead, or right after its session expires if that comes first. Null: the schedule
 * is over (30 days without a change). Pure.
 */
export function nextPollAt(
  changedAt: number,
  now: number,
  sessionExpiresAt: number | null = null,
): number | null {
  const next = POLL_OFFSETS_MS.map((offset) => changedAt + offset).find((at) => at > now) ?? null;
  const expiry = sessionExpiresAt === null ? null : sessionExpiresAt + AFTER_EXPIRY_MS;
  if (expiry !== null && expiry > now && (next === null || expiry < next)) return expiry;
  return next;
}

/**
 * What the poller watches: open payments, and captured money the gateway can still refund or charge
 * back without the kit (from its dashboard, say). Voided, failed, cancelled and expired are dead ends;
 * refunded and disputed are settled by people, and their events are still recovered.
 */
export const POLLED: readonly OrderStatus[] = [...OPEN, 'paid', 'partially_refunded'];

/** Whether the gateway may still move this order and there is something there to ask about. */
export function pollable(
  status: OrderStatus,
  attempt: { gateway_transaction_id: string | null; payment_session_id: string | null } | null,
): boolean {
  return (
    POLLED.includes(status) &&
    attempt !== null &&
    (attempt.gateway_transaction_id !== null || attempt.payment_session_id !== null)
  );
}

/**
 * Whether an order the schedule is done with (30 days without a change) needs a person: a payment
 * still open does (an auth never captured, a payment never confirmed); paid money at rest does not.
 */
export function unsettledWhenSilent(status: OrderStatus): boolean {
  return OPEN.includes(status);
}
