import { expect } from 'chai';
import { card } from '../../support/gateway.js';
import { startTestKit, type TestKit } from '../../support/kit.js';
import { waitFor } from '../../support/process.js';

describe('merchant: a payment whose id the kit never stored is found by its reference', () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit();
  });
  after(async () => {
    await t?.close();
  });

  it('a crash between the gateway charging and the kit storing the id: the webhook lands it on the order', async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '19.99', currency: 'EUR' } });
    const order = created.body.data.order;
    const { attempt } = await t.kit.store.orders.startAttempt(order.id, { kind: 'card', mode: 'sale' });
    // The gateway charges; the kit "crashes" before setAttemptIds ever runs.
    const charged = await t.kit.client.createTransaction({
      type: 'sale',
      amountMinor: 1999,
      currency: 'EUR',
      reference: order.reference,
      card: card(),
    });
    expect((await t.kit.store.attempts.get(attempt.id))!.gateway_transaction_id).to.equal(null);

    await waitFor(
      'the order paid by the webhook',
      async () => (await t.call('GET', `/orders/${order.id}`)).body.data.order.status === 'paid',
    );
    const after = (await t.call('GET', `/orders/${order.id}`, { ops: true })).body.data.order;
    expect(after.captured_amount).to.equal(1999);
    expect(after.needs_review).to.equal(false);
    expect(after.payment.gateway_transaction_id).to.equal(charged.data.id);
    expect(
      after.history.some(
        (h: { source: string; outcome: string }) => h.source === 'webhook' && h.outcome === 'applied',
      ),
    ).to.equal(true);
  });

  it('a child record (a refund) never adopts: only the payment itself can name its attempt', async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '5.00', currency: 'EUR' } });
    const order = created.body.data.order;
    await t.kit.store.orders.startAttempt(order.id, { kind: 'card', mode: 'sale' });
    const result = await t.kit.apply({
      source: 'webhook',
      sourceId: 'evt_child',
      observedAt: Date.now(),
      transaction: {
        id: '999001',
        relatedId: '999000',
        type: 'refund',
        status: 'refunded',
        amountMinor: 100,
        currency: 'EUR',
        refundedMinor: 100,
        reference: order.reference,
      },
    });
    expect(result.matched).to.equal(false);
  });
});
