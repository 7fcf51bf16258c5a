import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createSequelize, ensureDatabase, migrate } from '../../../src/infra/database.js';
import { migrator } from '../../../src/infra/migrator.js';
import type { Store } from '../../../src/merchant/store/index.js';
import { attemptRecord, defineModels, orderRecord, plain } from '../../../src/merchant/store/models.js';
import { OrderWriter } from '../../../src/merchant/store/order-writer.js';
import { ATTEMPTS, INBOX, ORDERS, type Table } from '../../../src/merchant/store/tables.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { seededRandom } from '../../../src/shared/ids.js';
import { ADMIN_URL, dropDatabases } from '../../support/process.js';
import { storeOn } from '../../support/store.js';

/**
 * The store (src/merchant/store/): its models describe the schema the migrations built, column for
 * column, and what it hands out are plain records, never ORM rows, and never the sealed 3DS hold.
 */
describe('merchant: the store', () => {
  const database = `merchant_store_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = `${ADMIN_URL}/${database}`;
  let sequelize: Sequelize;
  let pool: Pool;
  let transitionPool: Pool;
  let store: Store;
  const clock = new ManualClock();

  before(async () => {
    sequelize = createSequelize(url);
    await migrate(url, sequelize);
    ({ store, pool, transitionPool } = storeOn(url, sequelize, clock, 7));
  });
  after(async () => {
    await sequelize?.close();
    await pool?.end();
    await transitionPool?.end();
    await dropDatabases([database]);
  });

  it("several statements in one query: only on the transitions' pool, refused everywhere else", async () => {
    const two = 'SELECT 1 AS one; SELECT 2 AS two';
    let refused: unknown;
    try {
      await pool.query(two);
    } catch (error) {
      refused = error;
    }
    expect((refused as { code?: string })?.code, 'the general pool').to.equal('ER_PARSE_ERROR');
    const [both] = await transitionPool.query(two);
    expect(both).to.have.length(2);
  });

  it('every model has exactly the columns of its migrated table, with the same nullability', async () => {
    const models = defineModels(sequelize);
    const q = sequelize.getQueryInterface();
    for (const model of Object.values(models)) {
      const table = model.getTableName() as string;
      const columns = await q.describeTable(table);
      const attributes = model.getAttributes();
      expect(Object.keys(attributes).sort(), table).to.deep.equal(Object.keys(columns).sort());
      for (const [name, column] of Object.entries(columns)) {
        const declared = attributes[name]!;
        // A primary key is NOT NULL whatever the model says; every other column must say what the table does.
        const nullable = declared.primaryKey ? false : declared.allowNull !== false;
        expect(nullable, `${table}.${name} nullable`).to.equal(column.allowNull);
      }
    }
  });

  it('the hot tables are described once, column for column as migrated (store/tables.ts)', async () => {
    const q = sequelize.getQueryInterface();
    for (const t of [ORDERS, ATTEMPTS, INBOX] as Table[]) {
      const columns = await q.describeTable(t.name);
      expect(Object.keys(t.columns).sort(), t.name).to.deep.equal(Object.keys(columns).sort());
      for (const [name, column] of Object.entries(columns)) {
        const described = t.columns[name]!;
        expect(described.primaryKey || described.allowNull, `${t.name}.${name} nullable`).to.equal(
          described.primaryKey ? column.primaryKey : column.allowNull,
        );
      }
      expect(
        [...t.recordColumns, ...t.hiddenColumns].sort(),
        `${t.name}: every column in the record or hidden`,
      ).to.deep.equal(Object.keys(columns).sort());
    }
  });

  it("the hot tables' unique indexes of one column are the ones described (the batch writes rely on them)", async () => {
    for (const t of [ORDERS, ATTEMPTS, INBOX] as Table[]) {
      const [indexes] = await sequelize.query(
        `SELECT INDEX_NAME AS name, GROUP_CONCAT(COLUMN_NAME) AS columns FROM information_schema.statistics
          WHERE table_schema = DATABASE() AND TABLE_NAME = ? AND NON_UNIQUE = 0 AND INDEX_NAME <> 'PRIMARY'
          GROUP BY INDEX_NAME`,
        { replacements: [t.name] },
      );
      const unique = (indexes as { columns: string }[]).map((i) => i.columns).sort();
      expect(unique, `${t.name}: unique indexes`).to.deep.equal([...t.uniqueColumns].sort());
      expect(t.columns[t.key]!.primaryKey, `${t.name}: its key`).to.equal(true);
    }
  });

  it("the hot path's reads carry exactly the description's record columns", async () => {
    const exactly = (record: object | null | undefined, t: Table, what: string) =>
      expect(Object.keys(record ?? { missing: true }).sort(), what).to.deep.equal(
        [...t.recordColumns].sort(),
      );
    const { order } = await store.orders.create({
      amountMinor: 900,
      currency: 'EUR',
      reference: 'described-1',
      customer: { email: 'd@example.com' },
    });
    exactly(order, ORDERS, 'create');
    const started = await store.orders.startAttempt(order.id, { kind: 'card', mode: 'auth' });
    exactly(started.order, ORDERS, 'startAttempt: order');
    exactly(started.attempt, ATTEMPTS, 'startAttempt: attempt');
    await store.inbox.store({
      id: 'ev_hot_described',
      type: 'transaction.authorized',
      transactionId: '100900',
      source: 'webhook',
      payload: '{}',
      now: new Date(clock.now()),
    });
    const [done] = await store.orders.transitionMany([
      {
        target: { orderId: order.id, attemptId: started.attempt.id },
        plan: (o, a) => {
          exactly(o, ORDERS, 'transitionMany: locked order');
          exactly(a, ATTEMPTS, 'transitionMany: locked attempt');
          return {
            change: {
              attempt: { gateway_transaction_id: '100900', status: 'authorized' },
              order: { status: 'authorized' },
              history: { source: 'webhook', sourceId: 'ev_hot_described', outcome: 'applied', detail: null },
              processed: { eventId: 'ev_hot_described', outcome: 'applied' },
            },
            result: null,
          };
        },
      },
    ]);
    if (!done || done instanceof Error) throw new Error(`transition failed: ${done}`);
    exactly(done.order, ORDERS, 'transitionMany: order after');
    exactly(done.attempt, ATTEMPTS, 'transitionMany: attempt after');
    const [holders] = await store.attempts.holdingMany([{ transactionIds: ['100900'], reference: null }]);
    expect(holders).to.have.length(1);
    exactly(holders![0], ATTEMPTS, 'attempts.holdingMany');
    exactly(await store.inbox.get('ev_hot_described'), INBOX, 'inbox.get');
    exactly(
      (await store.inbox.getMany(['ev_hot_described'])).get('ev_hot_described'),
      INBOX,
      'inbox.getMany',
    );
    exactly(await store.attempts.get(started.attempt.id), ATTEMPTS, 'attempts.get');
    // And value for value what the models read.
    const models = defineModels(sequelize);
    expect(done.order).to.deep.equal(orderRecord((await models.Order.findByPk(order.id))!));
    expect(holders![0]).to.deep.equal(attemptRecord((await models.Attempt.findByPk(started.attempt.id))!));
    expect(await store.inbox.get('ev_hot_described')).to.deep.equal(
      plain((await models.Inbox.findByPk('ev_hot_described'))!),
    );
  });

  it("an order is locked one way: the writer's locking read gives the record as the models read it", async () => {
    const { order } = await store.orders.create({
      amountMinor: 950,
      currency: 'EUR',
      customer: { email: 'l@example.com' },
    });
    const models = defineModels(sequelize);
    const writer = new OrderWriter(transitionPool, clock, seededRandom(11));
    const read = await writer.one({ orderId: order.id }, (l) => ({ change: null, result: l }));
    const locked = read!.result.order;
    expect(locked).to.deep.equal(orderRecord((await models.Order.findByPk(order.id))!));
    expect(locked.customer).to.deep.equal({ email: 'l@example.com' });
    expect(read!.result).to.include({ attempt: null, dispute: null });
    const missing = await writer
      .one({ orderId: 'ord_nobody' }, () => ({ change: null, result: null }))
      .catch((e: Error) => e);
    expect(missing).to.be.instanceOf(Error).with.property('name', 'OrderNotFound');
    // The changes made under it hand back the order as stored after them.
    const flagged = await store.orders.flagWithoutAttempt(order.id, {
      reason: 'money with its reference',
      source: 'poll',
      sourceId: 'poll:described',
    });
    expect(flagged!.outcome).to.equal('flagged');
    expect(flagged!.order).to.deep.equal(await store.orders.find(order.id));
    expect(flagged!.order).to.include({ needs_review: true, version: order.version + 1 });
    const started = await store.orders.startAttempt(order.id, { kind: 'redirect' });
    expect(started.order).to.deep.equal(await store.orders.find(order.id));
    await store.orders.withdrawAttempt(order.id, started.attempt.id, started.previous);
    expect(await store.orders.find(order.id)).to.deep.include({
      ...started.previous,
      version: order.version + 3,
    });
    const absent = await store.orders.startAttempt('ord_nobody', { kind: 'card' }).catch((e: Error) => e);
    expect(absent).to.be.instanceOf(Error).with.property('name', 'OrderNotFound');
  });

  it("keeps an order's client secret as its SHA-256 alone, out of every record; finds the order by it", async () => {
    const { order, clientSecret } = await store.orders.create({ amountMinor: 1234, currency: 'EUR' });
    expect(clientSecret).to.match(/^ocs_[A-Za-z0-9_-]{43}$/);
    const [row] = (await sequelize.query('SELECT client_secret_hash FROM orders WHERE id = ?', {
      replacements: [order.id],
      type: QueryTypes.SELECT,
    })) as { client_secret_hash: string }[];
    expect(row!.client_secret_hash).to.equal(createHash('sha256').update(clientSecret).digest('base64url'));
    for (const record of [
      order,
      await store.orders.find(order.id),
      await store.orders.byReference(order.reference),
      await store.orders.findWithSecret(order.id, clientSecret),
    ])
      expect(record).to.not.have.property('client_secret_hash');
    expect(await store.orders.findWithSecret(order.id, clientSecret)).to.deep.equal(order);
    for (const wrong of [undefined, '', `${clientSecret}x`, row!.client_secret_hash])
      expect(await store.orders.findWithSecret(order.id, wrong), String(wrong)).to.equal(null);
    expect(await store.orders.findWithSecret('ord_nobody', clientSecret)).to.equal(null);
  });

  it('hands out plain records: an order, its attempt (without the sealed hold), its history', async () => {
    const { order } = await store.orders.create({ amountMinor: 1234, currency: 'EUR' });
    expect(Object.getPrototypeOf(order)).to.equal(Object.prototype);
    const { attempt } = await store.orders.startAttempt(order.id, { kind: 'card', mode: 'sale' });
    await store.holds.put(attempt.id, 'v1.sealed-hold', new Date(clock.now() + 60_000));
    // A record is a copy: the change a transition writes does not reach the record its plan was shown.
    let shown: { status: string; version: number } | undefined;
    await store.orders.transition({ orderId: order.id, attemptId: attempt.id }, (locked, _attempt, now) => {
      shown = locked;
      return {
        change: {
          attempt: null,
          order: { status: 'requires_action', next_poll_at: now },
          history: { source: 'api', sourceId: 'test', outcome: 'applied', detail: null },
        },
        result: null,
      };
    });
    expect(shown).to.include({ status: 'pending', version: 1 });
    expect(await store.orders.find(order.id)).to.include({ status: 'requires_action', version: 2 });

    for (const record of [
      await store.attempts.get(attempt.id),
      await store.attempts.by('gateway_transaction_id', 'none'),
    ]) {
      if (record === null) continue;
      expect(Object.getPrototypeOf(record)).to.equal(Object.prototype);
      expect(record).to.not.have.property('hold_sealed');
      expect(record).to.not.have.property('hold_expires_at');
    }
    const history = await store.history.ofOrder(order.id);
    expect(history.map((h) => [h.source, h.status_before, h.status_after, h.outcome])).to.deep.equal([
      ['api', 'pending', 'pending', 'applied'],
      ['api', 'pending', 'requires_action', 'applied'],
    ]);
    expect(Object.getPrototypeOf(history[0])).to.equal(Object.prototype);
    // The hold is taken once, through the hold store alone.
    expect(await store.holds.take(attempt.id)).to.deep.equal({ kind: 'taken', sealed: 'v1.sealed-hold' });
    expect(await store.holds.take(attempt.id)).to.deep.equal({ kind: 'gone' });
  });

  it('the inbox stores a batch in one go: new, repeated and twice-in-the-batch events told apart; a bad row fails alone', async () => {
    const event = (id: string) => ({
      id,
      type: 'transaction.captured',
      transactionId: '100300',
      source: 'webhook' as const,
      payload: `{"id":"${id}"}`,
      now: new Date(clock.now()),
    });
    expect(await store.inbox.store(event('evt_known'))).to.equal('stored');
    const answers = await store.inbox.storeMany([
      event('evt_new1'),
      event('evt_known'),
      event('evt_twice'),
      event('evt_twice'),
      event(`evt_${'x'.repeat(80)}`), // longer than the column: refused by the database
      event('evt_new2'),
    ]);
    expect(answers.map((a) => (a instanceof Error ? 'error' : a))).to.deep.equal([
      'stored',
      'duplicate',
      'stored',
      'duplicate',
      'error',
      'stored',
    ]);
    const [rows] = await pool.query<RowDataPacket[]>(
      'SELECT event_id, repeats FROM webhook_inbox WHERE event_id LIKE ? ORDER BY event_id',
      ['evt_%'],
    );
    expect(rows.map((r) => [r.event_id, r.repeats])).to.deep.equal([
      ['evt_known', 1],
      ['evt_new1', 0],
      ['evt_new2', 0],
      ['evt_twice', 1],
    ]);
    // With no repeat in it, a batch needs no second look: all stored.
    expect(await store.inbox.storeMany([event('evt_new3'), event('evt_new4')])).to.deep.equal([
      'stored',
      'stored',
    ]);
  });

  it('the inbox keeps what was sent, byte for byte, whether a batch goes prepared (small) or as text (large)', async () => {
    const at = new Date(Date.UTC(2026, 10, 26, 9, 30, 15, 123));
    const payload = (id: string) => `{"id":"${id}","note":"quote \\" back\\\\slash ü 😀 ' ; -- \u0000"}`;
    const event = (id: string, transactionId: string | null) => ({
      id,
      type: 'transaction.refunded',
      transactionId,
      source: 'replay' as const,
      payload: payload(id),
      now: at,
    });
    const small = [event('evt_small_1', null), event('evt_small_2', '100500')];
    const large = Array.from({ length: 40 }, (_, i) => event(`evt_large_${i}`, i % 2 ? null : `1006${i}`));
    expect(await store.inbox.storeMany(small)).to.deep.equal(['stored', 'stored']);
    expect(await store.inbox.storeMany(large)).to.deep.equal(large.map(() => 'stored'));
    const [rows] = await pool.query<RowDataPacket[]>(
      "SELECT event_id, event_type, transaction_id, source, payload, received_at, attempts, receipt FROM webhook_inbox WHERE event_id LIKE 'evt\\_small\\_%' OR event_id LIKE 'evt\\_large\\_%'",
    );
    expect(rows).to.have.length(42);
    for (const e of [...small, ...large]) {
      const row = rows.find((r) => r.event_id === e.id)!;
      expect(row, e.id).to.include({
        event_type: 'transaction.refunded',
        transaction_id: e.transactionId,
        source: 'replay',
        payload: e.payload,
        attempts: 0,
      });
      expect((row.received_at as Date).getTime(), e.id).to.equal(at.getTime());
      expect(row.receipt, e.id).to.have.length(16);
    }
    // Sent again, in the other form: repeats, not new rows.
    expect(await store.inbox.storeMany([...small, ...large])).to.deep.equal(
      [...small, ...large].map(() => 'duplicate'),
    );
    expect(await store.inbox.storeMany(large.slice(0, 3))).to.deep.equal([
      'duplicate',
      'duplicate',
      'duplicate',
    ]);
  });

  it("the hot path's records (mysql2, no ORM) are the models' records, value for value", async () => {
    const { order } = await store.orders.create({
      amountMinor: 1234,
      currency: 'EUR',
      reference: 'rows-1',
      customer: { email: 'a@example.com', country_code: 'NL' },
    });
    const { attempt } = await store.orders.startAttempt(order.id, { kind: 'card', mode: 'sale' });
    const learned = await store.orders.transition({ orderId: order.id, attemptId: attempt.id }, () => ({
      change: { attempt: { gateway_transaction_id: '100400' }, order: {}, history: null },
      result: null,
    }));
    expect(learned!.attempt.gateway_transaction_id).to.equal('100400');
    expect(learned!.order).to.deep.equal(await store.orders.find(order.id));
    const models = defineModels(sequelize);
    const ormOrder = orderRecord((await models.Order.findByPk(order.id))!);
    const ormAttempt = attemptRecord((await models.Attempt.findByPk(attempt.id))!);
    expect((await store.attempts.holding(['100400'], 'rows-1'))[0]).to.deep.equal(ormAttempt);
    const seen = await store.orders.transition({ orderId: order.id, attemptId: attempt.id }, (o, a, now) => ({
      change: {
        attempt: { status: 'paid', captured_minor: 1234 },
        order: {
          status: 'paid',
          captured_minor: 1234,
          needs_review: true,
          review_reason: 'a test',
          next_poll_at: now,
        },
        history: { source: 'webhook', sourceId: 'evt_rows', outcome: 'applied', detail: null },
      },
      result: { o, a },
    }));
    expect(seen!.result.o).to.deep.equal(ormOrder);
    expect(seen!.result.a).to.deep.equal(ormAttempt);
    // What a transition hands back is what it left: the rows as stored after it.
    expect(seen!.order).to.deep.equal(orderRecord((await models.Order.findByPk(order.id))!));
    expect(seen!.attempt).to.deep.equal(attemptRecord((await models.Attempt.findByPk(attempt.id))!));
    const after = orderRecord((await models.Order.findByPk(order.id))!);
    expect(after).to.include({
      status: 'paid',
      captured_minor: 1234,
      needs_review: true,
      version: order.version + 2,
    });
    expect(after.customer).to.deep.equal({ email: 'a@example.com', country_code: 'NL' });
    const history = await store.history.ofOrder(order.id);
    expect(history.at(-1)).to.include({
      source_id: 'evt_rows',
      status_before: 'pending',
      status_after: 'paid',
    });
  });

  it('an inbox event is marked processed in the same transaction as its change, or not at all', async () => {
    const { order } = await store.orders.create({ amountMinor: 700, currency: 'EUR' });
    const { attempt } = await store.orders.startAttempt(order.id, { kind: 'card', mode: 'sale' });
    const stored = (id: string) =>
      store.inbox.store({
        id,
        type: 'transaction.captured',
        transactionId: '100500',
        source: 'webhook',
        payload: '{}',
        now: new Date(clock.now()),
      });
    await stored('evt_atomic_ok');
    await stored('evt_atomic_failed');
    const change = (eventId: string) => ({
      attempt: null,
      order: { status: 'paid' as const },
      history: { source: 'webhook' as const, sourceId: eventId, outcome: 'applied' as const, detail: null },
      processed: { eventId, outcome: 'applied' },
    });
    // The plan throws after the locks: the transaction rolls back, the event stays unprocessed.
    const failed = await store.orders
      .transition({ orderId: order.id, attemptId: attempt.id }, () => {
        throw new Error('decided nothing');
      })
      .catch((e: Error) => e.message);
    expect(failed).to.equal('decided nothing');
    await store.orders.transition({ orderId: order.id, attemptId: attempt.id }, () => ({
      change: change('evt_atomic_ok'),
      result: null,
    }));
    expect(await store.inbox.get('evt_atomic_ok')).to.include({ outcome: 'applied' });
    expect((await store.inbox.get('evt_atomic_ok'))!.processed_at).to.be.instanceOf(Date);
    expect((await store.inbox.get('evt_atomic_failed'))!.processed_at).to.equal(null);
    // A write the database refuses (a status longer than its column) undoes the whole change, mark and line.
    const broken = { ...change('evt_atomic_failed'), order: { status: 'x'.repeat(40) as 'paid' } };
    const refused = await store.orders
      .transition({ orderId: order.id, attemptId: attempt.id }, () => ({ change: broken, result: null }))
      .catch(() => 'refused');
    expect(refused).to.equal('refused');
    expect((await store.inbox.get('evt_atomic_failed'))!.processed_at).to.equal(null);
    expect((await store.history.ofOrder(order.id)).map((h) => h.source_id)).to.not.include(
      'evt_atomic_failed',
    );
    // The writes go in one round trip: one refused after others were made undoes those too.
    const { order: other } = await store.orders.create({ amountMinor: 800, currency: 'EUR' });
    const second = await store.orders.startAttempt(other.id, { kind: 'card', mode: 'sale' });
    const lateFailure = {
      ...change('evt_atomic_failed'),
      history: { ...change('evt_atomic_failed').history, outcome: 'x'.repeat(40) as 'applied' },
    };
    const beforeFailure = await store.orders.find(other.id);
    const undone = await store.orders
      .transition({ orderId: other.id, attemptId: second.attempt.id }, () => ({
        change: lateFailure,
        result: null,
      }))
      .catch(() => 'refused');
    expect(undone).to.equal('refused');
    expect(await store.orders.find(other.id)).to.deep.equal(beforeFailure);
    expect(beforeFailure!.status).to.not.equal('paid');
    expect((await store.inbox.get('evt_atomic_failed'))!.processed_at).to.equal(null);
  });

  it('a batch of transitions: one transaction, steps in turn (an order twice sees its first change), each step answering for itself', async () => {
    const stored = (id: string) =>
      store.inbox.store({
        id,
        type: 'transaction.captured',
        transactionId: null,
        source: 'webhook',
        payload: '{}',
        now: new Date(clock.now()),
      });
    const line = (eventId: string, outcome: 'applied' | 'duplicate' = 'applied') => ({
      source: 'webhook' as const,
      sourceId: eventId,
      outcome,
      detail: null,
    });
    const { order: a } = await store.orders.create({ amountMinor: 1000, currency: 'EUR' });
    const aAttempt = (await store.orders.startAttempt(a.id, { kind: 'card', mode: 'auth' })).attempt;
    const { order: b } = await store.orders.create({ amountMinor: 2000, currency: 'EUR' });
    const bAttempt = (await store.orders.startAttempt(b.id, { kind: 'card', mode: 'sale' })).attempt;
    for (const id of ['evt_batch_1', 'evt_batch_2', 'evt_batch_3']) await stored(id);
    const seen: string[] = [];
    const done = await store.orders.transitionMany([
      {
        target: { orderId: a.id, attemptId: aAttempt.id },
        plan: (order) => {
          seen.push(order.status);
          return {
            change: {
              attempt: { status: 'authorized' },
              order: { status: 'authorized' },
              history: line('evt_batch_1'),
              processed: { eventId: 'evt_batch_1', outcome: 'applied' },
            },
            result: 'first',
          };
        },
      },
      {
        target: { orderId: 'ord_nobody', attemptId: 'att_nobody' },
        plan: () => ({ change: null, result: 'x' }),
      },
      {
        target: { orderId: b.id, attemptId: bAttempt.id },
        plan: () => {
          throw new Error('this step decided nothing');
        },
      },
      { target: { reference: 'no-such-reference' }, plan: () => ({ change: null, result: 'x' }) },
      {
        // The same order again: its plan sees what the first step made of it.
        target: { orderId: a.id, attemptId: aAttempt.id },
        plan: (order, attempt) => {
          seen.push(order.status, attempt.status);
          return {
            change: {
              attempt: { status: 'paid', captured_minor: 1000 },
              order: { status: 'paid', captured_minor: 1000 },
              history: line('evt_batch_2'),
              processed: { eventId: 'evt_batch_2', outcome: 'applied' },
            },
            result: 'second',
          };
        },
      },
      {
        target: { reference: b.reference },
        plan: (order) => ({
          change: {
            attempt: null,
            order: {},
            history: line('evt_batch_3', 'duplicate'),
            processed: { eventId: 'evt_batch_3', outcome: 'duplicate' },
          },
          result: order.id,
        }),
      },
    ]);
    expect(seen).to.deep.equal(['pending', 'authorized', 'authorized']);
    expect(done[0]).to.deep.include({ result: 'first' });
    expect(done[1]).to.be.instanceOf(Error).with.property('name', 'OrderNotFound');
    expect(done[2]).to.be.instanceOf(Error).with.property('message', 'this step decided nothing');
    expect(done[3]).to.equal(null);
    expect(done[4]).to.deep.include({ result: 'second' });
    expect(done[5]).to.deep.include({ result: b.id });
    const after = await store.orders.find(a.id);
    expect(after).to.include({ status: 'paid', captured_minor: 1000, version: a.version + 3 });
    expect((await store.attempts.get(aAttempt.id))!).to.include({ status: 'paid', captured_minor: 1000 });
    expect(
      (await store.history.ofOrder(a.id)).map((h) => [h.source_id, h.status_before, h.status_after]),
    ).to.deep.equal([
      [`attempt:${aAttempt.id}`, 'pending', 'pending'],
      ['evt_batch_1', 'pending', 'authorized'],
      ['evt_batch_2', 'authorized', 'paid'],
    ]);
    for (const [id, outcome] of [
      ['evt_batch_1', 'applied'],
      ['evt_batch_2', 'applied'],
      ['evt_batch_3', 'duplicate'],
    ])
      expect(await store.inbox.get(id!), id).to.include({ outcome });
    // The order events of the batch, in the order they happened.
    const [events] = await pool.query<RowDataPacket[]>(
      'SELECT type FROM order_events WHERE order_id = ? ORDER BY seq',
      [a.id],
    );
    expect(events.map((e) => e.type)).to.deep.equal(['order.authorized', 'order.paid']);
  });

  it('a batch whose writes the database refuses runs each step alone: only the bad step fails', async () => {
    const { order: one } = await store.orders.create({ amountMinor: 300, currency: 'EUR' });
    const oneAttempt = (await store.orders.startAttempt(one.id, { kind: 'card', mode: 'sale' })).attempt;
    const { order: two } = await store.orders.create({ amountMinor: 400, currency: 'EUR' });
    const twoAttempt = (await store.orders.startAttempt(two.id, { kind: 'card', mode: 'sale' })).attempt;
    const done = await store.orders.transitionMany([
      {
        target: { orderId: one.id, attemptId: oneAttempt.id },
        plan: () => ({
          change: { attempt: null, order: { status: 'x'.repeat(40) as 'paid' }, history: null },
          result: 1,
        }),
      },
      {
        target: { orderId: two.id, attemptId: twoAttempt.id },
        plan: () => ({ change: { attempt: null, order: { status: 'paid' }, history: null }, result: 2 }),
      },
    ]);
    expect(done[0]).to.be.instanceOf(Error);
    expect(done[1]).to.deep.include({ result: 2 });
    expect((await store.orders.find(one.id))!.status).to.equal('pending');
    expect((await store.orders.find(two.id))!.status).to.equal('paid');
  });

  it("a batch's row writes: rows that change the same columns go in one upsert, each keeping its own values; a session id passed between two attempts in one batch ends on the taker", async () => {
    const open = async (reference: string) => {
      const { order } = await store.orders.create({ amountMinor: 700, currency: 'EUR', reference });
      return { order, attempt: (await store.orders.startAttempt(order.id, { kind: 'redirect' })).attempt };
    };
    const a = await open('upsert-a');
    const b = await open('upsert-b');
    const c = await open('upsert-c');
    const first = c.attempt;
    // The order's first attempt holds a session id; a second attempt follows.
    await store.orders.transitionMany([
      {
        target: { orderId: c.order.id, attemptId: first.id },
        plan: () => ({
          change: { attempt: { payment_session_id: 'ps_passed' }, order: {}, history: null },
          result: null,
        }),
      },
    ]);
    const second = (await store.orders.startAttempt(c.order.id, { kind: 'redirect' })).attempt;
    const [[counted]] = (await sequelize.query('SELECT COUNT(*) AS n FROM orders')) as [
      { n: number }[],
      unknown,
    ];
    const pay = (captured: number) => () => ({
      change: {
        attempt: { status: 'paid' as const, captured_minor: captured },
        order: { status: 'paid' as const, captured_minor: captured },
        history: null,
      },
      result: null,
    });
    const answers = await store.orders.transitionMany([
      { target: { orderId: a.order.id, attemptId: a.attempt.id }, plan: pay(700) },
      { target: { orderId: b.order.id, attemptId: b.attempt.id }, plan: pay(650) },
      {
        target: { orderId: c.order.id, attemptId: second.id },
        plan: () => ({
          change: {
            release: { payment_session_id: 'ps_passed' },
            attempt: { payment_session_id: 'ps_passed', status: 'paid' as const, captured_minor: 700 },
            order: { status: 'paid' as const, captured_minor: 700 },
            history: null,
          },
          result: null,
        }),
      },
    ]);
    for (const answer of answers) if (!answer || answer instanceof Error) throw new Error(String(answer));
    const [orders] = await transitionPool.query<RowDataPacket[]>(
      'SELECT reference, status, captured_minor, version, amount_minor, currency FROM orders WHERE id IN (?) ORDER BY reference',
      [[a.order.id, b.order.id, c.order.id]],
    );
    expect(orders.map((o) => ({ ...o }))).to.deep.equal([
      {
        reference: 'upsert-a',
        status: 'paid',
        captured_minor: 700,
        version: a.order.version + 2,
        amount_minor: 700,
        currency: 'EUR',
      },
      {
        reference: 'upsert-b',
        status: 'paid',
        captured_minor: 650,
        version: b.order.version + 2,
        amount_minor: 700,
        currency: 'EUR',
      },
      {
        reference: 'upsert-c',
        status: 'paid',
        captured_minor: 700,
        version: c.order.version + 3,
        amount_minor: 700,
        currency: 'EUR',
      },
    ]);
    const [attempts] = await transitionPool.query<RowDataPacket[]>(
      'SELECT id, status, captured_minor, payment_session_id FROM payment_attempts WHERE order_id = ?',
      [c.order.id],
    );
    expect(Object.fromEntries(attempts.map((r) => [r.id, r.payment_session_id]))).to.deep.equal({
      [first.id]: null,
      [second.id]: 'ps_passed',
    });
    const [[after]] = (await sequelize.query('SELECT COUNT(*) AS n FROM orders')) as [
      { n: number }[],
      unknown,
    ];
    expect(after!.n, 'an upsert of a locked row inserts nothing').to.equal(counted!.n);
  });

  it('an order due earlier in the same second is claimed: times in raw queries keep their milliseconds', async () => {
    const { order } = await store.orders.create({ amountMinor: 700, currency: 'EUR' });
    const due = new Date(Date.UTC(2026, 10, 27, 12, 0, 0, 100));
    await store.polls.reschedule(order.id, due);
    const lease = new Date(due.getTime() + 60_000);
    // A claimed order's next poll is the lease (an order with no attempt is claimed, and not handed out).
    const nextPoll = async () => (await store.orders.find(order.id))!.next_poll_at?.getTime();
    await store.polls.claimDue(new Date(due.getTime() - 1), 50, lease);
    expect(await nextPoll(), 'not yet due').to.equal(due.getTime());
    await store.polls.claimDue(new Date(due.getTime() + 800), 50, lease);
    expect(await nextPoll(), 'due 0.8 s ago: claimed').to.equal(lease.getTime());
    await store.polls.reschedule(order.id, null);
  });

  it('a settled operation comes back as the record it now is', async () => {
    const { order } = await store.orders.create({ amountMinor: 500, currency: 'EUR' });
    const { attempt } = await store.orders.startAttempt(order.id, { kind: 'card', mode: 'auth' });
    const op = await store.operations.create({
      orderId: order.id,
      attemptId: attempt.id,
      operation: 'capture',
      requestKey: 'capture-1',
      amountMinor: 500,
      reason: null,
      actor: { name: 'ada', role: 'operator', credential: 'opr_test' },
      currency: 'EUR',
    });
    const settled = await store.operations.settle(op, { status: 'succeeded', transactionId: '100200' });
    expect(settled).to.include({ status: 'succeeded', result_transaction_id: '100200', id: op.id });
    expect(await store.operations.find(order.id, 'capture', 'capture-1')).to.include({
      status: 'succeeded',
      result_transaction_id: '100200',
    });
  });
});

describe('merchant: migration 04 on a database that already has orders', () => {
  const database = `merchant_upgrade_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = `${ADMIN_URL}/${database}`;
  let sequelize: Sequelize;
  after(async () => {
    await sequelize?.close();
    await dropDatabases([database]);
  });

  it('orders the poller watches become due at once; final ones and old paid ones do not', async () => {
    sequelize = createSequelize(url);
    await ensureDatabase(url);
    await migrator(sequelize).up({ to: '2026-11-23-03-attempt-transaction-index' });
    const at = (days: number) =>
      new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 23).replace('T', ' ');
    const order = async (id: string, status: string, ids: [string | null, string | null], ageDays = 0) => {
      await sequelize.query(
        `INSERT INTO orders (id, reference, amount_minor, currency, status, refunded_minor, needs_review, current_attempt_id, version, created_at, updated_at)
         VALUES (?, ?, 100, 'EUR', ?, 0, 0, ?, 1, ?, ?)`,
        { replacements: [id, id, status, `att_${id}`, at(ageDays), at(ageDays)] },
      );
      await sequelize.query(
        `INSERT INTO payment_attempts (id, order_id, kind, status, refunded_minor, gateway_transaction_id, payment_session_id, created_at, updated_at)
         VALUES (?, ?, 'card', ?, 0, ?, ?, ?, ?)`,
        { replacements: [`att_${id}`, id, status, ids[0], ids[1], at(ageDays), at(ageDays)] },
      );
    };
    await order('ord_auth', 'authorized', ['100', null]);
    await order('ord_session', 'requires_action', [null, 'ps_1']);
    await order('ord_challenge', 'requires_action', [null, null]);
    await order('ord_paid', 'paid', ['101', null], 2);
    await order('ord_old_paid', 'paid', ['102', null], 40);
    await order('ord_failed', 'failed', ['103', null]);
    await migrator(sequelize).up();
    const [due] = (await sequelize.query(
      'SELECT id FROM orders WHERE next_poll_at IS NOT NULL ORDER BY id',
    )) as [{ id: string }[], unknown];
    expect(due.map((r) => r.id)).to.deep.equal(['ord_auth', 'ord_paid', 'ord_session']);
  });
});

describe('merchant: migration 16 on a database that already has operations', () => {
  const database = `merchant_upgrade16_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = `${ADMIN_URL}/${database}`;
  let sequelize: Sequelize;
  let pool: Pool;
  let transitionPool: Pool;
  after(async () => {
    await sequelize?.close();
    await pool?.end();
    await transitionPool?.end();
    await dropDatabases([database]);
  });

  it("an operation kept with its key as sent is found by the operator's retry after the upgrade; the key is kept as its digest", async () => {
    sequelize = createSequelize(url);
    await ensureDatabase(url);
    await migrator(sequelize).up({ to: '2026-11-27-15-attempt-saved-card' });
    await sequelize.query(
      `INSERT INTO orders (id, reference, amount_minor, currency, status, refunded_minor, needs_review, current_attempt_id, version, created_at, updated_at)
       VALUES ('ord_up', 'ord_up', 1234, 'EUR', 'paid', 0, 0, 'att_up', 1, NOW(3), NOW(3))`,
    );
    await sequelize.query(
      `INSERT INTO gateway_operations (id, order_id, attempt_id, operation, idempotency_key, request_key, amount_minor, status, created_at, updated_at)
       VALUES ('op_up', 'ord_up', 'att_up', 'refund', 'idem_up', 'refund-Ünïcode-1', 100, 'succeeded', NOW(3), NOW(3))`,
    );
    await migrator(sequelize).up();
    const [kept] = (await sequelize.query(
      "SELECT request_key FROM gateway_operations WHERE id = 'op_up'",
    )) as [{ request_key: string }[], unknown];
    expect(kept[0]!.request_key).to.equal(createHash('sha256').update('refund-Ünïcode-1').digest('hex'));
    let store: Store;
    ({ store, pool, transitionPool } = storeOn(url, sequelize, new ManualClock(), 9));
    expect(await store.operations.find('ord_up', 'refund', 'refund-Ünïcode-1')).to.include({ id: 'op_up' });
  });
});
