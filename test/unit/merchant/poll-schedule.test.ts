import { expect } from 'chai';
import fc from 'fast-check';
import {
  AFTER_EXPIRY_MS,
  nextPollAt,
  POLL_HORIZON_MS,
  POLL_OFFSETS_MS,
  pollable,
  unsettledWhenSilent,
} from '../../../src/merchant/orders/poll-schedule.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 10, 23, 12);

/** merchant.md, Background work: open orders are polled on a backoff by the age of their last change. */
describe('merchant: the poll schedule (nextPollAt)', () => {
  it('asks 2, 5, 15, 30 and 60 minutes after a change, then hourly to a day, then daily to 30 days', () => {
    const seen: number[] = [];
    for (let now = T0, next = nextPollAt(T0, now); next !== null; now = next, next = nextPollAt(T0, now))
      seen.push(next - T0);
    expect(seen.slice(0, 6)).to.deep.equal([2, 5, 15, 30, 60, 120].map((m) => m * MINUTE));
    expect(seen.filter((o) => o <= DAY).at(-1)).to.equal(DAY);
    expect(seen.filter((o) => o > DAY)).to.deep.equal(Array.from({ length: 29 }, (_, i) => (i + 2) * DAY));
    expect(seen).to.deep.equal([...POLL_OFFSETS_MS]);
    expect(seen).to.have.length(57);
    expect(POLL_HORIZON_MS).to.equal(30 * DAY);
  });

  it('a silent payment is found within about two minutes: the first poll is 2 minutes after the change', () => {
    expect(nextPollAt(T0, T0)).to.equal(T0 + 2 * MINUTE);
  });

  it('a poller running late asks at the next point still ahead, never in the past', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 31 * DAY }), (age) => {
        const next = nextPollAt(T0, T0 + age);
        if (age >= POLL_HORIZON_MS) return next === null;
        return next !== null && next > T0 + age && POLL_OFFSETS_MS.includes(next - T0);
      }),
    );
  });

  it('a session is asked about right after it expires, when that comes before the next point', () => {
    const expires = T0 + 12 * MINUTE;
    expect(nextPollAt(T0, T0 + 6 * MINUTE, expires)).to.equal(expires + AFTER_EXPIRY_MS);
    // A session made at the change expires at its 15-minute point: asked then, and again just after.
    expect(nextPollAt(T0, T0 + 6 * MINUTE, T0 + 15 * MINUTE)).to.equal(T0 + 15 * MINUTE);
    expect(nextPollAt(T0, T0 + 15 * MINUTE, T0 + 15 * MINUTE)).to.equal(T0 + 15 * MINUTE + AFTER_EXPIRY_MS);
    // An expiry already past, or after the next point, changes nothing.
    expect(nextPollAt(T0, T0 + 16 * MINUTE, expires)).to.equal(T0 + 30 * MINUTE);
    expect(nextPollAt(T0, T0, T0 + 10 * MINUTE)).to.equal(T0 + 2 * MINUTE);
  });

  it('after 30 days without a change there is no next poll', () => {
    expect(nextPollAt(T0, T0 + 30 * DAY)).to.equal(null);
    expect(nextPollAt(T0, T0 + 30 * DAY - 1)).to.equal(T0 + 30 * DAY);
  });

  it('polls open orders and captured money that can still move, with something at the gateway to ask about', () => {
    const txn = { gateway_transaction_id: '100', payment_session_id: null };
    const session = { gateway_transaction_id: null, payment_session_id: 'ps_1' };
    const nothing = { gateway_transaction_id: null, payment_session_id: null };
    for (const status of [
      'pending',
      'requires_action',
      'authorized',
      'paid',
      'partially_refunded',
    ] as const) {
      expect(pollable(status, txn), status).to.equal(true);
      expect(pollable(status, session), status).to.equal(true);
      expect(pollable(status, nothing), `${status}, a 3DS challenge still open`).to.equal(false);
      expect(pollable(status, null), `${status}, no attempt`).to.equal(false);
    }
    for (const status of ['refunded', 'voided', 'failed', 'cancelled', 'expired', 'disputed'] as const)
      expect(pollable(status, txn), status).to.equal(false);
    // After 30 days of silence a payment still open needs a person; paid money at rest does not.
    for (const status of ['pending', 'requires_action', 'authorized'] as const)
      expect(unsettledWhenSilent(status), status).to.equal(true);
    expect(unsettledWhenSilent('paid')).to.equal(false);
  });
});
