import { expect } from 'chai';
import { OrderEventHandlers } from '../../../src/merchant/outbox/handlers.js';
import { count, rows } from '../../support/db.js';
import { event, referenceSettled, sandboxCall } from '../../support/events.js';
import { card } from '../../support/gateway.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { waitFor } from '../../support/process.js';

/**
 * Issue 43, part 5, on the sandbox's clock (the kit's too), with RETENTION_DAYS=7: after a week the
 * bodies of the webhook events the kit applied are cleared while their ids stay, so the gateway's
 * redelivery is still a duplicate; after the gateway's 30 days the ids go too; order events delivered
 * to every subscriber go with their deliveries and tries, one given up stays; an event never applied
 * keeps its body; the report of those orders is the same throughout; a metric counts what went.
 */
const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('merchant: ageing out (issue 43, part 5)', function () {
  this.timeout(120_000);
  let t: TestKit;
  let range = '';
  /** The order whose events the shop's handler refuses: its deliveries are given up, never delivered. */
  let refusedOrder = '';

  before(async () => {
    const handlers = new OrderEventHandlers().on(
      '*',
      (e) => {
        if (e.data.order.id === refusedOrder) throw new Error('the shop refuses this one');
      },
      'retention-test',
    );
    t = await startTestKit({ env: { RETENTION_DAYS: '7' }, orderEvents: handlers });
    const today = Math.floor(t.clock.now() / DAY) * DAY;
    range = `from=${dayOf(today - DAY)}&to=${dayOf(today + 2 * DAY)}`;
  });
  after(async () => {
    await t?.close();
  });

  const paidOrder = async (amount: string) => {
    const made = await t.call('POST', '/orders', { body: { amount, currency: 'EUR' } });
    expect(made.status, made.text).to.equal(201);
    const { id, reference } = made.body.data.order as { id: string; reference: string };
    const paid = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'sale' } });
    expect(paid.status, paid.text).to.equal(200);
    return { id, reference };
  };
  // biome-ignore lint/suspicious/noExplicitAny: the report's rows of every shape
  const report = async (): Promise<any> => {
    const res = await t.call('GET', `/reports/reconciliation?${range}`, { ops: true });
    expect(res.status, res.text).to.equal(200);
    const { generated_at: _, ...rest } = res.body.data;
    return rest;
  };
  const metric = async (what: string) => {
    const line = (await t.call('GET', '/metrics', { ops: true })).text
      .split('\n')
      .find((l) => l.startsWith(`kit_retention_removed_total{what="${what}"} `));
    return line === undefined ? 0 : Number(line.split(' ')[1]);
  };
  const ageOut = async () => {
    const summary = await t.kit.jobs.run('retention');
    expect(summary, 'the job ran under its lock').to.not.equal(null);
    return summary as Awaited<ReturnType<typeof t.kit.jobs.ageOut>>;
  };

  it('a week on: applied bodies cleared, ids kept (a redelivery is a duplicate), delivered order events gone with their tries, the report unchanged', async () => {
    const kept = await paidOrder('30.00');
    const refunded = await t.call('POST', `/orders/${kept.id}/refund`, {
      ops: true,
      body: { amount: '5.00', reason: 'asked' },
      headers: { 'idempotency-key': `retention-${kept.id}` },
    });
    expect(refunded.status, refunded.text).to.equal(200);
    const refused = await paidOrder('12.00');
    refusedOrder = refused.id;
    await referenceSettled(t, kept.reference);
    await referenceSettled(t, refused.reference);
    // An event stored and never applied (the worker never got to it): it keeps its body, whatever its age.
    const stuck = event('transaction.captured', { id: 999_000_001, status: 'captured' });
    await t.kit.store.inbox.store({
      id: stuck.id,
      type: 'transaction.captured',
      transactionId: '999000001',
      source: 'webhook',
      payload: stuck.body,
      now: new Date(t.clock.now()),
    });
    await t.kit.dispatchOrderEvents();
    const events = await rows(t, 'order_events', { order_id: [kept.id, refused.id] });
    const delivered = events.filter((e) => e.order_id === kept.id);
    expect(delivered.length, 'paid and partially refunded').to.be.at.least(2);
    const applied = (await rows(t, 'webhook_inbox')).filter((r) => r.processed_at !== null);
    expect(applied.length).to.be.at.least(3);
    const before = await report();
    const historyBefore = (await getOrder(t, kept.id)).history;

    // Six days: nothing is old enough yet.
    t.sandboxClock.advance(6 * DAY);
    expect(await ageOut()).to.deep.equal({
      webhookPayloads: 0,
      webhookEvents: 0,
      orderEvents: 0,
      orderEventDeliveries: 0,
      orderEventTries: 0,
    });

    // Eight days: the shop's handler was given up on for the refused order (three days of tries).
    t.sandboxClock.advance(2 * DAY);
    await t.kit.dispatchOrderEvents();
    const refusedDeliveries = await rows(t, 'order_event_deliveries', { order_id: refused.id });
    expect(refusedDeliveries.map((d) => d.status)).to.include('failed');
    const tries = await count(t, 'order_event_attempts');
    const summary = await ageOut();
    expect(summary).to.deep.include({
      webhookPayloads: applied.length,
      webhookEvents: 0,
      orderEvents: delivered.length,
      orderEventDeliveries: delivered.length,
    });
    expect(summary.orderEventTries).to.equal(delivered.length);
    expect(await count(t, 'order_event_attempts')).to.equal(tries - delivered.length);
    expect(await metric('webhook_payloads')).to.equal(applied.length);
    expect(await metric('order_events')).to.equal(delivered.length);

    const inbox = await rows(t, 'webhook_inbox');
    for (const row of inbox.filter((r) => r.event_id !== stuck.id))
      expect(row, row.event_id).to.include({ payload: '', payload_cleared: 1 });
    expect((await rows(t, 'webhook_inbox', { event_id: stuck.id }))[0]).to.include({
      payload: stuck.body,
      payload_cleared: 0,
    });
    expect(await rows(t, 'order_events', { order_id: kept.id })).to.deep.equal([]);
    expect(await count(t, 'order_events', { order_id: refused.id }), 'given up: kept').to.be.above(0);
    expect(await report()).to.deep.equal(before);
    expect((await getOrder(t, kept.id)).history).to.deep.equal(historyBefore);

    // The gateway delivers an applied event again (a replay, within its 30 days): still a duplicate.
    const replayed = applied.find((r) => r.event_type === 'transaction.refunded')!;
    const replay = await sandboxCall(t, 'POST', `/api/v1/webhook/events/${replayed.event_id}/replay`, {});
    expect(replay.status, JSON.stringify(replay.body)).to.equal(200);
    await waitFor('the replay received', async () => {
      const [row] = await rows(t, 'webhook_inbox', { event_id: replayed.event_id });
      return row && row.repeats > 0 ? row : null;
    });
    expect((await getOrder(t, kept.id)).history).to.deep.equal(historyBefore);
    expect(await report()).to.deep.equal(before);

    // Run again: nothing more to do.
    expect(await ageOut()).to.deep.include({ webhookPayloads: 0, orderEvents: 0 });
  });

  it("past the gateway's 30 days the ids go too; what came since keeps its body; the report still the same", async () => {
    const before = await report();
    const oldIds = (await rows(t, 'webhook_inbox', { payload_cleared: 1 })).map((r) => r.event_id);
    expect(oldIds.length).to.be.above(0);
    t.sandboxClock.advance(24 * DAY);
    // Something new, today: not old enough for anything.
    const fresh = await paidOrder('7.00');
    await referenceSettled(t, fresh.reference);

    const summary = await ageOut();
    expect(summary.webhookEvents).to.equal(oldIds.length);
    expect(await rows(t, 'webhook_inbox', { event_id: oldIds })).to.deep.equal([]);
    expect(await metric('webhook_events')).to.equal(oldIds.length);
    const recent = await rows(t, 'webhook_inbox', { payload_cleared: 0 });
    expect(recent.length, 'the new events and the one never applied').to.be.above(1);
    for (const row of recent) expect(row.payload).to.not.equal('');
    expect(await report()).to.deep.equal(before);
    expect((await getOrder(t, fresh.id)).status).to.equal('paid');
  });
});
