import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Pool, PoolConnection, RowDataPacket } from 'mysql2/promise';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createPool, createSequelize, createTransitionPool, migrate } from '../../../src/infra/database.js';
import type { TransactionObservation } from '../../../src/merchant/orders/observation.js';
import { applyObservations } from '../../../src/merchant/reconciler/apply.js';
import { createStore, type Store } from '../../../src/merchant/store/index.js';
import { lockingRead } from '../../../src/merchant/store/order-writer.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { seededRandom } from '../../../src/shared/ids.js';
import { SecretBox } from '../../../src/shared/secret-box.js';
import { ADMIN_URL, dropDatabases } from '../../support/process.js';

/** What the order writer's connections were sent, and a way to change what its reads answer. */
interface Recorder {
  /** Every query's text, in order. */
  sent: string[];
  /** Changes the answer of the next batch's first round trip (its reads), once. */
  tamper: ((answer: RowDataPacket[][]) => void) | null;
}

/** The pool the order writer writes with, every query it sends recorded (a query logger). */
function recorded(pool: Pool, recorder: Recorder): Pool {
  const connection = (c: PoolConnection) =>
    new Proxy(c, {
      get(target, prop) {
        if (prop === 'query')
          return async (options: string | { sql: string }, values?: unknown) => {
            const sql = typeof options === 'string' ? options : options.sql;
            recorder.sent.push(sql);
            const query = target.query.bind(target) as (
              o: unknown,
              v?: unknown,
            ) => Promise<[unknown, unknown]>;
            const answer = await query(options, values);
            const tamper = recorder.tamper;
            if (tamper && sql.startsWith('START TRANSACTION')) {
              recorder.tamper = null;
              tamper(answer[0] as RowDataPacket[][]);
            }
            return answer;
          };
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  return new Proxy(pool, {
    get(target, prop) {
      if (prop === 'getConnection') return async () => connection(await target.getConnection());
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The tables a text of statements writes, a statement each. */
const tablesWritten = (text: string) =>
  text
    .split(';\n')
    .map((s) => /^\s*(?:UPDATE|INSERT INTO|DELETE FROM)\s+(\w+)/.exec(s)?.[1])
    .filter((t): t is string => t !== undefined);

/**
 * The reconciler's batches as MySQL gets them (store/batch-writes.ts): whatever columns each event
 * changes, a batch writes each table in one statement; and an order changed by someone else between
 * the batch's read and its write is read again, not overwritten.
 */
describe('merchant: the writes of a batch of events', () => {
  const database = `merchant_batch_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = `${ADMIN_URL}/${database}`;
  const clock = new ManualClock(Date.parse('2026-11-20T10:00:00Z'));
  const recorder: Recorder = { sent: [], tamper: null };
  let sequelize: Sequelize;
  let pool: Pool;
  let transitionPool: Pool;
  let store: Store;
  let n = 0;

  before(async () => {
    sequelize = createSequelize(url);
    await migrate(url, sequelize);
    pool = createPool(url);
    transitionPool = createTransitionPool(url);
    store = createStore({
      sequelize,
      pool,
      transitionPool: recorded(transitionPool, recorder),
      clock,
      random: seededRandom(46),
      box: new SecretBox(Buffer.alloc(32, 3), seededRandom(46)),
    });
  });
  after(async () => {
    await sequelize?.close();
    await pool?.end();
    await transitionPool?.end();
    await dropDatabases([database]);
  });

  const select = (sql: string, replacements: unknown[]) =>
    sequelize.query<Record<string, unknown>>(sql, { replacements, type: QueryTypes.SELECT });

  /** An order waiting for its payment's news: a card attempt the gateway has a transaction for. */
  async function waiting(mode: 'sale' | 'auth', columns: Record<string, unknown> = {}) {
    n += 1;
    const order = { id: `ord_b${n}`, attempt: `att_b${n}`, reference: `batch-${n}`, transaction: `7700${n}` };
    const at = new Date(clock.now());
    await sequelize.query(
      `INSERT INTO orders (id, reference, amount_minor, currency, status, current_attempt_id, created_at, updated_at)
       VALUES (?, ?, 1234, 'EUR', 'pending', ?, ?, ?)`,
      { replacements: [order.id, order.reference, order.attempt, at, at] },
    );
    await sequelize.query(
      `INSERT INTO payment_attempts (id, order_id, kind, mode, gateway_transaction_id, status, created_at, updated_at)
       VALUES (?, ?, 'card', ?, ?, 'pending', ?, ?)`,
      { replacements: [order.attempt, order.id, mode, order.transaction, at, at] },
    );
    for (const [column, value] of Object.entries(columns))
      await sequelize.query(`UPDATE orders SET ${column} = ? WHERE id = ?`, {
        replacements: [value, order.id],
      });
    return order;
  }

  /** The gateway's event about an order's transaction, as the worker reads it from its inbox row. */
  async function event(
    order: { reference: string; transaction: string },
    transaction: Partial<TransactionObservation['transaction']>,
  ) {
    n += 1;
    const eventId = `evt_batch_${n}`;
    await sequelize.query(
      `INSERT INTO webhook_inbox (event_id, event_type, source, payload, received_at)
       VALUES (?, 'transaction.updated', 'webhook', '{}', ?)`,
      { replacements: [eventId, new Date(clock.now())] },
    );
    const obs: TransactionObservation = {
      source: 'webhook',
      sourceId: eventId,
      observedAt: clock.now(),
      transaction: {
        id: order.transaction,
        relatedId: null,
        type: 'sale',
        status: 'captured',
        amountMinor: 1234,
        currency: 'EUR',
        refundedMinor: 0,
        reference: order.reference,
        ...transaction,
      },
    };
    return { obs, options: { inboxEventId: eventId } };
  }

  const orderRow = async (id: string) => (await select('SELECT * FROM orders WHERE id = ?', [id]))[0]!;

  it('events that change different columns of their orders and attempts: each table in one statement', async () => {
    // A paid order whose earlier decline is still on it: the batch sets failure_code on another order only.
    const paid = await waiting('sale', { failure_code: 'earlier_decline' });
    const authorized = await waiting('auth');
    const declined = await waiting('sale');
    const short = await waiting('sale');
    const items = [
      await event(paid, {}),
      await event(authorized, {
        type: 'auth',
        status: 'auth',
        captureBefore: clock.now() + 7 * 86_400_000,
      }),
      await event(declined, { status: 'failed', statusReason: 'card_declined' }),
      await event(short, { amountMinor: 999 }),
    ];
    recorder.sent = [];
    const results = await applyObservations(store, items);
    expect(results.map((r) => (r instanceof Error ? r.message : r.decision?.outcome))).to.deep.equal([
      'applied',
      'applied',
      'applied',
      'flagged',
    ]);

    const writes = recorder.sent.filter((sql) => sql.trimEnd().endsWith('COMMIT'));
    expect(writes, 'one round trip of writes').to.have.length(1);
    const tables = tablesWritten(writes[0]!);
    expect(tables, writes[0]).to.have.members([
      'orders',
      'payment_attempts',
      'order_history',
      'order_events',
      'webhook_inbox',
    ]);
    expect(tables, 'a statement a table').to.have.length(5);

    // Each column set on the rows that changed it, and only there.
    expect(await orderRow(paid.id)).to.include({
      status: 'paid',
      captured_minor: 1234,
      failure_code: 'earlier_decline',
      needs_review: 0,
      version: 1,
    });
    const auth = await orderRow(authorized.id);
    expect(auth).to.include({ status: 'authorized', failure_code: null, version: 1 });
    expect(auth.next_poll_at).to.be.instanceOf(Date);
    expect(await orderRow(declined.id)).to.include({ status: 'failed', failure_code: 'card_declined' });
    expect(await orderRow(short.id)).to.include({ needs_review: 1, failure_code: null });
    const [attempt] = await select('SELECT * FROM payment_attempts WHERE id = ?', [authorized.attempt]);
    expect((attempt!.capture_before as Date).getTime()).to.equal(clock.now() + 7 * 86_400_000);
    // The inbox rows, each with its own outcome, in the one statement.
    const marks = await select(
      'SELECT event_id, outcome FROM webhook_inbox WHERE event_id IN (?) ORDER BY event_id',
      [items.map((i) => i.options.inboxEventId)],
    );
    expect(marks.map((m) => m.outcome).sort()).to.deep.equal(['applied', 'applied', 'applied', 'flagged']);
  });

  it("an order changed between the batch's read and its write is read again: the news applied meanwhile is not applied twice", async () => {
    const order = await waiting('sale');
    const other = await waiting('sale');
    // The order as a batch would read it before the capture below.
    const [stale] = await transitionPool.query<RowDataPacket[]>(
      { sql: lockingRead('o.id IN (?)'), nestTables: true },
      [[order.id]],
    );
    const first = await event(order, {});
    const [applied] = await applyObservations(store, [first]);
    expect(applied).to.deep.include({ matched: true });
    expect(await orderRow(order.id)).to.include({ status: 'paid', version: 1 });

    // The same capture again (a second delivery), in a batch whose read of the order is the one before.
    recorder.sent = [];
    recorder.tamper = (answer) => {
      answer[1] = answer[1]!.map((row) => (row.o.id === order.id ? stale[0]! : row));
    };
    const again = await event(order, {});
    const results = await applyObservations(store, [again, await event(other, {})]);
    expect(recorder.tamper, 'the read was the stale one').to.equal(null);

    expect(results.map((r) => (r instanceof Error ? r.message : r.decision?.outcome))).to.deep.equal([
      'duplicate',
      'applied',
    ]);
    const reads = recorder.sent.filter((sql) => sql.startsWith('START TRANSACTION'));
    expect(reads, 'the batch read its orders again').to.have.length(2);
    expect(await orderRow(order.id)).to.include({ status: 'paid', version: 1 });
    const events = await select('SELECT type FROM order_events WHERE order_id = ?', [order.id]);
    expect(
      events.map((e) => e.type),
      'told once',
    ).to.deep.equal(['order.paid']);
    const lines = await select('SELECT outcome FROM order_history WHERE order_id = ? ORDER BY id', [
      order.id,
    ]);
    expect(lines.map((l) => l.outcome)).to.deep.equal(['applied', 'duplicate']);
    // The first write of the batch left nothing: the other order's capture is there once.
    const others = await select('SELECT outcome FROM order_history WHERE order_id = ?', [other.id]);
    expect(others.map((l) => l.outcome)).to.deep.equal(['applied']);
    expect(await orderRow(other.id)).to.include({ status: 'paid', version: 1 });
  });

  it('changes made by others while a batch holds its orders are not lost: the poll lease waits for it, a card hold stays', async () => {
    const leased = await waiting('sale');
    const held = await waiting('auth');
    const lease = new Date(clock.now() + 3_600_000);
    const expires = new Date(clock.now() + 900_000);
    let meanwhile: Promise<unknown> = Promise.resolve();
    const items = [await event(leased, {}), await event(held, { type: 'auth', status: 'auth' })];
    const results = await applyObservations(store, items, {
      after: Promise.resolve(),
      // Once the batch holds its orders, before it writes: the poller and a 3DS hold, each on its own connection.
      locked: () => {
        meanwhile = Promise.all([
          store.polls.reschedule(leased.id, lease),
          store.holds.put(held.attempt, 'sealed-card-data', expires),
        ]);
      },
    });
    await meanwhile;
    expect(results.map((r) => (r instanceof Error ? r.message : r.decision?.outcome))).to.deep.equal([
      'applied',
      'applied',
    ]);
    const order = await orderRow(leased.id);
    expect(order).to.include({ status: 'paid', version: 1 });
    expect((order.next_poll_at as Date).getTime(), 'the lease, set after the batch').to.equal(
      lease.getTime(),
    );
    const [attempt] = await select(
      'SELECT status, hold_sealed, hold_expires_at FROM payment_attempts WHERE id = ?',
      [held.attempt],
    );
    expect(attempt).to.include({ status: 'authorized', hold_sealed: 'sealed-card-data' });
    expect((attempt!.hold_expires_at as Date).getTime()).to.equal(expires.getTime());
  });
});
