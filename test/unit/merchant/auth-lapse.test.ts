import { expect } from 'chai';
import { type AttemptFacts, decide, type PaymentState } from '../../../src/merchant/orders/decide.js';
import type { Observation, TransactionFact } from '../../../src/merchant/orders/observation.js';

/**
 * sandbox.md section 11: an auth neither captured nor voided in time lapses, cancelled. The record of
 * an approved auth carries its deadline (`capture_before`); a risk-blocked auth has none. So a
 * cancelled auth with a deadline is a lapse: the order is expired, never a contradiction to flag.
 */
const order = { status: 'authorized' as const, amountMinor: 1000, currency: 'EUR' };
const DEADLINE = Date.UTC(2026, 11, 1);
const auth = (over: Partial<TransactionFact> = {}): Observation => ({
  source: 'webhook',
  sourceId: 'evt_1',
  observedAt: 1,
  transaction: {
    id: '100',
    relatedId: null,
    type: 'auth',
    status: 'cancelled',
    amountMinor: 1000,
    currency: 'EUR',
    refundedMinor: 0,
    captureBefore: DEADLINE,
    ...over,
  },
});
const facts = (status: PaymentState['status']): AttemptFacts => ({
  kind: 'card',
  sale: false,
  transactionId: '100',
  current: true,
  state: { status, capturedMinor: null, refundedMinor: 0, captureId: null, moneyAt: null, disputedMinor: 0 },
});

describe('merchant: decide, an authorisation that lapses', () => {
  it('an authorized order whose auth lapsed is expired: applied, not flagged', () => {
    const d = decide(order, facts('authorized'), auth());
    expect(d).to.include({ outcome: 'applied', orderStatus: 'expired', review: null });
  });

  it('the auth seen after its lapse is old news', () => {
    const d = decide({ ...order, status: 'expired' }, facts('expired'), auth({ status: 'auth' }));
    expect(d).to.include({ outcome: 'stale', orderStatus: 'expired', review: null });
  });

  it('a risk-blocked auth (cancelled, no deadline) is cancelled, not expired', () => {
    const d = decide({ ...order, status: 'pending' }, facts('pending'), auth({ captureBefore: null }));
    expect(d).to.include({ outcome: 'applied', orderStatus: 'cancelled' });
  });

  it('an authorized order cancelled without a deadline (a gateway that does not say) is still flagged', () => {
    const d = decide(order, facts('authorized'), auth({ captureBefore: undefined }));
    expect(d.outcome).to.equal('flagged');
    expect(d.review).to.equal('cancelled cannot follow authorized');
  });
});
