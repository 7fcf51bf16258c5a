import { INITIAL_PAYMENT } from '../orders/decide.js';
import type { AttemptRecord, OrderRecord } from './records.js';

/*
 * An attempt's rows, as pure values: the row a new attempt starts with, and what of its order it
 * resets, which withdrawing it restores. The order store writes them through the one writer; the
 * in-memory store of the unit tests makes the same rows from here.
 */

/** What an order was before an attempt started: what withdrawing the attempt restores. */
export type OrderBeforeAttempt = Pick<
  OrderRecord,
  | 'status'
  | 'current_attempt_id'
  | 'failure_code'
  | 'captured_minor'
  | 'refunded_minor'
  | 'disputed_minor'
  | 'next_poll_at'
>;

/** What starting an attempt asks for. */
export interface AttemptStart {
  kind: 'card' | 'redirect';
  mode?: 'sale' | 'auth';
  paymentMethod?: string;
  /** The saved card that pays (`card_...`). */
  savedCardId?: string;
  /** The cap on failed attempts (docs/api.md, Limits): reached, TooManyAttempts and nothing starts. */
  maxFailedAttempts?: number | null;
  /** What the history line says of it beyond its kind: the saved card that pays, say. */
  detail?: string;
  /**
   * It takes over money the gateway already holds (an operator attaching it): a closed order takes
   * it too, and stays closed until the money is applied (statusOnNewAttempt).
   */
  adopting?: boolean;
}

export interface AttemptStarted {
  order: OrderRecord;
  attempt: AttemptRecord;
  previous: OrderBeforeAttempt;
  /** Earlier attempts whose 3DS challenge can no longer finish: their held card data is erased. */
  replacedChallenges: string[];
}

/** A new attempt's row: nothing at the gateway yet. */
export function newAttempt(id: string, orderId: string, input: AttemptStart, now: Date): AttemptRecord {
  return {
    id,
    order_id: orderId,
    kind: input.kind,
    mode: input.mode ?? null,
    payment_method: input.paymentMethod ?? null,
    saved_card_id: input.savedCardId ?? null,
    gateway_transaction_id: null,
    payment_session_id: null,
    verification_id: null,
    status: INITIAL_PAYMENT.status,
    captured_minor: null,
    refunded_minor: 0,
    disputed_minor: 0,
    capture_id: null,
    failure_code: null,
    session_expires_at: null,
    action_url: null,
    capture_before: null,
    money_at: null,
    gateway_status: null,
    gateway_amount_minor: null,
    gateway_currency: null,
    gateway_captured_minor: null,
    gateway_refunded_minor: null,
    observed_at: null,
    observed_source: null,
    created_at: now,
    updated_at: now,
  };
}

/** What of an order a new attempt resets: what withdrawing the attempt restores. */
export function beforeAttempt(order: OrderRecord): OrderBeforeAttempt {
  return {
    status: order.status,
    current_attempt_id: order.current_attempt_id,
    failure_code: order.failure_code,
    captured_minor: order.captured_minor,
    refunded_minor: order.refunded_minor,
    disputed_minor: order.disputed_minor,
    next_poll_at: order.next_poll_at,
  };
}
