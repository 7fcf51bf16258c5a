import { expect } from 'chai';
import { type OrderMoment, orderEventsOf } from '../../../src/merchant/orders/order-events.js';
import { GIVE_UP_MS, nextTryAt } from '../../../src/merchant/outbox/retry-schedule.js';

const at = (status: OrderMoment['status'], over: Partial<OrderMoment> = {}): OrderMoment => ({
  status,
  refunded_minor: 0,
  needs_review: false,
  review_reason: null,
  ...over,
});

describe('merchant: which order events a change makes (orderEventsOf)', () => {
  it('a new status is its event; pending and requires_action tell the shop nothing', () => {
    expect(orderEventsOf(at('pending'), at('paid'))).to.deep.equal(['order.paid']);
    expect(orderEventsOf(at('pending'), at('authorized'))).to.deep.equal(['order.authorized']);
    expect(orderEventsOf(at('authorized'), at('expired'))).to.deep.equal(['order.expired']);
    expect(orderEventsOf(at('paid'), at('disputed'))).to.deep.equal(['order.disputed']);
    expect(orderEventsOf(at('failed'), at('pending'))).to.deep.equal([]);
    expect(orderEventsOf(at('pending'), at('requires_action'))).to.deep.equal([]);
  });

  it('back from disputed is order.dispute_won, not paid again', () => {
    expect(orderEventsOf(at('disputed'), at('paid'))).to.deep.equal(['order.dispute_won']);
    expect(
      orderEventsOf(at('disputed', { refunded_minor: 5 }), at('partially_refunded', { refunded_minor: 5 })),
    ).to.deep.equal(['order.dispute_won']);
  });

  it('a second partial refund is order.partially_refunded again; the same amount is nothing', () => {
    const first = at('partially_refunded', { refunded_minor: 100 });
    expect(orderEventsOf(first, at('partially_refunded', { refunded_minor: 250 }))).to.deep.equal([
      'order.partially_refunded',
    ]);
    expect(orderEventsOf(first, first)).to.deep.equal([]);
  });

  it('a new review reason is order.needs_review, after the status event; the same reason again is nothing', () => {
    const flagged = at('paid', { needs_review: true, review_reason: 'a second capture' });
    expect(orderEventsOf(at('pending'), flagged)).to.deep.equal(['order.paid', 'order.needs_review']);
    expect(orderEventsOf(flagged, flagged)).to.deep.equal([]);
    expect(
      orderEventsOf(flagged, { ...flagged, review_reason: 'a second capture; another amount' }),
    ).to.deep.equal(['order.needs_review']);
    expect(orderEventsOf(flagged, at('paid'))).to.deep.equal([]);
  });
});

describe('merchant: when a failed order event delivery is tried again (nextTryAt)', () => {
  it('soon at first, then hourly; given up three days after the event', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => nextTryAt(n, 0, 0)! - 0);
    expect(waits).to.deep.equal([5_000, 30_000, 120_000, 300_000, 900_000, 1_800_000, 3_600_000, 3_600_000]);
    expect(nextTryAt(40, GIVE_UP_MS - 3_600_000, 0)).to.equal(GIVE_UP_MS);
    expect(nextTryAt(40, GIVE_UP_MS - 3_599_999, 0)).to.equal(null);
  });
});
