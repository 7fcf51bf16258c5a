import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Sequelize } from 'sequelize';
import { createSequelize, ensureDatabase } from '../../../src/infra/database.js';
import { migrator } from '../../../src/infra/migrator.js';
import { ADMIN_URL, dropDatabases } from '../../support/process.js';

/**
 * Migration 20 (issue 42, part 6) on a database whose reviews were resolved before it: each order
 * gets its last resolution, who and when, from the audit line written with it.
 */
describe('merchant: migration 20 on a database that already has resolved reviews', () => {
  const database = `merchant_upgrade20_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = `${ADMIN_URL}/${database}`;
  let sequelize: Sequelize;
  after(async () => {
    await sequelize?.close();
    await dropDatabases([database]);
  });

  it('the last resolution of each order, from the audit log; an order never resolved keeps none', async () => {
    sequelize = createSequelize(url);
    await ensureDatabase(url);
    await migrator(sequelize).up({ to: '2026-11-28-19-saved-card-syncs' });
    for (const id of ['ord_twice', 'ord_never', 'ord_odd'])
      await sequelize.query(
        `INSERT INTO orders (id, reference, amount_minor, currency, status, refunded_minor, needs_review, version, created_at, updated_at)
         VALUES (?, ?, 1234, 'EUR', 'paid', 0, 0, 1, NOW(3), NOW(3))`,
        { replacements: [id, id] },
      );
    const audit = (at: string, actor: string, role: string, action: string, order: string, detail: string) =>
      sequelize.query(
        `INSERT INTO audit_log (at, actor, role, credential, action, order_id, detail)
         VALUES (?, ?, ?, 'cli', ?, ?, ?)`,
        { replacements: [at, actor, role, action, order, detail] },
      );
    await audit(
      '2026-11-20 10:00:00.000',
      'olga',
      'admin',
      'review.resolve',
      'ord_twice',
      'corrected; cleared: a',
    );
    await audit(
      '2026-11-21 11:30:00.250',
      'fran',
      'finance',
      'review.resolve',
      'ord_twice',
      'accepted; cleared: b',
    );
    await audit('2026-11-22 09:00:00.000', 'olga', 'operator', 'refund', 'ord_twice', 'refunded 1.00');
    await audit('2026-11-22 09:00:00.000', 'olga', 'operator', 'refund', 'ord_never', 'accepted; odd');
    await audit(
      '2026-11-22 09:00:00.000',
      'fran',
      'finance',
      'review.resolve',
      'ord_odd',
      'a detail of no list',
    );
    await migrator(sequelize).up();
    const [rows] = (await sequelize.query(
      'SELECT id, review_resolution, review_resolved_by, review_resolved_at FROM orders ORDER BY id',
    )) as [
      { id: string; review_resolution: string; review_resolved_by: string; review_resolved_at: Date }[],
      unknown,
    ];
    expect(rows).to.deep.equal([
      { id: 'ord_never', review_resolution: null, review_resolved_by: null, review_resolved_at: null },
      { id: 'ord_odd', review_resolution: null, review_resolved_by: null, review_resolved_at: null },
      {
        id: 'ord_twice',
        review_resolution: 'accepted',
        review_resolved_by: 'fran (finance)',
        review_resolved_at: new Date('2026-11-21T11:30:00.250Z'),
      },
    ]);
  });
});
