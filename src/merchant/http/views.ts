import { type CurrencyCode, formatMinor } from '../../shared/money.js';
import type { AttemptRecord, DisputeRecord, HistoryRecord, OrderRecord } from '../store/records.js';

const fmt = (minor: number | null, currency: string) =>
  minor === null ? null : formatMinor(minor, currency as CurrencyCode);

/** An order as the storefront and operators see it: minor units with the formatted amount beside. */
export function orderView(order: OrderRecord, attempt?: AttemptRecord | null) {
  return {
    id: order.id,
    reference: order.reference,
    status: order.status,
    amount: order.amount_minor,
    amount_formatted: fmt(order.amount_minor, order.currency),
    currency: order.currency,
    description: order.description,
    customer: order.customer,
    captured_amount: order.captured_minor,
    captured_amount_formatted: fmt(order.captured_minor, order.currency),
    refunded_amount: order.refunded_minor,
    refunded_amount_formatted: fmt(order.refunded_minor, order.currency),
    disputed_amount: order.disputed_minor,
    disputed_amount_formatted: fmt(order.disputed_minor, order.currency),
    failure_code: order.failure_code,
    needs_review: order.needs_review,
    review_reason: order.review_reason,
    // An authorisation lapses unless captured or voided by then (sandbox.md section 11).
    capture_before: order.status === 'authorized' ? (attempt?.capture_before?.toISOString() ?? null) : null,
    payment: attempt
      ? {
          attempt_id: attempt.id,
          kind: attempt.kind,
          mode: attempt.mode,
          payment_method: attempt.payment_method,
          gateway_transaction_id: attempt.gateway_transaction_id,
          payment_session_id: attempt.payment_session_id,
        }
      : null,
    created_at: order.created_at.toISOString(),
    updated_at: order.updated_at.toISOString(),
  };
}

/** A dispute record, as operators and finance see it (issue 19). */
export function disputeView(d: DisputeRecord) {
  return {
    id: d.id,
    order_id: d.order_id,
    gateway_transaction_id: d.transaction_id,
    amount: d.amount_minor,
    amount_formatted: fmt(d.amount_minor, d.currency),
    currency: d.currency,
    outcome: d.outcome,
    opened_at: d.opened_at.toISOString(),
    closed_at: d.closed_at?.toISOString() ?? null,
    closed_by: d.closed_by,
    note: d.note,
  };
}

export function historyView(h: HistoryRecord) {
  return {
    source: h.source,
    source_id: h.source_id,
    status_before: h.status_before,
    status_after: h.status_after,
    outcome: h.outcome,
    detail: h.detail,
    at: h.created_at.toISOString(),
  };
}
