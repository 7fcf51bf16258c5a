import { expect } from 'chai';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import type { TransactionObservation } from '../../../src/merchant/orders/observation.js';
import { AUDIT_COLUMNS } from '../../../src/merchant/reports/audit.js';
import { referenceSettled } from '../../support/events.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { keepStraySale } from '../../support/unmatched.js';

/**
 * Issue, part 3, through HTTP against a running kit: the review queue (GET /orders with its filters,
 * a page at a time), a review resolved with who and why in the order's history (and not asked again
 * for the same finding), and the audit export (part 2) of every act, as CSV and JSON.
 */
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const HOUR = 3_600_000;

// biome-ignore lint/suspicious/noExplicitAny: orders as the API answers them
type Order = any;

describe('merchant: the review queue (issue, part 3)', function () {
  this.timeout(120_000);
  let t: TestKit;
  let finance: string;

  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
    finance = (await t.kit.store.operators.add({ name: 'fran', role: 'finance', by: CLI })).token;
  });
  after(async () => {
    await t?.close();
  });

  const create = async (amount: string, currency = 'EUR') => {
    const created = await t.call('POST', '/orders', { body: { amount, currency } });
    expect(created.status, created.text).to.equal(201);
    return created.body.data.order as Order;
  };
  const flag = (id: string, reason: string) =>
    t.kit.store.orders.flagWithoutAttempt(id, { reason, source: 'api', sourceId: `test:${id}:${reason}` });
  const list = async (query: string) => {
    const answer = await t.call('GET', `/orders?${query}`, { token: finance });
    expect(answer.status, answer.text).to.equal(200);
    return answer.body.data as { orders: Order[]; next_cursor: string | null };
  };
  /** Every page of a query, following next_cursor. */
  const everyPage = async (query: string) => {
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const page = await list(`${query}${cursor ? `&cursor=${cursor}` : ''}`);
      pages.push(page.orders.map((o) => o.id));
      cursor = page.next_cursor;
    } while (cursor);
    return pages;
  };
  const review = (id: string, body: unknown) =>
    t.call('POST', `/orders/${id}/review`, { token: finance, body });
  /** The report's range of the day an order was created in. */
  const rangeOf = (createdAt: string) => {
    const day = Math.floor(Date.parse(createdAt) / (24 * HOUR)) * 24 * HOUR;
    const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    return `from=${date(day)}&to=${date(day + 24 * HOUR)}`;
  };
  /** The order's row of the reconciliation report (JSON), as finance reads it. */
  const reportRowOf = async (id: string) => {
    const order = await getOrder(t, id);
    const report = await t.call('GET', `/reports/reconciliation?${rangeOf(order.created_at)}`, {
      token: finance,
    });
    expect(report.status, report.text).to.equal(200);
    return report.body.data.rows.find((r: { order_id: string }) => r.order_id === id);
  };

  it('lists orders newest first with filters (needs_review, status, currency, created range), a page at a time', async () => {
    const start = t.clock.now();
    const early = [await create('1.00'), await create('2.00', 'USD'), await create('3.00')];
    t.sandboxClock.advance(2 * HOUR);
    const middle = t.clock.now();
    const late = [
      await create('4.00'),
      await create('5.00', 'USD'),
      await create('6.00'),
      await create('7.00'),
    ];
    const all = [...early, ...late];
    for (const o of [early[0], early[1], late[0], late[1], late[3]])
      await flag(o.id, `look at ${o.reference}`);
    const flaggedIds = [late[3], late[1], late[0], early[1], early[0]].map((o) => o.id);

    // The queue: flagged orders only, newest first, each with its reason.
    const queue = await list('needs_review=true');
    expect(queue.orders.map((o) => o.id)).to.deep.equal(flaggedIds);
    expect(queue.orders.every((o) => o.needs_review && o.review_reason.startsWith('look at '))).to.equal(
      true,
    );
    expect(queue.next_cursor).to.equal(null);
    // Pages of 2 give the same orders, each once, in the same order.
    const pages = await everyPage('needs_review=true&limit=2');
    expect(pages.map((p) => p.length)).to.deep.equal([2, 2, 1]);
    expect(pages.flat()).to.deep.equal(flaggedIds);

    expect((await list('needs_review=false')).orders.map((o) => o.id)).to.deep.equal(
      [late[2], early[2]].map((o) => o.id),
    );
    expect((await list('needs_review=true&currency=USD')).orders.map((o) => o.id)).to.deep.equal(
      [late[1], early[1]].map((o) => o.id),
    );
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(
      (await list(`created_from=${iso(middle)}&needs_review=true`)).orders.map((o) => o.id),
      'created_from is inclusive',
    ).to.deep.equal([late[3], late[1], late[0]].map((o) => o.id));
    expect(
      (await list(`created_from=${iso(start)}&created_to=${iso(middle)}`)).orders.map((o) => o.id),
      'created_to is exclusive',
    ).to.deep.equal([...early].reverse().map((o) => o.id));
    expect((await list('status=pending,paid&limit=1000')).orders.map((o) => o.id)).to.include.members(
      all.map((o) => o.id),
    );
    expect((await list('status=paid')).orders).to.deep.equal([]);

    // Pages are positions, not offsets: an order created between two pages neither repeats a row
    // nor moves one onto the next page.
    const first = await list('needs_review=true&limit=2');
    const newer = await create('8.00');
    await flag(newer.id, 'a late one');
    const second = await list(`needs_review=true&limit=2&cursor=${first.next_cursor}`);
    expect([...first.orders, ...second.orders].map((o) => o.id)).to.deep.equal(flaggedIds.slice(0, 4));
    expect((await list('needs_review=true&limit=1')).orders[0].id).to.equal(newer.id);
  });

  it('names each bad filter with a 422', async () => {
    const bad: [string, string][] = [
      ['needs_review=yes', 'needs_review'],
      ['status=pending,lost', 'status'],
      ['status=', 'status'],
      ['currency=XXX', 'currency'],
      ['created_from=soon', 'created_from'],
      ['created_from=2026-11-31', 'created_from'],
      ['created_to=2026-02-29T10:00:00Z', 'created_to'],
      ['created_from=2026-11-24&created_to=2026-11-23', 'created_to'],
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['cursor=not-a-cursor!', 'cursor'],
      [`cursor=${Buffer.from('12.ord_x.y').toString('base64url')}`, 'cursor'],
    ];
    for (const [query, field] of bad) {
      const answer = await t.call('GET', `/orders?${query}`, { token: finance });
      expect(answer.status, query).to.equal(422);
      expect(Object.keys(answer.body.errors), query).to.deep.equal([field]);
    }
  });

  it('a review resolved: the flag and reason cleared, who and why in the history; again 409; unknown 404; bad input 422', async () => {
    const order = await create('9.00');
    await flag(order.id, 'captured 900 by phone, not online');
    const missing = await review(order.id, { resolution: 'accepted' });
    expect(missing.status).to.equal(422);
    expect(missing.body.errors).to.have.keys(['note']);
    const wrong = await review(order.id, { resolution: 'ignored', note: 'x' });
    expect(wrong.status).to.equal(422);
    expect(wrong.body.errors.resolution[0]).to.contain(
      'accepted, refunded, corrected, written_off, false_alarm',
    );
    const card4242 = await review(order.id, { resolution: 'accepted', note: 'card 4242 4242 4242 4242' });
    expect(card4242.status).to.equal(422);
    expect(card4242.body.errors).to.have.keys(['note']);

    const done = await review(order.id, { resolution: 'accepted', note: 'the customer confirmed by phone' });
    expect(done.status, done.text).to.equal(200);
    expect(done.body.message).to.equal('The review is resolved.');
    expect(done.body.data.order).to.include({ needs_review: false, review_reason: null, status: 'pending' });
    const line = (await getOrder(t, order.id)).history.at(-1);
    expect(line).to.include({
      source: 'api',
      outcome: 'resolved',
      status_before: 'pending',
      status_after: 'pending',
      detail:
        'review resolved (accepted) by fran (finance): the customer confirmed by phone; cleared: captured 900 by phone, not online',
    });
    expect(line.source_id).to.match(/^review:rvw_\w+$/);

    const again = await review(order.id, { resolution: 'accepted', note: 'again' });
    expect(again.status).to.equal(409);
    expect(again.body).to.include({ code: 'NOT_FLAGGED' });
    expect(again.body.data).to.deep.equal({ needs_review: false });
    const unknown = await review('ord_nobody', { resolution: 'accepted', note: 'x' });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.code).to.equal('NOT_FOUND');

    // The same finding again is recorded and asks nobody; a new one flags the order again.
    await flag(order.id, 'captured 900 by phone, not online');
    expect(await getOrder(t, order.id)).to.include({ needs_review: false });
    expect((await getOrder(t, order.id)).history.at(-1)).to.include({ outcome: 'duplicate' });
    await flag(order.id, 'another problem');
    expect(await getOrder(t, order.id)).to.include({ needs_review: true, review_reason: 'another problem' });
  });

  it('an amount that differs, resolved: the next poll of the same payment does not flag the order again', async () => {
    const order = await create('12.34');
    const kept = await keepStraySale(t, {
      id: '900800001',
      amountMinor: 500,
      sourceId: 'evt_review_poll',
      currency: 'EUR',
      reference: order.reference,
      orderId: order.id,
    });
    const attached = await t.call('POST', `/unmatched-money/${kept.money.id}/attach`, {
      token: finance,
      body: { order_id: order.id },
    });
    expect(attached.status, attached.text).to.equal(200);
    const flagged = await getOrder(t, order.id);
    expect(flagged).to.include({ status: 'paid', needs_review: true });
    expect(flagged.review_reason).to.contain("amount 500 differs from the order's 1234");

    const done = await review(order.id, { resolution: 'accepted', note: 'a deposit of 5.00, agreed' });
    expect(done.status, done.text).to.equal(200);
    // The report: the difference stands by a person's decision, no longer an open mismatch.
    expect(await reportRowOf(order.id)).to.include({
      classification: 'resolved',
      reason: 'amount 500 at the gateway, 1234 on the order',
      match: false,
      review: 'accepted',
      reviewed_by: 'fran (finance)',
    });
    const poll = (n: number, amountMinor: number): TransactionObservation => ({
      source: 'poll',
      sourceId: `poll:test:${n}`,
      observedAt: t.clock.now(),
      about: { orderId: order.id, attemptId: flagged.payment.attempt_id },
      transaction: {
        id: '900800001',
        relatedId: null,
        type: 'sale',
        status: 'captured',
        amountMinor,
        currency: 'EUR',
        refundedMinor: 0,
        reference: order.reference,
      },
    });
    const seen = await t.kit.apply(poll(1, 500));
    expect(seen.decision).to.include({ outcome: 'duplicate', review: null });
    expect(seen.decision!.note).to.contain('(resolved by a person before)');
    expect(await getOrder(t, order.id)).to.include({ needs_review: false, review_reason: null });
    // Another amount is another finding: flagged again.
    expect(await reportRowOf(order.id), 'the same finding again: still resolved').to.include({
      classification: 'resolved',
      review: 'accepted',
    });
    const other = await t.kit.apply(poll(2, 700));
    expect(other.decision).to.include({ outcome: 'flagged' });
    expect(await getOrder(t, order.id)).to.include({ needs_review: true });
    expect(await reportRowOf(order.id), 'a new finding: open again').to.include({
      classification: 'mismatched',
      review: 'open',
      reviewed_by: null,
    });
  });

  it('the report shows each resolution, who and when; its CSV has the columns review, reviewed_by, reviewed_at', async () => {
    const order = await create('3.00');
    await flag(order.id, 'looked odd');
    expect(await reportRowOf(order.id)).to.include({ classification: 'mismatched', review: 'open' });
    const before = Date.now();
    const done = await review(order.id, { resolution: 'false_alarm', note: 'nothing wrong after all' });
    expect(done.status, done.text).to.equal(200);
    // Nothing at the gateway disagrees: matched, and the review's outcome still shown.
    const row = await reportRowOf(order.id);
    expect(row).to.include({
      classification: 'matched',
      reason: 'not paid for yet',
      review: 'false_alarm',
      reviewed_by: 'fran (finance)',
    });
    expect(Date.parse(row.reviewed_at)).to.be.within(before - 1000, t.clock.now() + 1000);

    const csv = await t.call('GET', `/reports/reconciliation?${rangeOf(order.created_at)}&format=csv`, {
      token: finance,
    });
    expect(csv.status, csv.text).to.equal(200);
    // The orders' table (a second one, of money with no order, may follow a blank line).
    const records = parseCsv(csv.text.split('\n\n')[0]!, { columns: true }) as Record<string, string>[];
    expect(records.find((r) => r.order_id === order.id)).to.include({
      classification: 'matched',
      review: 'false_alarm',
      reviewed_by: 'fran (finance)',
      reviewed_at: row.reviewed_at,
    });
    const never = records.find((r) => r.review === '' && r.classification === 'matched');
    expect(never, 'an order never flagged: the review columns empty').to.include({
      reviewed_by: '',
      reviewed_at: '',
    });
  });
});

describe('merchant: the audit export (issue, part 2)', function () {
  this.timeout(120_000);
  let t: TestKit;
  const tokens: Record<string, string> = {};
  before(async () => {
    t = await startTestKit();
    tokens.olga = (await t.kit.store.operators.add({ name: 'olga', role: 'operator', by: CLI })).token;
    tokens.fran = (await t.kit.store.operators.add({ name: 'fran', role: 'finance', by: CLI })).token;
  });
  after(async () => {
    await t?.close();
  });

  const paid = async (mode: 'auth' | 'sale', amount: string) => {
    const created = await t.call('POST', '/orders', { body: { amount, currency: 'EUR' } });
    const id = created.body.data.order.id as string;
    const answer = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode } });
    expect(answer.status, answer.text).to.equal(200);
    // The payment's answer is the public view: the operator's names the payment.
    return getOrder(t, id);
  };
  const ok = async (path: string, token: string, body: unknown, key?: string) => {
    const answer = await t.call('POST', path, {
      token,
      body,
      headers: {
        'x-request-id': `req-${path.split('/').at(-1)}`,
        ...(key ? { 'idempotency-key': key } : {}),
      },
    });
    expect(answer.status, `${path}: ${answer.text}`).to.equal(200);
    return answer;
  };

  it('every act, who, role, what, order, amount, why and what became of it, as CSV and JSON', async () => {
    const from = new Date(t.clock.now() - 1000).toISOString();
    const auth = await paid('auth', '20.00');
    await ok(`/orders/${auth.id}/capture`, tokens.olga!, { note: 'shipped' });
    await ok(`/orders/${auth.id}/refund`, tokens.olga!, { amount: '2.50', reason: 'damaged' }, 'audit-r1');
    const voidable = await paid('auth', '7.00');
    await ok(`/orders/${voidable.id}/void`, tokens.olga!, { reason: 'out of stock' });
    const refused = await t.call('POST', `/orders/${voidable.id}/capture`, { token: tokens.olga! });
    expect(refused.status, 'a capture of a voided order: refused before anything is stored').to.equal(409);

    const flagged = (await t.call('POST', '/orders', { body: { amount: '3.00', currency: 'EUR' } })).body.data
      .order.id as string;
    await t.kit.store.orders.flagWithoutAttempt(flagged, {
      reason: 'odd',
      source: 'api',
      sourceId: 'test:odd',
    });
    await ok(`/orders/${flagged}/review`, tokens.fran!, { resolution: 'false_alarm', note: 'nothing wrong' });

    const money = await keepStraySale(t, {
      id: '900900001',
      amountMinor: 300,
      sourceId: 'evt_audit_1',
      currency: 'EUR',
    });
    await ok(`/unmatched-money/${money.money.id}/resolve`, tokens.fran!, { note: 'a test payment' });
    const more = await keepStraySale(t, {
      id: '900900002',
      amountMinor: 300,
      sourceId: 'evt_audit_2',
      currency: 'EUR',
    });
    const owner = (await t.call('POST', '/orders', { body: { amount: '3.00', currency: 'EUR' } })).body.data
      .order.id as string;
    await ok(`/unmatched-money/${more.money.id}/attach`, tokens.fran!, { order_id: owner });

    const sale = await paid('sale', '15.00');
    const chargeback = await fetch(
      `${t.kit.gatewayUrl}/sandbox/transactions/${sale.payment.gateway_transaction_id}/chargeback`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
        body: '{}',
      },
    );
    expect(chargeback.status).to.equal(200);
    await referenceSettled(t, sale.reference);
    const [dispute] = (await getOrder(t, sale.id)).disputes;
    // The bootstrap token signs as admin; its credential column says it was the shared token.
    const lost = await t.call('POST', `/disputes/${dispute.id}/lost`, {
      ops: true,
      body: { note: 'bank ruled' },
    });
    expect(lost.status, lost.text).to.equal(200);
    await t.kit.store.operators.revoke('olga', CLI);
    const to = new Date(t.clock.now() + 1000).toISOString();

    const csv = await t.call('GET', `/audit?from=${from}&to=${to}`, { token: tokens.fran! });
    expect(csv.status, csv.text).to.equal(200);
    expect(csv.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).to.match(
      /^attachment; filename="audit-\d{4}-\d\d-\d\d-\d{4}-\d\d-\d\d\.csv"$/,
    );
    expect(csv.text.split('\n')[0]).to.equal(AUDIT_COLUMNS.join(','));
    const lines = parseCsv(csv.text, { columns: true }) as Record<string, string>[];
    const pick = (l: Record<string, string>) => [
      l.action,
      l.actor,
      l.role,
      l.order_id,
      l.amount_formatted,
      l.currency,
      l.reason,
      l.outcome,
    ];
    expect(lines.map(pick)).to.deep.equal([
      ['operator.add', 'root', 'admin', '', '', '', '', 'done'],
      ['operator.add', 'root', 'admin', '', '', '', '', 'done'],
      ['capture', 'olga', 'operator', auth.id, '20.00', 'EUR', 'shipped', 'succeeded'],
      ['refund', 'olga', 'operator', auth.id, '2.50', 'EUR', 'damaged', 'succeeded'],
      ['void', 'olga', 'operator', voidable.id, '7.00', 'EUR', 'out of stock', 'succeeded'],
      ['review.resolve', 'fran', 'finance', flagged, '3.00', 'EUR', 'nothing wrong', 'done'],
      ['unmatched.resolve', 'fran', 'finance', '', '3.00', 'EUR', 'a test payment', 'done'],
      ['unmatched.attach', 'fran', 'finance', owner, '3.00', 'EUR', '', 'done'],
      ['dispute.lost', 'admin', 'admin', sale.id, '15.00', 'EUR', 'bank ruled', 'done'],
      ['operator.revoke', 'root', 'admin', '', '', '', '', 'done'],
    ]);
    const olga = (await t.kit.store.operators.list({ all: true })).find((o) => o.name === 'olga')!;
    expect(lines.slice(2, 5).map((l) => l.credential)).to.deep.equal([olga.id, olga.id, olga.id]);
    expect(lines[0]).to.include({ credential: 'cli', subject_id: olga.id, detail: 'olga as operator' });
    expect(lines[2]).to.include({ request_id: 'req-capture', gateway_code: '' });
    expect(lines[2]!.subject_id).to.match(/^op_/);
    expect(lines[5]!.detail).to.equal('false_alarm; cleared: odd');
    expect(lines[6]!.subject_id).to.equal(money.money.id);
    expect(lines[6]!.detail).to.equal('transaction 900900001 (sale captured)');
    expect(lines[7]).to.include({
      subject_id: more.money.id,
      detail: `transaction 900900002 (sale captured) to ${owner}`,
    });
    expect(lines[8]).to.include({ credential: 'bootstrap', subject_id: dispute.id });
    expect(lines[9]).to.include({ credential: 'cli', subject_id: olga.id, detail: 'olga (operator)' });
    expect(lines.map((l) => Number(l.id))).to.deep.equal(
      [...lines.map((l) => Number(l.id))].sort((a, b) => a - b),
    );

    const json = await t.call('GET', `/audit?from=${from}&to=${to}&format=json`, { ops: true });
    expect(json.status, json.text).to.equal(200);
    expect(json.body.data.entries.map((e: Record<string, unknown>) => String(e.id))).to.deep.equal(
      lines.map((l) => l.id),
    );
    expect(json.body.data.entries[3]).to.include({ amount: 250, action: 'refund', gateway_code: null });

    // An empty range is the header alone; a bad range a 422 naming the field.
    const empty = await t.call('GET', '/audit?from=2001-01-01&to=2001-01-02', { ops: true });
    expect(empty.text).to.equal(`${AUDIT_COLUMNS.join(',')}\n`);
    const backwards = await t.call('GET', `/audit?from=${to}&to=${from}`, { ops: true });
    expect(backwards.status).to.equal(422);
    expect(backwards.body.errors).to.have.keys(['to']);
    const noFormat = await t.call('GET', `/audit?from=${from}&to=${to}&format=xml`, { ops: true });
    expect(noFormat.body.errors).to.have.keys(['format']);
    const noSuchDay = await t.call('GET', `/audit?from=2026-02-30&to=${to}`, { ops: true });
    expect(noSuchDay.status).to.equal(422);
    expect(noSuchDay.body.errors).to.have.keys(['from']);
  });
});
