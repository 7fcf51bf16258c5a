import { expect } from 'chai';
import fc from 'fast-check';
import {
  acquirerTransactionId,
  type ChildSeed,
  type Plan,
  planCapture,
  planRefund,
  planVoid,
  type Transaction,
  transactionView,
} from '../../../src/gateway/domain/transactions.js';
import { hasCardNumber, withLuhnCheckDigit } from '../../../src/shared/card-numbers.js';
import { seededRandom } from '../../../src/shared/ids.js';
import { transactionRecord } from '../../support/transaction-record.js';

const T0 = Date.UTC(2026, 10, 1);

const payment = (overrides: Partial<Transaction> = {}): Transaction => transactionRecord({ ...overrides });

let nextId = 200000;
const seed = (): ChildSeed => ({ id: nextId++, now: T0 + 1000, acquirerTransId: 'c', acquirerRefNum: 'm' });

function applied(plan: Plan) {
  if (!plan.ok) throw new Error(`expected a plan, got ${plan.code}`);
  return plan;
}

describe('transaction operations (pure)', () => {
  it('a capture records a child and moves the auth, keeping the authorised amount', () => {
    const plan = applied(planCapture(payment(), 6000, seed()));
    expect(plan.created).to.include({ type: 'capture', status: 'captured', amount: 6000, relatedId: 100000 });
    expect(plan.updated[0]).to.include({ status: 'captured', amount: 10_000, capturedAmount: 6000 });
  });

  it('a capture over the authorised amount, or on anything but an open auth, is refused', () => {
    expect(planCapture(payment(), 10_001, seed())).to.include({
      ok: false,
      code: 'ERR_ADAPTER_INVALID_AMOUNT',
    });
    expect(planCapture(payment({ status: 'captured' }), 1, seed())).to.include({
      ok: false,
      code: 'ERR_INVALID_TRANSACTION',
    });
    expect(planCapture(payment({ type: 'sale', status: 'captured' }), 1, seed())).to.include({
      code: 'ERR_INVALID_TRANSACTION',
    });
  });

  it('the state check comes before the amount check', () => {
    expect(planCapture(payment({ status: 'voided' }), 99_999, seed())).to.include({
      code: 'ERR_INVALID_TRANSACTION',
    });
  });

  it('a void must be for exactly the authorised amount', () => {
    expect(planVoid(payment(), 9999, null, seed())).to.include({ code: 'ERR_ADAPTER_INVALID_AMOUNT' });
    const plan = applied(planVoid(payment(), 10_000, 'customer asked', seed()));
    expect(plan.created).to.include({ type: 'void', status: 'voided', description: 'customer asked' });
    expect(plan.updated[0]).to.include({ status: 'voided' });
  });

  it('refunds of a captured auth keep one running total on the auth and its capture record', () => {
    const auth = payment();
    const capture = applied(planCapture(auth, 6000, seed()));
    const capturedAuth = capture.updated[0]!;
    const first = applied(
      planRefund(capture.created, capturedAuth, capture.created, 2500, null, seed(), true),
    );
    expect(first.updated.map((t) => [t.type, t.status, t.refundedAmount])).to.deep.equal([
      ['auth', 'captured', 2500],
      ['capture', 'captured', 2500],
    ]);
    expect(first.created).to.include({ relatedId: capture.created.id, refundedAmount: 2500 });
    const [authAfter, captureAfter] = first.updated as [Transaction, Transaction];
    expect(planRefund(authAfter, authAfter, captureAfter, 3501, null, seed(), true)).to.include({
      code: 'ERR_ADAPTER_INVALID_AMOUNT',
    });
    const second = applied(planRefund(authAfter, authAfter, captureAfter, 3500, null, seed(), true));
    expect(second.updated.map((t) => t.status)).to.deep.equal(['refunded', 'refunded']);
    expect(
      planRefund(second.updated[0]!, second.updated[0]!, second.updated[1], 1, null, seed(), true),
    ).to.include({
      code: 'ERR_INVALID_TRANSACTION',
    });
  });

  it('a refund of an uncaptured auth, a refund record or a void record is refused', () => {
    expect(planRefund(payment(), payment(), undefined, 1, null, seed(), true)).to.include({
      code: 'ERR_INVALID_TRANSACTION',
    });
    const sale = payment({ type: 'sale', status: 'captured', capturedAmount: 10_000 });
    const refund = applied(planRefund(sale, sale, undefined, 100, null, seed(), true)).created;
    expect(planRefund(refund, sale, undefined, 1, null, seed(), true)).to.include({
      code: 'ERR_INVALID_TRANSACTION',
    });
  });

  it('a payment whose method does not refund: ERR_REFUND_NOT_SUPPORTED, whatever its state or the amount', () => {
    const sale = payment({ type: 'sale', status: 'captured', capturedAmount: 10_000 });
    for (const p of [
      sale,
      { ...sale, status: 'chargeback' as const },
      { ...sale, status: 'refunded' as const },
    ]) {
      for (const amount of [1, 10_000, 99_999]) {
        expect(planRefund(p, p, undefined, amount, null, seed(), false), `${p.status} ${amount}`).to.include({
          ok: false,
          code: 'ERR_REFUND_NOT_SUPPORTED',
        });
      }
    }
    // What is not a payment at all is still ERR_INVALID_TRANSACTION.
    const refund = applied(planRefund(sale, sale, undefined, 100, null, seed(), true)).created;
    expect(planRefund(refund, sale, undefined, 1, null, seed(), false)).to.include({
      code: 'ERR_INVALID_TRANSACTION',
    });
  });

  it('property: whatever operations are tried, refunds never exceed the capture and statuses agree', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('capture' as const), amount: fc.integer({ min: 1, max: 12_000 }) }),
      fc.record({
        kind: fc.constant('refund' as const),
        amount: fc.integer({ min: 1, max: 12_000 }),
        onCapture: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('void' as const), amount: fc.constantFrom(10_000, 5000) }),
    );
    fc.assert(
      fc.property(fc.boolean(), fc.array(op, { maxLength: 12 }), (isSale, ops) => {
        let root = isSale ? payment({ type: 'sale', status: 'captured', capturedAmount: 10_000 }) : payment();
        let capture: Transaction | undefined;
        let refunded = 0;
        for (const o of ops) {
          const target = o.kind === 'refund' && o.onCapture && capture ? capture : root;
          const plan =
            o.kind === 'capture'
              ? planCapture(target, o.amount, seed())
              : o.kind === 'void'
                ? planVoid(target, o.amount, null, seed())
                : planRefund(target, root, capture, o.amount, null, seed(), true);
          if (!plan.ok) continue;
          if (plan.created.type === 'capture') capture = plan.created;
          if (plan.created.type === 'refund') refunded += plan.created.amount;
          for (const t of plan.updated) {
            if (t.id === root.id) root = t;
            else if (t.id === capture?.id) capture = t;
          }
          expect(root.refundedAmount).to.equal(refunded);
          expect(root.refundedAmount).to.be.at.most(root.capturedAmount);
          if (capture) expect(capture.refundedAmount).to.equal(root.refundedAmount);
          if (root.status === 'refunded') expect(root.refundedAmount).to.equal(root.capturedAmount);
        }
      }),
    );
  });

  it('the wire view carries integer minor units and the formatted amount', () => {
    const view = transactionView(payment({ amount: 1234 }));
    expect(view).to.include({
      amount: 1234,
      amount_formatted: '12.34',
      merchant_trans_id: 'r1',
      related_trans_id: null,
    });
    expect(view.created_at).to.equal('2026-11-01T00:00:00.000000Z');
  });
});

describe('gateway: the acquirer transaction id', () => {
  /** A random source that hands out these byte strings in turn. */
  const draws = (...hex: string[]) => {
    const queue = hex.map((h) => Buffer.from(h, 'hex'));
    return (size: number) => {
      const next = queue.shift()!;
      expect(next.length).to.equal(size);
      return next;
    };
  };

  it('is 16 hex characters as drawn, even when they read as a card number: a real acquirer draws no second time', () => {
    // 3486176972253 is thirteen digits that start as Amex numbers do and pass the Luhn check.
    expect(hasCardNumber('3486176972253b4c')).to.equal(true);
    expect(acquirerTransactionId(draws('3486176972253b4c'))).to.equal('3486176972253b4c');
    expect(acquirerTransactionId(draws('ffeeddccbbaa9988'))).to.equal('ffeeddccbbaa9988');
  });

  it('is drawn as 16 digits that read as a card number for the share the seed asks (card_like_acquirer_ids)', () => {
    const random = seededRandom(44);
    const ids = Array.from({ length: 200 }, () => acquirerTransactionId(random, 1));
    for (const id of ids) {
      expect(id, id).to.match(/^[3-6]\d{15}$/);
      expect(hasCardNumber(id), id).to.equal(true);
    }
    expect(new Set(ids).size).to.equal(200);
    // A share below 1 draws four bytes first: under the share, digits; else hex.
    expect(acquirerTransactionId(draws('00000000', '01', '000102030405060708090a0b0c0d'), 0.5)).to.equal(
      withLuhnCheckDigit('401234567890123'),
    );
    expect(acquirerTransactionId(draws('ffffffff', 'ffeeddccbbaa9988'), 0.5)).to.equal('ffeeddccbbaa9988');
    const mixed = Array.from({ length: 400 }, () => acquirerTransactionId(random, 0.25));
    const numeric = mixed.filter((id) => /^\d{16}$/.test(id)).length;
    expect(numeric).to.be.within(60, 140);
  });
});
