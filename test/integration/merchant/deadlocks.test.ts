import { expect } from 'chai';
import mysql from 'mysql2/promise';
import { createSequelize, lockConflict, transaction } from '../../../src/infra/database.js';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import { rows, someoneWaitsForALock } from '../../support/db.js';
import { startTestKit, type TestKit } from '../../support/kit.js';

/**
 * The API's own transactions (infra/database.ts `transaction`): one MariaDB picks as a deadlock's
 * victim is run again, so an operator's request that met the worker (or anyone) on the same rows
 * answers as if alone, not 500. The deadlock is made to happen here, with the API's transaction as
 * the one rolled back. A lock wait that times out is not run again.
 */
describe('merchant: a request that loses a deadlock is run again', function () {
  this.timeout(60_000);
  const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
  let t: TestKit;
  let other: mysql.Connection;
  let finance: string;

  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
    other = await mysql.createConnection({ host: '127.0.0.1', user: 'root', database: t.database });
    finance = (await t.kit.store.operators.add({ name: 'fran', role: 'finance', by: CLI })).token;
  });
  after(async () => {
    await other?.end();
    await t?.close();
  });

  const flaggedOrder = async (reason: string) => {
    const created = await t.call('POST', '/orders', { body: { amount: '4.00', currency: 'EUR' } });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.data.order.id as string;
    await t.kit.store.orders.flagWithoutAttempt(id, { reason, source: 'api', sourceId: `test:${id}` });
    return id;
  };

  /**
   * The other transaction: heavier (rows of its own written, so MariaDB rolls the API's back) and
   * holding every gap of the order history, where the resolution, once it holds its order's row,
   * writes its line.
   */
  const holdHistory = async () => {
    await other.beginTransaction();
    await other.query(
      `INSERT INTO webhook_inbox (event_id, event_type, source, payload, received_at)
       SELECT CONCAT('evt_deadlock_', seq, '_', ?), 'test', 'webhook', '{}', NOW() FROM seq_1_to_40`,
      [Date.now()],
    );
    await other.query('SELECT id FROM order_history FOR UPDATE');
  };

  it('a review resolved while another transaction deadlocks with it: 200, one history line and one audit line', async () => {
    const id = await flaggedOrder('amount differs');
    await other.query('SET SESSION innodb_lock_wait_timeout = 20');
    await holdHistory();
    const answered = t.call('POST', `/orders/${id}/review`, {
      token: finance,
      body: { resolution: 'accepted', note: 'confirmed by phone' },
    });
    await someoneWaitsForALock(other);
    // Now the other transaction wants the row the resolution holds: a deadlock.
    await other.query('SELECT id FROM orders WHERE id = ? FOR UPDATE', [id]);
    await other.rollback();

    const answer = await answered;
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body.data.order).to.include({ needs_review: false });
    const lines = await rows(t, 'order_history', { order_id: id, outcome: 'resolved' }, 'id');
    expect(lines, 'one line, not one for each run').to.have.length(1);
    const audit = await rows(t, 'audit_log', { order_id: id }, 'id');
    expect(audit.map((a) => a.action)).to.deep.equal(['review.resolve']);
  });

  it("a lock wait that times out is not run again: it has waited already, past any caller's patience", async () => {
    const id = await flaggedOrder('amount differs again');
    const sequelize = createSequelize(`mysql://root@127.0.0.1:3306/${t.database}`);
    await other.beginTransaction();
    try {
      await other.query('SELECT id FROM orders WHERE id = ? FOR UPDATE', [id]);
      let runs = 0;
      const failed = await transaction(sequelize, async (tx) => {
        runs += 1;
        await sequelize.query('SET SESSION innodb_lock_wait_timeout = 1', { transaction: tx });
        await sequelize.query('SELECT id FROM orders WHERE id = ? FOR UPDATE', {
          replacements: [id],
          transaction: tx,
        });
      }).then(
        () => null,
        (error: Error) => error,
      );
      expect(lockConflict(failed), String(failed)).to.equal(true);
      expect(runs).to.equal(1);
    } finally {
      await other.rollback();
      await sequelize.close();
    }
  });
});
