import { expect } from 'chai';
import { card } from '../../support/gateway.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { waitFor } from '../../support/process.js';

/**
 * issue 8, part 1: a gateway that numbers transactions again (a sandbox started afresh while the kit's
 * database keeps its orders). Money must land on the order whose reference the transaction carries,
 * never on an old order that happens to hold the same transaction id, and the shopper gets no 500.
 */
describe('merchant: a transaction id the database already holds for another order', () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit(); // the sandbox delivers webhooks to the kit as events happen
  });
  after(async () => {
    await t?.close();
  });

  /** An old order whose attempt holds transaction `id`, as if the gateway had issued `id` before. */
  async function oldOrderHolding(id: string) {
    const created = await t.call('POST', '/orders', { body: { amount: '10.00', currency: 'EUR' } });
    const old = created.body.data.order;
    const { attempt } = await t.kit.store.orders.startAttempt(old.id, { kind: 'card', mode: 'auth' });
    await t.kit.apply({
      about: { orderId: old.id, attemptId: attempt.id, ids: { transactionId: id } },
      source: 'api',
      sourceId: `api:${attempt.id}:seeded`,
      observedAt: Date.now(),
      transaction: {
        id,
        relatedId: null,
        type: 'auth',
        status: 'auth',
        amountMinor: 1000,
        currency: 'EUR',
        refundedMinor: 0,
        reference: old.reference,
      },
    });
    expect((await getOrder(t, old.id)).status).to.equal('authorized');
    return old;
  }

  /** The id the gateway will give its next transaction: one more than the last it gave. */
  async function nextTransactionId(): Promise<string> {
    const probe = await t.call('POST', '/orders', { body: { amount: '1.00', currency: 'EUR' } });
    const paid = await t.call('POST', `/orders/${probe.body.data.order.id}/pay/card`, {
      body: { mode: 'sale', card: card() },
    });
    expect(paid.status, paid.text).to.equal(200);
    const last = (await getOrder(t, probe.body.data.order.id)).payment.gateway_transaction_id;
    return String(Number(last) + 1);
  }

  it('a card payment answers 200 and is recorded on its own order; the old order is untouched', async () => {
    const reused = await nextTransactionId();
    const old = await oldOrderHolding(reused);
    const created = await t.call('POST', '/orders', { body: { amount: '20.00', currency: 'EUR' } });
    const order = created.body.data.order;

    const paid = await t.call('POST', `/orders/${order.id}/pay/card`, {
      body: { mode: 'sale', card: card() },
    });
    expect(paid.status, paid.text).to.equal(200);
    expect(paid.body.data.order.status).to.equal('paid');
    expect((await getOrder(t, order.id)).payment.gateway_transaction_id).to.equal(reused);

    // The webhook of the new payment arrives too: it lands on the new order only.
    await waitFor('the webhook applied to the new order', async () =>
      (await getOrder(t, order.id)).history.some((h: { source: string }) => h.source === 'webhook'),
    );
    const untouched = await getOrder(t, old.id);
    expect(untouched.status).to.equal('authorized');
    expect(untouched.needs_review, untouched.review_reason).to.equal(false);
    expect(untouched.history.map((h: { source: string }) => h.source)).to.not.include('webhook');
    const now = await getOrder(t, order.id);
    expect(now.status).to.equal('paid');
    expect(now.needs_review, now.review_reason).to.equal(false);
  });

  it('an observation whose reference matches no order holding that id is not applied: unmatched, the order untouched', async () => {
    const reused = await nextTransactionId();
    const old = await oldOrderHolding(reused);
    const result = await t.kit.apply({
      source: 'webhook',
      sourceId: 'evt_foreign_reference',
      observedAt: Date.now(),
      transaction: {
        id: reused,
        relatedId: null,
        type: 'sale',
        status: 'captured',
        amountMinor: 2000,
        currency: 'EUR',
        refundedMinor: 0,
        reference: 'someone-elses-order',
      },
    });
    expect(result.matched).to.equal(false);
    const untouched = await getOrder(t, old.id);
    expect(untouched.status).to.equal('authorized');
    expect(untouched.needs_review).to.equal(false);
    expect(untouched.history).to.have.length(2);
  });
});
