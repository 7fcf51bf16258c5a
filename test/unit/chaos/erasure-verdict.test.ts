import { expect } from 'chai';
import { person, personalValues } from '../../../chaos/erasure.js';
import {
  type ErasureVerdict,
  erasureFailures,
  foundIn,
  reportBeside,
  type Snapshot,
  whereIn,
} from '../../../chaos/erasure-verdict.js';
import type { KitReportRow } from '../../../chaos/money.js';

/** The storm's erasure check: a harness that misreads the report or the dump would pass an erasure that leaks. */
describe('chaos: the erasure’s verdict', () => {
  const row = (id: string, over: Partial<KitReportRow> = {}): KitReportRow => ({
    order_id: id,
    reference: `ref-${id}`,
    gateway_transaction_id: '100000',
    status: 'paid',
    currency: 'EUR',
    amount: 1000,
    captured_amount: 1000,
    refunded_amount: 0,
    disputed_amount: 0,
    ...over,
  });
  const snapshot = (rows: KitReportRow[], versions: [string, number][]): Snapshot => ({
    rows,
    versions: new Map(versions),
  });

  describe('the report beside itself, before and after the erasure', () => {
    it('compares the rows nothing but the erasure changed, and leaves out those the traffic moved', () => {
      const before = snapshot(
        [row('a'), row('b'), row('c'), row('d')],
        [
          ['a', 3],
          ['b', 3],
          ['c', 3],
          ['d', 3],
        ],
      );
      const after = snapshot(
        // a: erased (one change); b: erased and refunded meanwhile (two); c: someone else's, refunded
        // meanwhile (one); d: untouched; e: made meanwhile.
        [
          row('a'),
          row('b', { refunded_amount: 500 }),
          row('c', { refunded_amount: 100 }),
          row('d'),
          row('e'),
        ],
        [
          ['a', 4],
          ['b', 5],
          ['c', 4],
          ['d', 3],
          ['e', 1],
        ],
      );
      const beside = reportBeside(before, after, new Set(['a', 'b']));
      expect(beside).to.deep.equal({ compared: 2, erased: 1, moved: 3, changed: [] });
    });

    it('names a row whose money the erasure moved, and one it took out of the report', () => {
      const before = snapshot(
        [row('a'), row('b')],
        [
          ['a', 3],
          ['b', 3],
        ],
      );
      const after = snapshot(
        [row('a', { captured_amount: 0, status: 'pending' })],
        [
          ['a', 4],
          ['b', 4],
        ],
      );
      const beside = reportBeside(before, after, new Set(['a', 'b']));
      expect(beside.changed).to.deep.equal([
        'order a: status paid -> pending, captured_amount 1000 -> 0',
        'order b: in the report before, not after',
      ]);
    });

    it('does not let the erasure pass off a change to an order it did not erase', () => {
      const before = snapshot([row('a')], [['a', 3]]);
      const after = snapshot([row('a', { refunded_amount: 1 })], [['a', 3]]);
      expect(reportBeside(before, after, new Set()).changed).to.have.length(1);
    });
  });

  describe('the dump searched', () => {
    it('finds each personal value in any case, and says in which tables', () => {
      const ada = person('erased', 0);
      const values = personalValues(ada);
      expect(values).to.have.length(9);
      expect(values).to.not.include('GB');
      const dump = [
        `orders: o1\t{"email":"${ada.email!.toUpperCase()}"}`,
        'order_events: 1\t{"customer":{"erased":true}}',
        `audit_log: 7\tcustomer ${ada.merchant_customer_id}`,
        `audit_log: 8\tcustomer ${ada.merchant_customer_id}`,
      ].join('\n');
      expect(foundIn(dump, values)).to.deep.equal([ada.merchant_customer_id, ada.email]);
      expect(whereIn(dump, ada.merchant_customer_id!)).to.equal('audit_log (2 rows)');
    });

    it('gives every customer values of their own: none is part of another', () => {
      const people = [person('erased', 0), person('kept', 1), person('kept', 2)];
      const all = people.flatMap(personalValues);
      for (const [i, p] of people.entries()) {
        const others = people.filter((_, j) => j !== i).flatMap(personalValues);
        expect(foundIn(others.join('\n'), personalValues(p)), JSON.stringify(p)).to.deep.equal([]);
      }
      expect(new Set(all).size).to.equal(all.length);
    });
  });

  describe('the failures', () => {
    const verdict = (over: Partial<ErasureVerdict> = {}): ErasureVerdict => ({
      run: {
        answer: { orders: 3 },
        tries: 1,
        seconds: 0.4,
        inFlight: { stories: 1, auths: 1 },
        challenge: 'paid after it',
        before: null,
        after: null,
      },
      orders: 3,
      marked: 3,
      values: 9,
      found: [],
      where: [],
      dump: { tables: 30, rows: 1000 },
      kept: { customers: 2, values: 18, found: 18 },
      truth: { checked: 3, untrue: [] },
      beside: { compared: 10, erased: 2, moved: 5, changed: [] },
      cards: { saved: 1, active: 0 },
      ...over,
    });

    it('passes an erasure that left nothing and moved no money', () => {
      expect(erasureFailures(verdict())).to.deep.equal([]);
    });

    it('fails a value left, a blind search, an order left named, a moved row, a card left active', () => {
      expect(erasureFailures(verdict({ found: ['ada@example.com'] }))).to.have.length(1);
      expect(erasureFailures(verdict({ kept: { customers: 2, values: 18, found: 0 } }))).to.have.length(1);
      expect(erasureFailures(verdict({ marked: 2 }))).to.have.length(1);
      expect(
        erasureFailures(verdict({ beside: { compared: 10, erased: 2, moved: 5, changed: ['order a'] } })),
      ).to.have.length(1);
      expect(erasureFailures(verdict({ cards: { saved: 1, active: 1 } }))).to.have.length(1);
      expect(erasureFailures(verdict({ truth: { checked: 3, untrue: ['order a'] } }))).to.have.length(1);
      expect(erasureFailures(null)).to.have.length(1);
    });
  });
});
