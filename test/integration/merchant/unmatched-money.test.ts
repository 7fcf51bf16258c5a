import { expect } from 'chai';
import { count, row, rows } from '../../support/db.js';
import {
  deliveriesOff,
  event,
  inboxRow,
  newOrder,
  paidOrder,
  post,
  processed,
  storedSecret,
} from '../../support/events.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { waitFor } from '../../support/process.js';

/**
 * issue 19, part 1: gateway money with no order. A signed event naming money that no attempt of the
 * kit holds is kept in a table of its own, the order carrying its reference is flagged, the report
 * lists it with its own totals, a metric counts it, and an operator attaches or resolves it.
 */

/** A transaction record as the gateway's webhook payload carries it (gateway-api.md). */
function record(o: {
  id: string;
  reference: string | null;
  amount: number;
  currency?: string;
  type?: string;
  status?: string;
  related?: string | null;
}) {
  return {
    id: o.id,
    merchant_trans_id: o.reference,
    related_trans_id: o.related ?? null,
    transaction_type: o.type ?? 'sale',
    status: o.status ?? 'captured',
    amount: o.amount,
    currency: o.currency ?? 'EUR',
    refunded_amount: 0,
    created_at: new Date().toISOString(),
    updated_at: new Date().toISOString(),
  };
}

describe('merchant: gateway money with no order (issue 19, part 1)', function () {
  this.timeout(60_000);
  let t: TestKit;
  let secret: string;
  before(async () => {
    t = await startTestKit();
    await deliveriesOff(t); // every event here is crafted and signed by the test
    secret = await storedSecret(t);
  });
  after(async () => {
    await t?.close();
  });

  it("the issue's scenario: a signed transaction.captured of 1.00 EUR with an existing order's reference, for a transaction no attempt holds, is kept, flagged and counted", async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });
    expect(created.status, created.text).to.equal(201);
    const order = created.body.data.order;
    const e = event(
      'transaction.captured',
      record({ id: '900100123', reference: order.reference, amount: 100 }),
    );

    expect((await post(t, e.body, secret)).status).to.equal(200);
    const inbox = await processed(t, e.id);
    expect(inbox.outcome, 'the inbox row is processed, as unmatched').to.equal('unmatched');

    // Kept in a table of its own.
    const kept = await row(t, 'unmatched_money', { transaction_id: '900100123' });
    expect(kept, 'a row of unmatched_money').to.not.equal(null);
    expect(kept).to.include({
      transaction_id: '900100123',
      reference: order.reference,
      transaction_type: 'sale',
      status: 'captured',
      currency: 'EUR',
      source: 'webhook',
      source_id: e.id,
      order_id: order.id,
      resolution: 'open',
      seen_count: 1,
    });
    expect(Number(kept!.amount_minor)).to.equal(100);

    // The order that carries its reference is flagged, with the reason, in its history.
    const now = await getOrder(t, order.id);
    expect(now.status).to.equal('pending');
    expect(now.needs_review).to.equal(true);
    expect(now.review_reason).to.equal(
      'gateway money with no attempt: transaction 900100123 captured 1.00 EUR',
    );
    const lines = now.history.filter((h: { source_id: string }) => h.source_id === e.id);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ source: 'webhook', outcome: 'flagged', status_after: 'pending' });

    // The job is done, not failed.
    expect((await t.kit.queue.getFailed()).map((j) => String(j.id))).to.not.include(e.id);

    // The metric moved.
    const metrics = (await t.call('GET', '/metrics')).text;
    expect(metrics).to.match(/^kit_unmatched_money_total\{currency="EUR"\} 1$/m);
    expect(metrics).to.match(/^kit_unmatched_money_open\{currency="EUR"\} 1$/m);
  });

  const keptRow = (transactionId: string) => row(t, 'unmatched_money', { transaction_id: transactionId });
  const metricValue = async (name: string, currency: string) => {
    const text = (await t.call('GET', '/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`${name}{currency="${currency}"} `));
    return line === undefined ? 0 : Number(line.split(' ')[1]);
  };
  /** Posts a signed event and waits until the reconciler has processed it. */
  const deliver = async (type: string, transaction: Record<string, unknown>) => {
    const e = event(type, transaction);
    expect((await post(t, e.body, secret)).status).to.equal(200);
    return { e, inbox: await processed(t, e.id) };
  };

  it('the same event again is one row, seen once (the inbox keeps the repeat); later news of the same transaction moves last seen and the count, and never turns it back', async () => {
    const reference = `elsewhere-${Date.now()}`;
    const captured = record({ id: '900100200', reference, amount: 500 });
    const { e, inbox } = await deliver('transaction.captured', captured);
    expect(inbox.outcome).to.equal('unmatched');
    const first = (await keptRow('900100200'))!;
    expect(first).to.include({ seen_count: 1, status: 'captured', order_id: null });

    // The very same event (the gateway retrying a delivery): stored once, nothing applied twice.
    const again = await post(t, e.body, secret);
    expect(again.status).to.equal(200);
    expect(again.body.message).to.equal('Already received.');
    expect((await inboxRow(t, e.id))!.repeats).to.equal(1);
    expect(await count(t, 'unmatched_money', { transaction_id: '900100200' })).to.equal(1);
    expect((await keptRow('900100200'))!.seen_count).to.equal(1);

    // Later news of the same transaction, a minute on: one row still, last seen and the count move.
    t.sandboxClock.advance(60_000);
    await deliver('transaction.refunded', { ...captured, status: 'refunded', refunded_amount: 500 });
    const second = (await keptRow('900100200'))!;
    expect(second).to.include({ seen_count: 2, status: 'refunded' });
    expect(Number(second.refunded_minor)).to.equal(500);
    expect(second.first_seen_at.getTime()).to.equal(first.first_seen_at.getTime());
    expect(second.last_seen_at.getTime()).to.be.greaterThan(first.last_seen_at.getTime());

    // Older news arriving late (its pending) is seen, and does not turn the row back.
    await deliver('transaction.pending', { ...captured, status: 'pending' });
    const third = (await keptRow('900100200'))!;
    expect(third).to.include({ seen_count: 3, status: 'refunded' });
    expect(await count(t, 'unmatched_money', { transaction_id: '900100200' })).to.equal(1);
  });

  it('money carrying no reference any order has (or none at all) is kept; no order is flagged', async () => {
    const flaggedBefore = await count(t, 'orders', { needs_review: 1 });
    const historyBefore = await count(t, 'order_history');
    await deliver(
      'transaction.captured',
      record({ id: '900100300', reference: 'nobody-has-this', amount: 250 }),
    );
    await deliver(
      'transaction.captured',
      record({ id: '900100301', reference: null, amount: 50, currency: 'USD' }),
    );
    expect(await keptRow('900100300')).to.include({ reference: 'nobody-has-this', order_id: null });
    const none = await keptRow('900100301');
    expect(none, "no reference: '' in its column").to.include({
      reference: '',
      order_id: null,
      currency: 'USD',
    });
    expect(Number(none!.amount_minor)).to.equal(50);
    expect(await count(t, 'orders', { needs_review: 1 })).to.equal(flaggedBefore);
    expect(await count(t, 'order_history')).to.equal(historyBefore);
  });

  it('an order that has a payment is flagged through the apply path, on its current attempt: a second payment is a double charge', async () => {
    const { id } = await paidOrder(t, '3.00');
    const order = await getOrder(t, id);
    const { e } = await deliver(
      'transaction.captured',
      record({ id: '900100400', reference: order.reference, amount: 300 }),
    );
    const now = await getOrder(t, id);
    expect(now.status, 'the paid order stays paid').to.equal('paid');
    expect(now.needs_review).to.equal(true);
    expect(now.review_reason).to.equal(
      'gateway money with no attempt: transaction 900100400 captured 3.00 EUR',
    );
    const [line] = await rows(t, 'order_history', { source_id: e.id });
    expect(line).to.include({
      order_id: id,
      attempt_id: order.payment.attempt_id,
      outcome: 'flagged',
      source: 'webhook',
    });
    expect(await keptRow('900100400')).to.include({ order_id: id, resolution: 'open' });
  });

  it('the metric counts each transaction once, when first seen', async () => {
    const before = await metricValue('kit_unmatched_money_total', 'GBP');
    await deliver(
      'transaction.captured',
      record({ id: '900100800', reference: null, amount: 100, currency: 'GBP' }),
    );
    await deliver('transaction.refunded', {
      ...record({ id: '900100800', reference: null, amount: 100, currency: 'GBP' }),
      status: 'refunded',
      refunded_amount: 100,
    });
    expect(await metricValue('kit_unmatched_money_total', 'GBP')).to.equal(before + 1);
    expect(await metricValue('kit_unmatched_money_open', 'GBP')).to.equal(1);
  });
});

describe('merchant: gateway money with no order, when keeping it fails', function () {
  this.timeout(60_000);
  let t: TestKit;
  before(async () => {
    t = await startTestKit();
    await deliveriesOff(t);
  });
  after(async () => {
    await t?.close();
  });

  it('the job fails and is retried (it lands in the failed set, the inbox row unprocessed); retried once the table is back, it is kept', async () => {
    const secret = await storedSecret(t);
    await t.kit.sequelize.query('RENAME TABLE unmatched_money TO unmatched_money_away');
    let e: ReturnType<typeof event>;
    try {
      e = event('transaction.captured', record({ id: '900100900', reference: null, amount: 100 }));
      expect((await post(t, e.body, secret)).status).to.equal(200);
      const job = await waitFor('the job in the failed set', async () =>
        (await t.kit.queue.getFailed()).find((j) => String(j.id) === e.id),
      );
      expect(job.attemptsMade, 'retried: the kit default here is 3 attempts').to.equal(3);
      expect((await inboxRow(t, e.id))!.processed_at).to.equal(null);
    } finally {
      await t.kit.sequelize.query('RENAME TABLE unmatched_money_away TO unmatched_money');
    }
    const job = (await t.kit.queue.getFailed()).find((j) => String(j.id) === e.id)!;
    await job.retry();
    expect((await processed(t, e.id)).outcome).to.equal('unmatched');
    expect(await count(t, 'unmatched_money', { transaction_id: '900100900' })).to.equal(1);
  });
});

describe('merchant: news the kit cannot place yet is retried before it is kept', function () {
  this.timeout(60_000);
  let t: TestKit;
  let secret: string;
  before(async () => {
    // Retries far enough apart for the test to deliver the payment between them.
    t = await startTestKit({ jobRetry: { attempts: 4, delayMs: 300 } });
    await deliveriesOff(t);
    secret = await storedSecret(t);
  });
  after(async () => {
    await t?.close();
  });

  it('a refund that arrives before its payment is recorded waits for it, and is applied: no money kept, no order flagged', async () => {
    const id = await newOrder(t, '4.00');
    const order = await getOrder(t, id);
    // An attempt whose answer has not been recorded yet: the gateway's events may come first.
    await t.kit.store.orders.startAttempt(id, { kind: 'card', mode: 'sale' });
    const sale = record({ id: '900200001', reference: order.reference, amount: 400 });
    const refund = event('transaction.refunded', {
      ...record({
        id: '900200002',
        reference: order.reference,
        amount: 100,
        type: 'refund',
        status: 'refunded',
        related: '900200001',
      }),
      refunded_amount: 100,
    });
    expect((await post(t, refund.body, secret)).status).to.equal(200);
    await waitFor('the refund tried once', async () =>
      (await inboxRow(t, refund.id))!.attempts >= 1 ? true : null,
    );
    const captured = event('transaction.captured', sale);
    expect((await post(t, captured.body, secret)).status).to.equal(200);
    expect((await processed(t, captured.id)).outcome).to.equal('applied');
    expect((await processed(t, refund.id)).outcome).to.equal('applied');
    const now = await getOrder(t, id);
    expect(now).to.include({ status: 'partially_refunded', refunded_amount: 100, needs_review: false });
    expect(await count(t, 'unmatched_money')).to.equal(0);
  });
});
