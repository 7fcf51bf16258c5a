import type { Pool, RowDataPacket } from 'mysql2/promise';
import { Op, QueryTypes, type Sequelize, type Transaction, UniqueConstraintError } from 'sequelize';
import { lockConflict, sqlTime, transaction } from '../../infra/database.js';
import type { Clock } from '../../shared/clock.js';
import { type RandomSource, randomId } from '../../shared/ids.js';
import { countsTowardCap, TooManyAttempts } from '../orders/attempt-cap.js';
import { INITIAL_PAYMENT } from '../orders/decide.js';
import type { DisputeStep } from '../orders/disputes.js';
import { orderEventsOf } from '../orders/order-events.js';
import { wasResolved, withReason } from '../orders/review.js';
import { statusOnNewAttempt } from '../orders/status.js';
import { BatchWrites } from './batch-writes.js';
import { type HistoryEntry, type HistoryStore, historyRow } from './history.js';
import { processedMarks } from './inbox.js';
import { attemptRecord, type Models, plain } from './models.js';
import { orderEventRows } from './order-event-rows.js';
import type { AttemptRecord, OrderRecord } from './records.js';
import { ATTEMPTS, ORDERS, recordFrom, selectList } from './tables.js';

export class OrderNotFound extends Error {
  override name = 'OrderNotFound';
}

export class DuplicateReference extends Error {
  override name = 'DuplicateReference';
}

export interface NewOrder {
  amountMinor: number;
  currency: string;
  reference?: string;
  description?: string | null;
  customer?: Record<string, unknown> | null;
}

/** What an order was before an attempt started: what withdrawing the attempt restores. */
export type OrderBeforeAttempt = Pick<
  OrderRecord,
  | 'status'
  | 'current_attempt_id'
  | 'failure_code'
  | 'captured_minor'
  | 'refunded_minor'
  | 'disputed_minor'
  | 'next_poll_at'
>;

/** What one observation does to the attempt and its order, as `decide` worked it out. */
export interface Change {
  /** Null (or empty): the attempt stays as it is. */
  attempt: Partial<
    Pick<
      AttemptRecord,
      | 'kind'
      | 'mode'
      | 'payment_method'
      | 'gateway_transaction_id'
      | 'payment_session_id'
      | 'verification_id'
      | 'session_expires_at'
      | 'action_url'
      | 'capture_before'
      | 'money_at'
      | 'status'
      | 'captured_minor'
      | 'refunded_minor'
      | 'disputed_minor'
      | 'capture_id'
      | 'failure_code'
      | 'gateway_status'
      | 'gateway_amount_minor'
      | 'gateway_currency'
      | 'gateway_captured_minor'
      | 'gateway_refunded_minor'
      | 'observed_at'
      | 'observed_source'
    >
  > | null;
  order: Partial<
    Pick<
      OrderRecord,
      | 'status'
      | 'captured_minor'
      | 'refunded_minor'
      | 'disputed_minor'
      | 'failure_code'
      | 'needs_review'
      | 'review_reason'
      | 'next_poll_at'
    >
  >;
  /** Null: nothing to record (a routine poll that found nothing new). */
  history: Pick<HistoryEntry, 'source' | 'sourceId' | 'outcome' | 'detail'> | null;
  /** The inbox event this came from, marked processed in the same transaction: never one without the other. */
  processed?: { eventId: string; outcome: string } | null;
  /**
   * Ids the order's other attempts give up, because this attempt takes the payment over (an
   * ERR_DUPLICATE adopted): one attempt holds a payment, and a session id is unique.
   */
  release?: { gateway_transaction_id?: string; payment_session_id?: string } | null;
  /** What the change does to the attempt's dispute record (orders/disputes.ts), at the gateway's time. */
  dispute?: { step: DisputeStep; at: Date; transactionId: string | null; currency: string } | null;
}

/**
 * Which order and attempt a transition locks: an attempt of an order, or the current attempt of the
 * order that carries a reference (a payment the gateway made that no attempt holds yet).
 */
export type TransitionTarget = { orderId: string; attemptId: string } | { reference: string };

/** What a transition does to the locked order and attempt, worked out by a pure function. */
export type Plan<T> = (
  order: OrderRecord,
  attempt: AttemptRecord,
  now: Date,
) => { change: Change | null; result: T };

/** One transition of a batch: which order and attempt, and what becomes of them. */
export interface TransitionStep<T> {
  target: TransitionTarget;
  plan: Plan<T>;
}

/**
 * The one statement that locks orders, and the only way an order is locked: the worker's batches
 * read every order they name with all its attempts (`withAttempts`), a single change under a
 * Sequelize transaction reads its order alone (lockOrder). Each order before its attempts: the same
 * order of locks everywhere.
 */
export function lockingRead(where: string, withAttempts: boolean): string {
  const attempts = withAttempts ? `, ${selectList(ATTEMPTS, 'a')}` : '';
  const join = withAttempts ? ' LEFT JOIN payment_attempts a ON a.order_id = o.id' : '';
  return `SELECT ${selectList(ORDERS, 'o')}${attempts} FROM orders o${join} WHERE ${where} FOR UPDATE`;
}

/** Locks an order in `tx` (lockingRead) and answers its record; OrderNotFound when there is none. */
export async function lockOrder(
  sequelize: Sequelize,
  orderId: string,
  tx: Transaction,
): Promise<OrderRecord> {
  const [row] = await sequelize.query<Record<string, unknown>>(lockingRead('o.id = ?', false), {
    replacements: [orderId],
    transaction: tx,
    type: QueryTypes.SELECT,
  });
  if (!row) throw new OrderNotFound(`order ${orderId} does not exist`);
  return recordFrom(ORDERS, row);
}

/**
 * Writes a change to an order lockOrder locked in `tx` (a change counts in `version`, and
 * `updated_at` says when it was); answers the order as it now stands.
 */
export async function updateOrder(
  models: Models,
  order: OrderRecord,
  change: Partial<OrderRecord>,
  now: Date,
  tx: Transaction,
): Promise<OrderRecord> {
  const values = { ...change, version: order.version + 1, updated_at: now };
  await models.Order.update(values, { where: { id: order.id }, transaction: tx });
  return { ...order, ...values };
}

/**
 * Where a batch's locking read stands among others (the worker's batches): it waits for `after` (the
 * batch before it holds its locks) and says `locked` once it holds its own. An order's rows are then
 * locked, so changed, by the batches in their order, while their other work overlaps.
 */
export interface LockTurn {
  after: Promise<unknown>;
  locked: () => void;
}

/** What a transition left: the plan's result, and the order and attempt as they now stand. */
export interface Transitioned<T> {
  result: T;
  order: OrderRecord;
  attempt: AttemptRecord;
}

/**
 * Orders, and the writes that change an order together with its attempts. Every status change runs
 * under a row lock on the order (then its attempt: the same order of locks everywhere), with its
 * history line in the same transaction: MariaDB's repeatable read would otherwise lose updates.
 */
export class OrderStore {
  constructor(
    private readonly sequelize: Sequelize,
    /** Multiple statements a query: the transition's round trips (infra/database.ts). */
    private readonly pool: Pool,
    private readonly models: Models,
    private readonly history: HistoryStore,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  async create(input: NewOrder): Promise<OrderRecord> {
    const id = randomId('ord_', this.random);
    const now = this.#now();
    try {
      const row = await this.models.Order.create({
        id,
        reference: input.reference ?? id,
        amount_minor: input.amountMinor,
        currency: input.currency,
        description: input.description ?? null,
        customer: input.customer ?? null,
        status: 'pending',
        captured_minor: null,
        failure_code: null,
        review_reason: null,
        resolved_reasons: null,
        current_attempt_id: null,
        created_at: now,
        updated_at: now,
      });
      // What it was not given (next_poll_at, say) is NULL, as the record says.
      return recordFrom(ORDERS, plain(row));
    } catch (error) {
      if (error instanceof UniqueConstraintError)
        throw new DuplicateReference(`reference ${input.reference} is already used`);
      throw error;
    }
  }

  async find(id: string): Promise<OrderRecord | null> {
    const row = await this.models.Order.findByPk(id);
    return row && plain(row);
  }

  /** The order that carries a reference (unique), if any. */
  async byReference(reference: string): Promise<OrderRecord | null> {
    const row = await this.models.Order.findOne({ where: { reference } });
    return row && plain(row);
  }

  /**
   * Flags an order that has no payment attempt, for a reason found outside it (gateway money that
   * carries its reference: issue 19). An order with an attempt is flagged through the apply path, as
   * a review finding on that attempt; this is the same rule for an order without one, which the apply
   * path cannot lock: under the order's lock, the reason is added once (withReason) and the history
   * line written, `flagged` or, for a reason it already has, `duplicate`. Null: the order has an
   * attempt now (the caller goes through the apply path).
   */
  async flagWithoutAttempt(
    orderId: string,
    finding: { reason: string; source: HistoryEntry['source']; sourceId: string },
  ): Promise<{ outcome: 'flagged' | 'duplicate'; order: OrderRecord } | null> {
    return transaction(this.sequelize, async (tx) => {
      const order = await this.#lock(orderId, tx);
      if (order.current_attempt_id !== null) return null;
      const reason = withReason(order.needs_review ? order.review_reason : null, finding.reason);
      // Known: asked already, or resolved by a person already (the review queue).
      const known =
        (order.needs_review && reason === order.review_reason) ||
        wasResolved(order.resolved_reasons, finding.reason);
      let after = order;
      if (!known) {
        const now = this.#now();
        after = await updateOrder(this.models, order, { needs_review: true, review_reason: reason }, now, tx);
        for (const row of orderEventRows(order, after, null, now, this.random))
          await this.sequelize.query(
            'INSERT INTO order_events (id, order_id, type, payload, created_at) VALUES (?, ?, ?, ?, ?)',
            {
              replacements: [row.id, row.order_id, row.type, row.payload, sqlTime(row.created_at)],
              transaction: tx,
            },
          );
      }
      await this.history.record(
        {
          orderId,
          attemptId: null,
          source: finding.source,
          sourceId: finding.sourceId,
          statusBefore: order.status,
          statusAfter: order.status,
          outcome: known ? 'duplicate' : 'flagged',
          detail: known ? null : finding.reason,
        },
        tx,
      );
      return { outcome: known ? 'duplicate' : 'flagged', order: after };
    });
  }

  /** A new attempt supersedes the last; the order goes back to pending (merchant.md: "a new attempt may follow"). */
  async startAttempt(
    orderId: string,
    input: {
      kind: 'card' | 'redirect';
      mode?: 'sale' | 'auth';
      paymentMethod?: string;
      /** The saved card that pays (`card_...`). */
      savedCardId?: string;
      /** The cap on failed attempts (README, Limits): reached, TooManyAttempts and nothing starts. */
      maxFailedAttempts?: number | null;
      /** What the history line says of it beyond its kind: the saved card that pays, say. */
      detail?: string;
    },
  ): Promise<{
    order: OrderRecord;
    attempt: AttemptRecord;
    previous: OrderBeforeAttempt;
    /** Earlier attempts whose 3DS challenge can no longer finish: their held card data is erased. */
    replacedChallenges: string[];
  }> {
    return transaction(this.sequelize, async (tx) => {
      const order = await this.#lock(orderId, tx);
      const before = order.status;
      const status = statusOnNewAttempt(before);
      // Counted under the order's lock: two tries at once cannot both pass the last place.
      if (input.maxFailedAttempts != null) {
        const failed = await this.#failedAttempts(orderId, tx);
        if (failed >= input.maxFailedAttempts)
          throw new TooManyAttempts(orderId, failed, input.maxFailedAttempts);
      }
      const previous: OrderBeforeAttempt = {
        status: before,
        current_attempt_id: order.current_attempt_id,
        failure_code: order.failure_code,
        captured_minor: order.captured_minor,
        refunded_minor: order.refunded_minor,
        disputed_minor: order.disputed_minor,
        next_poll_at: order.next_poll_at,
      };
      const now = this.#now();
      // The card data an earlier attempt holds across its challenge goes with the attempt it served:
      // a new attempt supersedes it, so answering the old challenge later sends no card anywhere. The
      // hold is left expiring now, without its card: should this attempt be withdrawn and the process
      // die before the old challenge is ended, the holds job ends it (HoldStore.take: expired).
      const held = await this.models.Attempt.findAll({
        attributes: ['id'],
        where: { order_id: orderId, hold_sealed: { [Op.ne]: null } },
        transaction: tx,
      });
      const replacedChallenges = held.map((a) => a.id);
      if (replacedChallenges.length > 0)
        await this.models.Attempt.update(
          { hold_sealed: null, hold_expires_at: now, updated_at: now },
          { where: { id: replacedChallenges }, transaction: tx },
        );
      const attempt = await this.models.Attempt.create(
        {
          id: randomId('att_', this.random),
          order_id: orderId,
          kind: input.kind,
          mode: input.mode ?? null,
          payment_method: input.paymentMethod ?? null,
          saved_card_id: input.savedCardId ?? null,
          gateway_transaction_id: null,
          payment_session_id: null,
          verification_id: null,
          status: INITIAL_PAYMENT.status,
          captured_minor: null,
          capture_id: null,
          failure_code: null,
          hold_sealed: null,
          hold_expires_at: null,
          created_at: now,
          updated_at: now,
        },
        { transaction: tx },
      );
      const after = await updateOrder(
        this.models,
        order,
        {
          status,
          current_attempt_id: attempt.id,
          failure_code: null,
          captured_minor: null,
          refunded_minor: 0,
          disputed_minor: 0,
          // Nothing at the gateway to ask about yet: the attempt's first answer schedules the poll.
          next_poll_at: null,
        },
        now,
        tx,
      );
      await this.history.record(
        {
          orderId,
          attemptId: attempt.id,
          source: 'api',
          sourceId: `attempt:${attempt.id}`,
          statusBefore: before,
          statusAfter: status,
          outcome: 'applied',
          detail: input.detail ?? `${input.kind} attempt started`,
        },
        tx,
      );
      return { order: after, attempt: attemptRecord(attempt), previous, replacedChallenges };
    });
  }

  /**
   * An attempt the gateway refused before anything existed there (a method it does not offer, a
   * field it rejects): undone, as if it never started, so a typo leaves the order as it was. Nothing
   * is lost: no transaction, session or money exists for it. A no-op once another attempt followed.
   */
  async withdrawAttempt(orderId: string, attemptId: string, previous: OrderBeforeAttempt): Promise<void> {
    await transaction(this.sequelize, async (tx) => {
      const order = await this.#lock(orderId, tx);
      if (order.current_attempt_id !== attemptId) return;
      await this.history.eraseAttempt(orderId, attemptId, tx);
      await this.models.Attempt.destroy({ where: { id: attemptId }, transaction: tx });
      await updateOrder(this.models, order, previous, this.#now(), tx);
    });
  }

  /**
   * Locks the order and the attempt, asks `plan` what they become, and writes that with its history
   * line, all in one transaction: the only way an observation changes an order (reconciler/apply.ts).
   * `plan` is pure: it sees the locked rows as plain records and the time; a null change writes
   * nothing. The order's row is written only when something in it changes, so `updated_at` is its last
   * change (what the polling schedule counts from) and `version` counts changes. Null: a reference
   * that no order with an attempt carries.
   */
  async transition<T>(target: TransitionTarget, plan: Plan<T>): Promise<Transitioned<T> | null> {
    const [done] = await this.transitionMany([{ target, plan }]);
    if (done instanceof Error) throw done;
    return done!;
  }

  /**
   * Many transitions in one database transaction (the worker's batches): one locking read of every
   * order named and all its attempts, each plan in turn against the records as the steps before it
   * left them (so two events of one order apply in their order), then every write and the COMMIT in
   * one round trip. Answers each step in order: what it left, null (a reference nobody carries), or
   * its own Error (an order that does not exist, a plan that threw). A deadlock with another batch
   * runs the whole batch again; a write that fails runs each step alone, so only its own step fails.
   */
  async transitionMany<T>(
    steps: readonly TransitionStep<T>[],
    turn?: LockTurn,
  ): Promise<(Transitioned<T> | null | Error)[]> {
    try {
      return await this.#transitionWithRetries(steps, turn);
    } finally {
      turn?.locked(); // whatever happened, the batches after it may lock
    }
  }

  async #transitionWithRetries<T>(
    steps: readonly TransitionStep<T>[],
    turn: LockTurn | undefined,
  ): Promise<(Transitioned<T> | null | Error)[]> {
    for (let tries = 1; ; tries++) {
      try {
        return await this.#transitionBatch(steps, turn);
      } catch (error) {
        // A deadlock or lock wait with another batch: the batch is run again.
        if (lockConflict(error) && tries < 3) continue;
        if (steps.length === 1) throw error;
        const alone: (Transitioned<T> | null | Error)[] = [];
        for (const step of steps)
          alone.push(
            await this.transitionMany([step]).then(
              (r) => r[0]!,
              (e: Error) => e,
            ),
          );
        return alone;
      }
    }
  }

  async #transitionBatch<T>(
    steps: readonly TransitionStep<T>[],
    turn: LockTurn | undefined,
  ): Promise<(Transitioned<T> | null | Error)[]> {
    // mysql2 directly: every observation of every source comes through here (the worker's hot path).
    // Two round trips: the transaction's start with the lock, then every write with the COMMIT. On
    // this machine a round trip costs more CPU than the statements it carries (npm run bench).
    const db = await this.pool.getConnection();
    try {
      const ids = steps.flatMap((s) => ('orderId' in s.target ? [s.target.orderId] : []));
      const references = steps.flatMap((s) => ('reference' in s.target ? [s.target.reference] : []));
      // One statement locks them all, each order before its attempts (the same order of locks everywhere).
      await turn?.after;
      const [opened] = await db.query<RowDataPacket[][]>(
        {
          sql: `START TRANSACTION; ${lockingRead(
            [ids.length > 0 ? 'o.id IN (?)' : null, references.length > 0 ? 'o.reference IN (?)' : null]
              .filter(Boolean)
              .join(' OR '),
            true,
          )}`,
          nestTables: true,
        },
        [...(ids.length > 0 ? [ids] : []), ...(references.length > 0 ? [references] : [])],
      );
      turn?.locked();
      const orders = new Map<string, OrderRecord>();
      const attempts = new Map<string, AttemptRecord>();
      for (const row of opened[1]!) {
        if (!orders.has(row.o.id)) orders.set(row.o.id, recordFrom(ORDERS, row.o));
        if (row.a.id !== null) attempts.set(row.a.id, recordFrom(ATTEMPTS, row.a));
      }
      const byReference = new Map([...orders.values()].map((o) => [o.reference, o.id]));
      const now = this.#now();
      const writes = new BatchWrites();
      const marks: { eventId: string; outcome: string }[] = [];
      const answers = steps.map((step): Transitioned<T> | null | Error => {
        const t = step.target;
        const orderId = 'reference' in t ? byReference.get(t.reference) : t.orderId;
        const order = orderId === undefined ? undefined : orders.get(orderId);
        const attemptId = 'reference' in t ? order?.current_attempt_id : t.attemptId;
        const attempt = attemptId ? attempts.get(attemptId) : undefined;
        if (!order || !attempt || attempt.order_id !== order.id) {
          if ('reference' in t) return null;
          return new OrderNotFound(
            order ? `order ${t.orderId} has no attempt ${t.attemptId}` : `order ${t.orderId} does not exist`,
          );
        }
        let planned: { change: Change | null; result: T };
        try {
          planned = step.plan({ ...order }, { ...attempt }, now);
        } catch (error) {
          return error as Error;
        }
        const done = this.#changeWrites(writes, order, attempt, attempts, planned.change, now);
        if (planned.change?.processed) marks.push(planned.change.processed);
        orders.set(order.id, done.order);
        attempts.set(attempt.id, done.attempt);
        return { result: planned.result, order: done.order, attempt: done.attempt };
      });
      for (const mark of processedMarks(marks, now)) writes.last(mark);
      // A statement that fails stops the ones after it, COMMIT included: the catch rolls back.
      const all = writes.text('COMMIT');
      await db.query(all.sql, all.values);
      return answers;
    } catch (error) {
      await db.rollback().catch(() => {});
      throw error;
    } finally {
      db.release();
    }
  }

  /**
   * The writes of one change to a locked order and attempt, added to `writes`; the records as they
   * stand after it. `attempts` holds every attempt of the order (locked): an order event shows the
   * order's current payment, which a superseded attempt's change (a double charge flagged) must read,
   * and the ids an adopting attempt takes over are released by the others.
   */
  #changeWrites(
    writes: BatchWrites,
    before: OrderRecord,
    attempt: AttemptRecord,
    attempts: Map<string, AttemptRecord>,
    change: Change | null,
    now: Date,
  ): { order: OrderRecord; attempt: AttemptRecord } {
    for (const [column, id] of Object.entries(change?.release ?? {}))
      for (const other of attempts.values())
        if (
          other.order_id === before.id &&
          other.id !== attempt.id &&
          other[column as keyof AttemptRecord] === id
        ) {
          const released = { ...other, [column]: null };
          writes.update(ATTEMPTS, released, { [column]: null });
          attempts.set(other.id, released);
        }
    const attemptChange = change?.attempt ?? {};
    const attemptAfter =
      Object.keys(attemptChange).length > 0 ? { ...attempt, ...attemptChange, updated_at: now } : attempt;
    if (attemptAfter !== attempt)
      writes.update(ATTEMPTS, attemptAfter, { ...attemptChange, updated_at: now });
    const changed = Object.entries(change?.order ?? {}).filter(
      ([field, value]) => !same(before[field as keyof OrderRecord], value),
    );
    let after = before;
    if (changed.length > 0) {
      const columns = { ...Object.fromEntries(changed), version: before.version + 1, updated_at: now };
      after = { ...before, ...columns } as OrderRecord;
      writes.update(ORDERS, after, columns);
    }
    if (change?.history)
      writes.insert(
        'order_history',
        historyRow(
          {
            ...change.history,
            orderId: before.id,
            attemptId: attempt.id,
            statusBefore: before.status,
            statusAfter: after.status,
          },
          now,
        ),
      );
    if (change?.dispute) this.#disputeWrite(writes, change.dispute, before.id, attempt.id);
    if (changed.length > 0 && orderEventsOf(before, after).length > 0) {
      // The shop is told in the same transaction (the outbox).
      const current =
        after.current_attempt_id === attempt.id
          ? attemptAfter
          : (attempts.get(after.current_attempt_id ?? '') ?? null);
      for (const row of orderEventRows(before, after, current, now, this.random))
        writes.insert('order_events', row);
    }
    return { order: after, attempt: attemptAfter };
  }

  /**
   * The dispute record's write for a step: a chargeback opens one; another amount or a reversal
   * changes the attempt's latest one not yet won (open, or lost: a reversal overrules an operator).
   */
  #disputeWrite(
    writes: BatchWrites,
    d: NonNullable<Change['dispute']>,
    orderId: string,
    attemptId: string,
  ): void {
    const latest = `WHERE attempt_id = ? AND outcome <> 'won' ORDER BY opened_at DESC, id DESC LIMIT 1`;
    switch (d.step.kind) {
      case 'opened':
        writes.statement({
          sql: 'INSERT INTO disputes SET ?',
          values: [
            {
              id: randomId('dsp_', this.random),
              order_id: orderId,
              attempt_id: attemptId,
              transaction_id: d.transactionId,
              amount_minor: d.step.amountMinor,
              currency: d.currency,
              outcome: 'open',
              opened_at: d.at,
            },
          ],
        });
        return;
      case 'amount':
        writes.statement({
          sql: `UPDATE disputes SET amount_minor = ? ${latest}`,
          values: [d.step.amountMinor, attemptId],
        });
        return;
      case 'won':
        writes.statement({
          sql: `UPDATE disputes SET outcome = 'won', closed_at = ?, closed_by = 'gateway' ${latest}`,
          values: [d.at, attemptId],
        });
        return;
      default:
        d.step satisfies never;
    }
  }

  /** The order's failed attempts that count toward the cap on them (attempt-cap.ts). */
  async #failedAttempts(orderId: string, tx: Transaction): Promise<number> {
    const rows = await this.models.Attempt.findAll({
      attributes: ['failure_code'],
      where: { order_id: orderId, status: 'failed' },
      transaction: tx,
      raw: true,
    });
    return rows.filter((row) => countsTowardCap((row as { failure_code: string | null }).failure_code))
      .length;
  }

  #lock(orderId: string, tx: Transaction): Promise<OrderRecord> {
    return lockOrder(this.sequelize, orderId, tx);
  }

  #now(): Date {
    return new Date(this.clock.now());
  }
}

/** Column values compared as stored: dates by their time. */
function same(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  return a === b;
}
