import { expect } from 'chai';
import { parse as parseCsv } from 'csv-parse/sync';
import { REPORT_COLUMNS } from '../../../src/merchant/reports/reconciliation.js';
import { UNMATCHED_COLUMNS } from '../../../src/merchant/reports/unmatched.js';
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
import { card } from '../../support/gateway.js';
import { cliEnv, getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { suiteLogLines } from '../../support/log-sink.js';
import { exitWithin, freePort, lines, start, waitFor } from '../../support/process.js';
import { keepStraySale } from '../../support/unmatched.js';

/**
 * issue 19, part 1: gateway money with no order. A signed event naming money that no attempt of the
 * kit holds is kept in a table of its own, the order carrying its reference is flagged, the report
 * lists it with its own totals, a metric counts it, and an operator attaches or resolves it.
 */

const DAY = 24 * 60 * 60_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

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
  let range: string;
  before(async () => {
    t = await startTestKit();
    await deliveriesOff(t); // every event here is crafted and signed by the test
    secret = await storedSecret(t);
    const today = Math.floor(t.clock.now() / DAY) * DAY;
    range = `from=${dayOf(today)}&to=${dayOf(today + DAY)}`;
  });
  after(async () => {
    await t?.close();
  });

  it("the issue's scenario: a signed transaction.captured of 1.00 EUR with an existing order's reference, for a transaction no attempt holds, is kept, flagged, reported and counted", async () => {
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

    // The report: the order is mismatched with the reason; the money is listed beside, with its totals.
    const report = await t.call('GET', `/reports/reconciliation?${range}`, { ops: true });
    expect(report.status, report.text).to.equal(200);
    const orderRow = report.body.data.rows.find((r: { order_id: string }) => r.order_id === order.id);
    expect(orderRow).to.include({ classification: 'mismatched', match: false });
    expect(orderRow.reason).to.contain('gateway money with no attempt');
    const money = report.body.data.unmatched_money;
    expect(money.rows.map((r: { id: string }) => r.id)).to.deep.equal([kept!.id]);
    expect(money.rows[0]).to.include({
      transaction_id: '900100123',
      amount: 100,
      amount_formatted: '1.00',
      currency: 'EUR',
      order_id: order.id,
      resolution: 'open',
    });
    const eur = money.totals.find((x: { currency: string }) => x.currency === 'EUR');
    expect(eur).to.include({ rows: 1, open: 1, captured: 100, captured_formatted: '1.00', net: 100 });

    // The metric moved.
    const metrics = (await t.call('GET', '/metrics')).text;
    expect(metrics).to.match(/^kit_unmatched_money_total\{currency="EUR"\} 1$/m);
    expect(metrics).to.match(/^kit_unmatched_money_open\{currency="EUR"\} 1$/m);
  });

  // biome-ignore lint/suspicious/noExplicitAny: answers of every shape
  const money = async (query = ''): Promise<any[]> => {
    const list = await t.call('GET', `/unmatched-money${query}`, { ops: true });
    expect(list.status, list.text).to.equal(200);
    return list.body.data.unmatched_money;
  };
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
    const none = (await money()).find((m) => m.transaction_id === '900100301');
    expect(none).to.include({
      reference: null,
      order_id: null,
      currency: 'USD',
      amount: 50,
      amount_formatted: '0.50',
    });
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

  it('attach: the payment goes to the order through the apply path; the order shows it, the money leaves the open list', async () => {
    const openBefore = await metricValue('kit_unmatched_money_open', 'EUR');
    const created = await t.call('POST', '/orders', { body: { amount: '7.50', currency: 'EUR' } });
    const order = created.body.data.order;
    await deliver(
      'transaction.captured',
      record({ id: '900100500', reference: order.reference, amount: 750 }),
    );
    expect(await metricValue('kit_unmatched_money_open', 'EUR')).to.equal(openBefore + 1);
    const kept = (await money('?resolution=open')).find((m) => m.transaction_id === '900100500');
    expect(kept).to.include({ order_id: order.id, resolution: 'open' });

    const attached = await t.call('POST', `/unmatched-money/${kept.id}/attach`, {
      ops: true,
      body: { order_id: order.id, by: 'admin' },
    });
    expect(attached.status, attached.text).to.equal(200);
    expect(attached.body.data.unmatched_money).to.include({
      resolution: 'attached',
      resolved_by: 'admin',
      order_id: order.id,
    });
    expect(attached.body.data.order).to.include({ status: 'paid', captured_amount: 750 });
    expect(attached.body.data.order.payment).to.include({
      gateway_transaction_id: '900100500',
      mode: 'sale',
    });

    const now = await getOrder(t, order.id);
    expect(now.status).to.equal('paid');
    const applied = now.history.filter((h: { source_id: string }) => h.source_id === `attach:${kept.id}`);
    expect(applied).to.have.length(1);
    expect(applied[0]).to.include({
      source: 'api',
      status_before: 'pending',
      status_after: 'paid',
      outcome: 'applied',
    });
    expect((await money('?resolution=open')).map((m) => m.id)).to.not.include(kept.id);
    expect((await money('?resolution=attached')).map((m) => m.id)).to.include(kept.id);
    expect(await metricValue('kit_unmatched_money_open', 'EUR')).to.equal(openBefore);

    // The attempt holds the payment now: the gateway's next word on it reaches the order as any would.
    const refunded = await deliver('transaction.refunded', {
      ...record({ id: '900100500', reference: order.reference, amount: 750 }),
      status: 'captured',
      refunded_amount: 250,
    });
    expect(refunded.inbox.outcome).to.equal('applied');
    expect(await getOrder(t, order.id)).to.include({ status: 'partially_refunded', refunded_amount: 250 });

    // Attached is settled: not attached twice.
    const twice = await t.call('POST', `/unmatched-money/${kept.id}/attach`, {
      ops: true,
      body: { order_id: order.id },
    });
    expect(twice.status).to.equal(409);
    expect(twice.body).to.include({ code: 'INVALID_STATE' });
    expect(twice.body.data).to.deep.equal({ resolution: 'attached', allowed: ['open'] });
  });

  it('attach asks the gateway where the payment stands now: a refund made there since it was kept is on the order', async () => {
    // A sale made at the gateway directly, in JPY (no minor units), kept as the event first told of it;
    // then 300 refunded there (kept apart, as money of its own), which the kept sale row does not say.
    const made = await t.kit.client.createTransaction({
      type: 'sale',
      amountMinor: 1000,
      currency: 'JPY',
      reference: `direct-${Date.now()}`,
      card: card('4242424242424242'),
    });
    const saleId = String(made.data.id);
    await deliver('transaction.captured', {
      ...record({
        id: saleId,
        reference: made.data.merchant_trans_id ?? null,
        amount: 1000,
        currency: 'JPY',
      }),
    });
    const refund = await t.kit.client.refund(
      saleId,
      { amountMinor: 300, currency: 'JPY' },
      'returned',
      `r-${saleId}`,
    );
    expect(refund.data.transaction_type).to.equal('refund');
    const kept = (await money('?resolution=open')).find((m) => m.transaction_id === saleId);
    expect(kept).to.include({ refunded_amount: 0 });

    const created = await t.call('POST', '/orders', { body: { amount: '1000', currency: 'JPY' } });
    const attached = await t.call('POST', `/unmatched-money/${kept.id}/attach`, {
      ops: true,
      body: { order_id: created.body.data.order.id },
    });
    expect(attached.status, attached.text).to.equal(200);
    expect(attached.body.data.order).to.include({
      status: 'partially_refunded',
      captured_amount: 1000,
      refunded_amount: 300,
    });
    const now = await getOrder(t, created.body.data.order.id);
    expect(now).to.include({ status: 'partially_refunded', refunded_amount: 300, needs_review: false });
  });

  it('attach refuses, naming the field: no such money (404), no such order, another currency, a refund of a payment the order does not hold (422), an order holding another payment (409)', async () => {
    await deliver('transaction.captured', record({ id: '900100600', reference: null, amount: 100 }));
    await deliver(
      'transaction.refunded',
      record({
        id: '900100601',
        reference: null,
        amount: 40,
        type: 'refund',
        status: 'refunded',
        related: '900100699',
      }),
    );
    const sale = (await keptRow('900100600'))!.id as string;
    const refund = (await keptRow('900100601'))!.id as string;
    const attach = (id: string, body: unknown) =>
      t.call('POST', `/unmatched-money/${id}/attach`, { ops: true, body });
    const usd = await newOrder(t, '1.00', 'USD');
    const paid = (await paidOrder(t, '1.00')).id;
    const pending = await newOrder(t, '1.00', 'EUR');

    const unknown = await attach('umn_nobody', { order_id: pending });
    expect(unknown.status).to.equal(404);
    expect(Object.keys(unknown.body.errors)).to.deep.equal(['id']);
    for (const [body, field, status] of [
      [{}, 'order_id', 422],
      [{ order_id: 42 }, 'order_id', 422],
      [{ order_id: 'ord_nobody' }, 'order_id', 422],
      [{ order_id: usd }, 'order_id', 422],
      [{ order_id: paid }, 'order_id', 409],
      [{ order_id: pending, by: '4242424242424242' }, 'by', 422],
    ] as const) {
      const answer = await attach(sale, body);
      expect(answer.status, JSON.stringify(body)).to.equal(status);
      expect(Object.keys(answer.body.errors), JSON.stringify(body)).to.deep.equal([field]);
    }
    const holding = await attach(sale, { order_id: paid });
    expect(holding.body.code).to.equal('ORDER_HAS_PAYMENT');
    const orphan = await attach(refund, { order_id: pending });
    expect(orphan.status).to.equal(422);
    expect(orphan.body.errors.order_id[0]).to.contain('900100699');
    const notJson = await t.call('POST', `/unmatched-money/${sale}/attach`, {
      ops: true,
      rawBody: '{',
    });
    expect(notJson.status).to.equal(422);
    expect(Object.keys(notJson.body.errors)).to.deep.equal(['body']);
    expect(
      (await t.call('POST', `/unmatched-money/${sale}/attach`, { body: { order_id: pending } })).status,
    ).to.equal(401);
    // Nothing refused changed anything: still open, the orders as they were.
    expect(await keptRow('900100600')).to.include({ resolution: 'open' });
    expect((await getOrder(t, pending)).payment).to.equal(null);
    expect((await getOrder(t, paid)).status).to.equal('paid');
  });

  it('resolve: the note is kept, the money leaves the open list; a missing, blank, long or card-carrying note is a 422 naming note', async () => {
    await deliver('transaction.captured', record({ id: '900100700', reference: null, amount: 900 }));
    const id = (await keptRow('900100700'))!.id as string;
    const resolve = (body: unknown, o: { ops?: boolean } = { ops: true }) =>
      t.call('POST', `/unmatched-money/${id}/resolve`, { ...o, body });
    for (const [body, field] of [
      [{}, 'note'],
      [{ note: '   ' }, 'note'],
      [{ note: 'x'.repeat(513) }, 'note'],
      [{ note: 'paid with 4242 4242 4242 4242' }, 'note'],
      [{ note: 7 }, 'note'],
      [{ note: 'fine', by: '' }, 'by'],
    ] as const) {
      const answer = await resolve(body);
      expect(answer.status, JSON.stringify(body)).to.equal(422);
      expect(Object.keys(answer.body.errors), JSON.stringify(body)).to.deep.equal([field]);
    }
    expect((await resolve({ note: 'a test payment' }, {})).status).to.equal(401);
    expect(
      (await t.call('POST', '/unmatched-money/umn_nobody/resolve', { ops: true, body: { note: 'x' } }))
        .status,
    ).to.equal(404);

    const resolved = await resolve({ note: '  a test payment made at the gateway; refunded there  ' });
    expect(resolved.status, resolved.text).to.equal(200);
    expect(resolved.body.data.unmatched_money).to.include({
      resolution: 'resolved',
      resolved_note: 'a test payment made at the gateway; refunded there',
      resolved_by: 'admin',
    });
    expect(resolved.body.data.unmatched_money.resolved_at).to.be.a('string');
    expect((await money('?resolution=open')).map((m) => m.id)).to.not.include(id);
    expect((await money('?resolution=resolved')).map((m) => m.id)).to.include(id);
    const again = await resolve({ note: 'twice' });
    expect(again.status).to.equal(409);
    expect(again.body.data).to.deep.equal({ resolution: 'resolved', allowed: ['open'] });
    // Resolved money stays resolved when the gateway speaks of it again.
    await deliver('transaction.refunded', {
      ...record({ id: '900100700', reference: null, amount: 900 }),
      status: 'refunded',
      refunded_amount: 900,
    });
    expect(await keptRow('900100700')).to.include({ resolution: 'resolved', seen_count: 2 });
  });

  it('the list: everything, newest first, or one resolution; a bad filter is a 422 naming it; 401 without the token', async () => {
    const all = await money();
    expect(all.length).to.be.greaterThan(5);
    const seen = all.map((m) => Date.parse(m.first_seen_at));
    expect(seen).to.deep.equal([...seen].sort((a, b) => b - a));
    expect((await money('?resolution=open')).every((m) => m.resolution === 'open')).to.equal(true);
    expect(await money('?limit=2')).to.have.length(2);
    for (const [query, field] of [
      ['?resolution=closed', 'resolution'],
      ['?limit=0', 'limit'],
      ['?limit=1001', 'limit'],
      ['?limit=many', 'limit'],
    ] as const) {
      const answer = await t.call('GET', `/unmatched-money${query}`, { ops: true });
      expect(answer.status, query).to.equal(422);
      expect(Object.keys(answer.body.errors), query).to.deep.equal([field]);
    }
    expect((await t.call('GET', '/unmatched-money')).status).to.equal(401);
  });

  it("the report: the money beside the orders, totals per currency (attached money is the order's); the CSV carries it as a second table", async () => {
    const report = await t.call('GET', `/reports/reconciliation?${range}`, { ops: true });
    const section = report.body.data.unmatched_money;
    const kept = await rows(t, 'unmatched_money');
    expect(section.rows.map((r: { id: string }) => r.id).sort()).to.deep.equal(kept.map((k) => k.id).sort());
    for (const currency of ['EUR', 'USD']) {
      const mine = kept.filter((k) => k.currency === currency);
      const loose = mine.filter((k) => k.resolution !== 'attached');
      const taken = loose
        .filter(
          (k) =>
            ['sale', 'capture'].includes(k.transaction_type) &&
            ['captured', 'refunded', 'chargeback'].includes(k.status),
        )
        .reduce((sum, k) => sum + Number(k.amount_minor), 0);
      const totals = section.totals.find((x: { currency: string }) => x.currency === currency);
      expect(totals, currency).to.include({
        rows: mine.length,
        open: mine.filter((k) => k.resolution === 'open').length,
        attached: mine.filter((k) => k.resolution === 'attached').length,
        resolved: mine.filter((k) => k.resolution === 'resolved').length,
        captured: taken,
      });
      expect(totals.net).to.equal(totals.captured - totals.refunded);
    }

    const csv = await t.call('GET', `/reports/reconciliation?${range}&format=csv`, { ops: true });
    expect(csv.status).to.equal(200);
    const [orders, second] = csv.text.split('\n\n');
    expect(orders!.split('\n')[0]).to.equal(REPORT_COLUMNS.join(','));
    expect(parseCsv(orders!, { columns: true })).to.have.length(report.body.data.rows.length);
    expect(second!.split('\n')[0]).to.equal(UNMATCHED_COLUMNS.join(','));
    const parsed = parseCsv(second!, { columns: true }) as Record<string, string>[];
    expect(parsed).to.have.length(section.rows.length);
    for (const r of section.rows)
      for (const column of UNMATCHED_COLUMNS) {
        const line = parsed.find((p) => p.id === r.id)!;
        expect(line[column], column).to.equal(r[column] === null ? '' : String(r[column]));
      }
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

describe('merchant: gateway money with no order, on its normal path, is logged once', function () {
  this.timeout(60_000);
  let t: TestKit;
  before(async () => {
    // The queue's own retries (8 attempts, as in production), close together.
    t = await startTestKit({ jobRetry: { attempts: 8, delayMs: 10 } });
    await deliveriesOff(t);
  });
  after(async () => {
    await t?.close();
  });

  it('seven retries then kept: no "reconciler job failed" among the log lines, one warning that it is kept', async () => {
    const secret = await storedSecret(t);
    const mark = suiteLogLines.length;
    const e = event('transaction.captured', record({ id: '900300001', reference: null, amount: 250 }));
    expect((await post(t, e.body, secret)).status).to.equal(200);
    expect((await processed(t, e.id)).outcome).to.equal('unmatched');
    expect((await inboxRow(t, e.id))!.attempts, 'retried before it was kept').to.equal(7);

    const written = suiteLogLines.slice(mark);
    expect(written.filter((l) => l.includes('reconciler job failed'))).to.deep.equal([]);
    const entries = written.flatMap((l) => {
      try {
        return [JSON.parse(l) as { level: number; msg: string; transaction?: string; job?: string }];
      } catch {
        return [];
      }
    });
    expect(entries.filter((l) => l.level >= 40).map((l) => l.msg)).to.deep.equal([
      'gateway money with no attempt: kept for an operator',
    ]);
    const retries = entries.filter((l) => l.job === e.id && l.msg.startsWith('reconciler job retried'));
    expect(retries, 'each retry is still told, at debug').to.have.length(7);
    expect(retries.every((l) => l.level === 20)).to.equal(true);

    // Its later news is the same money seen again: told at info, not warned of anew.
    const mark2 = suiteLogLines.length;
    const again = event('transaction.refunded', {
      ...record({ id: '900300001', reference: null, amount: 250 }),
      refunded_amount: 250,
    });
    expect((await post(t, again.body, secret)).status).to.equal(200);
    expect((await processed(t, again.id)).outcome).to.equal('unmatched');
    const later = suiteLogLines.slice(mark2).join('\n');
    expect(later).to.not.contain('reconciler job failed');
    expect(later).to.contain('seen again, already kept for an operator');
    expect(later).to.not.contain('"msg":"gateway money with no attempt: kept for an operator"');
  });

  it('a job that fails for another reason is still warned of', async () => {
    const secret = await storedSecret(t);
    const mark = suiteLogLines.length;
    await t.kit.sequelize.query('RENAME TABLE unmatched_money TO unmatched_money_away');
    try {
      const e = event('transaction.captured', record({ id: '900300002', reference: null, amount: 100 }));
      expect((await post(t, e.body, secret)).status).to.equal(200);
      await waitFor('the job in the failed set', async () =>
        (await t.kit.queue.getFailed()).find((j) => String(j.id) === e.id),
      );
    } finally {
      await t.kit.sequelize.query('RENAME TABLE unmatched_money_away TO unmatched_money');
    }
    expect(suiteLogLines.slice(mark).filter((l) => l.includes('reconciler job failed'))).to.have.length(1);
  });
});

describe('merchant: the CLI for gateway money with no order', function () {
  this.timeout(120_000);
  let t: TestKit;
  let env: Record<string, string>;
  before(async () => {
    t = await startTestKit();
    env = { ...cliEnv(t), GATEWAY_PORT: String(await freePort()) };
  });
  after(async () => {
    await t?.close();
  });

  const cli = async (...args: string[]) => {
    const p = start('src/cli.ts', ['unmatched', ...args], env);
    const { code } = await exitWithin(p, 60_000);
    return { code, out: p.stdout(), err: p.stderr() };
  };
  const keep = async (id: string) =>
    (await keepStraySale(t, { id, amountMinor: 200, sourceId: `evt_cli_${id}` })).money.id;

  it('list, attach and resolve: JSON on stdout, exit 0; a bad input is one line naming it, exit 1', async () => {
    const [one, two] = [await keep('900300001'), await keep('900300002')];
    const listed = await cli('list', '--resolution', 'open');
    expect(listed.code, listed.err).to.equal(0);
    expect(JSON.parse(listed.out).map((m: { id: string }) => m.id)).to.have.members([one, two]);

    const order = await newOrder(t, '2.00');
    const attached = await cli('attach', one, '--order', order, '--by', 'ada');
    expect(attached.code, attached.err).to.equal(0);
    expect(JSON.parse(attached.out).unmatched_money).to.include({
      resolution: 'attached',
      resolved_by: 'ada',
    });
    expect(await getOrder(t, order)).to.include({ status: 'paid', captured_amount: 200 });

    const resolved = await cli('resolve', two, '--note', 'a test payment');
    expect(resolved.code, resolved.err).to.equal(0);
    expect(JSON.parse(resolved.out).unmatched_money).to.include({
      resolution: 'resolved',
      resolved_note: 'a test payment',
      resolved_by: 'cli',
    });
    expect(JSON.parse((await cli('list', '--resolution', 'open')).out)).to.deep.equal([]);

    for (const [args, line] of [
      [['resolve', two, '--note', 'again'], `${two}: this money is resolved already`],
      [['resolve', 'umn_nobody', '--note', 'x'], 'umn_nobody: no gateway money with no order has this id'],
      [['resolve', two, '--note', 'card 4242424242424242'], '--note: must not hold a card number'],
      [['attach', one, '--order', order], `${one}: this money is attached already`],
      [['list', '--resolution', 'closed'], '--resolution: must be open, attached or resolved (got "closed")'],
      [['list', '--limit', '0'], '--limit: must be a whole number from 1 to 1000 (got "0")'],
    ] as const) {
      const run = await cli(...args);
      expect(run.code, args.join(' ')).to.equal(1);
      expect(lines(run.err), args.join(' ')).to.deep.equal([line]);
    }
  });
});
