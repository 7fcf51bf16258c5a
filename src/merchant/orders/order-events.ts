import type { OrderStatus } from './status.js';

/** What the rest of the shop is told of an order (issue 20): the kit's outbound events. */
export const ORDER_EVENT_TYPES = [
  'order.authorized',
  'order.paid',
  'order.partially_refunded',
  'order.refunded',
  'order.voided',
  'order.failed',
  'order.cancelled',
  'order.expired',
  'order.disputed',
  'order.dispute_won',
  'order.needs_review',
  /** The order ended (issue 43, part 2): `closed_reason` says why; it takes no more payments. */
  'order.closed',
] as const;
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

/** What of an order an event is decided on. */
export interface OrderMoment {
  status: OrderStatus;
  refunded_minor: number;
  needs_review: boolean;
  review_reason: string | null;
}

const ON_STATUS: Partial<Record<OrderStatus, OrderEventType>> = {
  authorized: 'order.authorized',
  paid: 'order.paid',
  partially_refunded: 'order.partially_refunded',
  refunded: 'order.refunded',
  voided: 'order.voided',
  failed: 'order.failed',
  cancelled: 'order.cancelled',
  expired: 'order.expired',
  disputed: 'order.disputed',
  closed: 'order.closed',
};

const REFUNDED: readonly OrderStatus[] = ['paid', 'partially_refunded', 'refunded'];

/**
 * The events one change of an order makes, in order. Pure. A new status is its event; the way back
 * from disputed to paid (a chargeback reversed) is `order.dispute_won`; a second partial refund is
 * `order.partially_refunded` again (the amount moved, the status did not); a new review reason is
 * `order.needs_review`. Going back to pending (a new attempt) tells the shop nothing.
 */
export function orderEventsOf(before: OrderMoment, after: OrderMoment): OrderEventType[] {
  const events: OrderEventType[] = [];
  if (after.status !== before.status) {
    if (before.status === 'disputed' && REFUNDED.includes(after.status)) events.push('order.dispute_won');
    else {
      const type = ON_STATUS[after.status];
      if (type) events.push(type);
    }
  } else if (after.status === 'partially_refunded' && after.refunded_minor > before.refunded_minor) {
    events.push('order.partially_refunded');
  }
  const flagged =
    after.needs_review && (!before.needs_review || after.review_reason !== before.review_reason);
  if (flagged) events.push('order.needs_review');
  return events;
}
