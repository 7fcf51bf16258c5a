import { expect } from 'chai';
import { observeTransaction } from '../../../src/merchant/orders/from-gateway.js';
import { viewAfter } from '../../../src/merchant/orders/gateway-view.js';
import { merchantFilter, merchantOf } from '../../../src/merchant/orders/order-merchant.js';
import {
  classify,
  REPORT_COLUMNS,
  reportRow,
  totalsByMerchant,
  totalsOf,
} from '../../../src/merchant/reports/reconciliation.js';
import type { AttemptRecord, OrderRecord } from '../../../src/merchant/store/records.js';

/** merchant.md, HTTP interface (the reconciliation report): what each order is called, and why. */
const T = new Date(Date.UTC(2026, 10, 23, 12));
const order = (over: Partial<OrderRecord> = {}): OrderRecord => ({
  id: 'ord_1',
  merchant_id: null,
  reference: 'ref-1',
  amount_minor: 1000,
  currency: 'EUR',
  description: null,
  customer: null,
  status: 'paid',
  captured_minor: 1000,
  refunded_minor: 0,
  disputed_minor: 0,
  failure_code: null,
  needs_review: false,
  review_reason: null,
  resolved_reasons: null,
  review_resolution: null,
  review_resolved_by: null,
  review_resolved_at: null,
  current_attempt_id: 'att_1',
  version: 3,
  next_poll_at: null,
  closed_reason: null,
  closed_at: null,
  created_at: T,
  updated_at: T,
  ...over,
});
const attempt = (over: Partial<AttemptRecord> = {}): AttemptRecord => ({
  id: 'att_1',
  order_id: 'ord_1',
  kind: 'card',
  mode: 'sale',
  payment_method: null,
  saved_card_id: null,
  gateway_transaction_id: '100',
  capture_before: null,
  money_at: null,
  payment_session_id: null,
  verification_id: null,
  status: 'paid',
  captured_minor: 1000,
  refunded_minor: 0,
  disputed_minor: 0,
  capture_id: null,
  failure_code: null,
  session_expires_at: null,
  action_url: null,
  gateway_status: 'captured',
  gateway_amount_minor: 1000,
  gateway_currency: 'EUR',
  gateway_captured_minor: 1000,
  gateway_refunded_minor: 0,
  observed_at: T,
  observed_source: 'webhook',
  created_at: T,
  updated_at: T,
  ...over,
});

describe('merchant: the reconciliation report (classify, rows, totals)', () => {
  it('matched: the order and the gateway agree', () => {
    expect(classify(order(), attempt())).to.deep.equal({ classification: 'matched', reason: '' });
    expect(
      classify(
        order({ status: 'partially_refunded', refunded_minor: 250 }),
        attempt({ gateway_refunded_minor: 250 }),
      ).classification,
    ).to.equal('matched');
    expect(
      classify(order({ status: 'expired', captured_minor: null }), attempt({ gateway_status: 'cancelled' })),
    ).to.include({ classification: 'matched' });
  });

  it('matched: nothing reached the gateway (not paid for yet, or refused before any transaction)', () => {
    expect(
      classify(order({ status: 'pending', current_attempt_id: null, captured_minor: null }), null),
    ).to.deep.equal({
      classification: 'matched',
      reason: 'not paid for yet',
    });
    const refused = attempt({ gateway_transaction_id: null, verification_id: 'tds_1', gateway_status: null });
    expect(classify(order({ status: 'failed', captured_minor: null }), refused).reason).to.equal(
      'nothing reached the gateway',
    );
  });

  it('in flight: a matter of timing', () => {
    const open = attempt({ gateway_status: 'pending', gateway_captured_minor: null, kind: 'redirect' });
    expect(classify(order({ status: 'requires_action', captured_minor: null }), open)).to.deep.equal({
      classification: 'in_flight',
      reason: 'the gateway has not finished the payment',
    });
    const challenge = attempt({
      gateway_transaction_id: null,
      verification_id: 'tds_1',
      gateway_status: null,
    });
    expect(
      classify(order({ status: 'requires_action', captured_minor: null }), challenge).classification,
    ).to.equal('in_flight');
    const unknownAmount = attempt({ mode: 'auth', gateway_captured_minor: null });
    expect(classify(order({ captured_minor: null }), unknownAmount)).to.deep.equal({
      classification: 'in_flight',
      reason: 'captured at the gateway; the amount comes with its event',
    });
  });

  it('mismatched: an integrity problem, with the reason', () => {
    expect(
      classify(order({ needs_review: true, review_reason: 'a second capture 7 after 5' }), attempt()),
    ).to.deep.equal({
      classification: 'mismatched',
      reason: 'a second capture 7 after 5',
    });
    expect(classify(order(), attempt({ gateway_currency: 'USD' })).reason).to.equal(
      'currency USD at the gateway, EUR on the order',
    );
    expect(classify(order(), attempt({ gateway_amount_minor: 999 })).reason).to.equal(
      'amount 999 at the gateway, 1000 on the order',
    );
    expect(classify(order({ status: 'authorized' }), attempt()).reason).to.equal(
      'the order is authorized, the gateway said captured',
    );
    expect(
      classify(
        order({ refunded_minor: 100, status: 'partially_refunded' }),
        attempt({ gateway_refunded_minor: 200 }),
      ).classification,
    ).to.equal('mismatched');
  });

  describe('a review a person resolved (issue 42, part 6)', () => {
    const AT = new Date(Date.UTC(2026, 10, 24, 9, 30));
    const accepted = (over: Partial<OrderRecord> = {}) =>
      order({
        review_resolution: 'accepted',
        review_resolved_by: 'fran (finance)',
        review_resolved_at: AT,
        resolved_reasons: "amount 500 differs from the order's 1000",
        ...over,
      });
    const differs = attempt({ gateway_amount_minor: 500, gateway_captured_minor: 500 });

    it('accepted: what still differs is resolved, not an open mismatch; the row says who decided it and when', () => {
      const row = reportRow(accepted(), differs);
      expect(row).to.include({
        classification: 'resolved',
        reason: 'amount 500 at the gateway, 1000 on the order',
        match: false,
        review: 'accepted',
        reviewed_by: 'fran (finance)',
        reviewed_at: AT.toISOString(),
      });
      // Unresolved, the same row is an open mismatch, with no review.
      expect(reportRow(order(), differs)).to.include({
        classification: 'mismatched',
        review: null,
        reviewed_by: null,
        reviewed_at: null,
      });
    });

    it('every resolution is a decision: refunded, corrected, written off, a false alarm', () => {
      for (const resolution of ['refunded', 'corrected', 'written_off', 'false_alarm'] as const)
        expect(reportRow(accepted({ review_resolution: resolution }), differs), resolution).to.include({
          classification: 'resolved',
          review: resolution,
        });
    });

    it('resolved and now agreeing: matched, the review still shown', () => {
      expect(reportRow(accepted(), attempt())).to.include({
        classification: 'matched',
        reason: '',
        match: true,
        review: 'accepted',
      });
    });

    it('flagged again after a resolution: an open mismatch, review open, the new reason', () => {
      const again = accepted({ needs_review: true, review_reason: 'a second capture 7 after 5' });
      expect(reportRow(again, differs)).to.include({
        classification: 'mismatched',
        reason: 'a second capture 7 after 5',
        review: 'open',
        reviewed_by: null,
        reviewed_at: null,
      });
      expect(reportRow(order({ needs_review: true, review_reason: 'x' }), attempt())).to.include({
        review: 'open',
      });
    });

    it('totals count resolved orders apart from the open mismatches', () => {
      const totals = totalsOf([
        reportRow(accepted({ id: 'a' }), differs),
        reportRow(order({ id: 'b' }), differs),
        reportRow(order({ id: 'c' }), attempt()),
      ]);
      expect(totals[0]).to.include({ orders: 3, mismatched: 1, resolved: 1, in_flight: 0 });
    });
  });

  it('a row carries both sides in minor units and formatted, and the boolean match', () => {
    const row = reportRow(
      order({ currency: 'KWD', amount_minor: 1234, captured_minor: 1234 }),
      attempt({ gateway_currency: 'KWD', gateway_amount_minor: 1234, gateway_captured_minor: 1234 }),
    );
    expect(row).to.include({
      amount: 1234,
      amount_formatted: '1.234',
      gateway_amount_formatted: '1.234',
      classification: 'matched',
      match: true,
      observed_source: 'webhook',
      observed_at: T.toISOString(),
    });
    expect(Object.keys(row)).to.deep.equal([...REPORT_COLUMNS]);
  });

  it('totals per currency: orders, captured, refunded, disputed, net after chargebacks, exactly, in minor units', () => {
    const rows = [
      // Captured 20.00, refunded 5.00, then 10.00 charged back: the shop keeps 5.00.
      reportRow(
        order({
          id: 'd',
          amount_minor: 2000,
          captured_minor: 2000,
          refunded_minor: 500,
          disputed_minor: 1000,
          status: 'disputed',
        }),
        attempt({
          gateway_status: 'chargeback',
          gateway_amount_minor: 2000,
          gateway_captured_minor: 2000,
          gateway_refunded_minor: 500,
        }),
      ),
      reportRow(
        order({ id: 'a', captured_minor: 1000, refunded_minor: 300, status: 'partially_refunded' }),
        attempt({ gateway_refunded_minor: 300 }),
      ),
      reportRow(
        order({ id: 'b', captured_minor: 1 }),
        attempt({ gateway_amount_minor: 1000, gateway_captured_minor: 2 }),
      ),
      reportRow(
        order({ id: 'c', currency: 'JPY', amount_minor: 500, captured_minor: 500 }),
        attempt({ gateway_currency: 'JPY', gateway_amount_minor: 500, gateway_captured_minor: 500 }),
      ),
    ];
    expect(totalsOf(rows)).to.deep.equal([
      {
        currency: 'EUR',
        orders: 3,
        captured: 3001,
        refunded: 800,
        disputed: 1000,
        net: 1201,
        in_flight: 0,
        mismatched: 1,
        resolved: 0,
        captured_formatted: '30.01',
        refunded_formatted: '8.00',
        disputed_formatted: '10.00',
        net_formatted: '12.01',
      },
      {
        currency: 'JPY',
        orders: 1,
        captured: 500,
        refunded: 0,
        disputed: 0,
        net: 500,
        in_flight: 0,
        mismatched: 0,
        resolved: 0,
        captured_formatted: '500',
        refunded_formatted: '0',
        disputed_formatted: '0',
        net_formatted: '500',
      },
    ]);
    expect(totalsOf([])).to.deep.equal([]);
  });

  describe('per merchant (platform mode, issue 45)', () => {
    const paid = (id: string, merchant: number | null, currency = 'EUR', minor = 1000) =>
      order({ id, merchant_id: merchant, currency, amount_minor: minor, captured_minor: minor });
    const sale = (currency = 'EUR', minor = 1000) =>
      attempt({ gateway_currency: currency, gateway_amount_minor: minor, gateway_captured_minor: minor });

    it("a row names the order's merchant; an order naming none is the first served merchant's", () => {
      expect(reportRow(paid('a', 1004), sale(), undefined, null, [1001, 1004]).merchant_id).to.equal(1004);
      expect(reportRow(paid('b', null), sale(), undefined, null, [1001, 1004]).merchant_id).to.equal(1001);
      expect(reportRow(paid('c', null), sale()).merchant_id, 'served unknown: as the order has it').to.equal(
        null,
      );
      expect(merchantOf(null, [])).to.equal(null);
      expect(merchantOf(1004, [1001])).to.equal(1004);
      expect(merchantFilter(1001, [1001, 1004])).to.deep.equal({ ids: [1001], unnamed: true });
      expect(merchantFilter(1004, [1001, 1004])).to.deep.equal({ ids: [1004], unnamed: false });
    });

    it('totals per merchant and currency, by merchant then currency; their sums are the totals per currency', () => {
      const served = [1001, 1004];
      const rows = [
        reportRow(paid('a', 1004, 'EUR', 3000), sale('EUR', 3000), undefined, null, served),
        reportRow(paid('b', null, 'EUR', 1000), sale('EUR', 1000), undefined, null, served),
        reportRow(paid('c', 1001, 'GBP', 750), sale('GBP', 750), undefined, null, served),
        reportRow(paid('d', 1004, 'EUR', 1200), sale('EUR', 1200), undefined, null, served),
        reportRow(
          order({ id: 'e', merchant_id: 1004, captured_minor: 1 }),
          attempt({ gateway_captured_minor: 2 }),
          undefined,
          null,
          served,
        ),
      ];
      const by = totalsByMerchant(rows);
      expect(by.map((t) => [t.merchant_id, t.currency, t.orders, t.captured, t.mismatched])).to.deep.equal([
        [1001, 'EUR', 1, 1000, 0],
        [1001, 'GBP', 1, 750, 0],
        [1004, 'EUR', 3, 4201, 1],
      ]);
      expect(by[0]).to.deep.equal({ merchant_id: 1001, ...totalsOf([rows[1]!])[0]! });
      for (const total of totalsOf(rows)) {
        const lines = by.filter((t) => t.currency === total.currency);
        expect(lines.reduce((n, t) => n + t.net, 0)).to.equal(total.net);
        expect(lines.reduce((n, t) => n + t.orders, 0)).to.equal(total.orders);
      }
      expect(totalsByMerchant([])).to.deep.equal([]);
    });

    it("one merchant's kit: one merchant's lines, the same figures as the totals per currency", () => {
      const rows = [reportRow(paid('a', 1001), sale(), undefined, null, [1001])];
      expect(totalsByMerchant(rows)).to.deep.equal(totalsOf(rows).map((t) => ({ merchant_id: 1001, ...t })));
    });
  });
});

describe('merchant: what the gateway last said (viewAfter)', () => {
  const fact = (over: Record<string, unknown>) =>
    observeTransaction(
      {
        id: '100',
        related_trans_id: null,
        transaction_type: 'auth',
        status: 'auth',
        amount: 1000,
        currency: 'EUR',
        refunded_amount: 0,
        ...over,
      } as never,
      'webhook',
      'evt',
      Date.UTC(2026, 10, 23),
    );
  const auth = { transactionId: '100', sale: false };

  it('the attempt own record, then a capture, a partial refund and a full one', () => {
    let view = viewAfter(null, fact({}), auth);
    expect(view).to.include({ status: 'auth', amountMinor: 1000, capturedMinor: null, refundedMinor: 0 });
    view = viewAfter(
      view,
      fact({
        id: '101',
        related_trans_id: '100',
        transaction_type: 'capture',
        status: 'captured',
        amount: 800,
      }),
      auth,
    );
    expect(view).to.include({ status: 'captured', capturedMinor: 800, amountMinor: 1000 });
    view = viewAfter(
      view,
      fact({
        id: '102',
        related_trans_id: '100',
        transaction_type: 'refund',
        status: 'refunded',
        amount: 300,
        refunded_amount: 300,
      }),
      auth,
    );
    expect(view).to.include({ status: 'captured', refundedMinor: 300 });
    view = viewAfter(
      view,
      fact({
        id: '103',
        related_trans_id: '100',
        transaction_type: 'refund',
        status: 'refunded',
        amount: 500,
        refunded_amount: 800,
      }),
      auth,
    );
    expect(view).to.include({ status: 'refunded', refundedMinor: 800 });
  });

  it("a sale's own record says how much was captured; a void ends an auth; a child first says nothing", () => {
    expect(
      viewAfter(null, fact({ transaction_type: 'sale', status: 'captured' }), {
        transactionId: '100',
        sale: true,
      }),
    ).to.include({
      capturedMinor: 1000,
    });
    const authView = viewAfter(null, fact({}), auth);
    expect(
      viewAfter(
        authView,
        fact({ id: '104', related_trans_id: '100', transaction_type: 'void', status: 'voided' }),
        auth,
      ),
    ).to.include({ status: 'voided' });
    expect(
      viewAfter(
        null,
        fact({ id: '104', related_trans_id: '100', transaction_type: 'void', status: 'voided' }),
        auth,
      ),
    ).to.equal(null);
  });
});
