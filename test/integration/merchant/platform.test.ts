import { expect } from 'chai';
import { card } from '../../support/gateway.js';
import { pressButton, startTestKit, type TestKit } from '../../support/kit.js';
import { PLATFORM_ENV, platformSeed, UNLINKED } from '../../support/platform.js';

/**
 * Issue 45, platform mode: one kit, a partner key linked to merchants 1001 and 1004 (1002 is not
 * linked), and 1001's own merchant key beside it. Every payment names its merchant at the gateway;
 * what partners may not ask (3D Secure, capture, refund, void) goes with the merchant's own key, or
 * is refused before anything is sent.
 */
describe('merchant: platform mode (a partner key for two linked merchants)', () => {
  let t: TestKit;

  before(async () => {
    t = await startTestKit({ seed: platformSeed, env: { ...PLATFORM_ENV } });
  });
  after(async () => {
    await t?.close();
  });

  const newOrder = async (merchantId: number | undefined, amount = '12.34', currency = 'EUR') => {
    const created = await t.call('POST', '/orders', {
      body: { amount, currency, ...(merchantId === undefined ? {} : { merchant_id: merchantId }) },
    });
    expect(created.status, created.text).to.equal(201);
    return created.body.data.order as { id: string; reference: string; merchant_id: number };
  };
  const getOrder = async (id: string) =>
    (await t.call('GET', `/orders/${id}`, { ops: true })).body.data.order;
  const state = () => t.kit.sandbox!.deps.state;
  const transactionsOf = (reference: string) =>
    [...state().transactions.values()].filter((x) => x.reference === reference);
  const op = (id: string, operation: 'capture' | 'refund' | 'void', key: string, body: unknown = {}) =>
    t.call('POST', `/orders/${id}/${operation}`, { body, ops: true, headers: { 'Idempotency-Key': key } });

  it('POST /orders names the merchant: required with two, one of them, shown on the order', async () => {
    const missing = await t.call('POST', '/orders', { body: { amount: '1.00', currency: 'EUR' } });
    expect(missing.status).to.equal(422);
    expect(missing.body.errors.merchant_id[0]).to.match(
      /is required: this kit acts for merchants 1001, 1004/,
    );
    const unlinked = await t.call('POST', '/orders', {
      body: { amount: '1.00', currency: 'EUR', merchant_id: UNLINKED },
    });
    expect(unlinked.status).to.equal(422);
    expect(unlinked.body.errors.merchant_id[0]).to.match(
      /one of the merchants this kit acts for: 1001, 1004/,
    );
    const order = await newOrder(1004);
    expect(order.merchant_id).to.equal(1004);
    expect((await getOrder(order.id)).merchant_id).to.equal(1004);
  });

  it("a card payment of merchant 1001 goes with its own key for 3D Secure and the partner key's merchant_id", async () => {
    const order = await newOrder(1001);
    const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
      body: { card: card(), mode: 'auth' },
    });
    expect(pay.status, pay.text).to.equal(200);
    expect(pay.body.data.order.status).to.equal('authorized');
    const [auth] = transactionsOf(order.reference);
    expect(auth!.merchantId, "the gateway's record is merchant 1001's").to.equal(1001);

    // Capture, then refund, with 1001's own key: merchant-only at the gateway.
    const capture = await op(order.id, 'capture', `cap-${order.id}`);
    expect(capture.status, capture.text).to.equal(200);
    expect(capture.body.data.order.status).to.equal('paid');
    const refund = await op(order.id, 'refund', `ref-${order.id}`, { amount: '2.34', reason: 'damaged' });
    expect(refund.status, refund.text).to.equal(200);
    expect(refund.body.data.order.status).to.equal('partially_refunded');

    const voided = await newOrder(1001, '5.00');
    await t.call('POST', `/orders/${voided.id}/pay/card`, { body: { card: card(), mode: 'auth' } });
    const voiding = await op(voided.id, 'void', `void-${voided.id}`);
    expect(voiding.status, voiding.text).to.equal(200);
    expect(voiding.body.data.order.status).to.equal('voided');
  });

  it('merchant 1004 has no key of its own: a card payment is a 409 naming why, nothing is sent or kept', async () => {
    const order = await newOrder(1004);
    const before = state().verifications.size;
    const pay = await t.call('POST', `/orders/${order.id}/pay/card`, { body: { card: card() } });
    expect(pay.status, pay.text).to.equal(409);
    expect(pay.body.code).to.equal('MERCHANT_KEY_MISSING');
    expect(pay.body.message).to.match(
      /Merchant 1004 has no merchant key of its own .*3D Secure is merchant-only/,
    );
    expect(pay.body.data).to.deep.equal({ merchant_id: 1004, operation: '3D Secure' });
    expect(state().verifications.size, 'no 3DS asked').to.equal(before);
    const after = await getOrder(order.id);
    expect(after.status).to.equal('pending');
    expect(after.payment, 'no attempt').to.equal(null);
  });

  it('merchant 1004 pays by redirect through the partner key; its refund is a 409, never a 403 from the gateway', async () => {
    const order = await newOrder(1004, '20.00');
    const pay = await t.call('POST', `/orders/${order.id}/pay/redirect`, {
      body: { payment_method: 'psc', customer: { country_code: 'DE' } },
    });
    expect(pay.status, pay.text).to.equal(200);
    const session = [...state().sessions.values()].find((s) => s.reference === order.reference)!;
    expect(session.merchantId).to.equal(1004);
    // The shopper pays on the hosted page; the landing asks the gateway, as 1004's.
    const landing = await pressButton(pay.body.data.next_action.url, 'pay');
    await fetch(landing);
    expect((await getOrder(order.id)).status).to.equal('paid');

    const refunds = [...state().transactions.values()].filter((x) => x.type === 'refund').length;
    const refund = await op(order.id, 'refund', `ref-${order.id}`, { amount: '1.00', reason: 'x' });
    expect(refund.status, refund.text).to.equal(409);
    expect(refund.body.code).to.equal('MERCHANT_KEY_MISSING');
    expect(refund.body.data).to.deep.equal({ merchant_id: 1004, operation: 'refund' });
    expect([...state().transactions.values()].filter((x) => x.type === 'refund').length).to.equal(refunds);
    const ops = await t.call('GET', `/orders/${order.id}`, { ops: true });
    expect(ops.body.data.order.status, 'still paid').to.equal('paid');
  });

  it("one shop's Idempotency-Key for merchant 1001 never answers an order for merchant 1004", async () => {
    const key = { 'Idempotency-Key': 'platform-key-0001' };
    const first = await t.call('POST', '/orders', {
      body: { amount: '3.00', currency: 'EUR', merchant_id: 1001 },
      headers: key,
    });
    expect(first.status).to.equal(201);
    const again = await t.call('POST', '/orders', {
      body: { amount: '3.00', currency: 'EUR', merchant_id: 1001 },
      headers: key,
    });
    expect(again.status, 'the same request: the same order').to.equal(200);
    expect(again.body.data.order.id).to.equal(first.body.data.order.id);
    const other = await t.call('POST', '/orders', {
      body: { amount: '3.00', currency: 'EUR', merchant_id: 1004 },
      headers: key,
    });
    expect(other.status, 'another merchant: another request').to.equal(409);
    expect(other.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');
  });
});
