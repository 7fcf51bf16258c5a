import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Sequelize } from 'sequelize';
import { createSequelize, ensureDatabase } from '../../../src/infra/database.js';
import { migrator } from '../../../src/infra/migrator.js';
import { ADMIN_URL, dropDatabases } from '../../support/process.js';

/**
 * Migration 30 (issue 45): order events written before orders had a merchant get
 * `data.order.merchant_id` (null, as their orders have it), so that every body the outbox sends or
 * replays names it; a body that names it already is left as it is.
 */
describe('merchant: migration 30 on an outbox with events from before platform mode', () => {
  const database = `merchant_upgrade30_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = `${ADMIN_URL}/${database}`;
  let sequelize: Sequelize;
  after(async () => {
    await sequelize?.close();
    await dropDatabases([database]);
  });

  it('the field added where it is missing, null; kept where it is there', async () => {
    sequelize = createSequelize(url);
    await ensureDatabase(url);
    await migrator(sequelize).up({ to: '2026-12-03-29-order-merchant' });
    const body = (order: Record<string, unknown>) =>
      JSON.stringify({ type: 'order.paid', timestamp: '2026-12-01T10:00:00.000Z', data: { order } });
    const events = [
      ['oev_old', 'ord_old', body({ id: 'ord_old', reference: 'r-1', status: 'paid' })],
      ['oev_new', 'ord_new', body({ id: 'ord_new', merchant_id: 1004, reference: 'r-2', status: 'paid' })],
    ];
    for (const [id, order, payload] of events)
      await sequelize.query(
        `INSERT INTO order_events (id, order_id, type, payload, created_at) VALUES (?, ?, 'order.paid', ?, NOW(3))`,
        { replacements: [id, order, payload] },
      );
    await migrator(sequelize).up();
    const [rows] = (await sequelize.query('SELECT id, payload FROM order_events ORDER BY id')) as [
      { id: string; payload: string }[],
      unknown,
    ];
    const orders = Object.fromEntries(rows.map((r) => [r.id, JSON.parse(r.payload).data.order]));
    expect(orders.oev_old).to.deep.equal({
      id: 'ord_old',
      reference: 'r-1',
      status: 'paid',
      merchant_id: null,
    });
    expect(orders.oev_new).to.deep.equal({
      id: 'ord_new',
      merchant_id: 1004,
      reference: 'r-2',
      status: 'paid',
    });
    expect(rows.find((r) => r.id === 'oev_new')!.payload, 'left byte for byte').to.equal(events[1]![2]);
  });
});
