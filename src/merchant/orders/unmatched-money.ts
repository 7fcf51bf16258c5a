import { type CurrencyCode, formatMoney, isCurrencyCode } from '../../shared/money.js';
import { type AttemptFacts, type PaymentState, paymentStep } from './decide.js';
import {
  isFinding,
  type Observation,
  type TransactionFact,
  type TransactionObservation,
} from './observation.js';
import type { OrderStatus } from './status.js';

/**
 * Gateway money with no order (issue 19, part 1): the pure rules. What counts as such money, the
 * reason an order is flagged with, what one more record of a kept transaction does to its payment
 * (decide's rule, issue 44), and whether an operator may attach it to an order.
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

/**
 * The payment a kept transaction stands for, as an attempt would hold it: a sale or an auth is its
 * own payment; a capture, refund or void is read as news of its parent, as an order reads its
 * payment's children (decide's interpret).
 */
function standIn(t: TransactionFact, state: PaymentState): AttemptFacts {
  return { kind: 'card', sale: t.type === 'sale', transactionId: t.relatedId ?? t.id, current: true, state };
}

/** What a kept transaction's row becomes with one more record of it. */
export interface KeptNews {
  /** Its payment, by decide's rules: what was captured, refunded and charged back, and when. */
  payment: PaymentState;
  /** Whether the record's facts (status, amounts) replace the kept ones: unless it is older news. */
  replaces: boolean;
}

/**
 * One more record of a kept transaction (issue 44): its payment moves by the same pure rule as an
 * order's (decide's paymentStep), so a chargeback carries its amount, its reversal (the record
 * captured again, later by the gateway's time) gives it back, and whatever order the records arrive
 * in, the row ends as the gateway's latest word. Older news (an earlier stage, a smaller refund total,
 * an earlier time) changes nothing; a status the kit does not know, or one that cannot follow what is
 * known, is kept as the gateway's word unless it is earlier by the gateway's time, and leaves the
 * money as it was (an order would be flagged; this money waits for a person already). `kept`:
 * INITIAL_PAYMENT for a transaction seen first.
 */
export function keptAfter(kept: PaymentState, t: TransactionFact): KeptNews {
  // Only the record counts: where it came from changes nothing of what it says.
  const obs: TransactionObservation = { source: 'webhook', sourceId: t.id, observedAt: 0, transaction: t };
  const step = paymentStep(standIn(t, kept), obs, t.amountMinor);
  if (step.kind === 'next') return { payment: step.next, replaces: !step.stale };
  const older = typeof t.updatedAt === 'number' && kept.moneyAt !== null && t.updatedAt < kept.moneyAt;
  return { payment: kept, replaces: !older };
}

/** What a kept row says of its payment (the columns of `unmatched_money`, as its record has them). */
export interface KeptPaymentColumns {
  transaction_id: string;
  transaction_type: string;
  payment_status: OrderStatus;
  captured_minor: number | null;
  refunded_minor: number;
  disputed_minor: number;
  money_at: Date | null;
}

/**
 * A row's payment as decide's state, with the capture's id when the row is a capture whose amount is
 * known (a capture's record names itself; decide reads a second one as a double capture).
 */
export function keptPayment(row: KeptPaymentColumns): PaymentState {
  return {
    status: row.payment_status,
    capturedMinor: row.captured_minor,
    refundedMinor: row.refunded_minor,
    captureId: row.transaction_type === 'capture' && row.captured_minor !== null ? row.transaction_id : null,
    moneyAt: row.money_at?.getTime() ?? null,
    disputedMinor: row.disputed_minor,
  };
}

/** A payment's state as a row's columns: keptPayment's inverse. */
export function paymentColumns(
  p: PaymentState,
): Omit<KeptPaymentColumns, 'transaction_id' | 'transaction_type'> {
  return {
    payment_status: p.status,
    captured_minor: p.capturedMinor,
    refunded_minor: p.refundedMinor,
    disputed_minor: p.disputedMinor,
    money_at: p.moneyAt === null ? null : new Date(p.moneyAt),
  };
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
