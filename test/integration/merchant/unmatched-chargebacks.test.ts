import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Sequelize } from 'sequelize';
import { createSequelize, ensureDatabase } from '../../../src/infra/database.js';
import { migrator } from '../../../src/infra/migrator.js';
import type { CurrencyCode } from '../../../src/shared/money.js';
import { row } from '../../support/db.js';
import {
  alnum,
  deliveriesOff,
  event,
  post,
  processed,
  referenceSettled,
  refundAtGateway,
  sandboxCall,
  stateOf,
  storedSecret,
  wire,
} from '../../support/events.js';
import { card } from '../../support/gateway.js';
import { cliEnv, startTestKit, type TestKit } from '../../support/kit.js';
import { ADMIN_URL, dropDatabases, exitWithin, freePort, start } from '../../support/process.js';
import { type MoneySums, unmatchedTruth } from '../../support/unmatched.js';

/**
 * issue 44, part 2: gateway money with no order that is charged back. Its rows carry what was
 * captured, refunded and charged back, read by an order's rules; a reversal is news; the report's
 * unmatched totals are net after chargebacks, per currency, equal to the gateway's own records.
 */

const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('merchant: gateway money with no order, charged back (issue 44)', function () {
  this.timeout(120_000);
  let t: TestKit;
  let range: string;
  const references = new Set<string>();
  before(async () => {
    t = await startTestKit();
    const today = Math.floor(t.clock.now() / DAY) * DAY;
    range = `from=${dayOf(today)}&to=${dayOf(today + DAY)}`;
  });
  after(async () => {
    await t?.close();
  });

  /** Each step later by the gateway's clock, as in life. */
  const later = () => t.sandboxClock.advance(1000);
  /** A payment made at the gateway directly, with a reference no order has: money with no order. */
  const stray = async (type: 'sale' | 'auth', amountMinor: number, currency: CurrencyCode) => {
    later();
    const reference = `stray-${alnum(12)}`;
    references.add(reference);
    const made = await t.kit.client.createTransaction({
      type,
      amountMinor,
      currency,
      reference,
      card: card(),
    });
    return { id: Number(made.data.id), reference };
  };
  const control = async (path: string, body: unknown = {}) => {
    later();
    const answer = await sandboxCall(t, 'POST', path, body);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
  };
  const chargeBack = (id: number, amount?: number) =>
    control(`/sandbox/transactions/${id}/chargeback`, amount === undefined ? {} : { amount });
  const reverse = (id: number) => control(`/sandbox/transactions/${id}/chargeback/reverse`);
  // biome-ignore lint/suspicious/noExplicitAny: answers of every shape
  const section = async (): Promise<any> => {
    const report = await t.call('GET', `/reports/reconciliation?${range}`, { ops: true });
    expect(report.status, report.text).to.equal(200);
    return report.body.data.unmatched_money;
  };

  it('captured, charged back in part, reversed, charged back again: the rows carry the amounts, and the totals equal the gateway’s records in every currency', async () => {
    // EUR: 30.00, 5.00 refunded, 10.00 charged back, the dispute won.
    const won = await stray('sale', 3000, 'EUR');
    later();
    await refundAtGateway(t, won.id, 5);
    await chargeBack(won.id, 10);
    await reverse(won.id);
    // EUR: 20.00, 7.50 of it charged back.
    const lost = await stray('sale', 2000, 'EUR');
    await chargeBack(lost.id, 7.5);
    // USD: an auth of 9.00 captured for 7.00, charged back in full on the capture's id, reversed on the auth's.
    const auth = await stray('auth', 900, 'USD');
    later();
    const captured = await sandboxCall(
      t,
      'POST',
      `/api/v1/transactions/${auth.id}/capture`,
      { amount: 7 },
      { 'Idempotency-Key': `idem-${alnum(16)}` },
    );
    expect(captured.status, JSON.stringify(captured.body)).to.equal(200);
    await chargeBack(Number(captured.body.data.transaction.id));
    await reverse(auth.id);
    // USD: 12.00 charged back in full, the sandbox's default.
    const full = await stray('sale', 1200, 'USD');
    await chargeBack(full.id);
    // JPY: 1000 charged back by 400, reversed, then charged back again by 250.
    const again = await stray('sale', 1000, 'JPY');
    await chargeBack(again.id, 400);
    await reverse(again.id);
    await chargeBack(again.id, 250);
    // A dozen events, each retried before it is kept as money with no order: more than the default
    // 10 s on a loaded machine (seen once in CI).
    for (const reference of references) await referenceSettled(t, reference, 30_000);

    const data = await section();
    const rowOf = (id: number) =>
      data.rows.find((r: { transaction_id: string }) => r.transaction_id === String(id));
    expect(rowOf(won.id)).to.include({
      status: 'captured',
      captured_amount: 3000,
      refunded_amount: 500,
      disputed_amount: 0,
    });
    expect(rowOf(lost.id)).to.include({
      status: 'chargeback',
      captured_amount: 2000,
      disputed_amount: 750,
      disputed_amount_formatted: '7.50',
    });
    expect(rowOf(full.id)).to.include({ status: 'chargeback', disputed_amount: 1200 });
    expect(rowOf(again.id)).to.include({
      status: 'chargeback',
      disputed_amount: 250,
      disputed_amount_formatted: '250',
    });

    const truth = unmatchedTruth(t, references);
    expect([...truth.keys()].sort()).to.deep.equal(['EUR', 'JPY', 'USD']);
    for (const [currency, want] of truth) {
      const got = data.totals.find((x: { currency: string }) => x.currency === currency);
      const { captured: c, refunded, disputed, net } = got as MoneySums;
      expect({ captured: c, refunded, disputed, net }, currency).to.deep.equal(want);
    }
    const eur = data.totals.find((x: { currency: string }) => x.currency === 'EUR');
    // 30.00 - 5.00 refunded (the dispute won) + 20.00 - 7.50 charged back.
    expect(eur).to.include({
      captured: 5000,
      refunded: 500,
      disputed: 750,
      net: 3750,
      net_formatted: '37.50',
    });
    expect(data.totals.find((x: { currency: string }) => x.currency === 'USD')).to.include({
      captured: 1900,
      disputed: 1200,
      net: 700,
    });

    // The list shows the same amounts.
    const list = await t.call('GET', '/unmatched-money', { ops: true });
    expect(list.status, list.text).to.equal(200);
    const listed = list.body.data.unmatched_money.find(
      (m: { transaction_id: string }) => m.transaction_id === String(lost.id),
    );
    expect(listed).to.include({ captured_amount: 2000, refunded_amount: 0, disputed_amount: 750 });
  });

  it('the CLI’s list shows the same amounts', async () => {
    const env = { ...cliEnv(t), GATEWAY_PORT: String(await freePort()) };
    const p = start('src/cli.ts', ['unmatched', 'list', '--resolution', 'open'], env);
    const { code } = await exitWithin(p, 60_000);
    expect(code, p.stderr()).to.equal(0);
    const listed = JSON.parse(p.stdout()) as Record<string, unknown>[];
    const api = (await t.call('GET', '/unmatched-money?resolution=open', { ops: true })).body.data
      .unmatched_money as Record<string, unknown>[];
    const amounts = (rows: Record<string, unknown>[]) =>
      rows
        .map((r) => [
          r.id,
          r.captured_amount,
          r.refunded_amount,
          r.disputed_amount,
          r.disputed_amount_formatted,
        ])
        .sort();
    expect(amounts(listed)).to.deep.equal(amounts(api));
    expect(listed.some((r) => (r.disputed_amount as number) > 0)).to.equal(true);
  });
});

describe('merchant: gateway money with no order, its chargeback and reversal arriving out of order (issue 44)', function () {
  this.timeout(60_000);
  let t: TestKit;
  let secret: string;
  before(async () => {
    t = await startTestKit();
    await deliveriesOff(t); // the test delivers the gateway's events itself, in the order it chooses
    secret = await storedSecret(t);
  });
  after(async () => {
    await t?.close();
  });

  /** The payment's record as the gateway's event carries it now, chargeback_amount included. */
  const payload = (id: number) => {
    const tx = stateOf(t).transactions.get(id)!;
    return { ...wire(tx), chargeback_amount: tx.chargebackAmount };
  };
  const deliver = async (type: string, transaction: Record<string, unknown>) => {
    const e = event(type, transaction);
    expect((await post(t, e.body, secret)).status).to.equal(200);
    expect((await processed(t, e.id)).outcome).to.equal('unmatched');
  };

  it('the reversal first, then the chargeback, then the capture: the row ends captured with nothing taken back, as the gateway has it', async () => {
    const reference = `stray-${alnum(12)}`;
    const made = await t.kit.client.createTransaction({
      type: 'sale',
      amountMinor: 4000,
      currency: 'EUR',
      reference,
      card: card(),
    });
    const id = Number(made.data.id);
    const captured = payload(id);
    t.sandboxClock.advance(1000);
    const charged = await sandboxCall(t, 'POST', `/sandbox/transactions/${id}/chargeback`, { amount: 15 });
    expect(charged.status).to.equal(200);
    const chargeback = payload(id);
    t.sandboxClock.advance(1000);
    expect((await sandboxCall(t, 'POST', `/sandbox/transactions/${id}/chargeback/reverse`)).status).to.equal(
      200,
    );
    const reversal = payload(id);

    await deliver('transaction.chargeback_reversed', reversal);
    await deliver('transaction.chargeback', chargeback);
    await deliver('transaction.captured', captured);
    const kept = (await row(t, 'unmatched_money', { transaction_id: String(id) }))!;
    expect(kept).to.include({ status: 'captured', payment_status: 'paid', seen_count: 3 });
    expect(Number(kept.disputed_minor)).to.equal(0);
    expect(Number(kept.captured_minor)).to.equal(4000);

    const today = Math.floor(t.clock.now() / DAY) * DAY;
    const report = await t.call(
      'GET',
      `/reports/reconciliation?from=${dayOf(today)}&to=${dayOf(today + DAY)}`,
      {
        ops: true,
      },
    );
    const eur = report.body.data.unmatched_money.totals.find(
      (x: { currency: string }) => x.currency === 'EUR',
    );
    const want = unmatchedTruth(t, new Set([reference])).get('EUR')!;
    expect(want).to.deep.equal({ captured: 4000, refunded: 0, disputed: 0, net: 4000 });
    expect(eur).to.include(want);
  });
});

describe('merchant: migration 26 on a database that already has gateway money with no order', () => {
  const database = `merchant_upgrade26_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = `${ADMIN_URL}/${database}`;
  let sequelize: Sequelize;
  after(async () => {
    await sequelize?.close();
    await dropDatabases([database]);
  });

  it('each row kept before gets its payment read from what it keeps: a charged-back sale counts as taken back', async () => {
    sequelize = createSequelize(url);
    await ensureDatabase(url);
    await migrator(sequelize).up({ to: '2026-12-01-25-payment-links' });
    const keep = (id: string, type: string, status: string, amount: number, refunded = 0, related?: string) =>
      sequelize.query(
        `INSERT INTO unmatched_money (id, transaction_id, reference, related_transaction_id, transaction_type, status,
           amount_minor, refunded_minor, currency, source, source_id, first_seen_at, last_seen_at)
         VALUES (?, ?, '', ?, ?, ?, ?, ?, 'EUR', 'webhook', ?, NOW(3), NOW(3))`,
        { replacements: [`umn_${id}`, id, related ?? null, type, status, amount, refunded, `evt_${id}`] },
      );
    await keep('1', 'sale', 'chargeback', 1000, 300);
    await keep('2', 'sale', 'captured', 500, 100);
    await keep('3', 'auth', 'auth', 700);
    await keep('4', 'refund', 'refunded', 100, 100, '2');
    await keep('5', 'sale', 'failed', 900);
    await migrator(sequelize).up();
    const [rows] = (await sequelize.query(
      'SELECT id, payment_status, captured_minor, disputed_minor, money_at FROM unmatched_money ORDER BY id',
    )) as [Record<string, unknown>[], unknown];
    const read = rows.map((r) => [
      r.id,
      r.payment_status,
      r.captured_minor === null ? null : Number(r.captured_minor),
      Number(r.disputed_minor),
      r.money_at,
    ]);
    expect(read).to.deep.equal([
      // Charged back before the kit kept its amount: all that was captured and not refunded.
      ['umn_1', 'disputed', 1000, 700, null],
      ['umn_2', 'partially_refunded', 500, 0, null],
      ['umn_3', 'authorized', null, 0, null],
      ['umn_4', 'partially_refunded', null, 0, null],
      ['umn_5', 'failed', null, 0, null],
    ]);
  });
});
