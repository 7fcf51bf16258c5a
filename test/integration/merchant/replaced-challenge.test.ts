import { expect } from 'chai';
import { rows } from '../../support/db.js';
import { card } from '../../support/gateway.js';
import { pressButton, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * A card attempt waiting on its 3DS challenge holds the card, sealed, for 15 minutes (merchant.md).
 * A newer attempt on the order supersedes it: the old hold is erased in the new attempt's own
 * transaction, and answering the old challenge later sends no card anywhere and says the payment
 * was replaced.
 */

const CHALLENGE = '4000000000003220';

describe('merchant: a challenge a newer attempt replaced', function () {
  this.timeout(60_000);
  let t: TestKit;
  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
  });
  after(async () => {
    await t?.close();
  });

  const newOrder = async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });
    expect(created.status, created.text).to.equal(201);
    return created.body.data.order as { id: string; reference: string };
  };
  const challenged = async (orderId: string) => {
    const pay = await t.call('POST', `/orders/${orderId}/pay/card`, {
      body: { mode: 'sale', card: card(CHALLENGE) },
    });
    expect(pay.status, pay.text).to.equal(200);
    return pay.body.data.next_action.url as string;
  };
  const holds = async (orderId: string) =>
    Object.fromEntries(
      (await rows(t, 'payment_attempts', { order_id: orderId }, 'created_at')).map((a) => [
        a.id,
        a.hold_sealed !== null,
      ]),
    );
  const transactionsOf = (reference: string) =>
    [...t.kit.sandbox!.deps.state.transactions.values()].filter((x) => x.reference === reference);

  it("a second card attempt erases the first one's hold; the first challenge answered later pays nothing", async () => {
    const order = await newOrder();
    const first = await challenged(order.id);
    const [firstAttempt] = Object.keys(await holds(order.id));
    const second = await challenged(order.id);
    const held = await holds(order.id);
    expect(Object.keys(held)).to.have.length(2);
    expect(held[firstAttempt!], 'the replaced attempt holds no card').to.equal(false);
    expect(Object.values(held).filter(Boolean), 'only the current one does').to.have.length(1);

    // The shopper answers the old challenge in a tab left open.
    const back = await pressButton(first, 'authenticate');
    const page = await fetch(back);
    const html = await page.text();
    expect(page.status).to.equal(200);
    expect(html).to.contain('This payment was replaced by a newer one');
    expect(html).to.contain('data-replaced="true"');
    expect(html, 'the page does not wait on the order').to.not.contain('http-equiv="refresh"');
    // A shopper who pressed Pay twice is sent on to the challenge that counts.
    const onward = /<a id="continue" href="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
    expect(onward).to.equal(second);
    expect(transactionsOf(order.reference), 'no card went to the gateway').to.deep.equal([]);

    // The current challenge pays as ever: one transaction in all.
    const paid = await fetch(await pressButton(second, 'authenticate'));
    expect(await paid.text()).to.contain('your payment was received');
    expect(transactionsOf(order.reference)).to.have.length(1);
  });

  it('a newer attempt the gateway refused (a typo) is undone, and the challenge it replaced ends: failed, no card sent', async () => {
    const order = await newOrder();
    const first = await challenged(order.id);
    const typo = await t.call('POST', `/orders/${order.id}/pay/redirect`, {
      body: { payment_method: 'bitcoin' },
    });
    expect(typo.status, typo.text).to.equal(422);
    expect(Object.values(await holds(order.id)), 'the old hold is erased all the same').to.deep.equal([
      false,
    ]);
    const now = await t.call('GET', `/orders/${order.id}`, { ops: true });
    // The challenge can no longer finish: it ends as an expired hold does, and a new attempt may follow.
    expect(now.body.data.order).to.include({ status: 'failed', failure_code: 'ERR_3DS_TIMEOUT' });
    const page = await fetch(await pressButton(first, 'authenticate'));
    expect(await page.text()).to.contain('did not go through');
    expect(transactionsOf(order.reference)).to.deep.equal([]);
  });

  it('killed between undoing the newer attempt and ending the old challenge: the holds job ends it', async () => {
    const order = await newOrder();
    const first = await challenged(order.id);
    // What withdraw does, without the step after it: as if the process died right there.
    const started = await t.kit.store.orders.startAttempt(order.id, {
      kind: 'redirect',
      paymentMethod: 'bitcoin',
    });
    await t.kit.store.orders.withdrawAttempt(order.id, started.attempt.id, started.previous);
    expect((await t.call('GET', `/orders/${order.id}`)).body.data.order.status).to.equal('requires_action');
    await t.kit.jobs.expireHolds();
    const now = await t.call('GET', `/orders/${order.id}`, { ops: true });
    expect(now.body.data.order).to.include({ status: 'failed', failure_code: 'ERR_3DS_TIMEOUT' });
    await pressButton(first, 'authenticate');
    expect(transactionsOf(order.reference)).to.deep.equal([]);
  });

  it('the holds job leaves a replaced challenge alone while the newer one waits', async () => {
    const order = await newOrder();
    await challenged(order.id);
    const second = await challenged(order.id);
    await t.kit.jobs.expireHolds();
    expect((await t.call('GET', `/orders/${order.id}`)).body.data.order.status).to.equal('requires_action');
    const paid = await fetch(await pressButton(second, 'authenticate'));
    expect(await paid.text()).to.contain('your payment was received');
  });
});
