import { text } from 'node:stream/consumers';
import { expect } from 'chai';
import { KitMetrics, type MetricSources } from '../../../src/infra/metrics.js';
import { decide, INITIAL_PAYMENT } from '../../../src/merchant/orders/decide.js';
import { observeFinding, observeTransaction } from '../../../src/merchant/orders/from-gateway.js';
import type { TransactionFact } from '../../../src/merchant/orders/observation.js';
import {
  attachPlan,
  isMoneyWithNoAttempt,
  keptAfter,
  noAttemptReason,
} from '../../../src/merchant/orders/unmatched-money.js';
import { reportCsv } from '../../../src/merchant/reports/csv.js';
import { REPORT_COLUMNS } from '../../../src/merchant/reports/reconciliation.js';
import {
  UNMATCHED_COLUMNS,
  type UnmatchedMoneyRow,
  unmatchedRow,
  unmatchedTotals,
  unmatchedTotalsByMerchant,
} from '../../../src/merchant/reports/unmatched.js';
import type { UnmatchedMoneyRecord } from '../../../src/merchant/store/records.js';

/** issue 19, part 1: gateway money with no order, the pure rules and views. */

const fact = (over: Partial<TransactionFact> = {}): TransactionFact => ({
  id: '100123',
  relatedId: null,
  type: 'sale',
  status: 'captured',
  amountMinor: 100,
  currency: 'EUR',
  refundedMinor: 0,
  reference: 'shop-1',
  ...over,
});

const record = (over: Partial<UnmatchedMoneyRecord> = {}): UnmatchedMoneyRecord => ({
  id: 'umn_1',
  transaction_id: '100123',
  reference: 'shop-1',
  related_transaction_id: null,
  transaction_type: 'sale',
  status: 'captured',
  status_reason: null,
  amount_minor: 100,
  refunded_minor: 0,
  currency: 'EUR',
  capture_before: null,
  payment_status: 'paid',
  captured_minor: 100,
  disputed_minor: 0,
  money_at: null,
  source: 'webhook',
  source_id: 'evt_1',
  first_seen_at: new Date('2026-11-25T08:00:00Z'),
  last_seen_at: new Date('2026-11-25T09:00:00Z'),
  seen_count: 2,
  order_id: null,
  resolution: 'open',
  resolved_note: null,
  resolved_by: null,
  resolved_at: null,
  merchant_id: null,
  ...over,
});

const row = (over: Partial<UnmatchedMoneyRecord> = {}): UnmatchedMoneyRow => unmatchedRow(record(over));

describe('merchant: gateway money with no order', () => {
  it('is a transaction record found by its ids; not a finding, not an answer about an attempt', () => {
    const about = { orderId: 'ord_1', attemptId: 'att_1' };
    expect(
      isMoneyWithNoAttempt({ source: 'webhook', sourceId: 'evt_1', observedAt: 1, transaction: fact() }),
    ).to.equal(true);
    expect(
      isMoneyWithNoAttempt({ source: 'poll', sourceId: 'p', observedAt: 1, transaction: fact(), about }),
    ).to.equal(false);
    expect(isMoneyWithNoAttempt(observeFinding(about, { review: 'x' }, 's', 1))).to.equal(false);
  });

  it('flags its order with a reason that names the transaction, its status and its amount', () => {
    expect(noAttemptReason(fact())).to.equal(
      'gateway money with no attempt: transaction 100123 captured 1.00 EUR',
    );
    expect(
      noAttemptReason(
        fact({ id: '100124', relatedId: '100123', type: 'refund', status: 'refunded', amountMinor: 50 }),
      ),
    ).to.equal('gateway money with no attempt: transaction 100124 (refund of 100123) refunded 0.50 EUR');
    expect(noAttemptReason(fact({ currency: 'JPY', amountMinor: 500 }))).to.contain('captured 500 JPY');
    expect(noAttemptReason(fact({ currency: 'XYZ', amountMinor: 7 }))).to.contain('7 (minor units) XYZ');
  });

  it('the flag is a review finding: decide flags once per reason, whatever its source', () => {
    const about = { orderId: 'ord_1', attemptId: 'att_1' };
    const reason = noAttemptReason(fact());
    const finding = observeFinding(about, { review: reason }, 'evt_1', 1, 'webhook');
    expect(finding.source).to.equal('webhook');
    const order = { status: 'paid' as const, amountMinor: 100, currency: 'EUR' };
    const attempt = {
      kind: 'card' as const,
      sale: true,
      transactionId: '99',
      current: true,
      state: { ...INITIAL_PAYMENT, status: 'paid' as const, capturedMinor: 100 },
    };
    const first = decide(order, attempt, finding);
    expect(first).to.include({ outcome: 'flagged', review: reason, orderStatus: 'paid' });
    expect(decide({ ...order, reviewReason: reason }, attempt, finding).outcome).to.equal('duplicate');
  });

  it('keeps the furthest news of a transaction: older statuses and smaller refund totals do not replace it', () => {
    const kept = (...facts: Partial<TransactionFact>[]) =>
      facts.reduce((state, f) => keptAfter(state, fact(f)).payment, INITIAL_PAYMENT);
    const replaces = (before: Partial<TransactionFact>[], next: Partial<TransactionFact>) =>
      keptAfter(kept(...before), fact(next)).replaces;
    const auth = { type: 'auth', status: 'auth' };
    expect(replaces([auth], { type: 'auth', status: 'captured' })).to.equal(true);
    expect(replaces([{}], {}), 'the same news again').to.equal(true);
    expect(replaces([{}], { status: 'pending' })).to.equal(false);
    expect(replaces([{ type: 'auth', status: 'captured' }], auth)).to.equal(false);
    expect(replaces([{ refundedMinor: 30 }], { refundedMinor: 50 })).to.equal(true);
    expect(replaces([{ refundedMinor: 50 }], { refundedMinor: 30 })).to.equal(false);
    expect(replaces([{ status: 'refunded', refundedMinor: 100 }], {})).to.equal(false);
    expect(
      replaces([{ status: 'refunded', refundedMinor: 100 }], { status: 'chargeback', refundedMinor: 100 }),
    ).to.equal(true);
    expect(replaces([{}], { status: 'settled' }), 'a status we do not know is the last word').to.equal(true);
  });

  describe('attaching it to an order', () => {
    const sale = { transactionId: '100123', relatedId: null, type: 'sale', currency: 'EUR' };
    const order = { status: 'pending' as const, currency: 'EUR' };

    it('a payment: to a new attempt when the order has none or its last ended, else to the current attempt when it holds none', () => {
      expect(attachPlan(sale, { order, attempt: null })).to.deep.equal({ kind: 'adopt', newAttempt: true });
      expect(attachPlan(sale, { order, attempt: { status: 'pending', transactionId: null } })).to.deep.equal({
        kind: 'adopt',
        newAttempt: false,
      });
      for (const status of ['failed', 'cancelled', 'expired'] as const)
        expect(
          attachPlan(sale, { order: { ...order, status }, attempt: { status, transactionId: '7' } }),
          status,
        ).to.deep.equal({ kind: 'adopt', newAttempt: true });
    });

    it('refused: an order in another currency (422), an order holding another payment (409)', () => {
      expect(attachPlan(sale, { order: { ...order, currency: 'USD' }, attempt: null })).to.include({
        kind: 'refused',
        status: 422,
        code: 'VALIDATION_FAILED',
      });
      for (const status of ['paid', 'authorized', 'requires_action', 'pending', 'refunded'] as const) {
        const plan = attachPlan(sale, {
          order: { ...order, status },
          attempt: { status, transactionId: '7' },
        });
        expect(plan, status).to.include({ kind: 'refused', status: 409, code: 'ORDER_HAS_PAYMENT' });
      }
    });

    it('a capture, refund or void: only to the order whose payment is its parent', () => {
      const refund = { transactionId: '100124', relatedId: '100123', type: 'refund', currency: 'EUR' };
      expect(
        attachPlan(refund, { order, attempt: { status: 'paid', transactionId: '100123' } }),
      ).to.deep.equal({
        kind: 'child',
      });
      const elsewhere = attachPlan(refund, { order, attempt: { status: 'paid', transactionId: '9' } });
      expect(elsewhere).to.include({ kind: 'refused', status: 422 });
      expect((elsewhere as { message: string }).message).to.contain('100123');
      expect(attachPlan(refund, { order, attempt: null })).to.include({ kind: 'refused', status: 422 });
    });
  });

  describe('in the report', () => {
    it('a row: minor units with the formatted amount beside, times as ISO text', () => {
      expect(row({ currency: 'JPY', amount_minor: 500 })).to.include({
        amount: 500,
        amount_formatted: '500',
        refunded_amount_formatted: '0',
        first_seen_at: '2026-11-25T08:00:00.000Z',
        resolved_at: null,
      });
      expect(row({ currency: 'XYZ' }).amount_formatted).to.equal(null);
    });

    it('totals per currency: rows by resolution; money taken, given back (per payment, its running total) and net, attached money left out', () => {
      const totals = unmatchedTotals([
        record({
          id: 'a',
          transaction_id: '1',
          amount_minor: 1000,
          refunded_minor: 300,
          payment_status: 'partially_refunded',
          captured_minor: 1000,
        }),
        // The refund's own record carries its payment's running total: not added twice.
        record({
          id: 'b',
          transaction_id: '2',
          related_transaction_id: '1',
          transaction_type: 'refund',
          status: 'refunded',
          amount_minor: 300,
          refunded_minor: 300,
          payment_status: 'partially_refunded',
          captured_minor: null,
        }),
        ...['3', '4'].map((id, i) =>
          record({
            id: `auth-${id}`,
            transaction_id: id,
            transaction_type: 'auth',
            status: 'auth',
            amount_minor: [500, 700][i]!,
            payment_status: 'authorized',
            captured_minor: null,
          }),
        ),
        record({
          id: 'e',
          transaction_id: '5',
          related_transaction_id: '4',
          transaction_type: 'capture',
          status: 'captured',
          amount_minor: 700,
          captured_minor: 700,
        }),
        record({
          id: 'f',
          transaction_id: '6',
          status: 'failed',
          amount_minor: 900,
          payment_status: 'failed',
          captured_minor: null,
          resolution: 'resolved',
        }),
        record({
          id: 'g',
          transaction_id: '7',
          amount_minor: 2000,
          captured_minor: 2000,
          resolution: 'attached',
        }),
        record({ id: 'h', transaction_id: '8', currency: 'JPY', amount_minor: 500, captured_minor: 500 }),
      ]);
      expect(totals).to.deep.equal([
        {
          currency: 'EUR',
          rows: 7,
          open: 5,
          attached: 1,
          resolved: 1,
          captured: 1700,
          captured_formatted: '17.00',
          refunded: 300,
          refunded_formatted: '3.00',
          disputed: 0,
          disputed_formatted: '0.00',
          net: 1400,
          net_formatted: '14.00',
        },
        {
          currency: 'JPY',
          rows: 1,
          open: 1,
          attached: 0,
          resolved: 0,
          captured: 500,
          captured_formatted: '500',
          refunded: 0,
          refunded_formatted: '0',
          disputed: 0,
          disputed_formatted: '0',
          net: 500,
          net_formatted: '500',
        },
      ]);
      expect(unmatchedTotals([])).to.deep.equal([]);
    });

    it('CSV: the orders alone when there is no such money; else a blank line and a second table with its own header', async () => {
      const alone = await text(reportCsv([]));
      expect(alone).to.equal(`${REPORT_COLUMNS.join(',')}\n`);
      const both = await text(reportCsv([], [row({ resolved_note: 'a "test", really' })]));
      const [orders, money] = both.split('\n\n');
      expect(orders).to.equal(REPORT_COLUMNS.join(','));
      const lines = money!.trimEnd().split('\n');
      expect(lines[0]).to.equal(UNMATCHED_COLUMNS.join(','));
      expect(lines[1]).to.equal(
        // The last column, merchant_id, is empty: a kit that does not know its key's merchant id.
        'umn_1,100123,,shop-1,sale,captured,EUR,100,1.00,100,1.00,0,0.00,0,0.00,,webhook,evt_1,2026-11-25T08:00:00.000Z,2026-11-25T09:00:00.000Z,2,open,"a ""test"", really",,,',
      );
    });

    it("each row names its merchant (platform mode): the one it was kept for, or the kit's first when it names none", () => {
      expect(UNMATCHED_COLUMNS.at(-1)).to.equal('merchant_id');
      const served = [1001, 1004];
      expect(unmatchedRow(record({ merchant_id: 1004 }), served).merchant_id).to.equal(1004);
      expect(unmatchedRow(record({ merchant_id: null }), served).merchant_id).to.equal(1001);
      // A single shop: the merchant it knows, or none.
      expect(unmatchedRow(record({ merchant_id: null }), [1001]).merchant_id).to.equal(1001);
      expect(unmatchedRow(record({ merchant_id: null })).merchant_id).to.equal(null);
    });

    it('totals per merchant and currency: each merchant’s money apart (none named: the first’s), adding up to the totals', () => {
      const served = [1001, 1004];
      const records = [
        record({ id: 'a', transaction_id: '1', amount_minor: 1000, captured_minor: 1000, merchant_id: 1004 }),
        record({ id: 'b', transaction_id: '2', amount_minor: 300, captured_minor: 300, merchant_id: null }),
        record({ id: 'c', transaction_id: '3', amount_minor: 200, captured_minor: 200, merchant_id: 1001 }),
        record({
          id: 'd',
          transaction_id: '4',
          currency: 'USD',
          amount_minor: 50,
          captured_minor: 50,
          merchant_id: 1004,
        }),
      ];
      const by = unmatchedTotalsByMerchant(records, served);
      expect(by.map((t) => [t.merchant_id, t.currency, t.rows, t.captured, t.net])).to.deep.equal([
        [1001, 'EUR', 2, 500, 500],
        [1004, 'EUR', 1, 1000, 1000],
        [1004, 'USD', 1, 50, 50],
      ]);
      const { merchant_id: _, ...first } = by[0]!;
      expect(first).to.deep.equal(unmatchedTotals(records.filter((r) => r.merchant_id !== 1004))[0]);
      expect(unmatchedTotalsByMerchant([], served)).to.deep.equal([]);
    });
  });

  it('metrics: a counter of transactions first seen, and a gauge of open money read when scraped', async () => {
    const metrics = new KitMetrics();
    let open: Record<string, number> = { EUR: 2, USD: 1 };
    const counts = async () =>
      Object.entries(open).map(([currency, n]) => ({ merchant_id: null, currency, open: n }));
    metrics.watch({ unmatchedOpen: counts } as Partial<MetricSources> as MetricSources);
    metrics.unmatchedMoney('EUR');
    metrics.unmatchedMoney('EUR');
    let scrape = await metrics.text();
    expect(scrape).to.match(/^kit_unmatched_money_total\{currency="EUR"\} 2$/m);
    expect(scrape).to.match(/^kit_unmatched_money_open\{currency="EUR"\} 2$/m);
    expect(scrape).to.match(/^kit_unmatched_money_open\{currency="USD"\} 1$/m);
    open = { EUR: 1 };
    scrape = await metrics.text();
    expect(scrape).to.match(/^kit_unmatched_money_open\{currency="EUR"\} 1$/m);
    expect(scrape, 'a currency with nothing open any more is not stuck at its last count').to.not.contain(
      'kit_unmatched_money_open{currency="USD"}',
    );
  });

  it('metrics in platform mode: both carry the merchant whose endpoint the money came to (none named: the first)', async () => {
    const metrics = new KitMetrics({ merchants: [1001, 1004] });
    const open = [
      { merchant_id: 1004, currency: 'EUR', open: 2 },
      { merchant_id: null, currency: 'EUR', open: 1 },
      { merchant_id: 1001, currency: 'EUR', open: 1 },
    ];
    metrics.watch({ unmatchedOpen: async () => open } as Partial<MetricSources> as MetricSources);
    metrics.unmatchedMoney('EUR', 1004);
    metrics.unmatchedMoney('EUR', null);
    const scrape = await metrics.text();
    expect(scrape).to.match(/^kit_unmatched_money_total\{merchant="1004",currency="EUR"\} 1$/m);
    expect(scrape).to.match(/^kit_unmatched_money_total\{merchant="1001",currency="EUR"\} 1$/m);
    // The money naming no merchant is the first's: summed into its series.
    expect(scrape).to.match(/^kit_unmatched_money_open\{merchant="1001",currency="EUR"\} 2$/m);
    expect(scrape).to.match(/^kit_unmatched_money_open\{merchant="1004",currency="EUR"\} 2$/m);
  });

  it('an event payload read for the reconciler carries what the row keeps', () => {
    const obs = observeTransaction(
      {
        id: '100123',
        related_trans_id: null,
        amount: 100,
        currency: 'EUR',
        status: 'captured',
        transaction_type: 'sale',
        merchant_trans_id: 'shop-1',
        refunded_amount: 0,
      },
      'webhook',
      'evt_1',
      1,
    );
    expect(isMoneyWithNoAttempt(obs)).to.equal(true);
    expect(obs.transaction).to.include({
      id: '100123',
      reference: 'shop-1',
      amountMinor: 100,
      currency: 'EUR',
    });
  });
});
