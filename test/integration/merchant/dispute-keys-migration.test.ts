import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Pool } from 'mysql2/promise';
import type { Sequelize } from 'sequelize';
import { createSequelize, ensureDatabase } from '../../../src/infra/database.js';
import { migrator } from '../../../src/infra/migrator.js';
import type { Observation } from '../../../src/merchant/orders/observation.js';
import { applyObservation } from '../../../src/merchant/reconciler/apply.js';
import type { Store } from '../../../src/merchant/store/index.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { ADMIN_URL, dropDatabases } from '../../support/process.js';
import { storeOn } from '../../support/store.js';

/**
 * Migration 26 (issue 44, part 3) on a database whose disputes were recorded before it: each record
 * is keyed by its chargeback's gateway time (`opened_at`, which the apply path took from the
 * record's `updated_at`), a second record of one attempt at the same time is left without a key, and
 * every reversal the gateway gave becomes a reversal heard of. Then the kit, on that database: the
 * events of chargebacks it recorded already make no second record, and those it had merged make
 * theirs.
 */
describe('merchant: migration 26 on a database that already has dispute records', () => {
  const database = `merchant_upgrade26_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = `${ADMIN_URL}/${database}`;
  const at = (day: number, hour = 12) => new Date(Date.UTC(2026, 10, day, hour));
  let sequelize: Sequelize;
  let store: Store;
  let pools: Pool[] = [];
  after(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await sequelize?.close();
    await dropDatabases([database]);
  });

  const insert = (table: string, row: Record<string, unknown>) =>
    sequelize.query(`INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (?)`, {
      replacements: [Object.values(row)],
    });
  /** A paid card sale of 20.00 charged back as `status` says, with its dispute rows as they were kept. */
  const payment = async (n: string, status: string, disputedMinor: number, moneyAt: Date) => {
    const times = { created_at: at(1), updated_at: at(1) };
    await insert('orders', {
      id: `ord_${n}`,
      reference: `ref-${n}`,
      amount_minor: 2000,
      currency: 'EUR',
      status,
      captured_minor: 2000,
      disputed_minor: disputedMinor,
      current_attempt_id: `att_${n}`,
      version: 3,
      ...times,
    });
    await insert('payment_attempts', {
      id: `att_${n}`,
      order_id: `ord_${n}`,
      kind: 'card',
      mode: 'sale',
      gateway_transaction_id: `50${n.charCodeAt(0)}`,
      status,
      captured_minor: 2000,
      disputed_minor: disputedMinor,
      money_at: moneyAt,
      ...times,
    });
  };
  const dispute = (
    id: string,
    n: string,
    amount: number,
    opened: Date,
    end: Partial<Record<string, unknown>> = {},
  ) =>
    insert('disputes', {
      id,
      order_id: `ord_${n}`,
      attempt_id: `att_${n}`,
      transaction_id: `50${n.charCodeAt(0)}`,
      amount_minor: amount,
      currency: 'EUR',
      outcome: 'open',
      opened_at: opened,
      ...end,
    });
  const won = (closed: Date) => ({ outcome: 'won', closed_at: closed, closed_by: 'gateway' });

  it('keys the records, keeps the reversals, and the kit goes on from them', async () => {
    sequelize = createSequelize(url);
    await ensureDatabase(url);
    await migrator(sequelize).up({ to: '2026-12-01-25-payment-links' });
    // a: charged back, reversed, charged back again, each applied in turn: two records.
    await payment('a', 'disputed', 750, at(3));
    await dispute('dsp_a1', 'a', 1000, at(2), won(at(2, 18)));
    await dispute('dsp_a2', 'a', 750, at(3));
    // b: the same, the second chargeback first: one record (the first and its reversal read as old news).
    await payment('b', 'disputed', 750, at(3));
    await dispute('dsp_b1', 'b', 750, at(3));
    // c: two records of one time (no gateway makes them; a migration must not fail on them).
    await payment('c', 'paid', 0, at(6));
    await dispute('dsp_c1', 'c', 2000, at(5), won(at(6)));
    await dispute('dsp_c2', 'c', 2000, at(5));
    // d: lost, by an operator's word: no reversal.
    await payment('d', 'disputed', 2000, at(7));
    await dispute('dsp_d1', 'd', 2000, at(7), { outcome: 'lost', closed_at: at(8), closed_by: 'fran' });

    await migrator(sequelize).up();
    const [keys] = await sequelize.query('SELECT id, charged_back_at FROM disputes ORDER BY id');
    expect(keys).to.deep.equal([
      { id: 'dsp_a1', charged_back_at: at(2) },
      { id: 'dsp_a2', charged_back_at: at(3) },
      { id: 'dsp_b1', charged_back_at: at(3) },
      { id: 'dsp_c1', charged_back_at: at(5) },
      { id: 'dsp_c2', charged_back_at: null },
      { id: 'dsp_d1', charged_back_at: at(7) },
    ]);
    const [reversals] = await sequelize.query(
      'SELECT attempt_id, reversed_at, order_id FROM dispute_reversals ORDER BY attempt_id',
    );
    expect(reversals).to.deep.equal([
      { attempt_id: 'att_a', reversed_at: at(2, 18), order_id: 'ord_a' },
      { attempt_id: 'att_c', reversed_at: at(6), order_id: 'ord_c' },
    ]);

    const opened = storeOn(url, sequelize, new ManualClock(at(20).getTime()), 26);
    store = opened.store;
    pools = [opened.pool, opened.transitionPool];
    let n = 0;
    /** The sale of `who` as an event tells it at `day`: charged back (`taken`) or captured again. */
    const event = (who: string, when: Date, taken: number): Observation => ({
      source: 'webhook',
      sourceId: `evt_${who}_${++n}`,
      observedAt: at(20).getTime(),
      eventType: taken > 0 ? 'transaction.chargeback' : 'transaction.chargeback_reversed',
      transaction: {
        id: `50${who.charCodeAt(0)}`,
        relatedId: null,
        type: 'sale',
        status: taken > 0 ? 'chargeback' : 'captured',
        amountMinor: 2000,
        currency: 'EUR',
        refundedMinor: 0,
        reference: `ref-${who}`,
        chargebackMinor: taken,
        updatedAt: when.getTime(),
      },
    });
    const recordsOf = async (who: string) =>
      (await store.disputes.ofOrder(`ord_${who}`)).map((d) => [d.amount_minor, d.outcome]);

    // a: its events again (a replay, recovery): the records it has.
    for (const e of [event('a', at(2), 1000), event('a', at(3), 750)]) await applyObservation(store, e);
    expect(await recordsOf('a')).to.deep.equal([
      [750, 'open'],
      [1000, 'won'],
    ]);
    // b: the chargeback it had merged, and its reversal: its own record now.
    for (const e of [event('b', at(3), 750), event('b', at(2), 1000), event('b', at(2, 18), 0)])
      await applyObservation(store, e);
    expect(await recordsOf('b')).to.deep.equal([
      [750, 'open'],
      [1000, 'won'],
    ]);
    const [b] = await store.disputes.ofOrder('ord_b');
    expect(b!.id).to.equal('dsp_b1');
    // d: the reversal, after the operator's loss: won.
    await applyObservation(store, event('d', at(9), 0));
    expect(await recordsOf('d')).to.deep.equal([[2000, 'won']]);
    expect((await store.orders.find('ord_d'))!.status).to.equal('paid');
  });
});
