import { expect } from 'chai';
import {
  type DocumentedOrderEvent,
  orderEventSchema,
} from '../../../src/merchant/http/api-document/order-events.js';
import { merchantApi } from '../../../src/merchant/http/api-document.js';
import { ORDER_EVENT_TYPES } from '../../../src/merchant/orders/order-events.js';
import {
  orderEventPayload,
  type ViewedAttempt,
  type ViewedOrder,
} from '../../../src/merchant/orders/order-view.js';
import { apiDocument } from '../../../src/shared/api-document.js';
import { webhookBodyChecker } from '../../support/api-document.js';

const order: ViewedOrder = {
  id: 'ord_1',
  merchant_id: null,
  reference: 'shop-1001',
  status: 'partially_refunded',
  amount_minor: 4990,
  currency: 'EUR',
  captured_minor: 4990,
  refunded_minor: 1000,
  disputed_minor: 0,
  description: 'Two books',
  customer: { email: 'ada@example.com', country_code: 'GB' },
  failure_code: null,
  needs_review: false,
  review_reason: null,
  closed_reason: null,
  closed_at: null,
  created_at: new Date('2026-03-01T10:00:00.000Z'),
  updated_at: new Date('2026-03-01T10:05:00.000Z'),
};
const attempt: ViewedAttempt = {
  id: 'att_1',
  kind: 'card',
  mode: 'sale',
  payment_method: null,
  saved_card_id: null,
  gateway_transaction_id: 'txn_1',
  payment_session_id: null,
  action_url: null,
  capture_before: null,
};
const at = new Date('2026-03-01T10:05:00.000Z');

/**
 * Issue 42, part 5: the merchant document's webhooks are the order events the kit sends the shop
 * (outbox/endpoint.ts), one a type, each body what orders/order-view.ts's orderEventPayload writes.
 */
describe('the merchant API document: order events as webhooks', () => {
  const document = apiDocument(merchantApi);

  it('has one webhook for each order event type, POSTed with the Standard Webhooks headers, answered 2xx', () => {
    expect(Object.keys(document.webhooks ?? {})).to.deep.equal([...ORDER_EVENT_TYPES]);
    for (const type of ORDER_EVENT_TYPES) {
      const post = document.webhooks?.[type]?.post;
      expect(post, type).to.not.equal(undefined);
      const headers = (post!.parameters ?? []).map((p) => 'in' in p && `${p.in} ${p.name} ${p.required}`);
      expect(headers, type).to.deep.equal([
        'header webhook-id true',
        'header webhook-timestamp true',
        'header webhook-signature true',
      ]);
      expect(post!.requestBody).to.include({ required: true });
      expect(Object.keys(post!.responses ?? {})).to.deep.equal(['2XX', 'default']);
    }
    // Rendered as responses are, then moved: no placeholder path is left.
    expect(Object.keys(document.paths ?? {}).filter((p) => p.includes('webhook-body'))).to.deep.equal([]);
  });

  it("describes each event's body as the kit writes it: every field, and no other", async () => {
    const check = await webhookBodyChecker(document);
    for (const type of ORDER_EVENT_TYPES) {
      const sent = JSON.parse(JSON.stringify(orderEventPayload(type, at, order, attempt)));
      expect(check(type, sent), type).to.equal('');
      // The schema is the one the kit's own zod types come from.
      const parsed: DocumentedOrderEvent = orderEventSchema.parse(sent);
      expect(parsed.type).to.equal(type);
    }
    const withoutAttempt = JSON.parse(JSON.stringify(orderEventPayload('order.failed', at, order, null)));
    expect(check('order.failed', withoutAttempt)).to.equal('');
    // Another type's webhook, a field the code does not write, a missing one: each named.
    const paid = JSON.parse(JSON.stringify(orderEventPayload('order.paid', at, order, attempt)));
    expect(check('order.refunded', paid)).to.contain('/type');
    expect(check('order.paid', { ...paid, data: { order: { ...paid.data.order, secret: 1 } } })).to.contain(
      'secret',
    );
    const { timestamp: _, ...untimed } = paid;
    expect(check('order.paid', untimed)).to.contain('timestamp');
  });

  it('puts each type in its own component, named by it, with the order as the API answers it', () => {
    const schemas = document.components?.schemas ?? {};
    expect(schemas).to.include.keys([
      'OrderPaidEvent',
      'OrderPartiallyRefundedEvent',
      'OrderDisputeWonEvent',
    ]);
    expect(JSON.stringify(schemas.OrderPaidEvent)).to.contain('"#/components/schemas/Order"');
    // Rendered as the code writes it (zod's output): the answers' Order, not a second one for input.
    expect(schemas).to.not.have.key('OrderOutput');
  });
});
