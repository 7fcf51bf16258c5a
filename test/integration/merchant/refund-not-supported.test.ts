import { expect } from 'chai';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { responseChecker } from '../../support/api-document.js';
import { rows } from '../../support/db.js';
import { getOrder, pressButton, startTestKit, type TestKit } from '../../support/kit.js';
import { waitFor } from '../../support/process.js';

/**
 * Issue 19, part 4: a refund the payment's method cannot take (sandbox.md section 11, `refunds:
 * false`) is a 409 with its own code and a line in the order's history; the order is unchanged and
 * nothing is refunded at the gateway.
 */
describe('merchant: a refund the method cannot take', function () {
  this.timeout(30_000);
  let t: TestKit;
  let documented: Awaited<ReturnType<typeof responseChecker>>;

  before(async () => {
    t = await startTestKit({
      seed: (s) => {
        const psc = s.merchants[0]!.payment_methods.find((m) => m.payment_method === 'psc')!;
        Object.assign(psc, { refunds: false });
      },
    });
    documented = await responseChecker((await t.call('GET', '/openapi.json')).body as ApiDocument);
  });
  after(async () => {
    await t?.close();
  });

  it('answers 409 REFUND_NOT_SUPPORTED, leaves the order paid, and says so in its history, once', async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '20.00', currency: 'EUR' } });
    const id = created.body.data.order.id as string;
    const pay = await t.call('POST', `/orders/${id}/pay/redirect`, {
      body: { payment_method: 'psc', customer: { first_name: 'Ada', last_name: 'Lovelace' } },
    });
    expect(pay.status, pay.text).to.equal(200);
    await pressButton(pay.body.data.next_action.url, 'pay');
    await waitFor('the order paid', async () => (await getOrder(t, id)).status === 'paid');

    const refund = () =>
      t.call('POST', `/orders/${id}/refund`, {
        ops: true,
        headers: { 'Idempotency-Key': `refund-${id}` },
        body: { amount: '5.00', reason: 'damaged' },
      });
    const first = await refund();
    documented.check(first, 'POST', '/orders/{id}/refund');
    expect(first.status, first.text).to.equal(409);
    expect(first.body.code).to.equal('REFUND_NOT_SUPPORTED');
    expect(first.body.data.order).to.include({ status: 'paid', refunded_amount: 0 });
    expect(first.body.data.operation).to.include({ operation: 'refund', status: 'failed' });
    // The same request again is the same answer, not a second line.
    const again = await refund();
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('REFUND_NOT_SUPPORTED');

    const order = await getOrder(t, id);
    expect(order).to.include({ status: 'paid', refunded_amount: 0, needs_review: false });
    const refused = order.history.filter((h: { outcome: string }) => h.outcome === 'refused');
    expect(refused).to.have.length(1);
    expect(refused[0]).to.include({ source: 'api', status_before: 'paid', status_after: 'paid' });
    expect(refused[0].detail).to.equal('refund of 5.00 EUR refused: ERR_REFUND_NOT_SUPPORTED');
    const atGateway = [...t.kit.sandbox!.deps.state.transactions.values()].filter(
      (x) => x.reference === created.body.data.order.reference,
    );
    expect(atGateway.map((x) => x.type)).to.deep.equal(['sale']);
    expect(await rows(t, 'order_history', { order_id: id, outcome: 'refused' })).to.have.length(1);
  });
});
