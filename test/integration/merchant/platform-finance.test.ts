import { expect } from 'chai';
import { parse as parseCsv } from 'csv-parse/sync';
import { AUDIT_COLUMNS } from '../../../src/merchant/reports/audit.js';
import { REPORT_COLUMNS } from '../../../src/merchant/reports/reconciliation.js';
import { rows } from '../../support/db.js';
import { stateOf } from '../../support/events.js';
import { card } from '../../support/gateway.js';
import { getOrder, pressButton, startTestKit, type TestKit } from '../../support/kit.js';
import { LINKED, OUTLET_KEY, PLATFORM_ENV, platformSeed } from '../../support/platform.js';

/**
 * Finance and operations per merchant (issue 45, platform mode): a kit with a partner key acting for
 * merchants 1001 (whose own key it holds: cards) and 1004 (redirect payments only). The report's rows
 * name the merchant and its totals per merchant and currency equal the sandbox's own records; the
 * report, the review queue and the audit export filter by merchant; the metrics carry the merchant;
 * every order event's body names it. All through HTTP.
 */
const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

// biome-ignore lint/suspicious/noExplicitAny: report and audit rows as the JSON answers have them
type Row = any;

describe('merchant: finance and operations per merchant (platform mode)', function () {
  this.timeout(90_000);
  let t: TestKit;
  let range: string;
  /** Each order the tests made: its merchant, currency and what became of it. */
  const made: { id: string; merchant: number; currency: string; paid: boolean }[] = [];
  const of = (merchant: number) => made.filter((o) => o.merchant === merchant).map((o) => o.id);

  const newOrder = async (merchant: number, amount: string, currency: string) => {
    const created = await t.call('POST', '/orders', { body: { amount, currency, merchant_id: merchant } });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.data.order.merchant_id).to.equal(merchant);
    const id = created.body.data.order.id as string;
    made.push({ id, merchant, currency, paid: false });
    return id;
  };
  /** Paid on the sandbox's hosted checkout (paysafecard: both merchants offer it). */
  const paidByRedirect = async (merchant: number, amount: string, currency: string) => {
    const id = await newOrder(merchant, amount, currency);
    const pay = await t.call('POST', `/orders/${id}/pay/redirect`, {
      body: { payment_method: 'psc', customer: { country_code: 'DE' } },
    });
    expect(pay.status, pay.text).to.equal(200);
    await pressButton(pay.body.data.next_action.url, 'pay');
    made.at(-1)!.paid = true;
    return id;
  };
  const paidByCard = async (merchant: number, amount: string) => {
    const id = await newOrder(merchant, amount, 'EUR');
    const pay = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'sale' } });
    expect(pay.status, pay.text).to.equal(200);
    made.at(-1)!.paid = true;
    return id;
  };
  const report = async (query = '') => {
    const answer = await t.call('GET', `/reports/reconciliation?${range}${query}`, { ops: true });
    expect(answer.status, answer.text).to.equal(200);
    return answer.body.data;
  };

  before(async () => {
    t = await startTestKit({ seed: platformSeed, env: { ...PLATFORM_ENV } });
    const today = Math.floor(t.clock.now() / DAY) * DAY;
    range = `from=${dayOf(today)}&to=${dayOf(today + DAY)}`;
    await paidByCard(1001, '10.00');
    await paidByRedirect(1001, '7.50', 'GBP');
    await paidByRedirect(1004, '30.00', 'EUR');
    await paidByRedirect(1004, '12.00', 'GBP');
    await paidByRedirect(1004, '4.00', 'EUR');
    await newOrder(1004, '5.00', 'USD');
    await newOrder(1001, '3.00', 'EUR');
    // A refund of 1001's card sale (its own key): money back, and a line in the audit about its order.
    const refund = await t.call('POST', `/orders/${made[0]!.id}/refund`, {
      ops: true,
      body: { amount: '2.00', reason: 'customer asked' },
      headers: { 'idempotency-key': `refund-${made[0]!.id}` },
    });
    expect(refund.status, refund.text).to.equal(200);
    // Whatever the webhooks have not told yet, the gateway is asked (each order through its merchant).
    await report('&refresh=true');
  });
  after(async () => {
    await t?.close();
  });

  it('each row names its merchant; totals per merchant and currency equal the sandbox’s records', async () => {
    const data = await report();
    expect(data.merchant_id).to.equal(null);
    expect(data.rows).to.have.length(made.length);
    for (const o of made) {
      const row = data.rows.find((r: Row) => r.order_id === o.id);
      expect(row, o.id).to.include({ merchant_id: o.merchant, currency: o.currency });
      expect(row.classification, `${o.id}: ${row.reason}`).to.equal('matched');
      expect(row.status).to.equal(
        o.paid ? (o.id === made[0]!.id ? 'partially_refunded' : 'paid') : 'pending',
      );
    }
    // The gateway's own records: every sale of the platform's merchants, by merchant and currency.
    const truth = new Map<string, { captured: number; refunded: number }>();
    for (const txn of stateOf(t).transactions.values()) {
      if (txn.type !== 'sale' || !(LINKED as readonly number[]).includes(txn.merchantId)) continue;
      const key = `${txn.merchantId} ${txn.currency}`;
      const sums = truth.get(key) ?? { captured: 0, refunded: 0 };
      sums.captured += txn.capturedAmount;
      sums.refunded += txn.refundedAmount;
      truth.set(key, sums);
    }
    const kit = new Map<string, { captured: number; refunded: number }>(
      data.totals_by_merchant
        .filter((m: Row) => m.captured > 0 || m.refunded > 0)
        .map((m: Row) => [`${m.merchant_id} ${m.currency}`, { captured: m.captured, refunded: m.refunded }]),
    );
    expect(Object.fromEntries(kit)).to.deep.equal(Object.fromEntries(truth));
    expect(Object.fromEntries(truth)).to.deep.equal({
      '1001 EUR': { captured: 1000, refunded: 200 },
      '1001 GBP': { captured: 750, refunded: 0 },
      '1004 EUR': { captured: 3400, refunded: 0 },
      '1004 GBP': { captured: 1200, refunded: 0 },
    });
    // By merchant, then currency; each line's orders and net; the per-currency totals are their sums.
    expect(
      data.totals_by_merchant.map((m: Row) => [m.merchant_id, m.currency, m.orders, m.net_formatted]),
    ).to.deep.equal([
      [1001, 'EUR', 2, '8.00'],
      [1001, 'GBP', 1, '7.50'],
      [1004, 'EUR', 2, '34.00'],
      [1004, 'GBP', 1, '12.00'],
      [1004, 'USD', 1, '0.00'],
    ]);
    for (const total of data.totals) {
      const lines = data.totals_by_merchant.filter((m: Row) => m.currency === total.currency);
      for (const field of ['orders', 'captured', 'refunded', 'disputed', 'net', 'in_flight', 'mismatched'])
        expect(
          lines.reduce((n: number, m: Row) => n + m[field], 0),
          `${total.currency} ${field}`,
        ).to.equal(total[field]);
    }
  });

  it('merchant_id: that merchant’s rows and totals only (its money with no order: none here); a bad id is 422', async () => {
    for (const merchant of LINKED) {
      const data = await report(`&merchant_id=${merchant}`);
      expect(data.merchant_id).to.equal(merchant);
      expect(data.rows.map((r: Row) => r.order_id).sort()).to.deep.equal(of(merchant).sort());
      expect(data.totals_by_merchant.every((m: Row) => m.merchant_id === merchant)).to.equal(true);
      expect(data.totals.map((m: Row) => m.currency)).to.deep.equal(
        data.totals_by_merchant.map((m: Row) => m.currency),
      );
      // Every payment here has its order: no money with no order, of either merchant
      // (platform-unmatched.test.ts has a merchant's).
      expect(data.unmatched_money).to.deep.equal({ rows: [], totals: [], totals_by_merchant: [] });
    }
    // A merchant the kit does not act for (1002): none of its orders here, an empty report.
    expect((await report('&merchant_id=1002')).rows).to.deep.equal([]);
    for (const bad of ['abc', '0', '-4', '1.5', '99999999999']) {
      const answer = await t.call('GET', `/reports/reconciliation?${range}&merchant_id=${bad}`, {
        ops: true,
      });
      expect(answer.status, bad).to.equal(422);
      expect(Object.keys(answer.body.errors), bad).to.deep.equal(['merchant_id']);
    }
  });

  it('CSV: the merchant column, last; filtered, a file of that merchant’s orders named so', async () => {
    const csv = await t.call('GET', `/reports/reconciliation?${range}&format=csv&merchant_id=1004`, {
      ops: true,
    });
    expect(csv.status).to.equal(200);
    expect(csv.headers.get('content-disposition')).to.match(
      /attachment; filename="reconciliation-merchant-1004-\d{4}-\d\d-\d\d-\d{4}-\d\d-\d\d\.csv"/,
    );
    expect(csv.text.split('\n')[0]).to.equal(REPORT_COLUMNS.join(','));
    expect(REPORT_COLUMNS.at(-1)).to.equal('merchant_id');
    const parsed = parseCsv(csv.text, { columns: true }) as Record<string, string>[];
    expect(parsed.map((p) => p.order_id).sort()).to.deep.equal(of(1004).sort());
    expect(new Set(parsed.map((p) => p.merchant_id))).to.deep.equal(new Set(['1004']));
  });

  it('every order event’s body names the order’s merchant', async () => {
    const events = await rows(t, 'order_events');
    expect(events.length).to.be.greaterThan(0);
    for (const e of events) {
      const body = JSON.parse(e.payload as string);
      const merchant = made.find((o) => o.id === e.order_id)!.merchant;
      expect(body.data.order.merchant_id, `${e.type} of ${e.order_id}`).to.equal(merchant);
    }
    // Of both merchants: 1004's payments told the shop as 1001's were.
    expect(new Set(events.map((e) => made.find((o) => o.id === e.order_id)!.merchant))).to.deep.equal(
      new Set(LINKED),
    );
  });

  it('the review queue: merchant_id keeps that merchant’s flagged orders, each naming its merchant', async () => {
    const unpaid = made.filter((o) => !o.paid);
    for (const o of unpaid) {
      const flagged = await t.kit.store.orders.flagWithoutAttempt(o.id, {
        reason: 'a test finding',
        source: 'api',
        sourceId: `test:${o.id}`,
      });
      expect(flagged?.outcome).to.equal('flagged');
    }
    const queue = async (query: string) => {
      const answer = await t.call('GET', `/orders?needs_review=true${query}`, { ops: true });
      expect(answer.status, answer.text).to.equal(200);
      return answer.body.data.orders as Row[];
    };
    expect((await queue('')).map((o) => o.merchant_id).sort()).to.deep.equal([1001, 1004]);
    for (const merchant of LINKED) {
      const listed = await queue(`&merchant_id=${merchant}`);
      expect(listed.map((o) => [o.id, o.merchant_id])).to.deep.equal(
        unpaid.filter((o) => o.merchant === merchant).map((o) => [o.id, merchant]),
      );
    }
    // The whole list filters the same way, flagged or not.
    const all1004 = await t.call('GET', '/orders?merchant_id=1004&limit=100', { ops: true });
    expect(all1004.body.data.orders.map((o: Row) => o.id).sort()).to.deep.equal(of(1004).sort());
    const bad = await t.call('GET', '/orders?merchant_id=x', { ops: true });
    expect(bad.status).to.equal(422);
    expect(Object.keys(bad.body.errors)).to.deep.equal(['merchant_id']);
    // Resolved, each writes an audit line about its order: the next test reads them.
    for (const o of unpaid) {
      const resolved = await t.call('POST', `/orders/${o.id}/review`, {
        ops: true,
        body: { resolution: 'false_alarm', note: 'a test finding, nothing wrong' },
      });
      expect(resolved.status, resolved.text).to.equal(200);
    }
  });

  it('the audit export: each line about an order names its merchant; merchant_id keeps those lines only', async () => {
    // An act about no order: an operator added (as the CLI adds one), of no merchant.
    await t.kit.store.operators.add({
      name: 'fran',
      role: 'finance',
      by: { name: 'olga', role: 'admin', credential: 'cli' },
    });
    const today = Math.floor(t.clock.now() / DAY) * DAY;
    const audit = async (query: string) => {
      const answer = await t.call(
        'GET',
        `/audit?from=${dayOf(today)}&to=${dayOf(today + DAY)}&format=json${query}`,
        { ops: true },
      );
      expect(answer.status, answer.text).to.equal(200);
      return answer.body.data.entries as Row[];
    };
    const every = await audit('');
    const merchantOf = (orderId: string | null) =>
      orderId === null ? null : made.find((o) => o.id === orderId)!.merchant;
    for (const line of every) expect(line.merchant_id, line.action).to.equal(merchantOf(line.order_id));
    expect(every.map((l) => [l.action, l.merchant_id])).to.deep.include.members([
      ['refund', 1001],
      ['review.resolve', 1001],
      ['review.resolve', 1004],
      ['operator.add', null],
    ]);
    for (const merchant of LINKED) {
      const lines = await audit(`&merchant_id=${merchant}`);
      expect(lines.map((l) => l.id)).to.deep.equal(
        every.filter((l) => l.merchant_id === merchant).map((l) => l.id),
      );
    }
    const csv = await t.call('GET', `/audit?from=${dayOf(today)}&to=${dayOf(today + DAY)}&merchant_id=1004`, {
      ops: true,
    });
    expect(csv.headers.get('content-disposition')).to.match(/filename="audit-merchant-1004-/);
    expect(csv.text.split('\n')[0]).to.equal(AUDIT_COLUMNS.join(','));
    const parsed = parseCsv(csv.text, { columns: true }) as Record<string, string>[];
    expect(parsed.map((p) => [p.action, p.merchant_id])).to.deep.equal([['review.resolve', '1004']]);
  });

  it('/metrics: the daily report’s orders by merchant, currency and classification', async () => {
    t.sandboxClock.advance(DAY); // tomorrow: today's orders are yesterday's
    const daily = await t.kit.jobs.dailyReport();
    expect(daily.totalsByMerchant.map((m) => m.merchant_id)).to.include.members([...LINKED]);
    const text = (await t.call('GET', '/metrics')).text;
    for (const line of [
      'kit_report_orders{merchant="1001",currency="EUR",classification="matched"} 2',
      'kit_report_orders{merchant="1001",currency="GBP",classification="matched"} 1',
      'kit_report_orders{merchant="1004",currency="EUR",classification="matched"} 2',
      'kit_report_orders{merchant="1004",currency="USD",classification="matched"} 1',
      'kit_report_orders{merchant="1004",currency="GBP",classification="mismatched"} 0',
    ])
      expect(text).to.contain(line);
    // No series without the merchant: a platform's dashboards sum over it.
    expect(text).to.not.match(/^kit_report_orders\{currency=/m);
    // The authorisations gauge: every merchant served, from 0.
    await t.kit.jobs.watchAuthorizations();
    const again = (await t.call('GET', '/metrics')).text;
    for (const merchant of LINKED)
      expect(again).to.contain(`kit_authorizations_expiring{merchant="${merchant}"} 0`);
  });

  it('GET /payment-methods?merchant_id: that merchant’s methods; one the kit does not act for is 422', async () => {
    const methods = async (query: string) => {
      const answer = await t.call('GET', `/payment-methods${query}`);
      return {
        status: answer.status,
        names: (answer.body.data?.payment_methods ?? []).map((m: Row) => m.payment_method),
      };
    };
    expect(await methods('?merchant_id=1004')).to.deep.equal({ status: 200, names: ['psc'] });
    expect((await methods('?merchant_id=1001')).names).to.include('ideal');
    expect((await methods('')).status, 'left out, with two merchants: required').to.equal(422);
    expect((await methods('?merchant_id=1002')).status).to.equal(422);
    // The outlet's own key sees the same list: the kit asked for 1004's.
    const own = await fetch(`${t.kit.gatewayUrl}/api/v1/payment-methods`, {
      headers: { authorization: `Bearer ${OUTLET_KEY}` },
    });
    const listed = ((await own.json()) as Row).data.payment_methods.map((m: Row) => m.payment_method);
    expect(listed).to.deep.equal(['psc']);
  });

  it('an order of each merchant reads back with its own merchant', async () => {
    for (const o of made) expect((await getOrder(t, o.id)).merchant_id).to.equal(o.merchant);
  });
});
