import { expect } from 'chai';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { sign } from '../../../src/shared/signature.js';
import { documentProblems, responseChecker } from '../../support/api-document.js';
import { event, poster, stateOf, storedSecret, wire } from '../../support/events.js';
import { card } from '../../support/gateway.js';
import { OPS_TOKEN, pressButton, startTestKit, type TestKit } from '../../support/kit.js';
import { keepStraySale } from '../../support/unmatched.js';

/**
 * issue, part 4: the kit's answers are what its document says. Real requests to a running kit (its
 * MySQL, Redis and embedded sandbox), each answer checked against the response the served
 * /openapi.json documents for its route and status, so the document cannot drift from the code.
 */
describe('merchant API: real answers match GET /openapi.json', function () {
  this.timeout(60_000);
  let t: TestKit;
  let checker: Awaited<ReturnType<typeof responseChecker>>;

  type Call = {
    // biome-ignore lint/suspicious/noExplicitAny: request bodies of every shape
    body?: any;
    rawBody?: string;
    ops?: boolean;
    token?: string;
    headers?: Record<string, string>;
  };
  /** Calls the kit and checks the answer against the document; `template` is the documented path. */
  const call = async (method: string, path: string, template: string, status: number, o: Call = {}) => {
    const answer = await t.call(method, path, o);
    expect(answer.status, `${method} ${path}: ${answer.text.slice(0, 500)}`).to.equal(status);
    checker.check(answer, method, template);
    return answer;
  };
  const newOrder = async (body: Record<string, unknown> = { amount: '12.34', currency: 'EUR' }) =>
    (await call('POST', '/orders', '/orders', 201, { body, ops: 'reference' in body })).body.data.order
      .id as string;

  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
    const served = await t.call('GET', '/openapi.json');
    expect(served.status).to.equal(200);
    expect(await documentProblems(served.body as ApiDocument)).to.equal('');
    checker = await responseChecker(served.body as ApiDocument);
    checker.check(served, 'GET', '/openapi.json');
  });
  after(async () => {
    await t?.close();
    if (checker) console.log(`      checked against the document: ${[...checker.checked].sort().join('; ')}`);
  });

  it('orders: created, read (public; with their history by a reader), refused (401, 403, 422, 409), not found (404)', async () => {
    const id = await newOrder({ amount: 49.9, currency: 'EUR', reference: `api-doc-${Date.now()}` });
    const order = await call('GET', `/orders/${id}`, '/orders/{id}', 200);
    expect(order.body.data.order).to.not.have.property('history');
    const full = await call('GET', `/orders/${id}`, '/orders/{id}', 200, { ops: true });
    expect(full.body.data.order.history).to.be.an('array');
    await call('GET', `/orders/${id}`, '/orders/{id}', 401, { token: 'nobody-holds-this' });
    const storefront = (
      await t.kit.store.operators.add({
        name: 'doc-storefront',
        role: 'storefront',
        by: { name: 'test', role: 'admin', credential: 'cli' },
      })
    ).token;
    await call('GET', `/orders/${id}`, '/orders/{id}', 403, { token: storefront });
    await call('POST', '/orders', '/orders', 422, { body: { amount: '1.234', currency: 'EUR' } });
    await call('POST', '/orders', '/orders', 422, { body: { amount: '10', currency: 'KWD' } });
    await call('POST', '/orders', '/orders', 409, {
      ops: true,
      body: { amount: '1', currency: 'EUR', reference: order.body.data.order.reference },
    });
    // A reference of one's own: without a token 401, with a role that may not name orders 403.
    await call('POST', '/orders', '/orders', 401, {
      body: { amount: '1', currency: 'EUR', reference: 'x-1' },
    });
    const viewer = (
      await t.kit.store.operators.add({
        name: 'doc-namer',
        role: 'viewer',
        by: { name: 'test', role: 'admin', credential: 'cli' },
      })
    ).token;
    await call('POST', '/orders', '/orders', 403, {
      token: viewer,
      body: { amount: '1', currency: 'EUR', reference: 'x-1' },
    });
    await call('GET', '/orders/ord_nobody', '/orders/{id}', 404);
    // An IPv6 address with an IPv4 tail: the kit takes it, so the document must too.
    const ip = await newOrder({ amount: '5', currency: 'EUR', customer: { ip_address: '::ffff:192.0.2.1' } });
    await call('GET', `/orders/${ip}`, '/orders/{id}', 200, { ops: true });
  });

  it('card payments: approved, challenged, declined (402), refused input (422), past paying for (409)', async () => {
    const customer = { email: 'ada@example.com', country_code: 'GB', ip_address: '203.0.113.9' };
    const paid = await newOrder({ amount: '12.34', currency: 'EUR', customer, description: 'A book' });
    const sale = await call('POST', `/orders/${paid}/pay/card`, '/orders/{id}/pay/card', 200, {
      body: { card: card(), mode: 'sale', customer },
    });
    expect(sale.body.data.order.status).to.equal('paid');
    await call('GET', `/orders/${paid}`, '/orders/{id}', 200);
    await call('GET', `/orders/${paid}`, '/orders/{id}', 200, { ops: true });
    await call('POST', `/orders/${paid}/pay/card`, '/orders/{id}/pay/card', 409, { body: { card: card() } });

    const challenged = await newOrder();
    const challenge = await call('POST', `/orders/${challenged}/pay/card`, '/orders/{id}/pay/card', 200, {
      body: { card: card('4000000000003220') },
    });
    expect(challenge.body.data.next_action.type).to.equal('redirect');
    const waiting = await call('GET', `/orders/${challenged}`, '/orders/{id}', 200);
    expect(waiting.body.data.order.next_action).to.deep.equal(challenge.body.data.next_action);

    const declined = await newOrder();
    const decline = await call('POST', `/orders/${declined}/pay/card`, '/orders/{id}/pay/card', 402, {
      body: { card: card('4000000000000002') },
    });
    expect(decline.body.code).to.equal('ERR_CARD_DO_NOT_HONOR');

    const bad = await newOrder();
    await call('POST', `/orders/${bad}/pay/card`, '/orders/{id}/pay/card', 422, {
      body: { card: { ...card(), number: '42' }, mode: 'later' },
    });
    await call('POST', '/orders/ord_nobody/pay/card', '/orders/{id}/pay/card', 404, {
      body: { card: card() },
    });
  });

  it('redirect payments and the payment methods: a session, a refusal by the gateway (422), the list', async () => {
    const id = await newOrder();
    const session = await call('POST', `/orders/${id}/pay/redirect`, '/orders/{id}/pay/redirect', 200, {
      body: { payment_method: 'ideal', customer: { country_code: 'NL' } },
    });
    expect(session.body.data.next_action.url).to.match(/\/hosted\/checkout\/ps_/);
    const usd = await newOrder({ amount: '5', currency: 'USD' });
    const refused = await call('POST', `/orders/${usd}/pay/redirect`, '/orders/{id}/pay/redirect', 422, {
      body: { payment_method: 'ideal' },
    });
    expect(refused.body.code).to.match(/^ERR_/);
    await call('GET', '/payment-methods?country=NL&currency=EUR', '/payment-methods', 200);
    await call('GET', '/payment-methods', '/payment-methods', 200);
    await call('GET', '/payment-methods?country=nl', '/payment-methods', 422);
  });

  it('operator routes: 401 without the token, capture, refund (its key required), void, refusals', async () => {
    const auth = await newOrder({ amount: '20.00', currency: 'EUR' });
    await call('POST', `/orders/${auth}/pay/card`, '/orders/{id}/pay/card', 200, {
      body: { card: card(), mode: 'auth' },
    });
    await call('POST', `/orders/${auth}/capture`, '/orders/{id}/capture', 401, { body: {} });
    await call('POST', `/orders/${auth}/capture`, '/orders/{id}/capture', 422, {
      ops: true,
      body: { amount: '20.001' },
    });
    await call('POST', `/orders/${auth}/capture`, '/orders/{id}/capture', 200, { ops: true, body: {} });
    await call('POST', `/orders/${auth}/refund`, '/orders/{id}/refund', 422, {
      ops: true,
      body: { amount: '5.00' },
    });
    await call('POST', `/orders/${auth}/refund`, '/orders/{id}/refund', 200, {
      ops: true,
      body: { amount: '5.00', reason: 'damaged' },
      headers: { 'Idempotency-Key': 'api-doc-refund-1' },
    });
    await call('POST', `/orders/${auth}/refund`, '/orders/{id}/refund', 409, {
      ops: true,
      body: { amount: '6.00' },
      headers: { 'Idempotency-Key': 'api-doc-refund-1' },
    });
    await call('POST', `/orders/${auth}/void`, '/orders/{id}/void', 409, { ops: true, body: {} });
    await call('POST', '/orders/ord_nobody/void', '/orders/{id}/void', 404, { ops: true, body: {} });

    const voided = await newOrder();
    await call('POST', `/orders/${voided}/pay/card`, '/orders/{id}/pay/card', 200, {
      body: { card: card(), mode: 'auth' },
    });
    const done = await call('POST', `/orders/${voided}/void`, '/orders/{id}/void', 200, {
      ops: true,
      body: { reason: 'out of stock' },
    });
    expect(done.body.data.order.status).to.equal('voided');
  });

  it('cancel (issue 43): closed (200, again 200), authorised voided first, paid (409), no token (401), bad input (422), unknown (404), then no payment (409 ORDER_CLOSED)', async () => {
    const unpaid = await newOrder();
    const closed = await call('POST', `/orders/${unpaid}/cancel`, '/orders/{id}/cancel', 200, {
      ops: true,
      body: { reason: 'the customer left' },
    });
    expect(closed.body.data.order).to.include({ status: 'closed', closed_reason: 'cancelled' });
    await call('POST', `/orders/${unpaid}/cancel`, '/orders/{id}/cancel', 200, { ops: true, body: {} });
    await call('POST', `/orders/${unpaid}/cancel`, '/orders/{id}/cancel', 401, { body: {} });
    await call('POST', `/orders/${unpaid}/cancel`, '/orders/{id}/cancel', 422, {
      ops: true,
      body: { reason: 'x'.repeat(256) },
    });
    await call('POST', '/orders/ord_nobody/cancel', '/orders/{id}/cancel', 404, { ops: true, body: {} });
    const refused = await call('POST', `/orders/${unpaid}/pay/card`, '/orders/{id}/pay/card', 409, {
      body: { card: card(), mode: 'sale' },
    });
    expect(refused.body.code).to.equal('ORDER_CLOSED');
    const shopper = await call('GET', `/orders/${unpaid}`, '/orders/{id}', 200);
    expect(shopper.body.data.order.closed_reason).to.equal('cancelled');

    const auth = await newOrder();
    await call('POST', `/orders/${auth}/pay/card`, '/orders/{id}/pay/card', 200, {
      body: { card: card(), mode: 'auth' },
    });
    await call('POST', `/orders/${auth}/cancel`, '/orders/{id}/cancel', 200, { ops: true, body: {} });

    const paid = await newOrder();
    await call('POST', `/orders/${paid}/pay/card`, '/orders/{id}/pay/card', 200, {
      body: { card: card(), mode: 'sale' },
    });
    const conflict = await call('POST', `/orders/${paid}/cancel`, '/orders/{id}/cancel', 409, {
      ops: true,
      body: {},
    });
    expect(conflict.body.code).to.equal('ORDER_PAID');
  });

  it('payment links (issue 43): made (201), refused (401, 404, 409, 422); visited: to the session (303), paid (200), expired (410), unknown (404)', async () => {
    const id = await newOrder();
    const body = { expires_in: 600, payment_method: 'ideal' };
    const made = await call('POST', `/orders/${id}/payment-link`, '/orders/{id}/payment-link', 201, {
      ops: true,
      body,
    });
    const path = new URL(made.body.data.payment_link.url).pathname;
    await call('POST', `/orders/${id}/payment-link`, '/orders/{id}/payment-link', 401, { body });
    await call('POST', '/orders/ord_nobody/payment-link', '/orders/{id}/payment-link', 404, {
      ops: true,
      body,
    });
    await call('POST', `/orders/${id}/payment-link`, '/orders/{id}/payment-link', 422, {
      ops: true,
      body: { expires_in: 30, payment_method: 'bitcoin' },
    });
    const sent = await call('GET', path, '/pay/{token}', 303);
    const checkout = sent.headers.get('location')!;
    expect(checkout).to.match(/\/hosted\/checkout\/ps_/);
    await pressButton(checkout, 'pay');
    await call('GET', path, '/pay/{token}', 200);
    const paid = await call('POST', `/orders/${id}/payment-link`, '/orders/{id}/payment-link', 409, {
      ops: true,
      body,
    });
    expect(paid.body.code).to.equal('ORDER_PAID');
    const closed = await newOrder();
    await call('POST', `/orders/${closed}/cancel`, '/orders/{id}/cancel', 200, { ops: true, body: {} });
    await call('POST', `/orders/${closed}/payment-link`, '/orders/{id}/payment-link', 409, {
      ops: true,
      body,
    });

    const later = await newOrder();
    const short = await call('POST', `/orders/${later}/payment-link`, '/orders/{id}/payment-link', 201, {
      ops: true,
      body: { expires_in: 60, payment_method: 'psc' },
    });
    t.sandboxClock.advance(61_000);
    await call('GET', new URL(short.body.data.payment_link.url).pathname, '/pay/{token}', 410);
    await call('GET', `/pay/plt_${'0'.repeat(43)}`, '/pay/{token}', 404);
  });

  it('the receiver: a signed event (200), a repeat (200), a bad signature (401), not an event (400)', async () => {
    const id = await newOrder();
    const pay = await call('POST', `/orders/${id}/pay/card`, '/orders/{id}/pay/card', 200, {
      body: { card: card(), mode: 'sale' },
    });
    expect(pay.body.data.order.status).to.equal('paid');
    const paid = await call('GET', `/orders/${id}`, '/orders/{id}', 200, { ops: true });
    const sale = stateOf(t).transactions.get(Number(paid.body.data.order.payment.gateway_transaction_id))!;
    const secret = await storedSecret(t);
    const post = poster(t);
    const e = event('transaction.captured', wire(sale));
    const receiver = async (body: string, status: number, o: Parameters<typeof post>[1]) => {
      const answer = await post(body, o);
      expect(answer.status, answer.text).to.equal(status);
      checker.check(answer, 'POST', '/webhooks/gateway');
    };
    await receiver(e.body, 200, { secret });
    await receiver(e.body, 200, { secret });
    await receiver(e.body, 401, { header: 't=1,v1=00' });
    await receiver('{"id": 1}', 400, { secret });
    // The merchant's own URL (platform mode's form): in a kit of one merchant its id answers as the
    // path without one; another merchant's is a 404.
    const atMerchant = async (merchant: number, status: number) => {
      const res = await fetch(`${t.url}/webhooks/gateway/${merchant}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'X-Service-Signature': sign(e.body, secret, Math.floor(t.clock.now() / 1000)),
        },
        body: e.body,
      });
      const text = await res.text();
      const answer = { status: res.status, headers: res.headers, body: JSON.parse(text), text };
      expect(answer.status, text).to.equal(status);
      checker.check(answer, 'POST', '/webhooks/gateway/{merchant_id}');
    };
    await atMerchant(1001, 200);
    await atMerchant(1002, 404);
  });

  it('the landings, health, the document itself, and the server answering headers too large (431)', async () => {
    for (const path of ['/checkout/return', '/checkout/cancel']) {
      await call('GET', `${path}?payment_session_id=ps_unknown`, path, 404);
    }
    await call('GET', '/checkout/3ds-return?card_verification_id=tds_unknown', '/checkout/3ds-return', 404);
    await call('GET', '/', '/', 200);
    await call('GET', '/healthz', '/healthz', 200);
    await call('GET', '/readyz', '/readyz', 200);
    await call('GET', '/readyz', '/readyz', 200, { ops: true });
    await call('GET', '/docs', '/docs', 200);
    // The server's own answer, before the app: every operation lists it.
    await call('GET', '/healthz', '/healthz', 431, { headers: { 'X-Big': 'a'.repeat(20_000) } });
  });

  it('the report (JSON and CSV, 401, 422), the metrics and the operator sign-in form', async () => {
    const day = new Date().toISOString().slice(0, 10);
    const next = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const range = `from=${day}&to=${next}`;
    const report = await call('GET', `/reports/reconciliation?${range}`, '/reports/reconciliation', 200, {
      ops: true,
    });
    expect(report.body.data.rows.length).to.be.greaterThan(0);
    await call('GET', `/reports/reconciliation?${range}&format=csv`, '/reports/reconciliation', 200, {
      ops: true,
    });
    await call('GET', `/reports/reconciliation?${range}`, '/reports/reconciliation', 401);
    await call('GET', '/reports/reconciliation?from=soon', '/reports/reconciliation', 422, { ops: true });
    await call('GET', '/metrics', '/metrics', 200);
    await call('GET', '/ops/login', '/ops/login', 200);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    await call('POST', '/ops/login', '/ops/login', 303, { rawBody: `token=${OPS_TOKEN}`, headers: form });
    await call('POST', '/ops/login', '/ops/login', 401, { rawBody: 'token=guess', headers: form });
    const storefront = (
      await t.kit.store.operators.add({
        name: 'doc-login-storefront',
        role: 'storefront',
        by: { name: 'test', role: 'admin', credential: 'cli' },
      })
    ).token;
    await call('POST', '/ops/login', '/ops/login', 403, { rawBody: `token=${storefront}`, headers: form });
  });

  it('the order list, a review resolved, the audit export, and a role refused (200, 401, 403, 404, 409, 422)', async () => {
    const viewer = (
      await t.kit.store.operators.add({
        name: 'doc-viewer',
        role: 'viewer',
        by: { name: 'test', role: 'admin', credential: 'cli' },
      })
    ).token;
    const id = await newOrder();
    await t.kit.store.orders.flagWithoutAttempt(id, {
      reason: 'for the document',
      source: 'api',
      sourceId: 'doc',
    });
    await call('GET', '/orders?needs_review=true&limit=1', '/orders', 200, { token: viewer });
    const page = await call('GET', '/orders?limit=1&status=pending,paid&currency=EUR', '/orders', 200, {
      ops: true,
    });
    await call('GET', `/orders?cursor=${page.body.data.next_cursor}`, '/orders', 200, { ops: true });
    await call('GET', '/orders', '/orders', 401);
    await call('GET', '/orders?status=lost', '/orders', 422, { ops: true });
    const review = '/orders/{id}/review';
    const body = { resolution: 'false_alarm', note: 'nothing wrong' };
    await call('POST', `/orders/${id}/review`, review, 401, { body });
    await call('POST', `/orders/${id}/review`, review, 403, { token: viewer, body });
    await call('POST', `/orders/${id}/review`, review, 422, { ops: true, body: { resolution: 'maybe' } });
    await call('POST', '/orders/ord_nobody/review', review, 404, { ops: true, body });
    await call('POST', `/orders/${id}/review`, review, 200, { ops: true, body });
    await call('POST', `/orders/${id}/review`, review, 409, { ops: true, body });
    const day = new Date().toISOString().slice(0, 10);
    const next = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await call('GET', `/audit?from=${day}&to=${next}`, '/audit', 200, { ops: true });
    const json = await call('GET', `/audit?from=${day}&to=${next}&format=json`, '/audit', 200, { ops: true });
    expect(json.body.data.entries.length).to.be.greaterThan(0);
    await call('GET', `/audit?from=${day}&to=${next}`, '/audit', 401);
    await call('GET', `/audit?from=${day}&to=${next}`, '/audit', 403, { token: viewer });
    await call('GET', `/audit?from=${next}&to=${day}`, '/audit', 422, { ops: true });
    await call('GET', `/reports/reconciliation?from=${day}&to=${next}`, '/reports/reconciliation', 403, {
      token: viewer,
    });
  });

  it('gateway money with no order: the list, attach and resolve (200, 401, 404, 409, 422), and the report beside it', async () => {
    const keep = async (id: string, reference: string | null, currency = 'EUR') =>
      (
        await keepStraySale(t, {
          id,
          amountMinor: 500,
          sourceId: `evt_doc_${id}`,
          currency,
          reference,
        })
      ).money.id;
    const stamp = Date.now();
    const [one, two] = [await keep(`${stamp}1`, null), await keep(`${stamp}2`, 'doc-elsewhere')];
    await call('GET', '/unmatched-money', '/unmatched-money', 200, { ops: true });
    await call('GET', '/unmatched-money?resolution=open&limit=5', '/unmatched-money', 200, { ops: true });
    await call('GET', '/unmatched-money', '/unmatched-money', 401);
    await call('GET', '/unmatched-money?limit=0', '/unmatched-money', 422, { ops: true });
    const order = await newOrder({ amount: '5.00', currency: 'EUR' });
    const usd = await newOrder({ amount: '5.00', currency: 'USD' });
    const attach = '/unmatched-money/{id}/attach';
    await call('POST', `/unmatched-money/${one}/attach`, attach, 401, { body: { order_id: order } });
    await call('POST', '/unmatched-money/umn_nobody/attach', attach, 404, {
      ops: true,
      body: { order_id: order },
    });
    await call('POST', `/unmatched-money/${one}/attach`, attach, 422, { ops: true, body: { order_id: usd } });
    await call('POST', `/unmatched-money/${one}/attach`, attach, 422, { ops: true, rawBody: 'nope' });
    const attached = await call('POST', `/unmatched-money/${one}/attach`, attach, 200, {
      ops: true,
      body: { order_id: order, by: 'admin' },
    });
    expect(attached.body.data.order.status).to.equal('paid');
    await call('POST', `/unmatched-money/${one}/attach`, attach, 409, {
      ops: true,
      body: { order_id: order },
    });
    await call('POST', `/unmatched-money/${two}/attach`, attach, 409, {
      ops: true,
      body: { order_id: order },
    });
    const resolve = '/unmatched-money/{id}/resolve';
    await call('POST', `/unmatched-money/${two}/resolve`, resolve, 422, { ops: true, body: {} });
    await call('POST', `/unmatched-money/${two}/resolve`, resolve, 401, { body: { note: 'x' } });
    await call('POST', '/unmatched-money/umn_nobody/resolve', resolve, 404, {
      ops: true,
      body: { note: 'x' },
    });
    await call('POST', `/unmatched-money/${two}/resolve`, resolve, 200, {
      ops: true,
      body: { note: 'another shop' },
    });
    await call('POST', `/unmatched-money/${two}/resolve`, resolve, 409, {
      ops: true,
      body: { note: 'again' },
    });
    const day = new Date().toISOString().slice(0, 10);
    const next = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const report = await call(
      'GET',
      `/reports/reconciliation?from=${day}&to=${next}`,
      '/reports/reconciliation',
      200,
      {
        ops: true,
      },
    );
    expect(report.body.data.unmatched_money.rows.length).to.be.greaterThan(1);
    await call(
      'GET',
      `/reports/reconciliation?from=${day}&to=${next}&format=csv`,
      '/reports/reconciliation',
      200,
      {
        ops: true,
      },
    );
  });
});
