import { expect } from 'chai';
import { MERCHANT_KEY } from '../../support/gateway.js';
import { landingStatus, pressButton, startTestKit, storeOrder, type TestKit } from '../../support/kit.js';

/**
 * Checkout under abuse (docs/api.md, Limits), through HTTP against the real kit: the limits per client
 * address and per order on POST /orders, /pay/* and the landings' gateway questions, the cap on an
 * order's failed attempts, TRUST_PROXY and the address the gateway is told. Each limit is set small
 * here; the defaults are in config.ts.
 */

const CARD = { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvv: '123' };
const DECLINED = { ...CARD, number: '4000000000000002' };
const IDEAL = { payment_method: 'ideal', customer: { country_code: 'NL' } };

/** A 429 of the kit: the envelope, `RATE_LIMITED`, the limit named, and a Retry-After within its window. */
function expectLimited(
  // biome-ignore lint/suspicious/noExplicitAny: an envelope of any shape
  res: { status: number; headers: Headers; body: any; text: string },
  limit: string,
  windowSeconds: number,
) {
  expect(res.status, res.text).to.equal(429);
  expect(res.body).to.include({ success: false, code: 'RATE_LIMITED' });
  expect(res.body.data.limit).to.equal(limit);
  expect(res.body.request_id).to.be.a('string');
  const after = res.headers.get('retry-after');
  expect(after, 'Retry-After in whole seconds').to.match(/^\d+$/);
  expect(Number(after)).to.be.within(1, windowSeconds);
  expect(res.body.data.retry_after).to.equal(Number(after));
  expect(res.body.message).to.include(`${after} second`);
}

/** Every transaction the sandbox holds for a reference. */
const transactionsOf = (t: TestKit, reference: string) =>
  [...t.kit.sandbox!.deps.state.transactions.values()].filter((x) => x.reference === reference);

async function newOrder(t: TestKit, headers: Record<string, string> = {}) {
  const res = await t.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' }, headers });
  expect(res.status, res.text).to.equal(201);
  return res.body.data.order as { id: string; reference: string };
}

/** The kit's gateway calls by caller, summed over the last two minutes (the budget's own count). */
async function gatewayCalls(t: TestKit) {
  const rows = await t.kit.budget.spending(2);
  const sum: Record<string, number> = {};
  for (const row of rows)
    for (const [caller, n] of Object.entries(row.byCaller)) sum[caller] = (sum[caller] ?? 0) + n;
  return sum;
}

const from = (address: string) => ({ 'X-Forwarded-For': address });

describe('merchant: checkout limits per client address and per order (HTTP)', () => {
  describe('without TRUST_PROXY (the default): the connection is the client', () => {
    let t: TestKit;
    before(async () => {
      t = await startTestKit({
        env: {
          ROLES: 'api',
          LIMIT_ORDERS_PER_ADDRESS: '3/1m',
          // One payment in the first test, two in the /pay/* one: the next is one too many.
          LIMIT_PAY_PER_ADDRESS: '3/1m',
          LIMIT_PAYMENT_METHODS_PER_ADDRESS: '2/1m',
        },
      });
    });
    after(async () => {
      await t?.close();
    });

    it('the card payment tells the gateway the connection’s address as browser_data.ip_address, not the header’s nor the body’s', async () => {
      const order = await storeOrder(t, { amountMinor: 700, currency: 'EUR' });
      const res = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: CARD, customer: { email: 'ada@example.com', ip_address: '192.0.2.7' } },
        headers: from('203.0.113.50'),
      });
      expect(res.status, res.text).to.equal(200);
      const [transaction] = transactionsOf(t, order.reference);
      expect(transaction!.ipAddress).to.equal('127.0.0.1');
    });

    it('POST /orders: the fourth in a minute from one address is 429 orders_per_address; X-Forwarded-For is not believed', async () => {
      const orders = async () =>
        Number(
          (
            (await t.kit.sequelize.query('SELECT COUNT(*) AS n FROM orders', { plain: true })) as {
              n: number;
            }
          ).n,
        );
      const before = await orders();
      for (let i = 0; i < 3; i++) await newOrder(t, from(`198.51.100.${i + 1}`));
      const res = await t.call('POST', '/orders', {
        body: { amount: '1.00', currency: 'EUR' },
        headers: from('198.51.100.99'),
      });
      expectLimited(res, 'orders_per_address', 60);
      expect(await orders(), 'the refused one made nothing').to.equal(before + 3);
    });

    it('/pay/*: past the limit a payment request from the address is 429 pay_per_address, before the body is read', async () => {
      const [a, b] = await Promise.all([
        storeOrder(t, { amountMinor: 500, currency: 'EUR' }),
        storeOrder(t, { amountMinor: 600, currency: 'EUR' }),
      ]);
      expect((await t.call('POST', `/orders/${a.id}/pay/card`, { body: { card: CARD } })).status).to.equal(
        200,
      );
      expect((await t.call('POST', `/orders/${b.id}/pay/redirect`, { body: IDEAL })).status).to.equal(200);
      const before = await gatewayCalls(t);
      // A card payment with a body that would be refused: the limit answers first.
      expectLimited(
        await t.call('POST', `/orders/${b.id}/pay/card`, { rawBody: '{not json' }),
        'pay_per_address',
        60,
      );
      expectLimited(
        await t.call('POST', `/orders/${b.id}/pay/redirect`, { body: IDEAL }),
        'pay_per_address',
        60,
      );
      expect(await gatewayCalls(t), 'nothing reached the gateway').to.deep.equal(before);
    });

    it('GET /payment-methods: the third list in a minute from one address is 429 payment_methods_per_address', async () => {
      expect((await t.call('GET', '/payment-methods?country=NL')).status).to.equal(200);
      expect((await t.call('GET', '/payment-methods')).status).to.equal(200);
      expectLimited(await t.call('GET', '/payment-methods'), 'payment_methods_per_address', 60);
    });
  });

  describe('with TRUST_PROXY=1: the address the proxy saw, read from the right of X-Forwarded-For', () => {
    let t: TestKit;
    before(async () => {
      t = await startTestKit({
        env: {
          ROLES: 'api',
          TRUST_PROXY: '1',
          LIMIT_ORDERS_PER_ADDRESS: '2/1m',
          LIMIT_PAY_PER_ADDRESS: '3/1m',
          LIMIT_PAY_PER_ORDER: '2/10m',
          MAX_FAILED_ATTEMPTS_PER_ORDER: '3',
        },
      });
    });
    after(async () => {
      await t?.close();
    });

    it('POST /orders counts per address: another address still creates orders; a spoofed left entry changes nothing', async () => {
      await newOrder(t, from('198.51.100.1'));
      // The client put a value of its own first; the proxy appended the address it saw.
      await newOrder(t, from('10.0.0.1, 198.51.100.1'));
      expectLimited(
        await t.call('POST', '/orders', {
          body: { amount: '1.00', currency: 'EUR' },
          headers: from('192.0.2.200, 198.51.100.1'),
        }),
        'orders_per_address',
        60,
      );
      await newOrder(t, from('198.51.100.2'));
      // IPv6: one /64 is one client, whatever address it picks within it.
      await newOrder(t, from('2001:db8:1:2::1'));
      await newOrder(t, from('2001:db8:1:2:ffff::9'));
      expectLimited(
        await t.call('POST', '/orders', {
          body: { amount: '1.00', currency: 'EUR' },
          headers: from('2001:db8:1:2:abcd::1'),
        }),
        'orders_per_address',
        60,
      );
    });

    it('/pay/* per order: the third request for one order in ten minutes is 429 pay_per_order, from any address', async () => {
      const order = await storeOrder(t, { amountMinor: 800, currency: 'EUR' });
      const pay = (address: string) =>
        t.call('POST', `/orders/${order.id}/pay/card`, { body: { card: DECLINED }, headers: from(address) });
      expect((await pay('198.51.100.10')).status).to.equal(402);
      expect((await pay('198.51.100.11')).status).to.equal(402);
      expectLimited(await pay('198.51.100.12'), 'pay_per_order', 600);
      expect(transactionsOf(t, order.reference), 'the third never reached the gateway').to.have.length(2);
    });

    it('/pay/* per address: the fourth payment request in a minute from one address is 429 pay_per_address, whatever the order', async () => {
      const orders = await Promise.all(
        [1, 2, 3, 4].map(() => storeOrder(t, { amountMinor: 900, currency: 'EUR' })),
      );
      const pay = (id: string) =>
        t.call('POST', `/orders/${id}/pay/card`, { body: { card: CARD }, headers: from('198.51.100.20') });
      for (const order of orders.slice(0, 3)) expect((await pay(order.id)).status).to.equal(200);
      expectLimited(await pay(orders[3]!.id), 'pay_per_address', 60);
      const other = await t.call('POST', `/orders/${orders[3]!.id}/pay/card`, {
        body: { card: CARD },
        headers: from('198.51.100.21'),
      });
      expect(other.status, 'another address pays').to.equal(200);
    });

    it('the failed-attempt cap: after 3 declines the order takes no payment, card or redirect: 409 TOO_MANY_ATTEMPTS', async () => {
      const order = await storeOrder(t, { amountMinor: 1000, currency: 'EUR' });
      // Each from its own address, and the per-order limit reset between: only the cap counts here.
      const resetOrderLimit = async () => {
        for (const key of await t.kit.redis.keys(`${t.redisPrefix}:limit:pay_per_order:*`))
          await t.kit.redis.del(key);
      };
      for (let i = 0; i < 3; i++) {
        await resetOrderLimit();
        const res = await t.call('POST', `/orders/${order.id}/pay/card`, {
          body: { card: DECLINED },
          headers: from(`198.51.100.${30 + i}`),
        });
        expect(res.status, res.text).to.equal(402);
      }
      await resetOrderLimit();
      const card = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: CARD },
        headers: from('198.51.100.40'),
      });
      expect(card.status, card.text).to.equal(409);
      expect(card.body).to.include({ success: false, code: 'TOO_MANY_ATTEMPTS' });
      expect(card.body.data).to.deep.equal({ failed_attempts: 3, limit: 3 });
      expect(card.headers.get('retry-after'), 'waiting does not help').to.equal(null);
      const redirect = await t.call('POST', `/orders/${order.id}/pay/redirect`, {
        body: IDEAL,
        headers: from('198.51.100.41'),
      });
      expect(redirect.status).to.equal(409);
      expect(redirect.body.code).to.equal('TOO_MANY_ATTEMPTS');
      expect(transactionsOf(t, order.reference), 'nothing more reached the gateway').to.have.length(3);
      const stored = await t.call('GET', `/orders/${order.id}`);
      expect(stored.body.data.order.status, 'the order is as the last decline left it').to.equal('failed');
      // A new order pays.
      const fresh = await storeOrder(t, { amountMinor: 1000, currency: 'EUR' });
      const paid = await t.call('POST', `/orders/${fresh.id}/pay/card`, {
        body: { card: CARD },
        headers: from('198.51.100.42'),
      });
      expect(paid.status).to.equal(200);
    });

    it('the card payment tells the gateway the address the proxy saw as browser_data.ip_address, over the body’s customer.ip_address', async () => {
      const order = await storeOrder(t, { amountMinor: 1100, currency: 'EUR' });
      const res = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: CARD, customer: { email: 'ada@example.com', ip_address: '192.0.2.7' } },
        headers: from('192.0.2.1, 203.0.113.50'),
      });
      expect(res.status, res.text).to.equal(200);
      expect(transactionsOf(t, order.reference)[0]!.ipAddress).to.equal('203.0.113.50');
    });

    it('a 3DS challenge keeps the address until the return finishes the payment', async () => {
      const order = await storeOrder(t, { amountMinor: 1200, currency: 'EUR' });
      const res = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: { ...CARD, number: '4000000000003220' } },
        headers: from('2001:db8::50'),
      });
      expect(res.status, res.text).to.equal(200);
      const back = await pressButton(res.body.data.next_action.url, 'authenticate');
      // The browser returns straight to the kit, not through the proxy: no header.
      const page = await fetch(back);
      expect(landingStatus(await page.text())).to.equal('paid');
      expect(transactionsOf(t, order.reference)[0]!.ipAddress).to.equal('2001:db8::50');
    });

    it('a redirect payment: the device address is the one the proxy saw, never an anonymous body’s customer.ip_address; the shop’s server (its token) may name the shopper’s', async () => {
      const order = (amountMinor: number) => storeOrder(t, { amountMinor, currency: 'EUR' });
      const [a, b, c, d] = await Promise.all([order(1300), order(1400), order(1450), order(1475)]);
      const claimed = { ...IDEAL, customer: { ...IDEAL.customer, ip_address: '192.0.2.8' } };
      const anonymous = await t.call('POST', `/orders/${a.id}/pay/redirect`, {
        body: claimed,
        headers: from('203.0.113.60'),
      });
      expect(anonymous.status, anonymous.text).to.equal(200);
      expect(transactionsOf(t, a.reference)[0]!.ipAddress).to.equal('203.0.113.60');
      const without = await t.call('POST', `/orders/${b.id}/pay/redirect`, {
        body: IDEAL,
        headers: from('203.0.113.61'),
      });
      expect(without.status, without.text).to.equal(200);
      const { token: shop } = await t.kit.store.operators.add({
        name: 'shop-server',
        role: 'storefront',
        by: { name: 'test', role: 'admin', credential: 'cli' },
      });
      const server = await t.call('POST', `/orders/${c.id}/pay/redirect`, {
        body: claimed,
        token: shop,
        headers: from('203.0.113.62'),
      });
      expect(server.status, server.text).to.equal(200);
      // A token that is sent must be good: a wrong one starts nothing.
      const wrong = await t.call('POST', `/orders/${d.id}/pay/redirect`, {
        body: claimed,
        token: `${shop}x`,
        headers: from('203.0.113.63'),
      });
      expect(wrong.status, wrong.text).to.equal(401);
      expect(wrong.body.code).to.equal('UNAUTHORIZED');
      expect(transactionsOf(t, b.reference)[0]!.ipAddress).to.equal('203.0.113.61');
      expect(transactionsOf(t, c.reference)[0]!.ipAddress).to.equal('192.0.2.8');
      expect(transactionsOf(t, d.reference)).to.deep.equal([]);
    });

    it('a header that is not an address gives way to the connection’s', async () => {
      const order = await storeOrder(t, { amountMinor: 1500, currency: 'EUR' });
      const res = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: CARD },
        headers: from('198.51.100.1, not-an-address'),
      });
      expect(res.status, res.text).to.equal(200);
      expect(transactionsOf(t, order.reference)[0]!.ipAddress).to.equal('127.0.0.1');
    });
  });

  describe("the landings' gateway questions", () => {
    let t: TestKit;
    before(async () => {
      t = await startTestKit({
        env: {
          ROLES: 'api',
          TRUST_PROXY: '1',
          LIMIT_LANDING_PER_ORDER: '2/1m',
          LIMIT_LANDING_PER_ADDRESS: '3/1m',
        },
      });
      // No webhook moves an order here: what a landing shows is what it asked, or what is stored.
      const outage = await fetch(`${t.kit.gatewayUrl}/sandbox/webhook/outage`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ seconds: 86400 }),
      });
      expect(outage.status).to.equal(200);
    });
    after(async () => {
      await t?.close();
    });

    /** A redirect payment waiting at its hosted page: the order and the session's landing URL. */
    async function waiting(address: string) {
      const order = await storeOrder(t, { amountMinor: 2000, currency: 'EUR' });
      const pay = await t.call('POST', `/orders/${order.id}/pay/redirect`, {
        body: IDEAL,
        headers: from(address),
      });
      expect(pay.status, pay.text).to.equal(200);
      const page = pay.body.data.next_action.url as string;
      const sessionId = page.split('/').pop()!;
      return { order, page, landing: `${t.url}/checkout/return?payment_session_id=${sessionId}` };
    }

    const load = async (url: string, address: string) => {
      const res = await fetch(url, { headers: from(address) });
      return { status: res.status, html: await res.text() };
    };

    it('per order: past its limit a landing still renders the stored order, without asking the gateway', async () => {
      const w = await waiting('198.51.100.70');
      const asked = async () => (await gatewayCalls(t)).landing ?? 0;
      const start = await asked();
      for (const address of ['198.51.100.71', '198.51.100.72']) {
        const page = await load(w.landing, address);
        expect(page.status).to.equal(200);
        expect(landingStatus(page.html)).to.equal('requires_action');
      }
      expect(await asked(), 'two loads, two questions').to.equal(start + 2);
      // The shopper pays at the hosted page; no webhook comes. The gateway knows; the kit does not yet.
      await pressButton(w.page, 'pay');
      const third = await load(w.landing, '198.51.100.73');
      expect(third.status, 'never a bare 429 for a shopper').to.equal(200);
      expect(landingStatus(third.html), 'the order as stored').to.equal('requires_action');
      expect(third.html).to.include('http-equiv="refresh"');
      expect(await asked(), 'the gateway was not asked').to.equal(start + 2);
      const metrics = await (await fetch(`${t.url}/metrics`)).text();
      expect(metrics).to.match(/kit_rate_limited_total\{limit="landing_per_order"\} [1-9]/);
    });

    it('per address: past its limit the landings of every order render from the database', async () => {
      const orders = await Promise.all([1, 2, 3, 4].map((i) => waiting(`198.51.100.${80 + i}`)));
      const asked = async () => (await gatewayCalls(t)).landing ?? 0;
      const start = await asked();
      for (const w of orders.slice(0, 3)) {
        const page = await load(w.landing, '198.51.100.90');
        expect(page.status).to.equal(200);
      }
      expect(await asked()).to.equal(start + 3);
      const fourth = await load(orders[3]!.landing, '198.51.100.90');
      expect(fourth.status).to.equal(200);
      expect(landingStatus(fourth.html)).to.equal('requires_action');
      expect(await asked(), 'the fourth from that address asked nothing').to.equal(start + 3);
      const elsewhere = await load(orders[3]!.landing, '198.51.100.91');
      expect(elsewhere.status).to.equal(200);
      expect(await asked(), 'another address asks').to.equal(start + 4);
    });
  });
});
