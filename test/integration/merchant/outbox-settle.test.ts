import { expect } from 'chai';
import mysql from 'mysql2/promise';
import { rows, someoneWaitsForALock } from '../../support/db.js';
import { paidOrder } from '../../support/events.js';
import { startTestKit, type TestKit } from '../../support/kit.js';

/**
 * A delivered order event brings its subscriber's waiting deliveries forward in the same
 * transaction (store/outbox.ts settle), and a dispatcher pass settles its deliveries at once: two
 * settles can deadlock on those rows. Here the deadlock is made to happen, with the settle as the
 * transaction MariaDB rolls back: it is run again, and the pass does not fail over it.
 */
describe('merchant: the outbox settles a delivery through a deadlock', function () {
  this.timeout(60_000);
  const endpoint = 'http://127.0.0.1:9/order-events'; // nothing listens: every try fails
  const subscriber = `url:${endpoint}`;
  let t: TestKit;
  let other: mysql.Connection;

  before(async () => {
    t = await startTestKit({
      env: { SHOP_WEBHOOK_URLS: endpoint, SHOP_WEBHOOK_SECRET: `whsec_${'A'.repeat(43)}` },
    });
    other = await mysql.createConnection({ host: '127.0.0.1', user: 'root', database: t.database });
  });
  after(async () => {
    await other?.end();
    await t?.close();
  });

  it('the settle MariaDB picks as the victim is run again: delivered, the others brought forward', async () => {
    for (let i = 0; i < 3; i++) await paidOrder(t, '3.00');
    await t.kit.dispatchOrderEvents(); // every try refused: each waits for its next time
    const waiting = await rows(t, 'order_event_deliveries', { subscriber, status: 'pending' }, 'id');
    expect(waiting).to.have.length(3);
    const [first, second] = waiting;
    const now = new Date(t.clock.now());
    await other.query('UPDATE order_event_deliveries SET next_attempt_at = ? WHERE id = ?', [
      new Date(now.getTime() - 1000),
      first!.id,
    ]);
    const [claimed] = await t.kit.store.outbox.claimDue([subscriber], now, 60_000, 10);
    expect(claimed!.delivery.id).to.equal(first!.id);

    // The other transaction: heavier (rows of its own written), so MariaDB rolls back the settle.
    await other.query('SET SESSION innodb_lock_wait_timeout = 20');
    await other.beginTransaction();
    await other.query(
      `INSERT INTO webhook_inbox (event_id, event_type, source, payload, received_at)
       SELECT CONCAT('evt_deadlock_', seq), 'test', 'webhook', '{}', NOW() FROM seq_1_to_40`,
    );
    await other.query('SELECT id FROM order_event_deliveries WHERE id = ? FOR UPDATE', [second!.id]);
    // The settle locks its own row, then waits for the second one to bring it forward.
    const settled = t.kit.store.outbox.settle(claimed!, { ok: true, httpStatus: 204, ms: 3 }, now).then(
      () => 'settled',
      (error: Error) => error,
    );
    await someoneWaitsForALock(other);
    // Now the other transaction wants the settle's row: a deadlock.
    await other.query('UPDATE order_event_deliveries SET last_error = last_error WHERE id = ?', [first!.id]);
    await other.rollback();

    expect(await settled).to.equal('settled');
    const after = await rows(t, 'order_event_deliveries', { id: waiting.map((w) => w.id) }, 'id');
    expect(after[0]).to.include({ status: 'delivered', attempts: 2 });
    for (const brought of after.slice(1))
      expect(new Date(brought.next_attempt_at).getTime(), 'brought forward').to.equal(now.getTime());
    const attempts = await rows(t, 'order_event_attempts', { delivery_id: first!.id }, 'id');
    expect(
      attempts.map((a) => a.result),
      'one line for the try, not one for each run',
    ).to.deep.equal(['failed', 'delivered']);
  });
});
