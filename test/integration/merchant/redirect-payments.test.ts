import { expect } from 'chai';
import { observeSession } from '../../../src/merchant/orders/from-gateway.js';
import { count, row } from '../../support/db.js';
import { MERCHANT_KEY } from '../../support/gateway.js';
import { pressButton, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * merchant.md, HTTP interface: POST /orders/{id}/pay/redirect, the /checkout/return and
 * /checkout/cancel landings, and GET /payment-methods. Against the embedded sandbox (sandbox.md
 * section 7). Webhook deliveries are held back by a sandbox outage and the kit runs the api role
 * only, so no webhook and no poll can move an order behind the tests' backs: whatever changes an
 * order here is the request under test.
 */
describe('merchant: redirect payments (hosted checkout)', () => {
  let t: TestKit;

  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
    // sandbox.md section 10: every delivery of this merchant fails for a day of sandbox clock.
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

  const newOrder = async (amount = '12.34', currency = 'EUR') => {
    const created = await t.call('POST', '/orders', { body: { amount, currency } });
    expect(created.status).to.equal(201);
    return created.body.data.order as { id: string; reference: string; status: string };
  };

  const payRedirect = (id: string, body: unknown) => t.call('POST', `/orders/${id}/pay/redirect`, { body });

  const ideal = { payment_method: 'ideal', customer: { country_code: 'NL' } };

  /** The order row exactly as stored, and how many history rows it has. */
  const snapshot = async (id: string) => {
    return {
      row: await row(t, 'orders', { id }),
      history: await count(t, 'order_history', { order_id: id }),
    };
  };

  const sessionsOf = (reference: string) =>
    [...t.kit.sandbox!.deps.state.sessions.values()].filter((s) => s.reference === reference);

  const landing = async (url: string) => {
    const res = await fetch(url, { redirect: 'manual' });
    return { status: res.status, type: res.headers.get('content-type') ?? '', html: await res.text() };
  };

  /** Starts a redirect payment and returns the order and the hosted checkout page. */
  const startRedirect = async () => {
    const order = await newOrder();
    const pay = await payRedirect(order.id, ideal);
    expect(pay.status, pay.text).to.equal(200);
    return { order, pageUrl: pay.body.data.next_action.url as string };
  };

  describe('POST /orders/{id}/pay/redirect', () => {
    it('answers 200 with a redirect to the sandbox checkout page and the order requires_action', async () => {
      const order = await newOrder('12.34');
      const pay = await payRedirect(order.id, ideal);
      expect(pay.status, pay.text).to.equal(200);
      expect(pay.body.success).to.equal(true);
      const { next_action: next, order: paid } = pay.body.data;
      expect(next.type).to.equal('redirect');
      expect(next.url).to.match(new RegExp(`^${t.kit.gatewayUrl}/hosted/checkout/ps_[A-Za-z0-9]{24}$`));
      expect(paid.id).to.equal(order.id);
      expect(paid.status).to.equal('requires_action');

      // The session the page belongs to is the order's: its amount, currency and reference.
      const sessionId = next.url.split('/').pop();
      const session = t.kit.sandbox!.deps.state.sessions.get(sessionId);
      expect(session, 'a session at the gateway').to.not.equal(undefined);
      expect(session!.amount).to.equal(1234);
      expect(session!.currency).to.equal('EUR');
      expect(session!.reference).to.equal(order.reference);
      expect(session!.paymentMethod).to.equal('ideal');
      expect(session!.returnUrl).to.equal(`${t.kit.publicBaseUrl}/checkout/return`);
      expect(session!.cancelUrl).to.equal(`${t.kit.publicBaseUrl}/checkout/cancel`);

      const stored = await t.call('GET', `/orders/${order.id}`, { ops: true });
      expect(stored.body.data.order.status).to.equal('requires_action');
      expect(stored.body.data.order.payment.payment_session_id).to.equal(sessionId);
    });

    it('Pay on the hosted page sends the browser to /checkout/return, whose page shows what the gateway says, not the query', async () => {
      const { order, pageUrl } = await startRedirect();

      const back = await pressButton(pageUrl, 'pay');
      expect(back.startsWith(`${t.kit.publicBaseUrl}/checkout/return?`), back).to.equal(true);
      const query = new URL(back).searchParams;
      const sessionId = pageUrl.split('/').pop();
      expect(query.get('payment_session_id')).to.equal(sessionId);
      expect(query.get('reference')).to.equal(order.reference);
      expect(query.get('status')).to.equal('paid');

      const page = await landing(back);
      expect(page.status).to.equal(200);
      expect(page.type).to.match(/^text\/html/);
      // No webhook has come (an outage holds them back): the landing asked the gateway, a poll.
      expect(page.html).to.contain('data-status="paid"');
      expect(page.html).to.contain(order.reference);
      const stored = (await t.call('GET', `/orders/${order.id}`, { ops: true })).body.data.order;
      expect(stored.status).to.equal('paid');
      expect(stored.history.at(-1)).to.include({ source: 'poll', outcome: 'applied', status_after: 'paid' });
    });

    it('a forged return (status=paid on a session never paid) changes nothing: the gateway says it is open', async () => {
      const { order, pageUrl } = await startRedirect();
      const before = (await snapshot(order.id)).row!;
      const sessionId = pageUrl.split('/').pop()!;
      const forged = `${t.kit.publicBaseUrl}/checkout/return?payment_session_id=${sessionId}&reference=${encodeURIComponent(order.reference)}&status=paid`;
      const page = await landing(forged);
      expect(page.status).to.equal(200);
      expect(page.html).to.contain('data-status="requires_action"');
      const after = (await snapshot(order.id)).row!;
      for (const field of [
        'status',
        'captured_minor',
        'refunded_minor',
        'needs_review',
        'current_attempt_id',
      ] as const)
        expect(after[field], field).to.deep.equal(before[field]);
      // The landing asked the gateway and learnt nothing new: a routine poll, which leaves no line.
      const history = (await t.call('GET', `/orders/${order.id}`, { ops: true })).body.data.order.history;
      expect(history.filter((h: { source: string }) => h.source === 'poll')).to.deep.equal([]);
      expect(history.at(-1)).to.include({ status_after: 'requires_action' });
    });

    it('Cancel on the hosted page sends the browser to /checkout/cancel, which shows what the gateway says', async () => {
      const { order, pageUrl } = await startRedirect();

      const back = await pressButton(pageUrl, 'cancel');
      expect(back.startsWith(`${t.kit.publicBaseUrl}/checkout/cancel?`), back).to.equal(true);
      const query = new URL(back).searchParams;
      expect(query.get('payment_session_id')).to.equal(pageUrl.split('/').pop());
      expect(query.get('reference')).to.equal(order.reference);
      expect(query.get('status')).to.equal('cancelled');

      const page = await landing(back);
      expect(page.status).to.equal(200);
      expect(page.type).to.match(/^text\/html/);
      expect(page.html).to.contain('data-status="cancelled"');
      expect((await t.call('GET', `/orders/${order.id}`)).body.data.order.status).to.equal('cancelled');
    });

    /** What a status poll does: the kit reads the session at the gateway and applies it. */
    const poll = async (sessionId: string) => {
      const session = (await t.kit.client.getPaymentSession(sessionId)).data;
      await t.kit.apply(observeSession(session, 'poll', `poll:test:${sessionId}`, Date.now()));
    };

    it('once the kit has heard from the gateway, the same return landing shows paid', async () => {
      const { order, pageUrl } = await startRedirect();
      const back = await pressButton(pageUrl, 'pay');
      await poll(pageUrl.split('/').pop()!);
      const page = await landing(back);
      expect(page.status).to.equal(200);
      expect(page.html).to.contain('data-status="paid"');
      expect((await t.call('GET', `/orders/${order.id}`)).body.data.order.status).to.equal('paid');
    });

    it('once the kit has heard from the gateway, the same cancel landing shows cancelled', async () => {
      const { pageUrl } = await startRedirect();
      const back = await pressButton(pageUrl, 'cancel');
      await poll(pageUrl.split('/').pop()!);
      const page = await landing(back);
      expect(page.status).to.equal(200);
      expect(page.html).to.contain('data-status="cancelled"');
    });

    it('a landing for an unknown or missing session id is a 404 page', async () => {
      for (const path of [
        '/checkout/return?payment_session_id=ps_000000000000000000000000&status=paid',
        '/checkout/cancel?payment_session_id=ps_000000000000000000000000&status=cancelled',
        '/checkout/return',
      ]) {
        const page = await landing(t.url + path);
        expect(page.status, path).to.equal(404);
        expect(page.type, path).to.match(/^text\/html/);
        expect(page.html, path).to.not.contain('data-status=');
      }
    });

    it('a provider refusal (PROVIDER_REJECT) is 402 ERR_PROVIDER_REJECTED, the order failed, and a new attempt may follow', async () => {
      const order = await newOrder();
      const pay = await payRedirect(order.id, {
        payment_method: 'ideal',
        customer: { country_code: 'NL', last_name: 'PROVIDER_REJECT' },
      });
      expect(pay.status, pay.text).to.equal(402);
      expect(pay.body.success).to.equal(false);
      expect(pay.body.code).to.equal('ERR_PROVIDER_REJECTED');
      expect(pay.body.data.order.status).to.equal('failed');
      expect(pay.body.data.next_action).to.equal(null);

      const stored = await t.call('GET', `/orders/${order.id}`, { ops: true });
      expect(stored.body.data.order.status).to.equal('failed');
      expect(stored.body.data.order.failure_code).to.equal('ERR_PROVIDER_REJECTED');

      // merchant.md: the gateway releases the reference after a failed attempt; a new one reuses it.
      const again = await payRedirect(order.id, ideal);
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.order.status).to.equal('requires_action');
      expect(again.body.data.order.reference).to.equal(order.reference);
    });

    it('a provider outage (PROVIDER_DOWN, the gateway answers 502) is 503 ERR_GATEWAY_ERROR, not a decline; the order failed, one session asked', async () => {
      const order = await newOrder();
      const pay = await payRedirect(order.id, {
        payment_method: 'ideal',
        customer: { country_code: 'NL', last_name: 'PROVIDER_DOWN' },
      });
      expect(pay.status, pay.text).to.equal(503);
      expect(pay.headers.get('retry-after')).to.equal('5');
      expect(pay.body.success).to.equal(false);
      expect(pay.body.code).to.equal('ERR_GATEWAY_ERROR');
      expect(pay.body.data.order.status).to.equal('failed');

      const stored = await t.call('GET', `/orders/${order.id}`, { ops: true });
      expect(stored.body.data.order.status).to.equal('failed');
      expect(stored.body.data.order.failure_code).to.equal('ERR_GATEWAY_ERROR');
      // An unkeyed session creation is never blindly repeated: the gateway saw one.
      expect(sessionsOf(order.reference)).to.have.length(1);
    });

    it('iDEAL for a German customer is 422 ERR_PAYMENT_METHOD_NOT_AVAILABLE_IN_COUNTRY naming the country, and the order stays pending', async () => {
      const order = await newOrder();
      const pay = await payRedirect(order.id, { payment_method: 'ideal', customer: { country_code: 'DE' } });
      expect(pay.status, pay.text).to.equal(422);
      expect(pay.body.code).to.equal('ERR_PAYMENT_METHOD_NOT_AVAILABLE_IN_COUNTRY');
      expect(pay.body.errors).to.have.property('customer.country_code');
      expect(pay.body.data.order.status).to.equal('pending');
      expect(pay.body.data.next_action).to.equal(null);
      expect(sessionsOf(order.reference)).to.have.length(0);
      const stored = await t.call('GET', `/orders/${order.id}`, { ops: true });
      expect(stored.body.data.order.status).to.equal('pending');
      expect(stored.body.data.order.payment).to.equal(null);
      expect(stored.body.data.order.history).to.deep.equal([]);
    });

    it('a missing payment_method is 422 naming it, and the order is untouched', async () => {
      const order = await newOrder();
      const before = await snapshot(order.id);
      const pay = await payRedirect(order.id, { customer: { country_code: 'NL' } });
      expect(pay.status, pay.text).to.equal(422);
      expect(pay.body.success).to.equal(false);
      expect(pay.body.errors).to.have.property('payment_method');
      expect(await snapshot(order.id)).to.deep.equal(before);
      expect(sessionsOf(order.reference)).to.have.length(0);
    });

    it('a bad customer is 422 naming the field, and the order is untouched', async () => {
      const order = await newOrder();
      const before = await snapshot(order.id);
      const cases: [unknown, string][] = [
        [{ country_code: 'nl' }, 'customer.country_code'],
        [{ country_code: 'NL', email: 'not-an-email' }, 'customer.email'],
        ['NL', 'customer'],
      ];
      for (const [customer, field] of cases) {
        const pay = await payRedirect(order.id, { payment_method: 'ideal', customer });
        expect(pay.status, pay.text).to.equal(422);
        expect(pay.body.success).to.equal(false);
        expect(pay.body.errors, JSON.stringify(pay.body.errors)).to.have.property(field);
      }
      expect(await snapshot(order.id)).to.deep.equal(before);
      expect(sessionsOf(order.reference)).to.have.length(0);
    });

    it('an unknown order is 404', async () => {
      const pay = await payRedirect('ord_doesnotexist', ideal);
      expect(pay.status).to.equal(404);
      expect(pay.body.success).to.equal(false);
    });
  });

  describe('GET /payment-methods', () => {
    it("passes the gateway's advisory list through (iDEAL available in NL, EUR)", async () => {
      const answer = await t.call('GET', '/payment-methods?country=NL&currency=EUR');
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.success).to.equal(true);
      const methods = answer.body.data.payment_methods as { payment_method: string; available: boolean }[];
      const idealMethod = methods.find((m) => m.payment_method === 'ideal');
      expect(idealMethod, 'ideal listed').to.not.equal(undefined);
      expect(idealMethod!.available).to.equal(true);

      const direct = await fetch(`${t.kit.gatewayUrl}/api/v1/payment-methods?country=NL&currency=EUR`, {
        headers: { authorization: `Bearer ${MERCHANT_KEY}` },
      });
      const gateway = (await direct.json()) as { data: { payment_methods: unknown[] } };
      expect(answer.body.data.payment_methods).to.deep.equal(gateway.data.payment_methods);
    });

    it('passes the filters on: iDEAL is listed unavailable for DE', async () => {
      const answer = await t.call('GET', '/payment-methods?country=DE&currency=EUR');
      expect(answer.status, answer.text).to.equal(200);
      const idealMethod = answer.body.data.payment_methods.find(
        (m: { payment_method: string }) => m.payment_method === 'ideal',
      );
      expect(idealMethod.available).to.equal(false);
      expect(idealMethod.unavailable_reasons).to.include('country_not_supported');
    });

    it("a key the gateway refuses is 502 GATEWAY_ERROR with the gateway's code, not a complaint about the request", async () => {
      const key = t.kit.sandbox!.deps.state.keys.get(MERCHANT_KEY)!;
      (key as { active: boolean }).active = false; // an operator revoked it at the gateway
      try {
        const answer = await t.call('GET', '/payment-methods?country=NL&currency=EUR');
        expect(answer.status, answer.text).to.equal(502);
        expect(answer.body.code).to.equal('GATEWAY_ERROR');
        expect(answer.body.data).to.deep.equal({ gateway_code: 'ERR_AUTH_FAILED' });
        expect(answer.body).to.not.have.property('errors');
      } finally {
        (key as { active: boolean }).active = true;
      }
      expect((await t.call('GET', '/payment-methods')).status).to.equal(200);
    });

    it('a lower-case country is 422 naming country', async () => {
      const answer = await t.call('GET', '/payment-methods?country=nl&currency=EUR');
      expect(answer.status, answer.text).to.equal(422);
      expect(answer.body.success).to.equal(false);
      expect(answer.body.errors).to.have.property('country');
    });
  });
});
