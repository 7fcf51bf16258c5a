import { expect } from 'chai';
import {
  type AttemptFacts,
  decide,
  INITIAL_PAYMENT,
  joinPayment,
  type PaymentState,
} from '../../../src/merchant/orders/decide.js';
import type { TransactionFact } from '../../../src/merchant/orders/observation.js';
import { keptAfter, paymentColumns } from '../../../src/merchant/orders/unmatched-money.js';
import { unmatchedRow, unmatchedTotals } from '../../../src/merchant/reports/unmatched.js';
import type { UnmatchedMoneyRecord } from '../../../src/merchant/store/records.js';

/**
 * issue 44, part 2: gateway money with no order carries its chargeback and refunds as an order does,
 * by decide's own rule (keptAfter, joinPayment): a chargeback counts, its reversal gives it back, and
 * whatever order the records arrive in, the rows and the totals end as the gateway's latest word.
 */

const record = (over: Partial<TransactionFact>): TransactionFact => ({
  id: '500',
  relatedId: null,
  type: 'sale',
  status: 'captured',
  amountMinor: 1000,
  currency: 'EUR',
  refundedMinor: 0,
  reference: 'elsewhere-1',
  chargebackMinor: 0,
  updatedAt: 1_000,
  ...over,
});

/** Every order of `items`. */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/** The rows the store keeps of `arrivals`, one per transaction, by its rule (store/unmatched.ts keep). */
function keep(arrivals: readonly TransactionFact[]): UnmatchedMoneyRecord[] {
  const rows = new Map<string, { facts: TransactionFact; payment: PaymentState }>();
  for (const t of arrivals) {
    const kept = rows.get(t.id);
    const news = keptAfter(kept?.payment ?? INITIAL_PAYMENT, t);
    rows.set(t.id, { facts: !kept || news.replaces ? t : kept.facts, payment: news.payment });
  }
  return [...rows.values()].map(({ facts, payment }) => ({
    id: `umn_${facts.id}`,
    transaction_id: facts.id,
    reference: facts.reference ?? null,
    related_transaction_id: facts.relatedId,
    transaction_type: facts.type,
    status: facts.status,
    status_reason: null,
    amount_minor: facts.amountMinor,
    currency: facts.currency,
    capture_before: null,
    ...paymentColumns(payment),
    source: 'webhook',
    source_id: `evt_${facts.id}`,
    first_seen_at: new Date(0),
    last_seen_at: new Date(0),
    seen_count: 1,
    order_id: null,
    resolution: 'open',
    resolved_note: null,
    resolved_by: null,
    resolved_at: null,
    merchant_id: null,
  }));
}

const money = (rows: UnmatchedMoneyRecord[]) => {
  const [t] = unmatchedTotals(rows);
  return { captured: t!.captured, refunded: t!.refunded, disputed: t!.disputed, net: t!.net };
};

describe('merchant: gateway money with no order, charged back (issue 44)', () => {
  // A sale of 10.00 captured, then 4.00 of it charged back, then the dispute won: later each time.
  const captured = record({ updatedAt: 1_000 });
  const chargeback = record({ status: 'chargeback', chargebackMinor: 400, updatedAt: 2_000 });
  const reversal = record({ status: 'captured', chargebackMinor: 0, updatedAt: 3_000 });

  it('a chargeback in part counts as taken back, in the row and the totals; net after it', () => {
    const rows = keep([captured, chargeback]);
    expect(unmatchedRow(rows[0]!)).to.include({
      status: 'chargeback',
      captured_amount: 1000,
      refunded_amount: 0,
      disputed_amount: 400,
      disputed_amount_formatted: '4.00',
    });
    expect(money(rows)).to.deep.equal({ captured: 1000, refunded: 0, disputed: 400, net: 600 });
  });

  it('its reversal is news, not older news: the money is the shop’s again, whatever the order of arrival', () => {
    for (const arrivals of permutations([captured, chargeback, reversal])) {
      for (const twice of [arrivals, [...arrivals, ...arrivals.slice(0, 2)]]) {
        const rows = keep(twice);
        const what = twice.map((t) => `${t.status}@${t.updatedAt}`).join(', ');
        expect(rows[0], what).to.include({ status: 'captured', payment_status: 'paid', disputed_minor: 0 });
        expect(money(rows), what).to.deep.equal({ captured: 1000, refunded: 0, disputed: 0, net: 1000 });
      }
    }
  });

  it('charged back without a reversal, whatever the order: disputed by the amount the gateway says', () => {
    for (const arrivals of permutations([captured, chargeback, captured])) {
      const rows = keep(arrivals);
      expect(rows[0]).to.include({ status: 'chargeback', payment_status: 'disputed', disputed_minor: 400 });
      expect(money(rows)).to.deep.equal({ captured: 1000, refunded: 0, disputed: 400, net: 600 });
    }
  });

  it('a refund kept as its own row, a chargeback of what is left and its reversal: one payment, joined by its latest record, whatever the order', () => {
    const refund = record({
      id: '501',
      relatedId: '500',
      type: 'refund',
      status: 'refunded',
      amountMinor: 300,
      refundedMinor: 300,
      updatedAt: 1_500,
    });
    const after = { refundedMinor: 300 };
    const charged = record({ ...after, status: 'chargeback', chargebackMinor: 200, updatedAt: 2_000 });
    const won = record({ ...after, status: 'captured', chargebackMinor: 0, updatedAt: 3_000 });
    for (const arrivals of permutations([captured, refund, charged])) {
      const rows = keep(arrivals);
      expect(money(rows)).to.deep.equal({ captured: 1000, refunded: 300, disputed: 200, net: 500 });
      // The rows in any order make the same payment.
      expect(money([...rows].reverse())).to.deep.equal(money(rows));
    }
    for (const arrivals of permutations([captured, refund, charged, won]))
      expect(money(keep(arrivals))).to.deep.equal({ captured: 1000, refunded: 300, disputed: 0, net: 700 });
  });

  it('an auth and its capture, the auth charged back then reversed: the capture says what was taken, the auth whether it is charged back', () => {
    const auth = { id: '600', type: 'auth', amountMinor: 900 };
    const records = [
      record({ ...auth, status: 'auth', updatedAt: 500 }),
      record({ id: '601', relatedId: '600', type: 'capture', amountMinor: 700, updatedAt: 1_000 }),
      record({ ...auth, status: 'captured', updatedAt: 1_000 }),
      record({ ...auth, status: 'chargeback', chargebackMinor: 700, updatedAt: 2_000 }),
    ];
    const reversed = record({ ...auth, status: 'captured', chargebackMinor: 0, updatedAt: 3_000 });
    for (const arrivals of permutations(records))
      expect(money(keep(arrivals))).to.deep.equal({ captured: 700, refunded: 0, disputed: 700, net: 0 });
    for (const arrivals of permutations([...records, reversed]))
      expect(money(keep(arrivals))).to.deep.equal({ captured: 700, refunded: 0, disputed: 0, net: 700 });
  });

  it('one payment from its parts: joinPayment reads each state as a record, so the order of the parts does not matter', () => {
    const sale: PaymentState = {
      ...INITIAL_PAYMENT,
      status: 'disputed',
      capturedMinor: 1000,
      moneyAt: 2,
      disputedMinor: 400,
    };
    const refund: PaymentState = {
      ...INITIAL_PAYMENT,
      status: 'partially_refunded',
      refundedMinor: 300,
      moneyAt: 1,
    };
    const want = {
      status: 'disputed',
      capturedMinor: 1000,
      refundedMinor: 300,
      disputedMinor: 400,
      moneyAt: 2,
    };
    expect(joinPayment([sale, refund])).to.include(want);
    expect(joinPayment([refund, sale])).to.include(want);
    expect(joinPayment([])).to.deep.equal(INITIAL_PAYMENT);
  });

  it("an order: a chargeback that arrives after its own reversal is older news (stale), so the gateway's word beside the order stays captured", () => {
    const attempt = (state: PaymentState): AttemptFacts => ({
      kind: 'card',
      sale: true,
      transactionId: '500',
      current: true,
      state,
    });
    const order = { status: 'paid' as const, amountMinor: 1000, currency: 'EUR' };
    const obs = (t: TransactionFact, n: number) => ({
      source: 'webhook' as const,
      sourceId: `evt_${n}`,
      observedAt: n,
      transaction: t,
    });
    const paid = decide(order, attempt(INITIAL_PAYMENT), obs(captured, 1)).attempt;
    const won = decide(order, attempt(paid), obs(reversal, 2));
    expect(won).to.include({ outcome: 'applied', orderStatus: 'paid' });
    const late = decide(order, attempt(won.attempt), obs(chargeback, 3));
    expect(late).to.include({ outcome: 'stale', orderStatus: 'paid' });
    expect(late.attempt).to.equal(won.attempt);
  });
});
