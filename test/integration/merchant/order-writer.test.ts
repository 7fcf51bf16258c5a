import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Pool } from 'mysql2/promise';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createSequelize, migrate } from '../../../src/infra/database.js';
import { erasedCustomer } from '../../../src/merchant/customers/erasure.js';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import type { Change, Store } from '../../../src/merchant/store/index.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { ADMIN_URL, dropDatabases } from '../../support/process.js';
import { storeOn } from '../../support/store.js';

const ada: Actor = { name: 'ada', role: 'finance', credential: 'opr_test' };

/** What every kind of change leaves, read straight from the tables of one order. */
interface Snapshot {
  order: Record<string, unknown>;
  attempts: Record<string, unknown>[];
  history: Record<string, unknown>[];
  events: Record<string, unknown>[];
  disputes: Record<string, unknown>[];
  operations: Record<string, unknown>[];
  audit: Record<string, unknown>[];
}

/** A kind of change the kit makes, what it needs first, and what it must leave. */
interface Kind {
  name: string;
  /** The order's customer, where the change needs one. */
  customer?: Record<string, unknown>;
  /** Makes the order (and whatever the change needs) and answers what the change is given. */
  setup: (store: Store, orderId: string) => Promise<Record<string, string>>;
  change: (store: Store, orderId: string, ctx: Record<string, string>) => Promise<unknown>;
  /** 1: the order's row changes (its version bumped once); 0: only what is recorded beside it. */
  version: 0 | 1;
  /** Its row changes but not the payment's age (`updated_at`): an erasure. */
  keepsUpdatedAt?: true;
  /** The history line it writes; null: none (an attempt withdrawn leaves none, and erases its own). */
  line: { source: string; outcome: string; detail: RegExp } | null;
  /** The order events the rule names for it, in order. */
  events: string[];
  /** Its other rows, checked on the snapshots before and after. */
  also?: (before: Snapshot, after: Snapshot) => void;
  /** The tables whose last write is made to fail, one run each: nothing of the change may stay. */
  failAt: readonly FailPoint[];
}

type FailPoint = 'order_history' | 'order_events' | 'audit_log' | 'payment_attempts';

/** A change of the gateway's news, as decide hands it to the writer (reconciler/apply.ts). */
const news = (ctx: Record<string, string>, status: 'authorized' | 'paid', eventId: string): Change => ({
  attempt: {
    status,
    gateway_transaction_id: ctx.transaction!,
    captured_minor: status === 'paid' ? 1500 : null,
  },
  order: { status, captured_minor: status === 'paid' ? 1500 : null },
  history: { source: 'webhook', sourceId: eventId, outcome: 'applied', detail: null },
});

async function started(store: Store, orderId: string) {
  const { attempt } = await store.orders.startAttempt(orderId, { kind: 'card', mode: 'sale' });
  return { attempt: attempt.id, transaction: `10${randomBytes(4).readUInt32BE()}` };
}

async function paid(store: Store, orderId: string) {
  const ctx = await started(store, orderId);
  await store.orders.transition({ orderId, attemptId: ctx.attempt }, () => ({
    change: news(ctx, 'paid', `ev_${ctx.transaction}_paid`),
    result: null,
  }));
  return ctx;
}

async function chargedBack(store: Store, orderId: string) {
  const ctx = await paid(store, orderId);
  await store.orders.transition({ orderId, attemptId: ctx.attempt }, (_o, _a, now) => ({
    change: chargeback(ctx, now),
    result: null,
  }));
  const [dispute] = await store.disputes.ofOrder(orderId);
  return { ...ctx, dispute: dispute!.id };
}

const chargeback = (ctx: Record<string, string>, now: Date): Change => ({
  attempt: { status: 'disputed', disputed_minor: 1500 },
  order: { status: 'disputed', disputed_minor: 1500 },
  history: { source: 'webhook', sourceId: `ev_${ctx.transaction}_cb`, outcome: 'applied', detail: null },
  dispute: {
    kind: 'gateway',
    plan: {
      records: [
        {
          id: null,
          chargedBackAt: now.getTime(),
          openedAt: now.getTime(),
          amountMinor: 1500,
          outcome: 'open',
          closedAt: null,
          closedBy: null,
        },
      ],
      reversals: [],
    },
    transactionId: ctx.transaction!,
    currency: 'EUR',
  },
});

async function refundRequested(store: Store, orderId: string) {
  const ctx = await paid(store, orderId);
  const op = await store.operations.create({
    orderId,
    attemptId: ctx.attempt,
    operation: 'refund',
    requestKey: `refund-${orderId}`,
    amountMinor: 500,
    reason: 'damaged',
    actor: ada,
    currency: 'EUR',
  });
  return { ...ctx, operation: op.id };
}

/** Every kind of change the kit makes to an order. */
const KINDS: Kind[] = [
  {
    name: 'an attempt started',
    setup: async () => ({}),
    change: (store, id) => store.orders.startAttempt(id, { kind: 'card', mode: 'auth' }),
    version: 1,
    line: { source: 'api', outcome: 'applied', detail: /^card attempt started$/ },
    events: [],
    also: (b, a) => expect(a.attempts.length - b.attempts.length).to.equal(1),
    failAt: ['order_history'],
  },
  {
    name: 'an attempt withdrawn (the gateway refused it before anything existed there)',
    setup: async (store, id) => {
      const s = await store.orders.startAttempt(id, { kind: 'redirect' });
      return { attempt: s.attempt.id, previous: JSON.stringify(s.previous) };
    },
    change: (store, id, ctx) => store.orders.withdrawAttempt(id, ctx.attempt!, JSON.parse(ctx.previous!)),
    version: 1,
    line: null,
    events: [],
    also: (b, a) => {
      expect(a.attempts.length - b.attempts.length).to.equal(-1);
      // Its own line goes with it: the order reads as if it never started.
      expect(b.history).to.have.length(1);
      expect(a.history).to.deep.equal([]);
      expect(a.order).to.include({ status: 'pending', current_attempt_id: null });
    },
    failAt: ['payment_attempts'],
  },
  {
    name: "the gateway's news applied (an authorisation)",
    setup: started,
    change: (store, id, ctx) =>
      store.orders.transition({ orderId: id, attemptId: ctx.attempt! }, () => ({
        change: news(ctx, 'authorized', 'ev_auth'),
        result: null,
      })),
    version: 1,
    line: { source: 'webhook', outcome: 'applied', detail: /^$/ },
    events: ['order.authorized'],
    failAt: ['order_history', 'order_events'],
  },
  {
    name: 'a chargeback (a dispute opened)',
    setup: paid,
    change: (store, id, ctx) =>
      store.orders.transition({ orderId: id, attemptId: ctx.attempt! }, (_o, _a, now) => ({
        change: chargeback(ctx, now),
        result: null,
      })),
    version: 1,
    line: { source: 'webhook', outcome: 'applied', detail: /^$/ },
    events: ['order.disputed'],
    also: (b, a) => {
      expect(b.disputes).to.deep.equal([]);
      expect(a.disputes).to.have.length(1);
      expect(a.disputes[0]).to.include({ outcome: 'open', amount_minor: 1500 });
    },
    failAt: ['order_history', 'order_events'],
  },
  {
    name: 'an order with no attempt flagged (money with its reference)',
    setup: async () => ({}),
    change: (store, id) =>
      store.orders.flagWithoutAttempt(id, {
        reason: 'money with its reference',
        source: 'poll',
        sourceId: 'poll:x',
      }),
    version: 1,
    line: { source: 'poll', outcome: 'flagged', detail: /^money with its reference$/ },
    events: ['order.needs_review'],
    failAt: ['order_history', 'order_events'],
  },
  {
    name: 'a review resolved by a person',
    setup: async (store, id) => {
      await store.orders.flagWithoutAttempt(id, {
        reason: 'amount differs',
        source: 'poll',
        sourceId: 'poll:y',
      });
      return {};
    },
    change: (store, id) =>
      store.reviews.resolve(id, { actor: ada, resolution: 'accepted', note: 'the bank confirmed it' }),
    version: 1,
    line: {
      source: 'api',
      outcome: 'resolved',
      detail: /by ada \(finance\): the bank confirmed it; cleared: amount differs/,
    },
    events: [],
    also: (b, a) => {
      expect(a.order).to.include({ needs_review: 0, review_reason: null });
      expect(a.audit.length - b.audit.length).to.equal(1);
      expect(a.audit.at(-1)).to.include({ action: 'review.resolve', actor: 'ada' });
    },
    failAt: ['order_history', 'audit_log'],
  },
  {
    name: "an operator's refund stored before its call",
    setup: paid,
    change: (store, id, ctx) =>
      store.operations.create({
        orderId: id,
        attemptId: ctx.attempt!,
        operation: 'refund',
        requestKey: 'refund-1',
        amountMinor: 500,
        reason: 'damaged',
        actor: ada,
        currency: 'EUR',
      }),
    version: 0,
    line: {
      source: 'api',
      outcome: 'requested',
      detail: /^refund of 5\.00 EUR by ada \(finance\): damaged$/,
    },
    events: [],
    also: (b, a) => {
      expect(a.operations.length - b.operations.length).to.equal(1);
      expect(a.operations[0]).to.include({ operation: 'refund', status: 'pending', amount_minor: 500 });
      expect(a.audit.length - b.audit.length).to.equal(1);
    },
    failAt: ['order_history', 'audit_log'],
  },
  {
    name: 'an operation the gateway refused',
    setup: refundRequested,
    change: async (store, id, ctx) => {
      const op = (await store.operations.find(id, 'refund', `refund-${id}`))!;
      expect(op.id).to.equal(ctx.operation);
      return store.operations.settle(op, {
        status: 'failed',
        code: 'ERR_REFUND_EXCEEDED',
        message: 'too much',
      });
    },
    version: 0,
    line: { source: 'api', outcome: 'refused', detail: /^refund of 5\.00 EUR refused: ERR_REFUND_EXCEEDED$/ },
    events: [],
    also: (b, a) => {
      expect(b.operations[0]).to.include({ status: 'pending' });
      expect(a.operations[0]).to.include({ status: 'failed', error_code: 'ERR_REFUND_EXCEEDED' });
    },
    failAt: ['order_history'],
  },
  {
    name: 'an order closed by ORDER_TTL (no payment in time)',
    setup: async () => ({}),
    change: (store, id) =>
      store.closures.close(id, {
        reason: 'expired',
        actor: null,
        note: 'no payment within ORDER_TTL (1d)',
        sourceId: 'expiry:1',
      }),
    version: 1,
    line: {
      source: 'api',
      outcome: 'applied',
      detail: /^closed \(expired\): no payment within ORDER_TTL \(1d\)$/,
    },
    events: ['order.closed'],
    also: (b, a) => {
      expect(a.order).to.include({ status: 'closed', closed_reason: 'expired', next_poll_at: null });
      expect(a.order.closed_at).to.be.instanceOf(Date);
      expect(a.audit.length - b.audit.length, 'the kit, not a person: no audit line').to.equal(0);
    },
    failAt: ['order_history', 'order_events'],
  },
  {
    name: 'an order cancelled by a person while a 3DS challenge held card data',
    setup: async (store, id) => {
      const { attempt } = await store.orders.startAttempt(id, { kind: 'card', mode: 'sale' });
      await store.holds.put(attempt.id, 'sealed-card-data', new Date(Date.parse('2030-01-01T00:00:00Z')));
      return { attempt: attempt.id };
    },
    change: (store, id) =>
      store.closures.close(id, {
        reason: 'cancelled',
        actor: ada,
        note: 'out of stock',
        sourceId: 'cancel:req_1',
      }),
    version: 1,
    line: {
      source: 'api',
      outcome: 'applied',
      detail: /^closed \(cancelled\) by ada \(finance\): out of stock$/,
    },
    events: ['order.closed'],
    also: (b, a) => {
      expect(a.order).to.include({ status: 'closed', closed_reason: 'cancelled' });
      expect(b.attempts[0]).to.include({ hold_sealed: 'sealed-card-data' });
      // The challenge pays nothing afterwards: its card data is gone, its hold ends now.
      expect(a.attempts[0]).to.include({ hold_sealed: null });
      expect(a.audit.length - b.audit.length).to.equal(1);
      expect(a.audit.at(-1)).to.include({ action: 'order.cancel', actor: 'ada', reason: 'out of stock' });
    },
    failAt: ['order_history', 'order_events', 'audit_log'],
  },
  {
    name: 'a customer erased (their fields replaced by the marker, the money kept)',
    customer: { merchant_customer_id: 'cus-writer', email: 'ada@example.com', name: 'Ada Lovelace' },
    setup: async () => ({}),
    change: (store, id) =>
      store.orders.eraseCustomer(
        id,
        { ...erasedCustomer(new Date('2026-11-20T12:00:00Z')) },
        {
          sourceId: 'erase:x',
          detail: 'customer erased by ada (finance)',
        },
      ),
    version: 1,
    keepsUpdatedAt: true,
    line: { source: 'api', outcome: 'applied', detail: /^customer erased by ada \(finance\)$/ },
    events: [],
    also: (b, a) => {
      expect(b.order.customer).to.include({ email: 'ada@example.com' });
      expect(a.order.customer).to.deep.equal({
        erased: true,
        erased_at: '2026-11-20T12:00:00.000Z',
      });
      expect(a.order).to.include({ status: b.order.status, amount_minor: b.order.amount_minor });
    },
    failAt: ['order_history'],
  },
  {
    name: 'a dispute closed lost by an operator',
    setup: chargedBack,
    change: (store, _id, ctx) => store.disputes.lose(ctx.dispute!, { actor: ada, note: 'no evidence' }),
    version: 0,
    line: { source: 'api', outcome: 'applied', detail: /lost, by ada \(finance\): no evidence$/ },
    events: [],
    also: (b, a) => {
      expect(b.disputes[0]).to.include({ outcome: 'open' });
      expect(a.disputes[0]).to.include({ outcome: 'lost', closed_by: 'ada', note: 'no evidence' });
      expect(a.audit.length - b.audit.length).to.equal(1);
    },
    failAt: ['order_history', 'audit_log'],
  },
];

/**
 * The one writer (store/order-writer.ts), driven by a table of every kind of change the kit makes to
 * an order: each bumps the version once when the row changes (never otherwise), writes one history
 * line with who and why, the outbox events the rule names, and nothing at all when its transaction
 * fails half-way.
 */
describe('merchant: every change of an order, through the one writer', () => {
  const database = `merchant_writer_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = `${ADMIN_URL}/${database}`;
  const clock = new ManualClock(Date.parse('2026-11-20T10:00:00Z'));
  let sequelize: Sequelize;
  let pool: Pool;
  let transitionPool: Pool;
  let store: Store;

  before(async () => {
    sequelize = createSequelize(url);
    await migrate(url, sequelize);
    ({ store, pool, transitionPool } = storeOn(url, sequelize, clock, 41));
  });
  after(async () => {
    await sequelize?.close();
    await pool?.end();
    await transitionPool?.end();
    await dropDatabases([database]);
  });

  const select = (sql: string, replacements: unknown[]) =>
    sequelize.query<Record<string, unknown>>(sql, { replacements, type: QueryTypes.SELECT });

  async function snapshot(orderId: string): Promise<Snapshot> {
    const [order] = await select('SELECT * FROM orders WHERE id = ?', [orderId]);
    return {
      order: order!,
      attempts: await select('SELECT * FROM payment_attempts WHERE order_id = ? ORDER BY id', [orderId]),
      history: await select('SELECT * FROM order_history WHERE order_id = ? ORDER BY id', [orderId]),
      events: await select('SELECT * FROM order_events WHERE order_id = ? ORDER BY created_at, id', [
        orderId,
      ]),
      disputes: await select('SELECT * FROM disputes WHERE order_id = ? ORDER BY id', [orderId]),
      operations: await select('SELECT * FROM gateway_operations WHERE order_id = ? ORDER BY id', [orderId]),
      audit: await select('SELECT * FROM audit_log WHERE order_id = ? ORDER BY id', [orderId]),
    };
  }

  /** Makes the database refuse the change's write of `table`, for as long as `run` runs. */
  async function failing(table: FailPoint, run: () => Promise<unknown>): Promise<unknown> {
    const on = table === 'payment_attempts' ? 'BEFORE DELETE' : 'BEFORE INSERT';
    await sequelize.query(
      `CREATE TRIGGER refuse_${table} ${on} ON ${table} FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by the test'`,
    );
    try {
      return await run().then(
        () => null,
        (e: Error) => e,
      );
    } finally {
      await sequelize.query(`DROP TRIGGER refuse_${table}`);
    }
  }

  for (const kind of KINDS)
    it(`${kind.name}: version ${kind.version ? 'bumped once' : 'kept'}, ${kind.line ? 'one history line' : 'no line'}, ${kind.events.length > 0 ? kind.events.join(', ') : 'no event'}; all or nothing`, async () => {
      clock.advance(60_000);
      const { order } = await store.orders.create({
        amountMinor: 1500,
        currency: 'EUR',
        customer: kind.customer ?? null,
      });
      const ctx = await kind.setup(store, order.id);
      clock.advance(1_000);
      const before = await snapshot(order.id);

      for (const table of kind.failAt) {
        const error = await failing(table, () => kind.change(store, order.id, ctx));
        expect(error, `the change fails at ${table}`).to.be.instanceOf(Error);
        expect(await snapshot(order.id), `nothing of it stays when ${table} refuses`).to.deep.equal(before);
      }

      await kind.change(store, order.id, ctx);
      const after = await snapshot(order.id);
      expect(after.order.version, 'version').to.equal((before.order.version as number) + kind.version);
      if (kind.version === 1)
        expect((after.order.updated_at as Date).getTime(), 'updated_at').to.equal(
          kind.keepsUpdatedAt ? (before.order.updated_at as Date).getTime() : clock.now(),
        );
      else expect(after.order.updated_at).to.deep.equal(before.order.updated_at);
      const lines = after.history.filter((h) => !before.history.some((b) => b.id === h.id));
      if (kind.line) {
        expect(lines, 'one history line').to.have.length(1);
        const line = lines[0]!;
        expect(line).to.include({
          source: kind.line.source,
          outcome: kind.line.outcome,
          status_before: before.order.status,
          status_after: after.order.status,
        });
        expect(line.source_id, 'what it came from').to.be.a('string').and.not.equal('');
        expect(String(line.detail ?? ''), 'why, and who').to.match(kind.line.detail);
      } else expect(lines, 'no history line').to.deep.equal([]);
      const events = after.events.filter((e) => !before.events.some((b) => b.id === e.id));
      expect(
        events.map((e) => e.type),
        'the order events',
      ).to.deep.equal(kind.events);
      for (const e of events) {
        const body = JSON.parse(e.payload as string);
        expect(body.data.order, 'the event shows the order as it now is').to.include({
          id: order.id,
          status: after.order.status,
        });
      }
      kind.also?.(before, after);
    });
});
