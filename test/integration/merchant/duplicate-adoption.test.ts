import { expect } from 'chai';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { responseChecker } from '../../support/api-document.js';
import { row, rows } from '../../support/db.js';
import { referenceSettled } from '../../support/events.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { getOrder, pressButton, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * Issue 18, part 1: the kit died after its call reached the gateway and before it heard the answer;
 * restarted, the shopper presses Pay again and the gateway answers ERR_DUPLICATE. Here the dead
 * process's call is made straight to the sandbox with the order's reference: the gateway holds a
 * payment the kit never heard of, exactly as after the crash. The kit adopts what exists.
 */
describe('merchant: a payment the kit never heard the answer to (ERR_DUPLICATE adopted)', function () {
  this.timeout(30_000);
  let t: TestKit;
  /** Every answer here is held to the kit's own API document too (PAYMENT_IN_PROGRESS included). */
  let documented: Awaited<ReturnType<typeof responseChecker>>;

  before(async () => {
    t = await startTestKit();
    documented = await responseChecker((await t.call('GET', '/openapi.json')).body as ApiDocument);
  });
  after(async () => {
    await t?.close();
  });

  /** What the process that died had sent: the same request, straight to the gateway. */
  const gateway = async (path: string, body: unknown) => {
    const res = await fetch(`${t.kit.gatewayUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const envelope = (await res.json()) as { data: Record<string, unknown> };
    expect(res.status, JSON.stringify(envelope)).to.be.oneOf([200, 201]);
    return envelope.data;
  };
  const lostSale = (reference: string, type: 'sale' | 'auth') =>
    gateway('/api/v1/transactions', {
      amount: 12.34,
      currency: 'EUR',
      transaction_type: type,
      reference,
      card: card(),
    });
  const lostSession = async (reference: string) =>
    (
      await gateway('/api/v1/payment-sessions', {
        amount: 12.34,
        currency: 'EUR',
        reference,
        payment_method: 'psc',
        customer: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
        success_url: `${t.url}/checkout/return`,
        cancel_url: `${t.url}/checkout/cancel`,
      })
    ).payment_session as { payment_session_id: string; checkout_url: string; transaction_id: number };

  const newOrder = async () => {
    const res = await t.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });
    expect(res.status, res.text).to.equal(201);
    return res.body.data.order as { id: string; reference: string };
  };
  const gatewayRecords = (reference: string) =>
    [...t.kit.sandbox!.deps.state.transactions.values()].filter((x) => x.reference === reference);
  const attemptOf = async (orderId: string) => {
    const order = await getOrder(t, orderId);
    return (await row(t, 'payment_attempts', { id: order.payment.attempt_id }))!;
  };
  /** Every event the gateway sent for the order is processed; the order as it then stands. */
  const afterWebhooks = async (orderId: string, reference: string) => {
    await referenceSettled(t, reference);
    return getOrder(t, orderId);
  };

  it('a card sale the gateway captured: Pay again answers 200 paid, not 402 failed, and nothing is charged twice', async () => {
    const order = await newOrder();
    const lost = await lostSale(order.reference, 'sale');
    const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
      body: { card: card(), mode: 'sale' },
    });
    documented.check(pay, 'POST', '/orders/{id}/pay/card');
    expect(pay.status, pay.text).to.equal(200);
    expect(pay.body.data.order.status).to.equal('paid');
    expect(pay.body.data.order.captured_amount).to.equal(1234);
    expect(pay.body.data.next_action).to.equal(null);
    expect((await attemptOf(order.id)).gateway_transaction_id).to.equal(String(lost.id));
    expect(gatewayRecords(order.reference)).to.have.length(1);
    // The sale's own webhook then is old news, not a contradiction to flag.
    const settled = await afterWebhooks(order.id, order.reference);
    expect(settled.status).to.equal('paid');
    expect(settled.needs_review).to.equal(false);
  });

  it('a card auth the gateway approved: Pay again answers authorized, and the capture moves that auth', async () => {
    const order = await newOrder();
    const lost = await lostSale(order.reference, 'auth');
    const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
      body: { card: card(), mode: 'auth' },
    });
    documented.check(pay, 'POST', '/orders/{id}/pay/card');
    expect(pay.status, pay.text).to.equal(200);
    expect(pay.body.data.order.status).to.equal('authorized');
    const capture = await t.call('POST', `/orders/${order.id}/capture`, { ops: true, body: {} });
    expect(capture.status, capture.text).to.equal(200);
    expect(capture.body.data.order.status).to.equal('paid');
    const records = gatewayRecords(order.reference);
    expect(records.map((r) => r.type).sort()).to.deep.equal(['auth', 'capture']);
    expect(records.find((r) => r.type === 'capture')!.relatedId).to.equal(lost.id);
  });

  it('a redirect session the gateway opened: Pay again hands the same checkout page back, and paying it pays the order', async () => {
    const order = await newOrder();
    const session = await lostSession(order.reference);
    const pay = await t.call('POST', `/orders/${order.id}/pay/redirect`, {
      body: {
        payment_method: 'psc',
        customer: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
      },
    });
    documented.check(pay, 'POST', '/orders/{id}/pay/redirect');
    expect(pay.status, pay.text).to.equal(200);
    expect(pay.body.data.next_action).to.deep.equal({ type: 'redirect', url: session.checkout_url });
    expect(pay.body.data.order.status).to.equal('requires_action');
    expect((await attemptOf(order.id)).payment_session_id).to.equal(session.payment_session_id);
    await pressButton(session.checkout_url, 'pay');
    const settled = await afterWebhooks(order.id, order.reference);
    expect(settled.status).to.equal('paid');
    expect(settled.needs_review).to.equal(false);
  });

  it('Pay again while the session the kit already holds is open: the same page back, and its payment lands on the order', async () => {
    const order = await newOrder();
    const body = {
      payment_method: 'psc',
      customer: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
    };
    const first = await t.call('POST', `/orders/${order.id}/pay/redirect`, { body });
    documented.check(first, 'POST', '/orders/{id}/pay/redirect');
    expect(first.status, first.text).to.equal(200);
    const firstPayment = (await getOrder(t, order.id)).payment;
    // The shopper came back from the hosted page without paying, and presses Pay again.
    const again = await t.call('POST', `/orders/${order.id}/pay/redirect`, { body });
    documented.check(again, 'POST', '/orders/{id}/pay/redirect');
    expect(again.status, again.text).to.equal(200);
    expect(again.body.data.next_action).to.deep.equal(first.body.data.next_action);
    // The adopting attempt keeps the session's page: the order read later sends the shopper there too.
    expect(again.body.data.order.next_action).to.deep.equal(first.body.data.next_action);
    const againPayment = (await getOrder(t, order.id)).payment;
    expect(againPayment.attempt_id).to.not.equal(firstPayment.attempt_id);
    // The current attempt took the session over: one attempt holds it.
    const holders = await rows(t, 'payment_attempts', {
      payment_session_id: firstPayment.payment_session_id,
    });
    expect(holders.map((h) => h.id)).to.deep.equal([againPayment.attempt_id]);
    await pressButton(first.body.data.next_action.url, 'pay');
    const settled = await afterWebhooks(order.id, order.reference);
    expect(settled).to.include({ status: 'paid', needs_review: false });
    expect(gatewayRecords(order.reference)).to.have.length(1);
  });

  it('a card payment that meets a live session of the same order is sent to that session, never declined', async () => {
    const order = await newOrder();
    const session = await lostSession(order.reference);
    const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
      body: { card: card(), mode: 'sale' },
    });
    documented.check(pay, 'POST', '/orders/{id}/pay/card');
    expect(pay.status, pay.text).to.equal(200);
    expect(pay.body.data.next_action).to.deep.equal({ type: 'redirect', url: session.checkout_url });
    expect(pay.body.data.order.status).to.equal('requires_action');
    expect(gatewayRecords(order.reference)).to.have.length(1);
  });

  it('a session the gateway holds but does not name (a gateway that omits payment_session_id): 409 in progress with Retry-After, never failed', async () => {
    // What a real gateway may do (sandbox.md section 11): the duplicate names the transaction only.
    const bare = await startTestKit({ env: { ROLES: 'api' }, clientDeps: { fetch: withoutSessionId } });
    try {
      const created = await bare.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });
      const order = created.body.data.order as { id: string; reference: string };
      const res = await fetch(`${bare.kit.gatewayUrl}/api/v1/payment-sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          amount: 12.34,
          currency: 'EUR',
          reference: order.reference,
          payment_method: 'psc',
          customer: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
          success_url: `${bare.url}/checkout/return`,
          cancel_url: `${bare.url}/checkout/cancel`,
        }),
      });
      expect(res.status).to.equal(201);
      const pay = await bare.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(), mode: 'sale' },
      });
      documented.check(pay, 'POST', '/orders/{id}/pay/card');
      expect(pay.status, pay.text).to.equal(409);
      expect(pay.body.code).to.equal('PAYMENT_IN_PROGRESS');
      expect(pay.headers.get('retry-after')).to.match(/^\d+$/);
      expect(pay.body.data.order.status).to.equal('pending');
      const stored = await getOrder(bare, order.id);
      expect(stored.status).to.equal('pending');
      expect(stored.needs_review).to.equal(false);
      // The transaction is held by the attempt: the poller asks about it from now on.
      expect(
        (await row(bare, 'payment_attempts', { id: stored.payment.attempt_id }))!.gateway_transaction_id,
      ).to.not.equal(null);
    } finally {
      await bare.close();
    }
  });
});

/** A gateway whose ERR_DUPLICATE names the transaction only: the session's id taken out of the answer. */
const withoutSessionId: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  if (res.status !== 409) return res;
  const envelope = (await res.json()) as { data?: Record<string, unknown> | null };
  if (envelope.data) delete envelope.data.payment_session_id;
  return new Response(JSON.stringify(envelope), { status: 409, headers: res.headers });
};
