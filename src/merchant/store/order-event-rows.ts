import { type RandomSource, randomId } from '../../shared/ids.js';
import { type OrderEventType, orderEventsOf } from '../orders/order-events.js';
import { orderView } from '../views/order-view.js';
import type { AttemptRecord, OrderRecord } from './records.js';

/** The body of an order event, as sent (Standard Webhooks' recommended shape: type, timestamp, data). */
export function orderEventPayload(
  type: OrderEventType,
  at: Date,
  order: OrderRecord,
  attempt: AttemptRecord | null,
) {
  return { type, timestamp: at.toISOString(), data: { order: orderView(order, attempt) } };
}

/**
 * The outbox rows one order change writes, in the change's own transaction (issue 20): one per event
 * `orderEventsOf` finds, with the order as it is after the change. `attempt` is the order's current
 * attempt (its payment, its deadline).
 */
export function orderEventRows(
  before: OrderRecord,
  after: OrderRecord,
  attempt: AttemptRecord | null,
  at: Date,
  random: RandomSource,
) {
  return orderEventsOf(before, after).map((type) => ({
    id: randomId('oev_', random),
    order_id: after.id,
    type,
    payload: JSON.stringify(orderEventPayload(type, at, after, attempt)),
    created_at: at,
  }));
}
