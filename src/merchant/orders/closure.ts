import type { Decision, OrderFacts } from './decide.js';
import { type CloseReason, type OrderStatus, RETRYABLE, WITH_MONEY } from './status.js';

/*
 * Orders that end (issue 43, part 2): the rules of an order's closing, pure. A closed order takes no
 * payment attempt; what its payments still do at the gateway is applied, and money wins over the
 * closing: the order shows the money and is flagged for a person.
 */

const withMoney = (status: OrderStatus) => WITH_MONEY.includes(status);

/**
 * What `decide`'s verdict on an observation becomes when the order is closed. Without money the order
 * stays `closed`, whatever its payment does (an expired session, a void landing late). Money reaching
 * it (a session paid at the last second, an auth, a capture attached by an operator) is applied, and
 * the order flagged: the shop sold nothing it knows of, and a person ships or refunds. Once money won,
 * the usual rules hold; money let go again (a void) closes it again.
 */
export function afterClose(order: OrderFacts, decision: Decision): Decision {
  if (!order.closedReason) return decision;
  if (!withMoney(decision.orderStatus))
    return decision.orderStatus === 'closed' ? decision : { ...decision, orderStatus: 'closed' };
  if (withMoney(order.status)) return decision;
  const reason = `${decision.orderStatus} after the order was closed (${order.closedReason})`;
  return {
    ...decision,
    outcome: 'flagged',
    review: decision.review ? `${decision.review}; ${reason}` : reason,
    note: decision.note ? `${decision.note}; ${reason}` : reason,
  };
}

/** Whether an order may be closed now: `already` closed, `money` held or moved (never closed), or `close`. */
export function closing(order: { status: OrderStatus; closedReason: CloseReason | null }) {
  if (order.status === 'closed') return 'already' as const;
  if (withMoney(order.status)) return 'money' as const;
  return 'close' as const;
}

/** What the closing rules read of an order's current payment attempt. */
export interface AttemptState {
  /** The attempt's own status (`decide`'s). */
  status: OrderStatus;
  /** It holds a transaction or a payment session the gateway can be asked about. */
  atGateway: boolean;
  /** A 3DS challenge holds its card data (sealed), or the hold's end is not handled yet. */
  challengeOpen: boolean;
}

/** Attempt statuses where a payment may still be under way. */
const UNDER_WAY: readonly OrderStatus[] = ['pending', 'requires_action'];

/**
 * What a cancel does (POST /orders/{id}/cancel): a paid order is refused (`paid`: it is refunded
 * instead), an authorised one is `void`ed first, one whose payment is at the gateway and may be under
 * way is asked about first (`ask`: money wins), then it is closed. Asked already (`asked`), a payment
 * the gateway still has open (a hosted page the shopper has not left) does not hold the cancel up:
 * should it be paid after all, the money is applied and flagged (afterClose).
 */
export function cancelStep(
  order: { status: OrderStatus; closedReason: CloseReason | null },
  attempt: AttemptState | null,
  asked = false,
): 'already' | 'paid' | 'void' | 'ask' | 'close' {
  const verdict = closing(order);
  if (verdict === 'already') return 'already';
  if (order.status === 'authorized') return 'void';
  if (verdict === 'money') return 'paid';
  if (!asked && attempt && UNDER_WAY.includes(attempt.status) && attempt.atGateway) return 'ask';
  return 'close';
}

/** What ORDER_TTL reads of an order. */
export interface ExpiryFacts {
  status: OrderStatus;
  closedReason: CloseReason | null;
  /** When the order was made (ms): its age counts from here. */
  createdAt: number;
  /** Its current payment attempt; null when it has none. */
  attempt: AttemptState | null;
  /**
   * Until when something keeps the order open whatever its age (ms; null: nothing), such as a live
   * payment link (issue 43, part 3).
   */
  heldUntil?: number | null;
}

/** Why ORDER_TTL leaves an order open now. */
export type KeptBecause =
  /** ORDER_TTL is off. */
  | 'off'
  | 'closed'
  /** Money is held or moved, or the payment ended another way (voided): not the clock's to end. */
  | 'settled'
  | 'young'
  /** Something keeps it open (heldUntil). */
  | 'held'
  /** The gateway, asked, says the payment is still open: the next run asks again. */
  | 'in_flight'
  /** A 3DS challenge holds card data: the holds job ends it within 15 minutes, then it may close. */
  | 'challenge'
  /** An attempt with nothing at the gateway the kit knows of, not yet ended (cut-off's to end first). */
  | 'unsettled';

export type ExpiryVerdict = { kind: 'close' } | { kind: 'ask' } | { kind: 'keep'; because: KeptBecause };

/**
 * ORDER_TTL's rule: an order with no money and no payment in flight ends (`expired`) once older than
 * `ttlMs` (null: never). One whose payment is at the gateway and may be under way (a session open, a
 * transaction pending) is asked about first (`ask`); once asked (`asked`), still open is `in_flight`
 * and kept, and what the answer applied decides (money wins over the clock). Pure: the job reads the
 * facts, asks, and closes.
 */
export function expiryVerdict(
  order: ExpiryFacts,
  now: number,
  ttlMs: number | null,
  asked = false,
): ExpiryVerdict {
  const keep = (because: KeptBecause): ExpiryVerdict => ({ kind: 'keep', because });
  if (ttlMs === null) return keep('off');
  if (order.status === 'closed') return keep('closed');
  if (!RETRYABLE.includes(order.status)) return keep('settled');
  if (now - order.createdAt < ttlMs) return keep('young');
  if (order.heldUntil != null && order.heldUntil > now) return keep('held');
  const attempt = order.attempt;
  if (attempt && UNDER_WAY.includes(attempt.status)) {
    if (attempt.atGateway) return asked ? keep('in_flight') : { kind: 'ask' };
    return keep(attempt.challengeOpen ? 'challenge' : 'unsettled');
  }
  return { kind: 'close' };
}
