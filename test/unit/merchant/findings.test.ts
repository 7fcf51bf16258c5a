import { expect } from 'chai';
import {
  type AttemptFacts,
  decide,
  INITIAL_PAYMENT,
  type PaymentState,
} from '../../../src/merchant/orders/decide.js';
import { observeFinding, observeTransaction } from '../../../src/merchant/orders/from-gateway.js';

/**
 * decide's rule for findings: what the kit's own call learned about an attempt before the gateway had
 * a transaction for it (a 3DS challenge, a refusal) goes through the same state machine as every
 * observation, with the same guarantees: a repeat changes nothing, and nothing undoes what a
 * transaction record already said.
 */
const order = { status: 'pending' as const, amountMinor: 1000, currency: 'EUR' };
const attempt = (state: PaymentState, over: Partial<AttemptFacts> = {}): AttemptFacts => ({
  kind: 'card',
  sale: true,
  transactionId: null,
  current: true,
  state,
  ...over,
});
const about = { orderId: 'ord_1', attemptId: 'att_1' };
const challenge = observeFinding(about, { status: 'requires_action', code: null }, 'api:att_1:3ds', 1);
const refused = (code: string) => observeFinding(about, { status: 'failed', code }, 'api:att_1:initiate', 2);

describe('merchant: decide, for findings of the checkout', () => {
  it('a challenge moves a pending attempt to requires_action, recorded as the challenge', () => {
    const d = decide(order, attempt(INITIAL_PAYMENT), challenge);
    expect(d).to.include({ outcome: 'applied', orderStatus: 'requires_action', note: 'action_required' });
    expect(d.attempt.status).to.equal('requires_action');
  });

  it('a refusal fails a pending or challenged attempt, and the history names the code', () => {
    for (const status of ['pending', 'requires_action'] as const) {
      const d = decide(
        { ...order, status },
        attempt({ ...INITIAL_PAYMENT, status }),
        refused('ERR_3DS_FAILED'),
      );
      expect(d).to.include({
        outcome: 'applied',
        orderStatus: 'failed',
        note: 'ERR_3DS_FAILED',
        review: null,
      });
    }
  });

  it('the same finding twice is a duplicate; a challenge after the refusal is stale', () => {
    const failed = { ...INITIAL_PAYMENT, status: 'failed' as const };
    expect(decide({ ...order, status: 'failed' }, attempt(failed), refused('ERR_X')).outcome).to.equal(
      'duplicate',
    );
    expect(decide({ ...order, status: 'failed' }, attempt(failed), challenge).outcome).to.equal('stale');
  });

  it('a refusal after the gateway authorized the payment is flagged, never applied', () => {
    const authorized = { ...INITIAL_PAYMENT, status: 'authorized' as const };
    const d = decide(
      { ...order, status: 'authorized' },
      attempt(authorized, { transactionId: '100', sale: false }),
      refused('GATEWAY_UNAVAILABLE'),
    );
    expect(d.outcome).to.equal('flagged');
    expect(d.orderStatus).to.equal('authorized');
    expect(d.attempt).to.equal(authorized);
    expect(d.review).to.equal('failed cannot follow authorized');
  });

  it('money the gateway reports after a refusal finding is flagged for a person, not silently applied', () => {
    const failed = { ...INITIAL_PAYMENT, status: 'failed' as const };
    const captured = observeTransaction(
      {
        id: '100',
        related_trans_id: null,
        transaction_type: 'sale',
        status: 'captured',
        amount: 1000,
        currency: 'EUR',
        refunded_amount: 0,
      },
      'webhook',
      'evt_1',
      3,
    );
    const d = decide({ ...order, status: 'failed' }, attempt(failed, { transactionId: '100' }), captured);
    expect(d).to.include({ outcome: 'flagged', orderStatus: 'failed', review: 'paid cannot follow failed' });
  });

  describe('a review finding (a poll found something for a person)', () => {
    const review = (reason: string) => observeFinding(about, { review: reason }, 'poll:att_1:9', 9, 'poll');
    const paid: PaymentState = { ...INITIAL_PAYMENT, status: 'paid', capturedMinor: 1000 };

    it('flags the order with its reason and leaves the payment as it is', () => {
      const d = decide({ ...order, status: 'paid' }, attempt(paid), review('the gateway does not know x'));
      expect(d).to.include({
        outcome: 'flagged',
        review: 'the gateway does not know x',
        orderStatus: 'paid',
      });
      expect(d.attempt).to.equal(paid);
    });

    it('the same reason again is nothing new; another reason is flagged too', () => {
      const flagged = { ...order, status: 'paid' as const, reviewReason: 'a; the gateway does not know x' };
      expect(decide(flagged, attempt(paid), review('the gateway does not know x')).outcome).to.equal(
        'duplicate',
      );
      expect(decide(flagged, attempt(paid), review('still pending')).outcome).to.equal('flagged');
    });
  });
});
