import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { startDispatcher } from '../../../src/merchant/outbox/dispatcher.js';
import { endpointSender } from '../../../src/merchant/outbox/endpoint.js';
import { type OrderEvent, OrderEventHandlers } from '../../../src/merchant/outbox/handlers.js';
import { count, rows } from '../../support/db.js';
import { referenceSettled } from '../../support/events.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * Issue 20, part 1: order events out through a transactional outbox: written with the change, sent
 * to the shop's endpoint signed as Standard Webhooks says (verified here with the published
 * `standardwebhooks` package), tried again with backoff, each order's in order, at least once with
 * one id, and fed to handlers in the fork's code from the same outbox.
 */
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** The shop's endpoint: records what it is sent; answers 204, or 500 while `down`. */
class ShopEndpoint {
  readonly received: Received[] = [];
  down = false;
  #server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (this.down) {
          res.writeHead(500).end('down');
          return;
        }
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/order-events`;
  }

  /** Every delivery, verified with the Standard Webhooks library: its id, type and order. */
  verified(): { id: string; type: string; order: { id: string; status: string } }[] {
    const hook = new Webhook(SECRET);
    return this.received.map((r) => {
      const body = hook.verify(r.body, {
        'webhook-id': String(r.headers['webhook-id']),
        'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      }) as { type: string; data: { order: { id: string; status: string } } };
      return { id: String(r.headers['webhook-id']), type: body.type, order: body.data.order };
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}

describe('merchant: order events out (issue 20, part 1)', function () {
  this.timeout(60_000);
  let t: TestKit;
  let shop: ShopEndpoint;
  const handled: OrderEvent[] = [];
  let failNext = 0;
  const handlers = new OrderEventHandlers().on(
    'order.paid',
    (event) => {
      if (failNext > 0) {
        failNext -= 1;
        throw new Error('the fulfilment service is down');
      }
      handled.push(event);
    },
    'fulfilment',
  );

  before(async () => {
    shop = new ShopEndpoint();
    await shop.start();
    t = await startTestKit({
      env: { SHOP_WEBHOOK_URLS: shop.url, SHOP_WEBHOOK_SECRET: SECRET },
      orderEvents: handlers,
    });
  });
  after(async () => {
    await t?.close();
    await shop?.stop();
  });

  const control = async (path: string, body: unknown = {}) => {
    t.sandboxClock.advance(1000);
    const res = await fetch(`${t.kit.gatewayUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).to.equal(200);
  };
  const paidOrder = async (amount = '30.00') => {
    const created = await t.call('POST', '/orders', { body: { amount, currency: 'EUR' } });
    const { id, reference } = created.body.data.order as { id: string; reference: string };
    const paid = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'sale' } });
    expect(paid.status, paid.text).to.equal(200);
    const transaction = (await getOrder(t, id)).payment.gateway_transaction_id as string;
    return { id, reference, transaction };
  };
  /** Dispatcher passes until nothing more is due now. */
  const drain = async () => {
    for (let i = 0; i < 20 && (await t.kit.dispatchOrderEvents()) > 0; i++);
  };
  const mine = (orderId: string) => shop.verified().filter((e) => e.order.id === orderId);

  it("a paid order writes order.paid in the change's own transaction; the endpoint gets it signed (Standard Webhooks, verified with the published library), the handler too", async () => {
    const { id } = await paidOrder();
    // Written with the change, before any dispatch.
    const [event] = await rows(t, 'order_events', { order_id: id });
    expect(event).to.include({ type: 'order.paid' });
    expect(event!.fanned_out_at).to.equal(null);
    await drain();
    const got = mine(id);
    expect(got).to.deep.equal([{ id: event!.id, type: 'order.paid', order: got[0]!.order }]);
    expect(got[0]!.order).to.include({ id, status: 'paid', captured_amount: 3000 });
    expect(handled.map((e) => [e.id, e.type, e.data.order.id])).to.deep.include([
      event!.id,
      'order.paid',
      id,
    ]);
    // Another secret does not verify: the signature is over this body with this secret.
    const other = new Webhook(`whsec_${randomBytes(32).toString('base64')}`);
    const r = shop.received.find((x) => x.headers['webhook-id'] === event!.id)!;
    expect(() =>
      other.verify(r.body, {
        'webhook-id': event!.id,
        'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      }),
    ).to.throw();
  });

  it("an order's events arrive in the order they happened: paid, partially refunded twice, disputed, dispute won", async () => {
    const { id, reference, transaction } = await paidOrder('40.00');
    for (const amount of ['5.00', '6.00'])
      expect(
        (
          await t.call('POST', `/orders/${id}/refund`, {
            ops: true,
            body: { amount, reason: 'damaged' },
            headers: { 'idempotency-key': `r-${id}-${amount}` },
          })
        ).status,
      ).to.equal(200);
    await control(`/sandbox/transactions/${transaction}/chargeback`, { amount: 10 });
    await control(`/sandbox/transactions/${transaction}/chargeback/reverse`);
    await referenceSettled(t, reference);
    await drain();
    expect(mine(id).map((e) => [e.type, e.order.status])).to.deep.equal([
      ['order.paid', 'paid'],
      ['order.partially_refunded', 'partially_refunded'],
      ['order.partially_refunded', 'partially_refunded'],
      ['order.disputed', 'disputed'],
      ['order.dispute_won', 'partially_refunded'],
    ]);
  });

  it("the dispatcher's loop sends an order's next event as soon as the one before is delivered, not a tick later", async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '25.00', currency: 'EUR' } });
    const { id } = created.body.data.order as { id: string };
    const steps = [
      await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'auth' } }),
      await t.call('POST', `/orders/${id}/capture`, { ops: true }),
      await t.call('POST', `/orders/${id}/refund`, {
        ops: true,
        body: { amount: '5.00', reason: 'damaged' },
        headers: { 'idempotency-key': `r-${id}-loop` },
      }),
    ];
    expect(steps.map((s) => s.status)).to.deep.equal([200, 200, 200]);
    expect(await count(t, 'order_events', { order_id: id })).to.equal(3);
    // The worker's loop, as the kit runs it, with a tick of an hour: what arrives came without one.
    const loop = startDispatcher(
      {
        outbox: t.kit.store.outbox,
        endpoints: [shop.url],
        send: endpointSender(SECRET),
        handlers,
        clock: t.clock,
        logger: pino({ level: 'silent' }),
      },
      3_600_000,
    );
    try {
      for (let i = 0; i < 100 && mine(id).length < 3; i++) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await loop.stop();
    }
    expect(mine(id).map((e) => e.type)).to.deep.equal([
      'order.authorized',
      'order.paid',
      'order.partially_refunded',
    ]);
  });

  it("the dispatcher's loop stops at once when asked during a pass, not a tick later", async () => {
    // The first pass starts as the loop does: a stop asked now comes while it runs.
    const loop = startDispatcher(
      {
        outbox: t.kit.store.outbox,
        endpoints: [shop.url],
        send: endpointSender(SECRET),
        handlers,
        clock: t.clock,
        logger: pino({ level: 'silent' }),
      },
      3_600_000,
    );
    const stopped = await Promise.race([
      loop.stop().then(() => 'stopped'),
      new Promise((r) => setTimeout(() => r('still sleeping after 5 s'), 5_000).unref()),
    ]);
    expect(stopped).to.equal('stopped');
  });

  it('the endpoint down for an hour: tried again with backoff, each try in the history, then every event delivered once it is back, with the same ids; the handler that threw is tried again too', async () => {
    shop.down = true;
    failNext = 1;
    const before = shop.received.length;
    const { id } = await paidOrder('12.00');
    const [event] = await rows(t, 'order_events', { order_id: id });
    await drain();
    const [delivery] = await rows(t, 'order_event_deliveries', {
      event_seq: event!.seq,
      subscriber: `url:${shop.url}`,
    });
    expect(delivery).to.include({ status: 'pending', attempts: 1, last_error: 'HTTP 500' });
    expect(
      handled.find((e) => e.id === event!.id),
      'the handler threw',
    ).to.equal(undefined);

    // An hour of the kit's clock with the endpoint still down: tried on the schedule, never given up.
    for (let minute = 0; minute < 60; minute += 5) {
      t.sandboxClock.advance(5 * 60_000);
      await drain();
    }
    const [still] = await rows(t, 'order_event_deliveries', { id: delivery!.id });
    expect(still!.status).to.equal('pending');
    expect(still!.attempts).to.be.within(5, 8);
    expect(shop.received.length).to.equal(before);
    expect(
      handled.find((e) => e.id === event!.id),
      'the handler, tried again',
    ).to.not.equal(undefined);

    shop.down = false;
    t.sandboxClock.advance(60 * 60_000);
    await drain();
    expect(mine(id).map((e) => [e.id, e.type])).to.deep.equal([[event!.id, 'order.paid']]);
    const history = await t.kit.store.outbox.history(Number(event!.seq));
    const tries = history.attempts.filter((a) => a.subscriber === `url:${shop.url}`);
    expect(tries.at(-1)).to.include({ result: 'delivered', http_status: 204 });
    expect(tries.slice(0, -1).every((a) => a.result === 'failed' && a.http_status === 500)).to.equal(true);
  });

  it('back after an outage: the first event it takes brings the others forward, without waiting for their hourly try', async () => {
    shop.down = true;
    const { id } = await paidOrder('14.00');
    const [waiting] = await rows(t, 'order_events', { order_id: id });
    for (let minute = 0; minute < 90; minute += 10) {
      t.sandboxClock.advance(10 * 60_000);
      await drain();
    }
    const [delivery] = await rows(t, 'order_event_deliveries', {
      event_seq: waiting!.seq,
      subscriber: `url:${shop.url}`,
    });
    expect(delivery!.status).to.equal('pending');
    expect(
      new Date(delivery!.next_attempt_at).getTime() - t.clock.now(),
      'its next try is minutes away',
    ).to.be.greaterThan(60_000);

    shop.down = false;
    const fresh = await paidOrder('15.00'); // a new event: tried at once, and taken
    await drain();
    expect(mine(fresh.id).map((e) => e.type)).to.deep.equal(['order.paid']);
    expect(
      mine(id).map((e) => e.id),
      'brought forward, the clock unmoved',
    ).to.deep.equal([waiting!.id]);
  });

  it("two dispatchers: an order's event is not claimed while an earlier one of the same order is still being fanned out by the other", async () => {
    const { id } = await paidOrder('20.00');
    const refund = await t.call('POST', `/orders/${id}/refund`, {
      ops: true,
      body: { amount: '5.00', reason: 'damaged' },
      headers: { 'idempotency-key': `r-${id}-two-dispatchers` },
    });
    expect(refund.status, refund.text).to.equal(200);
    const [first, second] = await rows(t, 'order_events', { order_id: id }, 'seq');
    expect([first!.type, second!.type]).to.deep.equal(['order.paid', 'order.partially_refunded']);

    // The first dispatcher's fan-out holds the order's first event (its SELECT ... FOR UPDATE, not yet
    // committed); the second skips it (SKIP LOCKED), fans out the next one and claims what is due.
    const subscribers = [{ id: `url:${shop.url}`, types: null }];
    const holding = await t.kit.sequelize.transaction();
    try {
      await t.kit.sequelize.query('SELECT seq FROM order_events WHERE seq = ? FOR UPDATE', {
        replacements: [first!.seq],
        transaction: holding,
      });
      const now = new Date(t.clock.now());
      await t.kit.store.outbox.fanOut(subscribers, now);
      const claimed = await t.kit.store.outbox.claimDue([`url:${shop.url}`], now, 30_000, 50);
      expect(
        claimed.filter((c) => c.event.order_id === id).map((c) => c.event.type),
        'the refund is not sent before the payment',
      ).to.deep.equal([]);
    } finally {
      await holding.rollback();
    }
    await drain();
    expect(mine(id).map((e) => e.type)).to.deep.equal(['order.paid', 'order.partially_refunded']);
  });

  it('a dispatcher that stalled past its claim cannot put back to pending what another pass delivered', async () => {
    const { id } = await paidOrder('7.00');
    const subscriber = `url:${shop.url}`;
    await t.kit.store.outbox.fanOut([{ id: subscriber, types: null }], new Date(t.clock.now()));
    const [stale] = await t.kit.store.outbox.claimDue([subscriber], new Date(t.clock.now()), 30_000, 10);
    expect(stale!.event.order_id).to.equal(id);
    t.sandboxClock.advance(31_000); // its claim lapses: another pass takes the delivery and sends it
    await drain();
    expect(mine(id).map((e) => e.type)).to.deep.equal(['order.paid']);
    await t.kit.store.outbox.settle(
      stale!,
      { ok: false, httpStatus: null, error: 'ETIMEDOUT', ms: 30_000, nextAt: new Date(t.clock.now() + 5000) },
      new Date(t.clock.now()),
    );
    const [row] = await rows(t, 'order_event_deliveries', { id: stale!.delivery.id });
    expect(row).to.include({ status: 'delivered' });
  });

  it('a replay sends an event again with the same id; a lapsed claim (a dispatcher killed mid-send) is taken again', async () => {
    const { id } = await paidOrder('9.00');
    await drain();
    const [event] = await rows(t, 'order_events', { order_id: id });
    expect(await t.kit.store.outbox.replay(String(event!.id), new Date(t.clock.now()))).to.equal(2);
    await drain();
    expect(mine(id).map((e) => e.id)).to.deep.equal([event!.id, event!.id]);

    // A claim whose dispatcher died: nothing sent, the lease runs out, another pass sends it.
    const next = await paidOrder('8.00');
    const now = new Date(t.clock.now());
    const claimed = await t.kit.store.outbox.claimDue([`url:${shop.url}`], now, 30_000, 10);
    await t.kit.store.outbox.fanOut([{ id: `url:${shop.url}`, types: null }], now);
    const again = await t.kit.store.outbox.claimDue([`url:${shop.url}`], now, 30_000, 10);
    expect(claimed.length + again.length).to.be.greaterThan(0);
    expect(await t.kit.dispatchOrderEvents(), 'claimed: not sent twice at once').to.equal(0);
    t.sandboxClock.advance(31_000);
    await drain();
    expect(mine(next.id).map((e) => e.type)).to.deep.equal(['order.paid']);
    expect(await count(t, 'order_event_deliveries', { status: 'pending' })).to.equal(0);
  });
});
