import { type CurrencyCode, formatMoney, isCurrencyCode } from '../../shared/money.js';
import {
  isFinding,
  type Observation,
  type TransactionFact,
  type TransactionObservation,
} from './observation.js';
import type { OrderStatus } from './status.js';

/**
 * Gateway money with no order (issue 19, part 1): the pure rules. What counts as such money, the
 * reason an order is flagged with, which of two readings of one transaction is the furthest, and
 * whether an operator may attach it to an order.
 */

/**
 * Whether an observation that matched no attempt is money the kit does not hold: a gateway
 * transaction record found by its ids (every record names an amount and a currency). One the kit
 * asked about for an attempt (`about`) is not: that attempt exists, and it declined to take the
 * payment (a superseded attempt asked to adopt one, About.adopt).
 */
export function isMoneyWithNoAttempt(obs: Observation): obs is TransactionObservation {
  return !isFinding(obs) && obs.about === undefined;
}

/** An amount in words: `1.00 EUR`, or minor units when the currency is not one we know. */
export function amountInWords(minor: number, currency: string): string {
  return isCurrencyCode(currency)
    ? formatMoney(minor, currency as CurrencyCode)
    : `${minor} (minor units) ${currency}`;
}

/**
 * The review reason of the order that carries the money's reference: one per transaction and status,
 * so the same news again adds nothing (decide flags once per reason) and a later status is news.
 */
export function noAttemptReason(t: TransactionFact): string {
  const what =
    t.relatedId === null ? `transaction ${t.id}` : `transaction ${t.id} (${t.type} of ${t.relatedId})`;
  return `gateway money with no attempt: ${what} ${t.status} ${amountInWords(t.amountMinor, t.currency)}`;
}

/** How far a gateway transaction has gone: a reading of lower rank is older news. Unknown: -1. */
const RANK: Record<string, number> = {
  pending: 0,
  auth: 1,
  captured: 2,
  failed: 2,
  cancelled: 2,
  voided: 2,
  refunded: 3,
  // A reversed chargeback (captured again, sandbox.md section 11) reads as older news here: telling
  // it from a late copy of the capture needs the event's type, which part 2 of issue 19 brings.
  chargeback: 4,
};

/** What one reading of a transaction says, as a kept row holds it. */
export interface TransactionReading {
  status: string;
  refundedMinor: number;
}

/**
 * Whether `incoming` replaces what is kept of the same transaction: unless it is older news (an
 * earlier status, a smaller running refund total), the last word wins. Events arrive in any order; the
 * row must show the furthest, as an order does. A status we do not know is never taken for older.
 */
export function supersedes(kept: TransactionReading, incoming: TransactionReading): boolean {
  if (incoming.refundedMinor < kept.refundedMinor) return false;
  const a = RANK[kept.status];
  const b = RANK[incoming.status];
  if (a === undefined || b === undefined) return true;
  return b >= a;
}

/** The money as an attach sees it. */
export interface MoneyFacts {
  transactionId: string;
  relatedId: string | null;
  type: string;
  currency: string;
}

/** The order an operator names, and its current attempt (null: it has none). */
export interface AttachTarget {
  order: { status: OrderStatus; currency: string };
  attempt: { status: OrderStatus; transactionId: string | null } | null;
}

/** Statuses of an attempt that has ended: a new attempt may take the payment over. */
const ENDED: readonly OrderStatus[] = ['failed', 'cancelled', 'expired'];

export type AttachPlan =
  /** The payment itself (a sale or an auth): the order's current attempt adopts it, or a new attempt does. */
  | { kind: 'adopt'; newAttempt: boolean }
  /** A capture, refund, void or chargeback of the payment the order's current attempt holds. */
  | { kind: 'child' }
  | {
      kind: 'refused';
      /** 409: the order holds another payment; 422: the input does not fit. */
      status: 409 | 422;
      code: 'ORDER_HAS_PAYMENT' | 'VALIDATION_FAILED';
      message: string;
    };

/**
 * Whether money may be attached to an order, and how (the operator's attach, issue 19): never to an
 * order in another currency, never over a payment the order already holds. A payment goes to the
 * current attempt when it holds none, or to a new attempt when the order has none or its attempt
 * ended (as a shopper's new try would); a child of a payment goes where its parent is.
 */
export function attachPlan(money: MoneyFacts, target: AttachTarget): AttachPlan {
  const refuse = (status: 409 | 422, message: string): AttachPlan => ({
    kind: 'refused',
    status,
    code: status === 409 ? 'ORDER_HAS_PAYMENT' : 'VALIDATION_FAILED',
    message,
  });
  const { order, attempt } = target;
  if (money.currency !== order.currency)
    return refuse(422, `is an order in ${order.currency}; this money is in ${money.currency}`);
  if (money.relatedId !== null) {
    if (attempt?.transactionId === money.relatedId) return { kind: 'child' };
    return refuse(
      422,
      `does not hold transaction ${money.relatedId}, of which this ${money.type} is part: attach that payment first`,
    );
  }
  if (!attempt) return { kind: 'adopt', newAttempt: true };
  if (attempt.transactionId === null || attempt.transactionId === money.transactionId)
    return { kind: 'adopt', newAttempt: false };
  if (ENDED.includes(attempt.status)) return { kind: 'adopt', newAttempt: true };
  return refuse(409, `already holds payment ${attempt.transactionId} (${attempt.status})`);
}
