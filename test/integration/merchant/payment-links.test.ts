import { expect } from 'chai';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import { rows } from '../../support/db.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { getOrder, OPS_TOKEN, pressButton, startTestKit, type TestKit } from '../../support/kit.js';
import { cspOf } from '../../support/security-headers.js';
import { passTime } from '../../support/truth.js';

/**
 * Issue 43, part 3: payment links, through HTTP against the embedded sandbox and its clock. A link is
 * a kit URL the shop sends its shopper; a visit sends the browser to the order's open hosted checkout,
 * or opens one when the last has ended; a live link keeps the order from ORDER_TTL; a paid, closed or
 * expired link says so; and however many visits at once, the gateway takes one payment.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };

const newOrder = async (t: TestKit, body: Record<string, unknown> = {}) => {
  const created = await t.call('POST', '/orders', { body: { amount: '25.00', currency: 'EUR', ...body } });
  expect(created.status, created.text).to.equal(201);
  return created.body.data.order as { id: string; reference: string };
};

const makeLink = (
  t: TestKit,
  orderId: string,
  body: Record<string, unknown> = { expires_in: 3 * 24 * 3600, payment_method: 'ideal' },
  token = OPS_TOKEN,
) => t.call('POST', `/orders/${orderId}/payment-link`, { token, body });

/** A link made by the admin token: its URL. */
const linkOf = async (t: TestKit, orderId: string, body?: Record<string, unknown>) => {
  const res = await makeLink(t, orderId, body);
  expect(res.status, res.text).to.equal(201);
  return res.body.data.payment_link.url as string;
};

/** A visit as a browser makes it, without following the redirect. */
const visit = async (url: string) => {
  const res = await fetch(url, { redirect: 'manual' });
  return {
    status: res.status,
    location: res.headers.get('location'),
    headers: res.headers,
    html: await res.text(),
  };
};

/** What a link's page says it is (`data-link`). */
const shown = (html: string) => /data-link="([a-z]+)"/.exec(html)?.[1];

const gatewayRecords = (t: TestKit, reference: string) =>
  [...t.kit.sandbox!.deps.state.transactions.values()].filter((x) => x.reference === reference);
const sessionsOf = (t: TestKit, reference: string) =>
  [...t.kit.sandbox!.deps.state.sessions.values()].filter((s) => s.reference === reference);

describe('merchant: payment links (POST /orders/{id}/payment-link, GET /pay/{token})', function () {
  this.timeout(90_000);
  let t: TestKit;
  let storefront: string;
  before(async () => {
    t = await startTestKit();
    storefront = (await t.kit.store.operators.add({ name: 'shop-server', role: 'storefront', by: CLI }))
      .token;
  });
  after(async () => {
    await t?.close();
  });

  describe('making one', () => {
    it('gives a kit URL with an unguessable token, kept only as its hash; a history line and an audit line name who made it', async () => {
      const order = await newOrder(t);
      const res = await makeLink(
        t,
        order.id,
        { expires_in: 7 * 24 * 3600, payment_method: 'ideal' },
        storefront,
      );
      expect(res.status, res.text).to.equal(201);
      const link = res.body.data.payment_link;
      expect(link).to.include({
        order_id: order.id,
        payment_method: 'ideal',
        created_by: 'shop-server (storefront)',
      });
      expect(link.id).to.match(/^plk_[A-Za-z0-9]{24}$/);
      expect(link.url).to.match(new RegExp(`^${t.kit.publicBaseUrl}/pay/plt_[A-Za-z0-9_-]{43}$`));
      expect(Date.parse(link.expires_at) - Date.parse(link.created_at)).to.equal(7 * DAY);
      const token = link.url.split('/').pop();
      expect(await t.dump(), 'the token is kept nowhere').to.not.contain(token);
      const [stored] = await rows(t, 'payment_links', { order_id: order.id });
      expect(stored!.token_hash).to.have.length(43);

      const history = (await getOrder(t, order.id)).history;
      expect(history.at(-1)).to.include({ source: 'api', outcome: 'applied', status_after: 'pending' });
      expect(history.at(-1).detail).to.match(
        /^payment link plk_\w+ \(ideal\) made by shop-server \(storefront\), live until /,
      );
      const audit = await rows(t, 'audit_log', { order_id: order.id, action: 'order.payment_link' });
      expect(audit).to.have.length(1);
      expect(audit[0]).to.include({
        actor: 'shop-server',
        role: 'storefront',
        subject_id: link.id,
        currency: 'EUR',
      });
      // An operator's link is named as theirs.
      const operator = (await t.kit.store.operators.add({ name: 'ada', role: 'operator', by: CLI })).token;
      expect((await makeLink(t, order.id, undefined, operator)).status).to.equal(201);
      const lines = await rows(t, 'audit_log', { order_id: order.id, action: 'order.payment_link' }, 'id');
      expect(lines.map((l) => l.actor)).to.deep.equal(['shop-server', 'ada']);
    });

    it('expires_in is whole seconds from a minute to 30 days; payment_method one the gateway offers for the order', async () => {
      const order = await newOrder(t);
      for (const expires_in of [59, 30 * 24 * 3600 + 1, 0, -5, 3600.5, '3600', null, undefined]) {
        const res = await makeLink(t, order.id, { expires_in, payment_method: 'ideal' });
        expect(res.status, `${expires_in}: ${res.text}`).to.equal(422);
        expect(res.body.errors, String(expires_in)).to.have.property('expires_in');
      }
      expect((await makeLink(t, order.id, { expires_in: 60, payment_method: 'psc' })).status).to.equal(201);
      expect(
        (await makeLink(t, order.id, { expires_in: 30 * 24 * 3600, payment_method: 'psc' })).status,
      ).to.equal(201);

      const unknown = await makeLink(t, order.id, { expires_in: 3600, payment_method: 'bitcoin' });
      expect(unknown.status).to.equal(422);
      expect(unknown.body.errors.payment_method[0]).to.contain('offered: ideal, psc');
      expect((await makeLink(t, order.id, { expires_in: 3600 })).body.errors).to.have.property(
        'payment_method',
      );
      // iDEAL is for EUR in the Netherlands: not for a dollar order, nor a customer in Britain.
      const dollars = await newOrder(t, { currency: 'USD' });
      const usd = await makeLink(t, dollars.id, { expires_in: 3600, payment_method: 'ideal' });
      expect(usd.status).to.equal(422);
      expect(usd.body.errors.payment_method[0]).to.contain('not available for this order (USD)');
      const british = await newOrder(t, { customer: { country_code: 'GB' } });
      const gb = await makeLink(t, british.id, { expires_in: 3600, payment_method: 'ideal' });
      expect(gb.body.errors.payment_method[0]).to.contain('(EUR in GB)');
      expect((await makeLink(t, british.id, { expires_in: 3600, payment_method: 'psc' })).status).to.equal(
        201,
      );
    });

    it('is for the shop and its operators: no token 401, viewer and finance 403, an unknown order 404', async () => {
      const order = await newOrder(t);
      const body = { expires_in: 3600, payment_method: 'ideal' };
      expect((await t.call('POST', `/orders/${order.id}/payment-link`, { body })).status).to.equal(401);
      for (const role of ['viewer', 'finance'] as const) {
        const token = (await t.kit.store.operators.add({ name: `${role}-links`, role, by: CLI })).token;
        const res = await makeLink(t, order.id, body, token);
        expect(res.status, role).to.equal(403);
        expect(res.body.data.allowed).to.deep.equal(['operator', 'storefront', 'admin']);
      }
      expect((await makeLink(t, 'ord_nobody0000000000000000', body)).status).to.equal(404);
      expect(await rows(t, 'payment_links', { order_id: order.id })).to.deep.equal([]);
    });

    it('a closed order is a 409 ORDER_CLOSED, a paid one a 409 ORDER_PAID; nothing is made', async () => {
      const closed = await newOrder(t);
      expect((await t.call('POST', `/orders/${closed.id}/cancel`, { ops: true, body: {} })).status).to.equal(
        200,
      );
      const refusedClosed = await makeLink(t, closed.id);
      expect(refusedClosed.status, refusedClosed.text).to.equal(409);
      expect(refusedClosed.body.code).to.equal('ORDER_CLOSED');
      expect(refusedClosed.body.data).to.include({ closed_reason: 'cancelled' });

      const paid = await newOrder(t);
      const sale = await t.call('POST', `/orders/${paid.id}/pay/card`, {
        body: { card: card(), mode: 'sale' },
      });
      expect(sale.body.data.order.status).to.equal('paid');
      const refusedPaid = await makeLink(t, paid.id);
      expect(refusedPaid.status).to.equal(409);
      expect(refusedPaid.body.code).to.equal('ORDER_PAID');
      expect(refusedPaid.body.data.order).to.include({ id: paid.id, status: 'paid' });
      expect(await rows(t, 'payment_links', { order_id: [closed.id, paid.id] })).to.deep.equal([]);
    });
  });

  describe('visiting one', () => {
    it("sends the browser to the order's open session, the same one on every visit", async () => {
      const order = await newOrder(t, { customer: { country_code: 'NL', first_name: 'Anna' } });
      const url = await linkOf(t, order.id);
      const first = await visit(url);
      expect(first.status, first.html).to.equal(303);
      expect(first.location).to.match(new RegExp(`^${t.kit.gatewayUrl}/hosted/checkout/ps_`));
      expect(first.headers.get('cache-control')).to.equal('no-store');
      const again = await visit(url);
      expect(again.status).to.equal(303);
      expect(again.location).to.equal(first.location);

      const sessions = sessionsOf(t, order.reference);
      expect(sessions).to.have.length(1);
      expect(sessions[0]).to.include({ methodLabel: 'iDEAL' });
      const shopper = await getOrder(t, order.id);
      expect(shopper).to.include({ status: 'requires_action' });
      expect(shopper.payment).to.include({ kind: 'redirect', payment_method: 'ideal' });
      expect(await rows(t, 'payment_attempts', { order_id: order.id })).to.have.length(1);
      // A session opened by the storefront is where the link sends the shopper too.
      const other = await newOrder(t);
      const pay = await t.call('POST', `/orders/${other.id}/pay/redirect`, {
        body: { payment_method: 'psc' },
      });
      const page = pay.body.data.next_action.url;
      expect((await visit(await linkOf(t, other.id))).location).to.equal(page);
    });

    it('opens a new session once the last one ended: failed, cancelled, or expired at the gateway', async () => {
      const order = await newOrder(t);
      const url = await linkOf(t, order.id);
      const first = (await visit(url)).location!;
      await pressButton(first, 'fail');
      const second = (await visit(url)).location!;
      expect(second).to.not.equal(first);
      await pressButton(second, 'cancel');
      const third = (await visit(url)).location!;
      expect(third).to.not.equal(second);
      // The shopper leaves the page open until the session expires (15 minutes at the gateway).
      await passTime(t, 16 * 60_000, 60_000);
      const fourth = (await visit(url)).location!;
      expect(fourth).to.not.equal(third);
      const sessions = sessionsOf(t, order.reference).map((s) => s.status);
      expect(sessions).to.deep.equal(['failed', 'cancelled', 'expired', 'pending_redirect']);
      await pressButton(fourth, 'pay');
      const paid = await visit(url);
      expect(paid.status).to.equal(200);
      expect(shown(paid.html)).to.equal('paid');
      const money = gatewayRecords(t, order.reference).filter((x) => x.status === 'captured');
      expect(money).to.have.length(1);
    });

    it('many visits at once, over HTTP: one session, all sent to it, and the gateway takes one payment', async () => {
      const order = await newOrder(t);
      const url = await linkOf(t, order.id);
      const visits = await Promise.all(Array.from({ length: 8 }, () => visit(url)));
      expect(visits.map((v) => v.status)).to.deep.equal(Array(8).fill(303));
      expect(new Set(visits.map((v) => v.location)).size).to.equal(1);
      expect(sessionsOf(t, order.reference)).to.have.length(1);
      // Both shoppers press Pay: the second finds the session paid.
      const page = visits[0]!.location!;
      await Promise.all([pressButton(page, 'pay'), pressButton(page, 'pay')]);
      const after = await Promise.all(Array.from({ length: 4 }, () => visit(url)));
      expect(after.map((v) => shown(v.html))).to.deep.equal(['paid', 'paid', 'paid', 'paid']);
      const records = gatewayRecords(t, order.reference);
      expect(records.map((x) => [x.type, x.status])).to.deep.equal([['sale', 'captured']]);
      expect((await getOrder(t, order.id)).status).to.equal('paid');
    });
  });

  describe('with no webhook reaching the kit', () => {
    let quiet: TestKit;
    before(async () => {
      quiet = await startTestKit();
      const res = await fetch(`${quiet.kit.gatewayUrl}/sandbox/webhook/outage`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ seconds: 24 * 3600 }),
      });
      expect(res.status).to.equal(200);
    });
    after(async () => {
      await quiet?.close();
    });

    it('a visit asks the gateway: a session that ended unheard of is opened over; one paid unheard of is paid', async () => {
      const order = await newOrder(quiet);
      const url = await linkOf(quiet, order.id);
      const first = (await visit(url)).location!;
      await pressButton(first, 'cancel');
      expect((await getOrder(quiet, order.id)).status, 'the kit has not heard').to.equal('requires_action');
      const second = (await visit(url)).location!;
      expect(second).to.not.equal(first);
      const history = (await getOrder(quiet, order.id)).history;
      expect(
        history.some(
          (h: { source: string; status_after: string }) =>
            h.source === 'poll' && h.status_after === 'cancelled',
        ),
      ).to.equal(true);

      await pressButton(second, 'pay');
      const paid = await visit(url);
      expect(shown(paid.html)).to.equal('paid');
      expect((await getOrder(quiet, order.id)).status).to.equal('paid');
      expect(sessionsOf(quiet, order.reference).map((s) => s.status)).to.deep.equal(['cancelled', 'paid']);
    });
  });

  describe('its pages', () => {
    it('a paid, closed or expired link says so, and an unknown one too; HTML with the security headers', async () => {
      const paid = await newOrder(t);
      const paidUrl = await linkOf(t, paid.id);
      await pressButton((await visit(paidUrl)).location!, 'pay');
      const closed = await newOrder(t);
      const closedUrl = await linkOf(t, closed.id);
      await t.call('POST', `/orders/${closed.id}/cancel`, { ops: true, body: {} });
      const expired = await newOrder(t);
      const expiredUrl = await linkOf(t, expired.id, { expires_in: 120, payment_method: 'psc' });
      await passTime(t, 121_000, 121_000);

      for (const [url, kind, status, headline, reference] of [
        [paidUrl, 'paid', 200, 'This order is already paid', paid.reference],
        [closedUrl, 'ended', 200, 'This order is closed', closed.reference],
        [expiredUrl, 'expired', 410, 'This payment link has expired', expired.reference],
        [
          `${t.kit.publicBaseUrl}/pay/plt_${'x'.repeat(43)}`,
          'unknown',
          404,
          'We could not find this payment link',
          null,
        ],
        [
          `${t.kit.publicBaseUrl}/pay/not-a-token`,
          'unknown',
          404,
          'We could not find this payment link',
          null,
        ],
      ] as const) {
        const page = await visit(url);
        expect(page.status, kind).to.equal(status);
        expect(page.headers.get('content-type')).to.match(/^text\/html/);
        expect(page.headers.get('cache-control')).to.equal('no-store');
        expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
        expect(page.headers.get('x-frame-options')).to.equal('DENY');
        expect(cspOf(page.headers)['script-src']).to.deep.equal(["'self'"]);
        expect(shown(page.html), kind).to.equal(kind);
        expect(page.html).to.contain(`<h1>${headline}</h1>`);
        if (reference) expect(page.html).to.contain(reference);
        expect(page.html).to.not.contain('<script');
      }
      // Nothing was opened for the closed order or the expired link.
      expect(sessionsOf(t, closed.reference)).to.deep.equal([]);
      expect(sessionsOf(t, expired.reference)).to.deep.equal([]);
      // The token is in no log line.
      const token = expiredUrl.split('/').pop()!;
      expect(t.logs.filter((l) => l.includes(token))).to.deep.equal([]);
      expect(t.logs.some((l) => l.includes('/pay/[token]'))).to.equal(true);
    });
  });

  describe('ORDER_TTL', () => {
    it('a live link keeps its order open past ORDER_TTL; once it is over, the order ends and the link says so', async () => {
      const order = await newOrder(t);
      const url = await linkOf(t, order.id, { expires_in: 3 * 24 * 3600, payment_method: 'ideal' });
      const unlinked = await newOrder(t);

      await passTime(t, DAY + HOUR);
      const held = await t.kit.jobs.closeExpired();
      expect(held.kept.held).to.be.at.least(1);
      expect((await getOrder(t, order.id)).status).to.equal('pending');
      expect(await getOrder(t, unlinked.id)).to.include({ status: 'closed', closed_reason: 'expired' });

      // A visit on the second day opens a session; the shopper leaves it to expire.
      const session = (await visit(url)).location!;
      expect(session).to.contain('/hosted/checkout/');
      await passTime(t, DAY);
      expect((await getOrder(t, order.id)).closed_reason).to.equal(null);
      await t.kit.jobs.closeExpired();
      expect((await getOrder(t, order.id)).status, 'still held').to.not.equal('closed');

      // The link ends on the third day: the next run closes the order.
      await passTime(t, DAY);
      await t.kit.jobs.closeExpired();
      expect(await getOrder(t, order.id)).to.include({ status: 'closed', closed_reason: 'expired' });
      const page = await visit(url);
      expect(page.status).to.equal(200);
      expect(shown(page.html)).to.equal('ended');
    });
  });
});
