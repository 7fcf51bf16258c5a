import { createHash } from 'node:crypto';
import { expect } from 'chai';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { responseChecker } from '../../support/api-document.js';
import { count, row, rows } from '../../support/db.js';
import { card } from '../../support/gateway.js';
import { getOrder, landingStatus, pressButton, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * Issue 41, part 2, through HTTP: an order carries a client secret, answered by POST /orders once and
 * by no read. Its shopper-facing routes (the pay routes, the saved-card payment, the public view) need
 * it beside the id, in `Order-Secret` or a pay route's `client_secret`: an order id seen in a URL or a
 * log lets nobody pay the order, spend its attempt cap or its limit, or read it. Operators' and the
 * storefront's credentials need none; the landings keep working from the gateway's redirect.
 */
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const DECLINED = '4000000000000002';
const CHALLENGE = '4000000000003220';
const IDEAL = { payment_method: 'ideal', customer: { country_code: 'NL' } };
const CUSTOMER = { merchant_customer_id: 'cus-secret-ada', email: 'ada@example.com', last_name: 'Lovelace' };

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');
/** An answer's envelope without what differs from one request to the next (its id). */
// biome-ignore lint/suspicious/noExplicitAny: an envelope of any shape
const envelope = (body: any) => {
  const { request_id: _id, ...rest } = body;
  return rest;
};

describe('merchant: an order’s client secret (issue 41, part 2)', function () {
  this.timeout(60_000);
  let t: TestKit;
  let documented: Awaited<ReturnType<typeof responseChecker>>;
  let storefront = '';
  let viewer = '';

  before(async () => {
    t = await startTestKit({
      env: { LIMIT_PAY_PER_ORDER: '3/10m', MAX_FAILED_ATTEMPTS_PER_ORDER: '2' },
    });
    documented = await responseChecker((await t.call('GET', '/openapi.json')).body as ApiDocument);
    storefront = (await t.kit.store.operators.add({ name: 'shop-web', role: 'storefront', by: CLI })).token;
    viewer = (await t.kit.store.operators.add({ name: 'vera', role: 'viewer', by: CLI })).token;
  });
  after(async () => {
    await t?.close();
  });

  const newOrder = async (body: Record<string, unknown> = {}) => {
    const created = await t.call('POST', '/orders', {
      body: { amount: '25.00', currency: 'EUR', customer: CUSTOMER, ...body },
    });
    expect(created.status, created.text).to.equal(201);
    documented.check(created, 'POST', '/orders');
    const order = created.body.data.order as { id: string; reference: string; client_secret: string };
    return { ...order, secret: order.client_secret };
  };
  const transactionsOf = (reference: string) =>
    [...t.kit.sandbox!.deps.state.transactions.values()].filter((x) => x.reference === reference);
  /** The 404 an order id no order has gets: what a missing or wrong secret must be told, byte for byte. */
  const unknownOrder = async (method: string, suffix: string, body?: unknown) => {
    const res = await t.call(method, `/orders/ord_${'Z'.repeat(24)}${suffix}`, { body, secret: null });
    expect(res.status, res.text).to.equal(404);
    return envelope(res.body);
  };

  it('POST /orders answers the client secret once; no read shows it, and the kit keeps only its SHA-256', async () => {
    const order = await newOrder();
    expect(order.secret).to.match(/^ocs_[A-Za-z0-9_-]{43}$/);
    expect((await newOrder()).secret).to.not.equal(order.secret);
    // Paid, read by the shopper and by an operator, listed: the secret is in none of the answers.
    const paid = await t.call('POST', `/orders/${order.id}/pay/card`, { body: { card: card() } });
    expect(paid.status, paid.text).to.equal(200);
    const reads = [
      paid,
      await t.call('GET', `/orders/${order.id}`),
      await t.call('GET', `/orders/${order.id}`, { ops: true }),
      await t.call('GET', '/orders?limit=100', { ops: true }),
    ];
    for (const read of reads) {
      expect(read.status, read.text).to.equal(200);
      expect(read.text).to.not.contain(order.secret);
      expect(read.text).to.not.contain('client_secret');
    }
    // The row holds the digest, and nothing else the kit stored (history, events, inbox) holds either.
    const stored = (await row(t, 'orders', { id: order.id }))!;
    expect(stored.client_secret_hash).to.equal(sha256(order.secret));
    const dump = await t.dump();
    expect(dump).to.not.contain(order.secret);
    expect(dump.split(sha256(order.secret)).length - 1, 'the digest, in its row alone').to.equal(1);
    expect(t.logs.join('')).to.not.contain(order.secret);
  });

  it('GET /orders/{id}: the id alone, or a wrong secret, is the 404 of an order that does not exist', async () => {
    const order = await newOrder();
    const nothing = await unknownOrder('GET', '');
    for (const secret of [null, '', 'ocs_wrong', (await newOrder()).secret, `${order.secret}x`]) {
      const res = await t.call('GET', `/orders/${order.id}`, { secret });
      expect(res.status, `${secret}: ${res.text}`).to.equal(404);
      expect(envelope(res.body)).to.deep.equal(nothing);
      expect(res.text).to.not.contain(order.reference);
      documented.check(res, 'GET', '/orders/{id}');
    }
    const shown = await t.call('GET', `/orders/${order.id}`, { secret: order.secret });
    expect(shown.status, shown.text).to.equal(200);
    expect(shown.body.data.order).to.include({ id: order.id, status: 'pending' });
    expect(shown.headers.get('vary')).to.equal('Authorization, Order-Secret');
    documented.check(shown, 'GET', '/orders/{id}');
    // A reader's token needs no secret; a wrong token is a 401, never a try without it.
    expect((await t.call('GET', `/orders/${order.id}`, { token: viewer, secret: null })).status).to.equal(
      200,
    );
    const wrong = await t.call('GET', `/orders/${order.id}`, { token: 'kop_nobody', secret: order.secret });
    expect(wrong.status, wrong.text).to.equal(401);
  });

  it('the pay routes: without the secret a 404, nothing started, nothing at the gateway, no limit or attempt spent', async () => {
    const order = await newOrder();
    const saved = { card: `card_${'A'.repeat(24)}` };
    const tries: [string, unknown][] = [
      ['card', { card: card(DECLINED) }],
      ['card', { card: card(DECLINED), client_secret: 'ocs_wrong' }],
      ['redirect', IDEAL],
      ['saved', saved],
    ];
    const nothing = await unknownOrder('POST', '/pay/card', { card: card() });
    // More tries than the order's limit (3) and its attempt cap (2) allow: none of them counts.
    for (let round = 0; round < 2; round++)
      for (const [route, body] of tries) {
        const res = await t.call('POST', `/orders/${order.id}/pay/${route}`, { body, secret: null });
        expect(res.status, `${route}: ${res.text}`).to.equal(404);
        expect(envelope(res.body)).to.deep.equal(nothing);
        documented.check(res, 'POST', `/orders/{id}/pay/${route}`);
      }
    expect(await count(t, 'payment_attempts', { order_id: order.id })).to.equal(0);
    expect(transactionsOf(order.reference)).to.deep.equal([]);
    expect((await getOrder(t, order.id)).history).to.deep.equal([]);
    // The shopper, with the secret, still has the whole limit and every attempt: two declines, then
    // the cap; the order's limit (3 in ten minutes) is spent only by the shopper's own requests.
    for (let i = 0; i < 2; i++) {
      const declined = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(DECLINED) },
      });
      expect(declined.status, declined.text).to.equal(402);
    }
    const capped = await t.call('POST', `/orders/${order.id}/pay/card`, { body: { card: card() } });
    expect(capped.status, capped.text).to.equal(409);
    expect(capped.body.code).to.equal('TOO_MANY_ATTEMPTS');
  });

  it('the secret in the body (`client_secret`) pays as the header does; the header wins when both are sent', async () => {
    const byCard = await newOrder();
    const paid = await t.call('POST', `/orders/${byCard.id}/pay/card`, {
      body: { card: card(), client_secret: byCard.secret },
      secret: null,
    });
    expect(paid.status, paid.text).to.equal(200);
    expect(paid.body.data.order.status).to.equal('paid');
    const byRedirect = await newOrder();
    const session = await t.call('POST', `/orders/${byRedirect.id}/pay/redirect`, {
      body: { ...IDEAL, client_secret: byRedirect.secret },
      secret: null,
    });
    expect(session.status, session.text).to.equal(200);
    const both = await newOrder();
    const refused = await t.call('POST', `/orders/${both.id}/pay/card`, {
      body: { card: card(), client_secret: both.secret },
      secret: 'ocs_wrong',
    });
    expect(refused.status, refused.text).to.equal(404);
  });

  it("an operator's or the storefront's token pays without the secret; a token nobody holds is a 401", async () => {
    for (const who of [{ token: storefront }, { ops: true }]) {
      const order = await newOrder();
      const paid = await t.call('POST', `/orders/${order.id}/pay/card`, { ...who, body: { card: card() } });
      expect(paid.status, paid.text).to.equal(200);
      expect(paid.body.data.order.status).to.equal('paid');
      documented.check(paid, 'POST', '/orders/{id}/pay/card');
    }
    const order = await newOrder();
    const wrong = await t.call('POST', `/orders/${order.id}/pay/card`, {
      token: 'kop_nobody',
      secret: order.secret,
      body: { card: card() },
    });
    expect(wrong.status, wrong.text).to.equal(401);
    expect(wrong.body.code).to.equal('UNAUTHORIZED');
    documented.check(wrong, 'POST', '/orders/{id}/pay/card');
    expect(transactionsOf(order.reference)).to.deep.equal([]);
  });

  it("the saved-card payment needs the order's secret beside the customer's token", async () => {
    const customerId = `cus-secret-${process.pid}`;
    const token = (await t.call('POST', `/customers/${customerId}/tokens`, { token: storefront })).body.data
      .customer_token as string;
    const first = await newOrder({ customer: { merchant_customer_id: customerId } });
    const saving = await t.call('POST', `/orders/${first.id}/pay/card`, {
      body: { card: card(), save_card: true },
      headers: { 'customer-token': token },
    });
    expect(saving.status, saving.text).to.equal(200);
    const [kept] = await rows(t, 'saved_cards', { customer_id: customerId });
    const order = await newOrder({ customer: { merchant_customer_id: customerId } });
    const body = { card: kept!.id };
    // A token minted for this order (issue 41, part 1): the one kind that pays.
    const forOrder = await t.call('POST', `/customers/${customerId}/tokens`, {
      token: storefront,
      body: { order_id: order.id },
    });
    const headers = { 'customer-token': forOrder.body.data.customer_token as string };
    const stranger = await t.call('POST', `/orders/${order.id}/pay/saved`, { body, headers, secret: null });
    expect(stranger.status, stranger.text).to.equal(404);
    expect(stranger.body.code).to.equal('NOT_FOUND');
    expect(transactionsOf(order.reference)).to.deep.equal([]);
    const paid = await t.call('POST', `/orders/${order.id}/pay/saved`, { body, headers });
    expect(paid.status, paid.text).to.equal(200);
    expect(paid.body.data.order.status).to.equal('paid');
  });

  it("the landings work from the gateway's redirect alone, and show no more than the public view", async () => {
    const challenged = await newOrder();
    const pay = await t.call('POST', `/orders/${challenged.id}/pay/card`, {
      body: { card: card(CHALLENGE) },
    });
    expect(pay.status, pay.text).to.equal(200);
    const back = await pressButton(pay.body.data.next_action.url, 'authenticate');
    expect(back).to.not.contain(challenged.secret);
    const landing = await fetch(back);
    const page = await landing.text();
    expect(landing.status).to.equal(200);
    expect(landingStatus(page)).to.equal('paid');
    // The reference (here the order's id: the shop gave none) and the amount, as the public view shows.
    expect(page).to.contain(challenged.reference).and.contain('25.00');
    for (const hidden of [CUSTOMER.email, CUSTOMER.last_name, challenged.secret])
      expect(page).to.not.contain(hidden);

    const redirected = await newOrder();
    const session = await t.call('POST', `/orders/${redirected.id}/pay/redirect`, { body: IDEAL });
    expect(session.status, session.text).to.equal(200);
    const returned = await pressButton(session.body.data.next_action.url, 'pay');
    const page2 = await (await fetch(returned)).text();
    expect(landingStatus(page2)).to.equal('paid');
    expect(page2).to.not.contain(redirected.secret);
    expect((await t.call('GET', `/orders/${redirected.id}`)).body.data.order.status).to.equal('paid');
  });

  it('an order made before secrets (no digest stored) is reached with a token only', async () => {
    const order = await newOrder();
    await t.kit.sequelize.query('UPDATE orders SET client_secret_hash = NULL WHERE id = ?', {
      replacements: [order.id],
    });
    for (const secret of [order.secret, null, ''])
      expect((await t.call('GET', `/orders/${order.id}`, { secret })).status).to.equal(404);
    expect((await t.call('GET', `/orders/${order.id}`, { token: viewer })).status).to.equal(200);
    const paid = await t.call('POST', `/orders/${order.id}/pay/card`, { ops: true, body: { card: card() } });
    expect(paid.status, paid.text).to.equal(200);
  });
});
