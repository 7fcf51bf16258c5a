import { type CurrencyCode, formatMinor } from '../../shared/money.js';
import type { DisputeRecord, HistoryRecord } from '../store/records.js';

export { orderView, publicOrderView } from '../orders/order-view.js';

const fmt = (minor: number | null, currency: string) =>
  minor === null ? null : formatMinor(minor, currency as CurrencyCode);

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
