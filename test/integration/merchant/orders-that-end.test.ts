import { expect } from 'chai';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import { rows } from '../../support/db.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { getOrder, OPS_TOKEN, pressButton, startTestKit, type TestKit } from '../../support/kit.js';
import { waitFor } from '../../support/process.js';
import { passTime } from '../../support/truth.js';

/**
 * Issue 43, part 2: orders that end. `closed` is an order's terminal state, with its reason
 * (`cancelled`: POST /orders/{id}/cancel; `expired`: ORDER_TTL's job): no payment attempt starts after
 * it, the poller stops asking about it, and money that still reaches it is applied and flagged, never
 * lost. Through HTTP, against the embedded sandbox and its clock.
 */
const HOUR = 3_600_000;
const CHALLENGE = '4000000000003220';
const DECLINED = '4000000000000002';
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const ideal = { payment_method: 'ideal', customer: { country_code: 'NL' } };

async function sandbox(t: TestKit, path: string, body: unknown) {
  const res = await fetch(`${t.kit.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, `${path}: ${await res.clone().text()}`).to.equal(200);
}

const newOrder = async (t: TestKit, amount = '15.00') => {
  const created = await t.call('POST', '/orders', { body: { amount, currency: 'EUR' } });
  expect(created.status, created.text).to.equal(201);
  return created.body.data.order as { id: string; reference: string };
};

const payCard = (t: TestKit, id: string, number = '4242424242424242', mode: 'sale' | 'auth' = 'sale') =>
  t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(number), mode } });

const payRedirect = async (t: TestKit, id: string) => {
  const pay = await t.call('POST', `/orders/${id}/pay/redirect`, { body: ideal });
  expect(pay.status, pay.text).to.equal(200);
  return pay.body.data.next_action.url as string;
};

const cancel = (t: TestKit, id: string, o: { token?: string; body?: unknown } = {}) =>
  t.call('POST', `/orders/${id}/cancel`, { token: o.token ?? OPS_TOKEN, body: o.body ?? {} });

const eventsOf = async (t: TestKit, id: string) =>
  (await rows(t, 'order_events', { order_id: id }, 'seq')).map((e) => e.type as string);

const gatewayRecords = (t: TestKit, reference: string) =>
  [...t.kit.sandbox!.deps.state.transactions.values()].filter((x) => x.reference === reference);

describe('merchant: orders that end (closed: cancelled or expired)', function () {
  this.timeout(60_000);

  describe('POST /orders/{id}/cancel', () => {
    let t: TestKit;
    let storefront: string;
    before(async () => {
      t = await startTestKit(); // the sandbox's webhooks reach the kit, and its worker applies them
      storefront = (await t.kit.store.operators.add({ name: 'shop-server', role: 'storefront', by: CLI }))
        .token;
    });
    after(async () => {
      await t?.close();
    });

    it('ends an unpaid order (the storefront may): closed, cancelled, order.closed, a history and an audit line; again, it answers as it is', async () => {
      const order = await newOrder(t);
      const declined = await payCard(t, order.id, DECLINED);
      expect(declined.status, declined.text).to.equal(402);

      const res = await cancel(t, order.id, { token: storefront, body: { reason: 'the customer left' } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.message).to.equal('The order is cancelled: it takes no more payments.');
      const shown = res.body.data.order;
      expect(shown).to.include({ status: 'closed', closed_reason: 'cancelled', needs_review: false });
      expect(shown.closed_at).to.be.a('string');

      const stored = await getOrder(t, order.id);
      // The cancel's line: the declined payment's webhook may be applied after it (a line of its own).
      const closing = stored.history.find((h: { status_after: string }) => h.status_after === 'closed');
      expect(closing).to.include({
        source: 'api',
        outcome: 'applied',
        status_before: 'failed',
        status_after: 'closed',
        detail: 'closed (cancelled) by shop-server (storefront): the customer left',
      });
      expect(await eventsOf(t, order.id)).to.deep.equal(['order.failed', 'order.closed']);
      const audit = await rows(t, 'audit_log', { order_id: order.id, action: 'order.cancel' });
      expect(audit).to.have.length(1);
      expect(audit[0]).to.include({ actor: 'shop-server', role: 'storefront', reason: 'the customer left' });

      // Idempotent: the same request again changes nothing and says so.
      const again = await cancel(t, order.id, { token: storefront });
      expect(again.status, again.text).to.equal(200);
      expect(again.body.message).to.equal('The order was closed already.');
      expect(again.body.data.order).to.include({ status: 'closed', closed_reason: 'cancelled' });
      expect(await eventsOf(t, order.id)).to.deep.equal(['order.failed', 'order.closed']);
      expect(await rows(t, 'audit_log', { order_id: order.id, action: 'order.cancel' })).to.have.length(1);
    });

    it('is for the shop and its operators: the order secret alone is a 401, a viewer a 403, an unknown order a 404', async () => {
      const order = await newOrder(t);
      const viewer = (await t.kit.store.operators.add({ name: 'v-1', role: 'viewer', by: CLI })).token;
      const anonymous = await t.call('POST', `/orders/${order.id}/cancel`, { body: {} });
      expect(anonymous.status, anonymous.text).to.equal(401);
      expect((await cancel(t, order.id, { token: viewer })).status).to.equal(403);
      expect((await cancel(t, 'ord_nobody0000000000000000')).status).to.equal(404);
      expect((await getOrder(t, order.id)).status).to.equal('pending');
    });

    it('an authorised order is voided first (the void path, its key derived), then closed; a second cancel voids nothing again', async () => {
      const order = await newOrder(t, '40.00');
      const auth = await payCard(t, order.id, '4242424242424242', 'auth');
      expect(auth.body.data.order.status).to.equal('authorized');

      const res = await cancel(t, order.id, { body: { reason: 'out of stock' } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.order).to.include({ status: 'closed', closed_reason: 'cancelled' });
      expect(gatewayRecords(t, order.reference).map((x) => [x.type, x.status])).to.deep.equal([
        ['auth', 'voided'],
        ['void', 'voided'],
      ]);
      const operations = await rows(t, 'gateway_operations', { order_id: order.id });
      expect(operations.map((o) => [o.operation, o.status])).to.deep.equal([['void', 'succeeded']]);
      const history = (await getOrder(t, order.id)).history;
      expect(
        history.map((h: { status_after: string; outcome: string }) => [h.outcome, h.status_after]),
      ).to.deep.include.members([
        ['requested', 'authorized'],
        ['applied', 'voided'],
        ['applied', 'closed'],
      ]);
      expect(await eventsOf(t, order.id)).to.deep.equal(['order.authorized', 'order.voided', 'order.closed']);
      const acts = (await rows(t, 'audit_log', { order_id: order.id }, 'id')).map((a) => a.action);
      expect(acts).to.deep.equal(['void', 'order.cancel']);

      // The void webhook landing late leaves it closed; the same cancel again voids nothing.
      await waitFor('the void webhook applied', async () =>
        (await getOrder(t, order.id)).history.some((h: { source: string }) => h.source === 'webhook'),
      );
      expect((await cancel(t, order.id)).status).to.equal(200);
      expect(gatewayRecords(t, order.reference)).to.have.length(2);
      expect((await getOrder(t, order.id)).status).to.equal('closed');
    });

    it('a paid order is a 409 ORDER_PAID pointing at the refund; nothing changes', async () => {
      const order = await newOrder(t);
      expect((await payCard(t, order.id)).body.data.order.status).to.equal('paid');
      const res = await cancel(t, order.id);
      expect(res.status, res.text).to.equal(409);
      expect(res.body.code).to.equal('ORDER_PAID');
      expect(res.body.data.refund).to.deep.equal({ method: 'POST', path: `/orders/${order.id}/refund` });
      expect(res.body.data.order).to.include({ status: 'paid', closed_reason: null });
      expect((await getOrder(t, order.id)).status).to.equal('paid');
    });

    it('no payment attempt starts after it: 409 ORDER_CLOSED, and no attempt is made', async () => {
      const order = await newOrder(t);
      expect((await cancel(t, order.id)).status).to.equal(200);
      for (const pay of [
        () => payCard(t, order.id),
        () => t.call('POST', `/orders/${order.id}/pay/redirect`, { body: ideal }),
      ]) {
        const res = await pay();
        expect(res.status, res.text).to.equal(409);
        expect(res.body.code).to.equal('ORDER_CLOSED');
        expect(res.body.data).to.include({ status: 'closed', closed_reason: 'cancelled' });
        expect(res.body.data.order).to.include({
          id: order.id,
          status: 'closed',
          closed_reason: 'cancelled',
        });
      }
      expect(await rows(t, 'payment_attempts', { order_id: order.id })).to.deep.equal([]);
      expect(gatewayRecords(t, order.reference)).to.deep.equal([]);
      // The shopper's own view says why.
      const shopper = await t.call('GET', `/orders/${order.id}`);
      expect(shopper.body.data.order).to.include({ status: 'closed', closed_reason: 'cancelled' });
    });

    it('a session paid at the last second, after the cancel: the money is applied, not lost, and flagged', async () => {
      const order = await newOrder(t);
      const page = await payRedirect(t, order.id);
      // The shopper is still on the hosted page: the gateway, asked first, says it is open.
      const res = await cancel(t, order.id);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.order.status).to.equal('closed');

      await pressButton(page, 'pay');
      const paid = await waitFor('the late payment applied', async () => {
        const o = await getOrder(t, order.id);
        return o.status === 'paid' ? o : null;
      });
      expect(paid).to.include({
        closed_reason: 'cancelled',
        captured_amount: 1500,
        needs_review: true,
        review_reason: 'paid after the order was closed (cancelled)',
      });
      expect(paid.history.at(-1)).to.include({
        source: 'webhook',
        outcome: 'flagged',
        status_before: 'closed',
        status_after: 'paid',
      });
      expect(await eventsOf(t, order.id)).to.deep.equal(['order.closed', 'order.paid', 'order.needs_review']);
      // Still ended: no attempt may start, whatever its status now; a refund is how the money goes back.
      expect((await payCard(t, order.id)).status).to.equal(409);
      expect((await cancel(t, order.id)).body.code).to.equal('ORDER_PAID');
      const report = await t.call('GET', '/reports/reconciliation?from=2000-01-01&to=2100-01-01', {
        ops: true,
      });
      const row = report.body.data.rows.find((r: { order_id: string }) => r.order_id === order.id);
      expect(row).to.include({ status: 'paid', classification: 'mismatched', captured_amount: 1500 });
    });

    it('a 3DS challenge open at the cancel pays nothing when answered afterwards', async () => {
      const order = await newOrder(t);
      const pay = await payCard(t, order.id, CHALLENGE);
      expect(pay.status, pay.text).to.equal(200);
      const challenge = pay.body.data.next_action.url as string;
      expect((await cancel(t, order.id)).body.data.order.status).to.equal('closed');
      const [attempt] = await rows(t, 'payment_attempts', { order_id: order.id });
      expect(attempt!.hold_sealed, 'the card data is let go with the closing').to.equal(null);

      const landing = await fetch(await pressButton(challenge, 'authenticate'));
      const html = await landing.text();
      expect(landing.status).to.equal(200);
      expect(html).to.contain('data-status="closed"');
      expect(html).to.contain('This order is closed');
      expect(gatewayRecords(t, order.reference), 'no card went to the gateway').to.deep.equal([]);
      expect((await getOrder(t, order.id)).status).to.equal('closed');
    });
  });

  describe('the poller', () => {
    let t: TestKit;
    before(async () => {
      t = await startTestKit();
    });
    after(async () => {
      await t?.close();
    });

    it('stops asking about a closed order, and asks about an open one as before', async () => {
      const closed = await newOrder(t);
      await payRedirect(t, closed.id);
      const open = await newOrder(t);
      await payRedirect(t, open.id);
      const [before] = await rows(t, 'orders', { id: closed.id });
      expect(before!.next_poll_at, 'an open session is polled').to.not.equal(null);
      expect((await cancel(t, closed.id)).status).to.equal(200);
      const [after] = await rows(t, 'orders', { id: closed.id });
      expect(after!.next_poll_at).to.equal(null);

      // Past the points both sessions would be asked at: only the open order is.
      t.sandboxClock.advance(3 * 60_000);
      expect(await t.kit.jobs.poll()).to.include({ orders: 1, gatewayCalls: 1 });
      expect(await t.kit.jobs.pollAll()).to.include({ total: 1, orders: 1 });
      const lines = (await getOrder(t, closed.id)).history.filter(
        (h: { source: string }) => h.source === 'poll',
      );
      // The cancel's own question found nothing new (a routine answer leaves no line); the poller never asked.
      expect(lines).to.deep.equal([]);
    });
  });

  describe('ORDER_TTL (default 24h): the expiry job', () => {
    let t: TestKit;
    before(async () => {
      t = await startTestKit();
      // No webhook reaches the kit: what the kit knows of a session, it learns by asking.
      await sandbox(t, '/sandbox/webhook/outage', { seconds: 30 * 24 * 3600 });
    });
    after(async () => {
      await t?.close();
    });

    it('closes the unpaid, asks the gateway first about an open payment, and lets money win over the clock', async () => {
      const untouched = await newOrder(t);
      const declined = await newOrder(t);
      expect((await payCard(t, declined.id, DECLINED)).status).to.equal(402);
      const expiredSession = await newOrder(t); // its session expires at the gateway, unheard of here
      await payRedirect(t, expiredSession.id);
      const paid = await newOrder(t);
      expect((await payCard(t, paid.id)).body.data.order.status).to.equal('paid');
      const authorized = await newOrder(t);
      expect((await payCard(t, authorized.id, '4242424242424242', 'auth')).status).to.equal(200);
      const lastMinute = await newOrder(t); // its shopper comes back just before the day is up

      // Not a day old yet: nothing is even read.
      await passTime(t, 24 * HOUR - 5 * 60_000);
      const early = await t.kit.jobs.closeExpired();
      expect(early).to.deep.equal({ looked: 0, closed: 0, asked: 0, kept: {} });
      const younger = await newOrder(t);
      const page = await payRedirect(t, lastMinute.id);
      await passTime(t, 10 * 60_000, 60_000);

      const due = await t.kit.jobs.closeExpired();
      // Paid and authorised orders are not read; the younger one is not yet.
      expect(due).to.deep.equal({ looked: 4, closed: 3, asked: 2, kept: { in_flight: 1 } });
      for (const o of [untouched, declined, expiredSession]) {
        const shown = await getOrder(t, o.id);
        expect(shown, o.id).to.include({ status: 'closed', closed_reason: 'expired', needs_review: false });
        expect(shown.history.at(-1)).to.include({
          source: 'api',
          status_after: 'closed',
          detail: 'closed (expired): no payment within ORDER_TTL (1d)',
        });
        expect(await eventsOf(t, o.id), o.id).to.include('order.closed');
        expect((await rows(t, 'orders', { id: o.id }))[0]!.next_poll_at).to.equal(null);
      }
      // The open session's order was asked about first: the gateway said expired, applied as a poll.
      const asked = (await getOrder(t, expiredSession.id)).history;
      expect(asked.at(-2)).to.include({
        source: 'poll',
        status_before: 'requires_action',
        status_after: 'expired',
      });
      // The session still open at the gateway keeps its order open; money moved is not the clock's.
      expect((await getOrder(t, lastMinute.id)).status).to.equal('requires_action');
      for (const o of [paid, authorized])
        expect((await getOrder(t, o.id)).closed_reason, o.id).to.equal(null);

      // The shopper pays (no webhook reaches the kit): the next run asks, and the money wins.
      await pressButton(page, 'pay');
      const then = await t.kit.jobs.closeExpired();
      expect(then).to.deep.equal({ looked: 1, closed: 0, asked: 1, kept: { settled: 1 } });
      expect(await getOrder(t, lastMinute.id)).to.include({
        status: 'paid',
        closed_reason: null,
        needs_review: false,
      });

      // A day after the younger one was made, it ends too.
      await passTime(t, 24 * HOUR);
      expect(await t.kit.jobs.closeExpired()).to.deep.equal({ looked: 1, closed: 1, asked: 0, kept: {} });
      expect(await getOrder(t, younger.id)).to.include({ status: 'closed', closed_reason: 'expired' });
      expect((await getOrder(t, paid.id)).status).to.equal('paid');
      expect((await getOrder(t, authorized.id)).closed_reason).to.equal(null);

      // An expired order cancelled: it answers as it is, its first reason kept.
      const again = await cancel(t, untouched.id);
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.order).to.include({ status: 'closed', closed_reason: 'expired' });
    });

    it('a cancel asks the gateway first: a session paid unheard of is money, and the cancel a 409 ORDER_PAID', async () => {
      const order = await newOrder(t);
      await pressButton(await payRedirect(t, order.id), 'pay'); // its webhook does not reach the kit
      expect((await getOrder(t, order.id)).status).to.equal('requires_action');
      const res = await cancel(t, order.id);
      expect(res.status, res.text).to.equal(409);
      expect(res.body.code).to.equal('ORDER_PAID');
      expect(res.body.data.order).to.include({ status: 'paid', closed_reason: null, needs_review: false });
    });
  });
});
