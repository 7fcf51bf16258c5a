import { expect } from 'chai';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import { UNMATCHED_COLUMNS } from '../../../src/merchant/reports/unmatched.js';
import { secretOwner } from '../../../src/merchant/store/secrets.js';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { sign } from '../../../src/shared/signature.js';
import { responseChecker } from '../../support/api-document.js';
import { row } from '../../support/db.js';
import { event, processed } from '../../support/events.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { LINKED, PLATFORM_ENV, platformSeed } from '../../support/platform.js';
import { keepStraySale } from '../../support/unmatched.js';

/**
 * Issue 45: gateway money with no order per merchant, through HTTP against a kit acting for merchants
 * 1001 and 1004 with a partner key. Money whose event came to a merchant's webhook URL is that
 * merchant's: its row and the report say so, a report of one merchant holds that merchant's money
 * and totals alone, a credential scoped to 1004 lists and decides 1004's alone (1001's is, to it,
 * money that does not exist), and money is attached to an order of its own merchant only.
 */
const [FIRST, OUTLET] = LINKED;
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const UNKNOWN = 'umn_nobody000000000000000000';

// biome-ignore lint/suspicious/noExplicitAny: rows and totals as the JSON answers have them
type Row = any;

/** A transaction record as the gateway's webhook payload carries it (gateway-api.md). */
const record = (id: string, amount: number, currency = 'EUR', reference: string | null = null) => ({
  id,
  merchant_trans_id: reference,
  related_trans_id: null,
  transaction_type: 'sale',
  status: 'captured',
  amount,
  currency,
  refunded_amount: 0,
  created_at: new Date().toISOString(),
  updated_at: new Date().toISOString(),
});

describe('merchant: gateway money with no order per merchant (platform mode)', function () {
  this.timeout(90_000);
  let t: TestKit;
  let range: string;
  let documented: Awaited<ReturnType<typeof responseChecker>>;
  const token: Record<string, string> = {};
  /** The money each test delivered: the row's id by transaction id. */
  const kept: Record<string, string> = {};

  /** Signs a captured sale no attempt holds with `merchant`'s secret and POSTs it to `path`; the row kept. */
  const strayAt = async (path: string, merchant: number, id: string, amount: number, currency = 'EUR') => {
    const [secret] = await t.kit.store.secrets.active([], secretOwner(LINKED, merchant));
    const e = event('transaction.captured', record(id, amount, currency));
    const res = await fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'X-Service-Signature': sign(e.body, secret!, Math.floor(t.clock.now() / 1000)),
      },
      body: e.body,
    });
    expect(res.status, await res.text()).to.equal(200);
    expect((await processed(t, e.id)).outcome).to.equal('unmatched');
    const money = await row(t, 'unmatched_money', { transaction_id: id });
    kept[id] = money!.id;
    return money!;
  };

  const newOrder = async (merchant: number) => {
    const created = await t.call('POST', '/orders', {
      ops: true,
      body: { amount: '1.00', currency: 'EUR', merchant_id: merchant },
    });
    expect(created.status, created.text).to.equal(201);
    return created.body.data.order.id as string;
  };

  before(async () => {
    t = await startTestKit({ seed: platformSeed, env: PLATFORM_ENV });
    documented = await responseChecker((await t.call('GET', '/openapi.json')).body as ApiDocument);
    const today = Math.floor(t.clock.now() / DAY) * DAY;
    range = `from=${dayOf(today)}&to=${dayOf(today + DAY)}`;
    for (const [name, role] of [
      ['outlet-finance', 'finance'],
      ['outlet-viewer', 'viewer'],
    ] as const)
      token[name] = (await t.kit.store.operators.add({ name, role, merchants: [OUTLET], by: CLI })).token;
    // 1004's: two sales in EUR and one in GBP; 1001's: one at its URL, one at the URL of no merchant
    // (the first merchant's), and one kept before platform mode (naming no merchant).
    await strayAt(`/webhooks/gateway/${OUTLET}`, OUTLET, '904000001', 1500);
    await strayAt(`/webhooks/gateway/${OUTLET}`, OUTLET, '904000002', 250);
    await strayAt(`/webhooks/gateway/${OUTLET}`, OUTLET, '904000003', 700, 'GBP');
    await strayAt(`/webhooks/gateway/${FIRST}`, FIRST, '901000001', 4000);
    await strayAt('/webhooks/gateway', FIRST, '901000002', 100);
    kept['901000009'] = (
      await keepStraySale(t, { id: '901000009', amountMinor: 50, sourceId: 'evt_before' })
    ).money.id;
  });
  after(async () => {
    await t?.close();
  });

  it("money with no order arriving at 1004's URL is 1004's, at 1001's is 1001's: its row and the list say so", async () => {
    for (const id of ['904000001', '904000002', '904000003'])
      expect(await row(t, 'unmatched_money', { transaction_id: id }), id).to.include({ merchant_id: OUTLET });
    // The URL of no merchant is the first merchant's; money kept before names none, and reads as 1001's.
    for (const id of ['901000001', '901000002'])
      expect(await row(t, 'unmatched_money', { transaction_id: id }), id).to.include({ merchant_id: FIRST });
    expect(await row(t, 'unmatched_money', { transaction_id: '901000009' })).to.include({
      merchant_id: null,
    });

    const every = await t.call('GET', '/unmatched-money', { ops: true });
    expect(every.status, every.text).to.equal(200);
    documented.check(every, 'GET', '/unmatched-money');
    const whose = Object.fromEntries(
      every.body.data.unmatched_money.map((m: Row) => [m.transaction_id, m.merchant_id]),
    );
    expect(whose).to.deep.equal({
      '904000001': OUTLET,
      '904000002': OUTLET,
      '904000003': OUTLET,
      '901000001': FIRST,
      '901000002': FIRST,
      '901000009': FIRST,
    });
    for (const merchant of LINKED) {
      const one = await t.call('GET', `/unmatched-money?merchant_id=${merchant}`, { ops: true });
      expect(one.status, one.text).to.equal(200);
      expect(one.body.data.unmatched_money.map((m: Row) => m.merchant_id)).to.deep.equal(
        Object.values(whose).filter((m) => m === merchant),
      );
    }
    const unserved = await t.call('GET', '/unmatched-money?merchant_id=1002', { ops: true });
    expect(unserved.status, unserved.text).to.equal(422);
    expect(Object.keys(unserved.body.errors)).to.deep.equal(['merchant_id']);
  });

  it("the report of 1004 holds 1004's money with no order and its totals, not 1001's; the report of every merchant all of it", async () => {
    const report = async (query: string) => {
      const answer = await t.call('GET', `/reports/reconciliation?${range}${query}`, { ops: true });
      expect(answer.status, answer.text).to.equal(200);
      documented.check(answer, 'GET', '/reports/reconciliation');
      return answer.body.data.unmatched_money;
    };
    const outlet = await report(`&merchant_id=${OUTLET}`);
    expect(outlet.rows.map((r: Row) => r.transaction_id).sort()).to.deep.equal([
      '904000001',
      '904000002',
      '904000003',
    ]);
    expect(new Set(outlet.rows.map((r: Row) => r.merchant_id))).to.deep.equal(new Set([OUTLET]));
    const sums = (totals: Row[]) =>
      Object.fromEntries(totals.map((x: Row) => [x.currency, [x.rows, x.captured, x.net]]));
    expect(sums(outlet.totals)).to.deep.equal({ EUR: [2, 1750, 1750], GBP: [1, 700, 700] });
    expect(outlet.totals_by_merchant.map((x: Row) => x.merchant_id)).to.deep.equal([OUTLET, OUTLET]);

    const first = await report(`&merchant_id=${FIRST}`);
    expect(first.rows.map((r: Row) => r.transaction_id).sort()).to.deep.equal([
      '901000001',
      '901000002',
      '901000009',
    ]);
    expect(sums(first.totals)).to.deep.equal({ EUR: [3, 4150, 4150] });

    const every = await report('');
    expect(every.rows).to.have.length(6);
    expect(sums(every.totals)).to.deep.equal({ EUR: [5, 5900, 5900], GBP: [1, 700, 700] });
    expect(
      every.totals_by_merchant.map((x: Row) => [x.merchant_id, x.currency, x.rows, x.captured]),
    ).to.deep.equal([
      [FIRST, 'EUR', 3, 4150],
      [OUTLET, 'EUR', 2, 1750],
      [OUTLET, 'GBP', 1, 700],
    ]);

    // The CSV of 1004: its second table is 1004's money, each line naming it (its last column).
    const csv = await t.call('GET', `/reports/reconciliation?${range}&format=csv&merchant_id=${OUTLET}`, {
      ops: true,
    });
    expect(csv.status).to.equal(200);
    const [, second] = csv.text.split('\n\n');
    expect(second!.split('\n')[0]).to.equal(UNMATCHED_COLUMNS.join(','));
    const lines = parseCsv(second!, { columns: true }) as Record<string, string>[];
    expect(lines.map((l) => l.transaction_id).sort()).to.deep.equal(['904000001', '904000002', '904000003']);
    expect(new Set(lines.map((l) => l.merchant_id))).to.deep.equal(new Set([String(OUTLET)]));
  });

  it("a credential scoped to 1004 lists 1004's money alone, reads it in its report, and names no other merchant", async () => {
    for (const who of ['outlet-viewer', 'outlet-finance']) {
      const list = await t.call('GET', '/unmatched-money', { token: token[who] });
      expect(list.status, list.text).to.equal(200);
      documented.check(list, 'GET', '/unmatched-money');
      expect(new Set(list.body.data.unmatched_money.map((m: Row) => m.merchant_id))).to.deep.equal(
        new Set([OUTLET]),
      );
      expect(list.body.data.unmatched_money).to.have.length(3);
    }
    const other = await t.call('GET', `/unmatched-money?merchant_id=${FIRST}`, {
      token: token['outlet-viewer'],
    });
    expect(other.status, other.text).to.equal(403);
    expect(other.body.errors).to.have.property('merchant_id');
    expect(other.body.data.merchant_ids).to.deep.equal([OUTLET]);

    const report = await t.call('GET', `/reports/reconciliation?${range}`, {
      token: token['outlet-finance'],
    });
    expect(report.status, report.text).to.equal(200);
    const money = report.body.data.unmatched_money;
    expect(money.rows.map((r: Row) => r.transaction_id).sort()).to.deep.equal([
      '904000001',
      '904000002',
      '904000003',
    ]);
    expect(money.totals.find((x: Row) => x.currency === 'EUR')).to.include({ rows: 2, captured: 1750 });
  });

  it("to a credential scoped to 1004, 1001's money is money that does not exist: 404 on resolve and attach, nothing done", async () => {
    const theirs = kept['901000001']!;
    const order = await newOrder(OUTLET);
    for (const [path, body] of [
      ['resolve', { note: 'looked at it' }],
      ['attach', { order_id: order }],
    ] as const) {
      const send = (id: string) =>
        t.call('POST', `/unmatched-money/${id}/${path}`, { token: token['outlet-finance'], body });
      const [answer, unknown] = [await send(theirs), await send(UNKNOWN)];
      expect(unknown.status, unknown.text).to.equal(404);
      expect(answer.status, `${path}: ${answer.text}`).to.equal(404);
      documented.check(answer, 'POST', `/unmatched-money/{id}/${path}`);
      const { request_id: _a, ...said } = answer.body;
      const { request_id: _b, ...unknownSaid } = unknown.body;
      expect(said, path).to.deep.equal(unknownSaid);
    }
    expect(await row(t, 'unmatched_money', { id: theirs })).to.include({ resolution: 'open' });
    expect((await getOrder(t, order)).status).to.equal('pending');
  });

  it("a credential scoped to 1004 resolves 1004's money, and attaches it to 1004's orders alone", async () => {
    const resolved = await t.call('POST', `/unmatched-money/${kept['904000003']}/resolve`, {
      token: token['outlet-finance'],
      body: { note: 'a test payment at the outlet' },
    });
    expect(resolved.status, resolved.text).to.equal(200);
    expect(resolved.body.data.unmatched_money).to.include({ resolution: 'resolved', merchant_id: OUTLET });

    // 1001's order is, to it, an order that does not exist: the 422 of an unknown order id.
    const theirOrder = await newOrder(FIRST);
    const refused = await t.call('POST', `/unmatched-money/${kept['904000002']}/attach`, {
      token: token['outlet-finance'],
      body: { order_id: theirOrder },
    });
    const unknown = await t.call('POST', `/unmatched-money/${kept['904000002']}/attach`, {
      token: token['outlet-finance'],
      body: { order_id: 'ord_nobody0000000000000000' },
    });
    expect(refused.status, refused.text).to.equal(422);
    expect(refused.body.errors).to.deep.equal(unknown.body.errors);
    expect(await row(t, 'unmatched_money', { id: kept['904000002']! })).to.include({ resolution: 'open' });

    const own = await newOrder(OUTLET);
    const attached = await t.call('POST', `/unmatched-money/${kept['904000002']}/attach`, {
      token: token['outlet-finance'],
      body: { order_id: own },
    });
    expect(attached.status, attached.text).to.equal(200);
    documented.check(attached, 'POST', '/unmatched-money/{id}/attach');
    expect(attached.body.data.unmatched_money).to.include({
      resolution: 'attached',
      order_id: own,
      merchant_id: OUTLET,
    });
    expect(attached.body.data.order.merchant_id).to.equal(OUTLET);
  });

  it("money is attached to an order of its own merchant only: 1004's money to 1001's order is a 422 naming why", async () => {
    const order = await newOrder(FIRST);
    const refused = await t.call('POST', `/unmatched-money/${kept['904000001']}/attach`, {
      ops: true,
      body: { order_id: order },
    });
    expect(refused.status, refused.text).to.equal(422);
    documented.check(refused, 'POST', '/unmatched-money/{id}/attach');
    expect(refused.body.errors.order_id[0]).to.equal(
      "is an order of merchant 1001; this money is merchant 1004's (its event came to that merchant's endpoint), and stays with it",
    );
    expect(await row(t, 'unmatched_money', { id: kept['904000001']! })).to.include({
      resolution: 'open',
      order_id: null,
    });
    const untouched = await getOrder(t, order);
    expect(untouched.status).to.equal('pending');
    expect(untouched.payment).to.equal(null);
    // The money that names no merchant is the first's: it goes to 1001's order.
    const attached = await t.call('POST', `/unmatched-money/${kept['901000009']}/attach`, {
      ops: true,
      body: { order_id: order },
    });
    expect(attached.status, attached.text).to.equal(200);
    expect(attached.body.data.unmatched_money).to.include({ merchant_id: FIRST, order_id: order });
  });

  it('/metrics: the money with no order still open, by merchant and currency', async () => {
    const metrics = await t.call('GET', '/metrics', { ops: true });
    expect(metrics.status).to.equal(200);
    // 1004: 904000001 open (904000002 attached, 904000003 resolved); 1001: 901000001 and 901000002
    // (901000009 attached).
    expect(metrics.text).to.match(/^kit_unmatched_money_open\{merchant="1004",currency="EUR"\} 1$/m);
    expect(metrics.text).to.match(/^kit_unmatched_money_open\{merchant="1001",currency="EUR"\} 2$/m);
    expect(metrics.text).to.not.match(/^kit_unmatched_money_open\{currency=/m);
    expect(metrics.text).to.match(/^kit_unmatched_money_total\{merchant="1004",currency="GBP"\} 1$/m);
    expect(metrics.text).to.match(/^kit_unmatched_money_total\{merchant="1001",currency="EUR"\} 2$/m);
  });
});
