import { expect } from 'chai';
import { comparison, sameTruth, truthOfPayment } from '../../support/truth-rules.js';

/** The chaos run and the background-work tests judge orders by these rules. */
describe('truth rules: chargebacks, reversals and lapses', () => {
  const payment = { type: 'sale', status: 'captured', amount: 1000, refunded: 0, captureAmount: null };

  it('a chargeback is disputed, for its amount; reversed, paid or partially refunded again', () => {
    expect(truthOfPayment('card', { ...payment, status: 'chargeback', chargeback: 400 })).to.deep.equal({
      status: 'disputed',
      captured: 1000,
      refunded: 0,
      disputed: 400,
    });
    expect(truthOfPayment('card', { ...payment, chargeback: 0 }).status).to.equal('paid');
    expect(truthOfPayment('card', { ...payment, refunded: 100, chargeback: 0 }).status).to.equal(
      'partially_refunded',
    );
  });

  it('a lapsed auth is expired; a cancelled session payment is cancelled', () => {
    const lapsed = { ...payment, type: 'auth', status: 'cancelled', captureBefore: '2026-11-24T10:00:00Z' };
    expect(truthOfPayment('card', lapsed).status).to.equal('expired');
    expect(truthOfPayment('redirect', { ...payment, status: 'cancelled' }).status).to.equal('cancelled');
  });

  it('compares what a chargeback took only when both sides say it', () => {
    const truth = truthOfPayment('card', { ...payment, status: 'chargeback', chargeback: 400 });
    const order = { status: 'disputed', captured_minor: 1000, refunded_minor: 0 };
    const without = comparison(order, truth);
    expect(sameTruth(without.got, without.want)).to.equal(true);
    const right = comparison({ ...order, disputed_minor: '400' }, truth);
    expect(sameTruth(right.got, right.want)).to.equal(true);
    const wrong = comparison({ ...order, disputed_minor: 1000 }, truth);
    expect(sameTruth(wrong.got, wrong.want)).to.equal(false);
    const unsaid = comparison({ ...order, disputed_minor: 1000 }, { ...truth, disputed: undefined });
    expect(sameTruth(unsaid.got, unsaid.want)).to.equal(true);
  });

  it('a closed order stands for a payment without money, never for one with money', () => {
    const closed = { status: 'closed', captured_minor: null, refunded_minor: 0 };
    for (const status of ['failed', 'cancelled', 'expired', 'voided', 'requires_action']) {
      const { got, want } = comparison(closed, { status, captured: null, refunded: 0 });
      expect(sameTruth(got, want), status).to.equal(true);
    }
    for (const truth of [
      { status: 'paid', captured: 1000, refunded: 0 },
      { status: 'authorized', captured: null, refunded: 0 },
    ]) {
      const { got, want } = comparison(closed, truth);
      expect(sameTruth(got, want), truth.status).to.equal(false);
    }
  });
});
