import { expect } from 'chai';
import fc from 'fast-check';
import {
  type ChargebackPlan,
  type PaymentFamily,
  planChargeback,
  planChargebackReversal,
} from '../../../src/gateway/domain/chargebacks.js';
import type { Transaction } from '../../../src/gateway/domain/transactions.js';
import { transactionRecord } from '../../support/transaction-record.js';

/** sandbox.md sections 10 and 11: chargebacks and their reversal, as pure rules. */

const T0 = Date.UTC(2026, 10, 1);
const NOW = T0 + 60_000;

const record = (overrides: Partial<Transaction> = {}): Transaction =>
  transactionRecord({ type: 'sale', status: 'captured', capturedAmount: 10_000, ...overrides });

const sale = (overrides: Partial<Transaction> = {}): PaymentFamily => {
  const payment = record(overrides);
  return { target: payment, payment, capture: undefined };
};

/** A captured auth (6000 of 10000) and its capture record, named by `by`. */
function capturedAuth(by: 'auth' | 'capture', overrides: Partial<Transaction> = {}): PaymentFamily {
  const payment = record({ type: 'auth', capturedAmount: 6000, ...overrides });
  const capture = record({
    id: 100001,
    relatedId: payment.id,
    type: 'capture',
    amount: 6000,
    capturedAmount: 6000,
    ...overrides,
  });
  return { target: by === 'auth' ? payment : capture, payment, capture };
}

function applied(plan: ChargebackPlan) {
  if (!plan.ok) throw new Error(`expected a plan, got ${plan.problem}: ${plan.message}`);
  return plan;
}

describe('chargebacks (pure)', () => {
  it('by default takes all that was captured, and moves the payment to chargeback', () => {
    const plan = applied(planChargeback(sale(), undefined, NOW));
    expect(plan.amount).to.equal(10_000);
    expect(plan.updated).to.have.length(1);
    expect(plan.updated[0]).to.include({ status: 'chargeback', chargebackAmount: 10_000, updatedAt: NOW });
  });

  it('after a partial refund the default is what is left, and no more can be asked', () => {
    const family = sale({ refundedAmount: 2500 });
    expect(applied(planChargeback(family, undefined, NOW)).amount).to.equal(7500);
    expect(applied(planChargeback(family, 7500, NOW)).updated[0]!.chargebackAmount).to.equal(7500);
    const over = planChargeback(family, 7501, NOW);
    expect(over).to.include({ ok: false, problem: 'amount' });
    expect((over as { message: string }).message).to.include('75.00 EUR');
  });

  it('a part of the payment can be charged back; the rest stays with the merchant', () => {
    const plan = applied(planChargeback(sale(), 1, NOW));
    expect(plan.amount).to.equal(1);
    expect(plan.updated[0]).to.include({ status: 'chargeback', chargebackAmount: 1, refundedAmount: 0 });
  });

  it('a captured auth is one payment: through either id, the auth and its capture record move together', () => {
    for (const by of ['auth', 'capture'] as const) {
      const plan = applied(planChargeback(capturedAuth(by), undefined, NOW));
      expect(plan.amount, by).to.equal(6000);
      expect(plan.updated.map((t) => [t.type, t.status, t.chargebackAmount])).to.deep.equal([
        ['auth', 'chargeback', 6000],
        ['capture', 'chargeback', 6000],
      ]);
    }
  });

  it('only a captured payment: an open auth, a refunded, voided, failed, pending or charged-back one is refused', () => {
    const refused: PaymentFamily[] = [
      sale({ type: 'auth', status: 'auth', capturedAmount: 0 }),
      sale({ status: 'refunded', refundedAmount: 10_000 }),
      sale({ type: 'auth', status: 'voided', capturedAmount: 0 }),
      sale({ status: 'failed', capturedAmount: 0 }),
      sale({ status: 'pending', capturedAmount: 0 }),
      sale({ status: 'chargeback', chargebackAmount: 10_000 }),
    ];
    for (const family of refused) {
      expect(planChargeback(family, undefined, NOW), family.target.status).to.include({
        ok: false,
        problem: 'state',
      });
    }
  });

  it('a refund or void record is not a payment that can be charged back', () => {
    const payment = record();
    for (const type of ['refund', 'void'] as const) {
      const target = record({ id: 100002, relatedId: payment.id, type, status: 'refunded' });
      expect(planChargeback({ target, payment, capture: undefined }, undefined, NOW)).to.include({
        problem: 'state',
      });
    }
  });

  it('the state is checked before the amount', () => {
    expect(planChargeback(sale({ status: 'refunded' }), 999_999, NOW)).to.include({ problem: 'state' });
  });
});

describe('chargeback reversals (pure)', () => {
  it('a won dispute: captured again, nothing charged back, refunds kept', () => {
    const charged = applied(planChargeback(sale({ refundedAmount: 1000 }), 4000, NOW)).updated[0]!;
    const plan = applied(
      planChargebackReversal({ target: charged, payment: charged, capture: undefined }, NOW + 1),
    );
    expect(plan.amount).to.equal(4000);
    expect(plan.updated[0]).to.include({
      status: 'captured',
      chargebackAmount: 0,
      refundedAmount: 1000,
      updatedAt: NOW + 1,
    });
  });

  it('reverses a captured auth and its capture record together', () => {
    const [auth, capture] = applied(planChargeback(capturedAuth('capture'), undefined, NOW)).updated as [
      Transaction,
      Transaction,
    ];
    const plan = applied(planChargebackReversal({ target: capture, payment: auth, capture }, NOW));
    expect(plan.updated.map((t) => [t.type, t.status, t.chargebackAmount])).to.deep.equal([
      ['auth', 'captured', 0],
      ['capture', 'captured', 0],
    ]);
  });

  it('only a charged-back payment can be reversed', () => {
    for (const status of ['captured', 'refunded', 'auth', 'voided', 'failed', 'cancelled'] as const) {
      expect(planChargebackReversal(sale({ status }), NOW), status).to.include({
        ok: false,
        problem: 'state',
      });
    }
  });

  it('property: a chargeback and its reversal give back the payment as it was, but for updatedAt', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 0, max: 999_999 }),
        fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: undefined }),
        (captured, refundedRaw, requested) => {
          const refunded = refundedRaw % captured; // partly refunded at most: still captured
          const before = sale({ amount: captured, capturedAmount: captured, refundedAmount: refunded });
          const plan = planChargeback(before, requested, NOW);
          const left = captured - refunded;
          if (requested !== undefined && requested > left) {
            expect(plan).to.include({ ok: false, problem: 'amount' });
            return;
          }
          const charged = applied(plan).updated[0]!;
          expect(charged.chargebackAmount).to.equal(requested ?? left);
          expect(charged.chargebackAmount).to.be.at.most(left);
          const back = applied(
            planChargebackReversal({ target: charged, payment: charged, capture: undefined }, NOW),
          ).updated[0]!;
          expect({ ...back, updatedAt: T0 }).to.deep.equal(before.payment);
        },
      ),
    );
  });
});
