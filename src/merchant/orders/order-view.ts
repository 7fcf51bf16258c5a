import { type CurrencyCode, formatMinor } from '../../shared/money.js';
import type { OrderEventType } from './order-events.js';
import type { CloseReason, OrderStatus } from './status.js';

/**
 * What the views read of an order and of its current attempt: named here, so that the views (and the
 * order events' body built from them) are pure rules beside the order's others, with no arrow up to
 * the store. The store's records have these fields and more.
 */
export interface ViewedOrder {
  id: string;
  /** The gateway merchant it is for (platform mode); null: the key's own account, its id unknown. */
  merchant_id: number | null;
  reference: string;
  status: OrderStatus;
  amount_minor: number;
  currency: string;
  captured_minor: number | null;
  refunded_minor: number;
  disputed_minor: number;
  description: string | null;
  customer: Record<string, unknown> | null;
  failure_code: string | null;
  needs_review: boolean;
  review_reason: string | null;
  closed_reason: CloseReason | null;
  closed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface ViewedAttempt {
  id: string;
  kind: 'card' | 'redirect';
  mode: 'sale' | 'auth' | null;
  payment_method: string | null;
  saved_card_id: string | null;
  gateway_transaction_id: string | null;
  payment_session_id: string | null;
  action_url: string | null;
  capture_before: Date | null;
}

const fmt = (minor: number | null, currency: string) =>
  minor === null ? null : formatMinor(minor, currency as CurrencyCode);

/** What both views show of the money: minor units, each with its formatted amount beside. */
function amounts(order: ViewedOrder) {
  return {
    amount: order.amount_minor,
    amount_formatted: fmt(order.amount_minor, order.currency),
    currency: order.currency,
    captured_amount: order.captured_minor,
    captured_amount_formatted: fmt(order.captured_minor, order.currency),
    refunded_amount: order.refunded_minor,
    refunded_amount_formatted: fmt(order.refunded_minor, order.currency),
    disputed_amount: order.disputed_minor,
    disputed_amount_formatted: fmt(order.disputed_minor, order.currency),
  };
}

/**
 * An order as the operators and the shop's server see it (the operator routes, `GET /orders/{id}` with a
 * reader's token, `POST /orders`, the body of the order events sent to the shop): everything, in minor
 * units with the formatted amount beside.
 */
export function orderView(order: ViewedOrder, attempt?: ViewedAttempt | null) {
  return {
    id: order.id,
    merchant_id: order.merchant_id,
    reference: order.reference,
    status: order.status,
    ...amounts(order),
    description: order.description,
    customer: order.customer,
    failure_code: order.failure_code,
    needs_review: order.needs_review,
    review_reason: order.review_reason,
    closed_reason: order.closed_reason,
    closed_at: order.closed_at?.toISOString() ?? null,
    // An authorisation lapses unless captured or voided by then (sandbox.md section 11).
    capture_before: order.status === 'authorized' ? (attempt?.capture_before?.toISOString() ?? null) : null,
    payment: attempt
      ? {
          attempt_id: attempt.id,
          kind: attempt.kind,
          mode: attempt.mode,
          payment_method: attempt.payment_method,
          saved_card_id: attempt.saved_card_id,
          gateway_transaction_id: attempt.gateway_transaction_id,
          payment_session_id: attempt.payment_session_id,
        }
      : null,
    created_at: order.created_at.toISOString(),
    updated_at: order.updated_at.toISOString(),
  };
}

/**
 * An order as anyone holding its id sees it (the storefront's `GET /orders/{id}` without a token, the
 * payment answers): where it stands, its amounts and what the shopper does next; nothing of who pays,
 * why a payment failed or what the kit thinks of it. Named field by field: a column added to orders
 * stays out of here until someone decides that it belongs.
 */
export function publicOrderView(order: ViewedOrder, attempt?: ViewedAttempt | null) {
  return {
    id: order.id,
    reference: order.reference,
    status: order.status,
    // Why it ended, once it did: the shop shows an expired order another way than a cancelled one.
    closed_reason: order.closed_reason,
    ...amounts(order),
    next_action: nextAction(order, attempt),
    updated_at: order.updated_at.toISOString(),
  };
}

/**
 * Where to send the shopper: the page the current attempt waits on them at (the 3DS challenge, the
 * hosted checkout), while the order waits on them; else null.
 */
export function nextAction(order: ViewedOrder, attempt?: ViewedAttempt | null) {
  return order.status === 'requires_action' && attempt?.action_url
    ? { type: 'redirect' as const, url: attempt.action_url }
    : null;
}

/** The body of an order event, as sent (Standard Webhooks' recommended shape: type, timestamp, data). */
export function orderEventPayload(
  type: OrderEventType,
  at: Date,
  order: ViewedOrder,
  attempt: ViewedAttempt | null,
) {
  return { type, timestamp: at.toISOString(), data: { order: orderView(order, attempt) } };
}
