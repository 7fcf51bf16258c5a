/**
 * The reconciler a merchant writes by hand beside bench/handwritten-receiver.mjs: plain JavaScript
 * and the libraries alone (a mysql2 pool, bull), none of the kit's code. Eight jobs at once, one job
 * per event, one transaction per event: read the inbox row, find the attempt by the gateway's
 * transaction id, lock the order, mark it and the attempt paid with a history line (unless it is
 * already paid), mark the event processed. No other event type, no amount check, no outbox, no
 * gateway view: what the kit's worker is measured against.
 *
 * A process of its own; needs a migrated database. Prints `{"ready":true}` on stdout once it
 * processes; SIGTERM lets the jobs in hand finish.
 *
 *   DATABASE_URL=... REDIS_URL=... REDIS_PREFIX=... node bench/handwritten-reconciler.mjs
 */
import Queue from 'bull';
import mysql from 'mysql2/promise';

const env = process.env;
const pool = mysql.createPool({ uri: env.DATABASE_URL, timezone: 'Z' });
const queue = new Queue('handwritten', env.REDIS_URL, { prefix: env.REDIS_PREFIX });

async function apply(eventId) {
  const db = await pool.getConnection();
  try {
    await db.beginTransaction();
    const [inbox] = await db.execute('SELECT payload, processed_at FROM webhook_inbox WHERE event_id = ?', [
      eventId,
    ]);
    if (inbox.length === 0 || inbox[0].processed_at !== null) {
      await db.commit();
      return;
    }
    const event = JSON.parse(inbox[0].payload);
    const transaction = event.data.transaction;
    const [attempts] = await db.execute(
      'SELECT id, order_id FROM payment_attempts WHERE gateway_transaction_id = ?',
      [String(transaction.id)],
    );
    if (attempts.length === 0) throw new Error(`no payment attempt for transaction ${transaction.id}`);
    const attempt = attempts[0];
    const [orders] = await db.execute('SELECT id, status, version FROM orders WHERE id = ? FOR UPDATE', [
      attempt.order_id,
    ]);
    const order = orders[0];
    const now = new Date();
    if (order.status !== 'paid') {
      await db.execute(
        "UPDATE orders SET status = 'paid', captured_minor = ?, version = version + 1, updated_at = ? WHERE id = ?",
        [transaction.amount, now, order.id],
      );
      await db.execute(
        "UPDATE payment_attempts SET status = 'paid', captured_minor = ?, updated_at = ? WHERE id = ?",
        [transaction.amount, now, attempt.id],
      );
      await db.execute(
        `INSERT INTO order_history (order_id, attempt_id, source, source_id, status_before, status_after, outcome, detail, created_at)
         VALUES (?, ?, 'webhook', ?, ?, 'paid', 'applied', NULL, ?)`,
        [order.id, attempt.id, event.id, order.status, now],
      );
    }
    await db.execute("UPDATE webhook_inbox SET processed_at = ?, outcome = 'applied' WHERE event_id = ?", [
      now,
      eventId,
    ]);
    await db.commit();
  } catch (error) {
    await db.rollback();
    throw error;
  } finally {
    db.release();
  }
}

queue
  .process(8, (job) => apply(job.data.eventId))
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
await queue.isReady();
console.log(JSON.stringify({ ready: true }));

process.on('SIGTERM', async () => {
  await queue.close();
  await pool.end();
  process.exit(0);
});
