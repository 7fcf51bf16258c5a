import { expect } from 'chai';
import type { Kit } from '../../../src/kit.js';
import { CUT_OFF_CODE } from '../../../src/merchant/jobs/cut-off.js';
import { count, row, rows } from '../../support/db.js';
import { sandboxCall } from '../../support/events.js';
import { card } from '../../support/gateway.js';
import { startSiblingKit, startTestKit, type TestKit } from '../../support/kit.js';
import { waitFor } from '../../support/process.js';

/**
 * A payment the kit's own death cut off: the attempt was stored, then the process died before the
 * gateway's answer was recorded (before the call left, or after a 3DS return took the card data). No
 * id names it, so nothing polls it and no event comes; the order waited for ever. Recovery, once it
 * has listed the gateway's events past the attempt and applied them, ends it: PAYMENT_CUT_OFF.
 * The deaths are written as the kit leaves them (the attempt stored, the hold taken); the crash
 * points themselves are the chaos suite's.
 */

const MINUTE = 60_000;
const CHALLENGE = '4000000000003220';

describe('merchant: payments cut off by the kit’s death end, once recovery shows the gateway never had them', function () {
  this.timeout(60_000);
  let t: TestKit;
  before(async () => {
    t = await startTestKit();
  });
  after(async () => {
    await t?.close();
  });

  const newOrder = async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });
    expect(created.status, created.text).to.equal(201);
    return created.body.data.order as { id: string; reference: string };
  };
  /** What the kit left when it died after storing the attempt, before the gateway's answer. */
  const diedMidCall = async (orderId: string) =>
    (await t.kit.store.orders.startAttempt(orderId, { kind: 'card', mode: 'sale' })).attempt.id;
  const order = (id: string) => row(t, 'orders', { id });
  const recover = () => t.kit.jobs.run('recovery');

  it('a sale cut off before its call left: pending until recovery has looked past it, then failed, and paid by a new attempt', async () => {
    const o = await newOrder();
    const attemptId = await diedMidCall(o.id);
    await recover();
    expect((await order(o.id))!.status, 'just now: the call may still be in flight').to.equal('pending');

    t.sandboxClock.advance(16 * MINUTE);
    await recover();
    const ended = (await order(o.id))!;
    expect(ended).to.include({ status: 'failed', failure_code: CUT_OFF_CODE });
    const [line] = await rows(t, 'order_history', { order_id: o.id, source: 'recovery' });
    expect(line, 'the history says who ended it').to.include({
      source_id: `recovery:${attemptId}:cut-off`,
      status_before: 'pending',
      status_after: 'failed',
      outcome: 'applied',
    });

    // The shopper pays again: a new attempt, not refused by the cap (the kit's failure, not theirs).
    const paid = await t.call('POST', `/orders/${o.id}/pay/card`, {
      body: { mode: 'sale', card: card('4242424242424242') },
    });
    expect(paid.status, paid.text).to.equal(200);
    expect(paid.body.data.order.status).to.equal('paid');
    await recover();
    expect((await order(o.id))!.status, 'a later run leaves it be').to.equal('paid');
  });

  it('a 3DS return cut off after it took the card data: requires_action until then, then failed; the challenge page is no more', async () => {
    const o = await newOrder();
    const pay = await t.call('POST', `/orders/${o.id}/pay/card`, {
      body: { mode: 'sale', card: card(CHALLENGE) },
    });
    expect(pay.status, pay.text).to.equal(200);
    const attempt = (await row(t, 'payment_attempts', { order_id: o.id }))!;
    // The return took the hold (its card data erased), then the process died before the transaction.
    expect((await t.kit.store.holds.take(attempt.id)).kind).to.equal('taken');
    t.sandboxClock.advance(16 * MINUTE);
    await recover();
    expect(await order(o.id)).to.include({ status: 'failed', failure_code: CUT_OFF_CODE });
    const view = await t.call('GET', `/orders/${o.id}`);
    expect(view.body.data.order.next_action, 'no page to send the shopper to').to.equal(null);
  });

  it('a challenge still waiting (its card data held) is not cut off: it is the holds job’s to end', async () => {
    const o = await newOrder();
    const pay = await t.call('POST', `/orders/${o.id}/pay/card`, {
      body: { mode: 'sale', card: card(CHALLENGE) },
    });
    expect(pay.status, pay.text).to.equal(200);
    t.sandboxClock.advance(16 * MINUTE);
    await recover();
    expect((await order(o.id))!.status).to.equal('requires_action');
    await t.kit.jobs.run('holds');
    expect(await order(o.id)).to.include({ status: 'failed', failure_code: 'ERR_3DS_TIMEOUT' });
  });

  it('a call that reached the gateway, its answer lost and no webhook: what recovery stored is applied first, and nothing is cut off', async () => {
    // A kit whose worker is not running yet: what recovery stores waits in the inbox, unapplied.
    const k = await startTestKit({ env: { ROLES: 'api,scheduler' } });
    let worker: Kit | null = null;
    try {
      expect((await sandboxCall(k, 'POST', '/sandbox/webhook/outage', { seconds: 3600 })).status).to.equal(
        200,
      );
      const created = await k.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });
      const o = created.body.data.order as { id: string; reference: string };
      await k.kit.store.orders.startAttempt(o.id, { kind: 'card', mode: 'sale' });
      // What the kit had sent: the gateway took it, and the answer never came back.
      const made = await k.kit.client.createTransaction({
        type: 'sale',
        amountMinor: 1234,
        currency: 'EUR',
        reference: o.reference,
        card: card('4242424242424242'),
      });
      expect(made.data.status).to.equal('captured');
      k.sandboxClock.advance(16 * MINUTE);
      await k.kit.jobs.run('recovery');
      const waiting = (await row(k, 'orders', { id: o.id }))!;
      expect(waiting.status, 'its news is stored, not yet applied: not cut off').to.equal('pending');

      worker = await startSiblingKit(k, 'worker');
      await waitFor(
        'every inbox row applied',
        async () => (await count(k, 'webhook_inbox', { processed_at: null })) === 0,
        20_000,
      );
      await k.kit.jobs.run('recovery');
      const paid = (await row(k, 'orders', { id: o.id }))!;
      expect(paid.status, JSON.stringify(paid)).to.equal('paid');
      expect(paid.needs_review).to.be.oneOf([0, false]);
      const history = await rows(k, 'order_history', { order_id: o.id });
      expect(history.filter((h) => h.source_id.endsWith(':cut-off'))).to.deep.equal([]);
    } finally {
      await worker?.close();
      await k.close();
    }
  });
});
