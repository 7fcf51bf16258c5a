import { expect } from 'chai';
import { referenceSettled } from '../../support/events.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { expectOrdersTrue } from '../../support/truth.js';

/**
 * Issue 19, part 2 (the state machine's share): a chargeback the merchant wins is reversed at the
 * gateway (sandbox.md section 11: captured again, `transaction.chargeback_reversed`). The order
 * goes back from disputed to paid; the reversal is not old news.
 */
describe('merchant: a chargeback reversed', function () {
  this.timeout(30_000);
  let t: TestKit;
  before(async () => {
    t = await startTestKit();
  });
  after(async () => {
    await t?.close();
  });

  const control = async (path: string, body: unknown = {}) => {
    const res = await fetch(`${t.kit.gatewayUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).to.equal(200);
  };
  it('paid, charged back (disputed), the dispute won (paid again), never flagged', async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '30.00', currency: 'EUR' } });
    const { id, reference } = created.body.data.order as { id: string; reference: string };
    const paid = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'sale' } });
    expect(paid.status, paid.text).to.equal(200);
    const transaction = paid.body.data.order.payment.gateway_transaction_id as string;

    t.sandboxClock.advance(1000);
    await control(`/sandbox/transactions/${transaction}/chargeback`);
    await referenceSettled(t, reference);
    expect((await getOrder(t, id)).status).to.equal('disputed');

    t.sandboxClock.advance(1000);
    await control(`/sandbox/transactions/${transaction}/chargeback/reverse`);
    await referenceSettled(t, reference);
    const order = await getOrder(t, id);
    expect(order).to.include({ status: 'paid', captured_amount: 3000, needs_review: false });
    const moves = order.history
      .filter((h: { outcome: string }) => h.outcome === 'applied')
      .map((h: { status_before: string; status_after: string }) => `${h.status_before}->${h.status_after}`);
    expect(moves).to.include.members(['paid->disputed', 'disputed->paid']);
    await expectOrdersTrue(t);
  });
});
