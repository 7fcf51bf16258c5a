import { randomBytes } from 'node:crypto';
import {
  createKitClient,
  isOrderEvent,
  ORDER_EVENT_TYPES,
  type OrderEvent,
  type OrderEventHeaders,
  type OrderEventOf,
  type OrderEventType,
} from '@merchant-kit/client';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { ORDER_EVENT_TYPES as KIT_EVENT_TYPES } from '../../../src/merchant/orders/order-events.js';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { webhookBodyChecker } from '../../support/api-document.js';
import { card } from '../../support/gateway.js';
import { OPS_TOKEN, startTestKit, type TestKit } from '../../support/kit.js';
import { type Receiver, startReceiver } from '../../support/receiver.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/** What a shop's endpoint does with a request, through the client's types: verify, then tell apart. */
function received(raw: Buffer, headers: Record<string, string | string[] | undefined>) {
  const signed: OrderEventHeaders = {
    'webhook-id': String(headers['webhook-id']),
    'webhook-timestamp': String(headers['webhook-timestamp']),
    'webhook-signature': String(headers['webhook-signature']),
  };
  const body: unknown = new Webhook(SECRET).verify(raw.toString('utf8'), signed);
  if (!isOrderEvent(body)) throw new Error(`not an order event this client knows: ${raw}`);
  return { id: signed['webhook-id'], event: body };
}

/** What a shop's handler reads of each type: the compiler narrows the union by `type`. */
function summary(event: OrderEvent): string {
  const { order } = event.data;
  switch (event.type) {
    case 'order.authorized':
      return `authorized ${order.amount_formatted} ${order.currency}, capture before ${order.capture_before}`;
    case 'order.paid':
      return `paid ${order.captured_amount_formatted} ${order.currency}`;
    case 'order.partially_refunded':
    case 'order.refunded':
      return `refunded ${order.refunded_amount_formatted} ${order.currency}`;
    case 'order.failed':
      return `failed: ${order.failure_code}`;
    case 'order.closed':
      return `closed: ${order.closed_reason}`;
    case 'order.voided':
    case 'order.cancelled':
    case 'order.expired':
    case 'order.disputed':
    case 'order.dispute_won':
    case 'order.needs_review':
      return event.type;
    default: {
      const unknown: never = event;
      return unknown;
    }
  }
}

// Type level: each type's body names its own type, and a type the kit does not send is no type.
const paidType: OrderEventOf<'order.paid'>['type'] = 'order.paid';
// @ts-expect-error: the kit sends no order.shipped
const shipped: OrderEventType = 'order.shipped';

/**
 * Issue 42, part 5: the order events the kit sends to the shop's endpoint, read through
 * @merchant-kit/client's types (`OrderEvent`, a union by `type`, generated from the document's
 * webhooks): a real kit (its MySQL, Redis and embedded sandbox) pays, captures, refunds and declines;
 * each event the endpoint gets verifies with the published Standard Webhooks library, is told apart by
 * `isOrderEvent`, narrows by its `type`, and is what the served document says of its webhook.
 */
describe('kit client: the order events the kit sends, as the client types them', function () {
  this.timeout(60_000);
  let t: TestKit;
  let shop: Receiver;

  before(async () => {
    shop = await startReceiver('/order-events');
    shop.behave({ kind: 'answer', status: 204 });
    t = await startTestKit({ env: { SHOP_WEBHOOK_URLS: shop.url, SHOP_WEBHOOK_SECRET: SECRET } });
  });
  after(async () => {
    await t?.close();
    await shop?.close();
  });

  it('knows the types the kit sends, and no other', () => {
    expect([...ORDER_EVENT_TYPES]).to.deep.equal([...KIT_EVENT_TYPES]);
    expect(paidType).to.equal('order.paid');
    expect(ORDER_EVENT_TYPES).to.not.include(shipped);
    expect(isOrderEvent({ type: 'order.shipped', timestamp: 'now', data: { order: {} } })).to.equal(false);
    expect(isOrderEvent({ type: 'order.paid', data: {} })).to.equal(false);
    expect(isOrderEvent(null)).to.equal(false);
  });

  it('an authorization captured, partly refunded, and a declined card: each event verified, typed and documented', async () => {
    const storefront = createKitClient({ baseUrl: t.url });
    const operator = createKitClient({ baseUrl: t.url, token: OPS_TOKEN });
    const order = async () => {
      const { data } = await storefront.POST('/orders', { body: { amount: '12.34', currency: 'EUR' } });
      if (!data) throw new Error('no order');
      return data.data.order;
    };
    const kept = await order();
    const pay = (id: string, secret: string, number: string) =>
      storefront.POST('/orders/{id}/pay/card', {
        params: { path: { id }, header: { 'Order-Secret': secret } },
        body: { mode: 'auth', card: card(number) },
      });
    expect((await pay(kept.id, kept.client_secret, '4242424242424242')).response.status).to.equal(200);
    const capture = await operator.POST('/orders/{id}/capture', { params: { path: { id: kept.id } } });
    expect(capture.response.status).to.equal(200);
    const refund = await operator.POST('/orders/{id}/refund', {
      params: { path: { id: kept.id }, header: { 'Idempotency-Key': `r-${kept.id}` } },
      body: { amount: '2.00', reason: 'damaged' },
    });
    expect(refund.response.status).to.equal(200);
    const declined = await order();
    expect((await pay(declined.id, declined.client_secret, '4000000000000002')).response.status).to.equal(
      402,
    );

    const expected = [
      [kept.id, 'order.authorized'],
      [kept.id, 'order.paid'],
      [kept.id, 'order.partially_refunded'],
      [declined.id, 'order.failed'],
    ];
    const events = () =>
      shop.received
        .map((r) => received(r.raw, r.headers))
        .filter((e) => [kept.id, declined.id].includes(e.event.data.order.id));
    for (let i = 0; i < 50 && events().length < expected.length; i++) {
      await t.kit.dispatchOrderEvents();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const got = events();
    expect(got.map((e) => [e.event.data.order.id, e.event.type]).sort()).to.deep.equal(expected.sort());
    expect(got.map((e) => summary(e.event)).sort()).to.deep.equal(
      [
        `authorized 12.34 EUR, capture before ${got.find((e) => e.event.type === 'order.authorized')!.event.data.order.capture_before}`,
        'paid 12.34 EUR',
        'refunded 2.00 EUR',
        'failed: ERR_CARD_DO_NOT_HONOR',
      ].sort(),
    );
    for (const { id } of got) expect(id).to.match(/^oev_/);

    // Every body is what the served document says of its type's webhook, field for field.
    const served = await storefront.GET('/openapi.json');
    const check = await webhookBodyChecker(served.data as ApiDocument);
    for (const { event } of got) expect(check(event.type, event), event.type).to.equal('');
  });
});
