import { expect } from 'chai';
import { nextAction, orderView, publicOrderView } from '../../../src/merchant/orders/order-view.js';
import type { OrderStatus } from '../../../src/merchant/orders/status.js';
import type { AttemptRecord, OrderRecord } from '../../../src/merchant/store/records.js';

/** The public order view: what anyone holding an order's id reads (GET /orders/{id} without a token). */
const T = new Date(Date.UTC(2026, 10, 25, 9));
const PAGE = 'https://gateway.example/hosted/3ds/tds_1';
const order = (over: Partial<OrderRecord> = {}): OrderRecord => ({
  id: 'ord_1',
  merchant_id: null,
  reference: 'shop-1001',
  amount_minor: 2500,
  currency: 'EUR',
  description: 'A first edition',
  customer: { email: 'ada@example.com', last_name: 'Lovelace' },
  status: 'requires_action',
  captured_minor: null,
  refunded_minor: 0,
  disputed_minor: 0,
  failure_code: 'ERR_3DS_FAILED',
  needs_review: true,
  review_reason: 'look at it',
  resolved_reasons: null,
  review_resolution: null,
  review_resolved_by: null,
  review_resolved_at: null,
  current_attempt_id: 'att_1',
  version: 2,
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
  gateway_transaction_id: null,
  payment_session_id: null,
  verification_id: 'tds_1',
  status: 'requires_action',
  captured_minor: null,
  refunded_minor: 0,
  disputed_minor: 0,
  capture_id: null,
  failure_code: null,
  session_expires_at: null,
  action_url: PAGE,
  capture_before: null,
  money_at: null,
  gateway_status: null,
  gateway_amount_minor: null,
  gateway_currency: null,
  gateway_captured_minor: null,
  gateway_refunded_minor: null,
  observed_at: null,
  observed_source: null,
  created_at: T,
  updated_at: T,
  ...over,
});

describe('merchant: the public order view', () => {
  it('has the status, the amounts and next_action, and nothing of who pays or what operators know', () => {
    const shown = publicOrderView(order(), attempt());
    expect(shown).to.deep.equal({
      id: 'ord_1',
      reference: 'shop-1001',
      status: 'requires_action',
      closed_reason: null,
      amount: 2500,
      amount_formatted: '25.00',
      currency: 'EUR',
      captured_amount: null,
      captured_amount_formatted: null,
      refunded_amount: 0,
      refunded_amount_formatted: '0.00',
      disputed_amount: 0,
      disputed_amount_formatted: '0.00',
      next_action: { type: 'redirect', url: PAGE },
      updated_at: T.toISOString(),
    });
    expect(JSON.stringify(shown)).to.not.match(/ada@example|Lovelace|first edition|ERR_3DS|look at it/);
  });

  it('leaves out a column it was not told about: the view is a list, not the record minus some', () => {
    const withMore = { ...order(), card_fingerprint: 'fp_1', internal_note: 'x' } as OrderRecord;
    expect(publicOrderView(withMore, attempt())).to.not.have.any.keys('card_fingerprint', 'internal_note');
    // The operator's view is a list too.
    expect(orderView(withMore, attempt())).to.not.have.any.keys('card_fingerprint', 'internal_note');
  });

  it('names the page only while the order waits on the shopper and its attempt has one', () => {
    expect(nextAction(order(), attempt())).to.deep.equal({ type: 'redirect', url: PAGE });
    for (const status of ['pending', 'paid', 'authorized', 'failed'] as OrderStatus[])
      expect(nextAction(order({ status }), attempt()), status).to.equal(null);
    expect(nextAction(order(), attempt({ action_url: null }))).to.equal(null);
    expect(nextAction(order(), null)).to.equal(null);
    expect(nextAction(order())).to.equal(null);
  });
});
