import type { Pool, RowDataPacket } from 'mysql2/promise';
import { lockConflict } from '../../infra/database.js';
import type { Clock } from '../../shared/clock.js';
import { type RandomSource, randomId } from '../../shared/ids.js';
import type { DisputePlan } from '../orders/disputes.js';
import { orderEventsOf } from '../orders/order-events.js';
import { orderEventPayload } from '../orders/order-view.js';
import { BatchWrites, isStaleRow, StaleRow, type Statement } from './batch-writes.js';
import { disputeFrom, disputesRead, planWrites, reversalsRead } from './dispute-writes.js';
import { type HistoryEntry, historyRow } from './history.js';
import { processedMarks } from './inbox.js';
import type { AttemptRecord, DisputeRecord, OrderRecord, ReversalRecord } from './records.js';
import { ATTEMPTS, ORDERS, recordFrom, selectList } from './tables.js';

/*
 * The one writer of an order. Every change the kit makes to an order (gateway news through `decide`,
 * an attempt started or withdrawn, a review flag and its resolution, a dispute, an operator's request
 * recorded, its customer erased) is an `OrderChange` value handed to `OrderWriter.write`, which in one
 * transaction locks the order (and reads its attempts), lets a pure plan say what changes, and writes
 * the row (its version bumped once, `updated_at` its time, when a column of it changes), the history
 * line and the outbox events that `orderEventsOf` names.
 *
 * Nothing else in src/ updates `orders`, inserts into `order_history` or `order_events`, or rewrites an
 * order event's body (a test reads the source to keep it so). The two exceptions are leases, not facts, and change no version: the
 * poller's `next_poll_at` lease (store/polls.ts) and the sealed card hold across a 3DS challenge
 * (store/holds.ts).
 */

export class OrderNotFound extends Error {
  override name = 'OrderNotFound';
}

/** What of an attempt a change may set. */
export type AttemptChange = Partial<
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
>;

/** What of an order a change may set: its facts, never its id, amount, version or time. */
export type OrderFields = Partial<
  Pick<
    OrderRecord,
    | 'status'
    | 'captured_minor'
    | 'refunded_minor'
    | 'disputed_minor'
    | 'failure_code'
    | 'needs_review'
    | 'review_reason'
    | 'resolved_reasons'
    | 'review_resolution'
    | 'review_resolved_by'
    | 'review_resolved_at'
    | 'current_attempt_id'
    | 'next_poll_at'
    | 'closed_reason'
    | 'closed_at'
  >
>;

/** The history line of a change: who or what (`source`, `sourceId`) and why (`detail`). */
export type HistoryLine = Pick<HistoryEntry, 'source' | 'sourceId' | 'outcome' | 'detail'>;

/**
 * What a change does to dispute records: the gateway's news, as the rule planned it for the step's
 * attempt (orders/disputes.ts), or an operator closing one lost.
 */
export type DisputeChange =
  | { kind: 'gateway'; plan: DisputePlan; transactionId: string | null; currency: string }
  | { kind: 'lost'; disputeId: string; by: string; note: string | null; at: Date };

/** One change of an order, as a value: what the plan of a step answers. */
export interface OrderChange {
  /** Columns of the step's attempt (the one it names, or the order's current one). */
  attempt?: AttemptChange | null;
  /** Columns of the order; only those that differ from the locked row count as a change. */
  order?: OrderFields;
  /** Null: nothing to record (a routine poll that found nothing new). */
  history?: HistoryLine | null;
  /** The inbox event this came from, marked processed in the same transaction: never one without the other. */
  processed?: { eventId: string; outcome: string } | null;
  /**
   * Ids the order's other attempts give up, because this attempt takes the payment over (an
   * ERR_DUPLICATE adopted): one attempt holds a payment, and a session id is unique.
   */
  release?: { gateway_transaction_id?: string; payment_session_id?: string } | null;
  /** What the change does to a dispute record. */
  dispute?: DisputeChange | null;
  /**
   * A new attempt, as its full row: inserted, and the step's attempt from here on (the history line
   * is its). The card data other attempts hold across a challenge is let go with it: a new attempt
   * supersedes them, so answering an old challenge later sends no card anywhere.
   */
  started?: AttemptRecord | null;
  /**
   * The card data the order's attempts hold across a 3DS challenge, let go as a new attempt's start
   * lets it go (the order closed): a challenge answered later pays nothing.
   */
  letGoHolds?: boolean;
  /**
   * The step's attempt undone, as if it never started (the gateway refused it before anything
   * existed there): deleted with its history lines. The shop was told nothing of it, and is told
   * nothing of its undoing: the events are those between `order` and the order before it started.
   */
  withdrawn?: { before: OrderFields } | null;
  /**
   * The order's customer forgotten (issue 43, part 4): `customer` becomes this marker, on the row and
   * in the body of every order event of the order already in the outbox, which holds the order as it
   * was at each event. Who paid is not a fact of the payment: the version moves (a reader holding the
   * row sees it changed), `updated_at` (the payment's last change, the poller's clock) does not, and
   * no order event is made.
   */
  erasure?: { customer: Record<string, unknown> } | null;
  /**
   * Rows of other tables that belong to the change and stand or fall with it (an operation stored
   * before its call, an audit line), written after the order's own writes.
   */
  also?: readonly Statement[];
}

/** What a plan sees: the locked rows, as plain copies. */
export interface Locked {
  order: OrderRecord;
  /** The attempt the step names, or else the order's current one; null when there is none. */
  attempt: AttemptRecord | null;
  /** Every attempt of the order. */
  attempts: readonly AttemptRecord[];
  /** The order's attempts that hold sealed card data across a 3DS challenge. */
  holding: readonly string[];
  /** The dispute the step names, read with the order; null when it names none or it does not exist. */
  dispute: DisputeRecord | null;
  /** The order's dispute records and the reversals heard of (every attempt's). */
  disputes: readonly DisputeRecord[];
  reversals: readonly ReversalRecord[];
}

/**
 * Which order a step locks: one of its attempts; the order (its current attempt, if any; and a
 * dispute of it, when named); or the order that carries a reference, with its current attempt (a
 * payment the gateway made that no attempt holds yet: none there, and the step answers null).
 */
export type WriteTarget =
  | { orderId: string; attemptId: string }
  | { orderId: string; disputeId?: string }
  | { reference: string };

/** What a step does, worked out by a pure function of the locked rows and the time. */
export type StepPlan<T> = (locked: Locked, now: Date) => { change: OrderChange | null; result: T };

export interface WriteStep<T> {
  target: WriteTarget;
  plan: StepPlan<T>;
}

/** What a step left: the plan's result, and the order and the step's attempt as they now stand. */
export interface Written<T> {
  result: T;
  order: OrderRecord;
  attempt: AttemptRecord | null;
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

/**
 * The one statement that locks orders: every order named, and only the orders. Their attempts are
 * read after it without a lock (attemptsRead): every change of an attempt is made under its order's
 * lock (here), so once the order is held its attempts stand still, save the card hold's lease
 * (store/holds.ts), and the first plain read of a transaction sees what was committed before it. A
 * lock on the attempts would also lock the gap where a new attempt goes, and two orders starting
 * attempts at once would then deadlock on each other's gap.
 */
export function lockingRead(where: string): string {
  return `SELECT ${selectList(ORDERS, 'o')} FROM orders o WHERE ${where} FOR UPDATE`;
}

/** The locked orders' attempts, and whether each holds card data (never the sealed data itself). */
export function attemptsRead(where: string): string {
  return `SELECT ${selectList(ATTEMPTS, 'a')}, a.hold_sealed IS NOT NULL AS holding
    FROM orders o JOIN payment_attempts a ON a.order_id = o.id WHERE ${where}`;
}

export class OrderWriter {
  constructor(
    /** Multiple statements a query (infra/database.ts createTransitionPool): a batch in two round trips. */
    private readonly pool: Pool,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  /** One step in its own transaction; its plan's error, or OrderNotFound, thrown. */
  async one<T>(target: WriteTarget, plan: StepPlan<T>): Promise<Written<T> | null> {
    const [done] = await this.write([{ target, plan }]);
    if (done instanceof Error) throw done;
    return done!;
  }

  /**
   * Many steps in one database transaction (the worker's batches): one locking read of every order
   * named and all its attempts, each plan in turn against the records as the steps before it left them
   * (so two events of one order apply in their order), then every write and the COMMIT in one round
   * trip. Answers each step in order: what it left, null (a reference nobody carries), or its own
   * Error (an order that does not exist, a plan that threw). A deadlock with another batch runs the
   * whole batch again; a write that fails runs each step alone, so only its own step fails.
   */
  async write<T>(steps: readonly WriteStep<T>[], turn?: LockTurn): Promise<(Written<T> | null | Error)[]> {
    try {
      return await this.#withRetries(steps, turn);
    } finally {
      turn?.locked(); // whatever happened, the batches after it may lock
    }
  }

  async #withRetries<T>(
    steps: readonly WriteStep<T>[],
    turn: LockTurn | undefined,
  ): Promise<(Written<T> | null | Error)[]> {
    for (let tries = 1; ; tries++) {
      try {
        return await this.#batch(steps, turn);
      } catch (error) {
        // A deadlock or lock wait with another batch, or an order changed since it was read: the
        // batch is run again, from its read.
        if ((lockConflict(error) || error instanceof StaleRow) && tries < 3) continue;
        if (steps.length === 1) throw error;
        const alone: (Written<T> | null | Error)[] = [];
        for (const step of steps)
          alone.push(
            await this.write([step]).then(
              (r) => r[0]!,
              (e: Error) => e,
            ),
          );
        return alone;
      }
    }
  }

  async #batch<T>(
    steps: readonly WriteStep<T>[],
    turn: LockTurn | undefined,
  ): Promise<(Written<T> | null | Error)[]> {
    // mysql2 directly: every observation of every source comes through here (the worker's hot path).
    // Two round trips: the transaction's start with the lock, then every write with the COMMIT. On
    // this machine a round trip costs more CPU than the statements it carries (npm run bench).
    const db = await this.pool.getConnection();
    try {
      const ids = steps.flatMap((s) => ('orderId' in s.target ? [s.target.orderId] : []));
      const references = steps.flatMap((s) => ('reference' in s.target ? [s.target.reference] : []));
      const where = [
        ids.length > 0 ? 'o.id IN (?)' : null,
        references.length > 0 ? 'o.reference IN (?)' : null,
      ]
        .filter(Boolean)
        .join(' OR ');
      const values: unknown[] = [
        ...(ids.length > 0 ? [ids] : []),
        ...(references.length > 0 ? [references] : []),
      ];
      await turn?.after;
      // The locked orders' disputes come with them: the dispute rule plans from them (orders/disputes.ts).
      const reads = [lockingRead, attemptsRead, disputesRead, reversalsRead].map((read) => read(where));
      const [opened] = await db.query<RowDataPacket[][]>(
        { sql: `START TRANSACTION; ${reads.join('; ')}`, nestTables: true },
        reads.flatMap(() => values),
      );
      turn?.locked();
      const rows = new LockedRows(opened[1]!, opened[2]!, opened[3]!, opened[4]!);
      const now = new Date(this.clock.now());
      const writes = new BatchWrites();
      const marks: { eventId: string; outcome: string }[] = [];
      const answers = steps.map((step): Written<T> | null | Error => {
        const locked = rows.view(step.target);
        if (locked instanceof Error || locked === null) return locked;
        let planned: { change: OrderChange | null; result: T };
        try {
          planned = step.plan(locked, now);
        } catch (error) {
          return error as Error;
        }
        const change = planned.change;
        if (change?.processed) marks.push(change.processed);
        const done = change ? this.#changeWrites(writes, rows, locked, change, now) : locked;
        return { result: planned.result, order: done.order, attempt: done.attempt };
      });
      const mark = processedMarks(marks, now);
      if (mark) writes.last(mark);
      // A statement that fails stops the ones after it, COMMIT included: the catch rolls back. An order
      // whose version is not the one read fails its statement (batch-writes.ts updatesOf): under the
      // lock nothing changes it, but should anything, it is read again, not overwritten.
      const all = writes.text('COMMIT');
      await db.query(all.sql, all.values);
      return answers;
    } catch (error) {
      await db.rollback().catch(() => {});
      if (isStaleRow(error, ORDERS)) throw new StaleRow('an order changed since its batch read it');
      throw error;
    } finally {
      db.release();
    }
  }

  /**
   * The writes of one change to a locked order, added to `writes`; `rows` then holds the records as
   * they stand after it, for the steps after it.
   */
  #changeWrites(
    writes: BatchWrites,
    rows: LockedRows,
    locked: Locked,
    change: OrderChange,
    now: Date,
  ): { order: OrderRecord; attempt: AttemptRecord | null } {
    const before = locked.order;
    let attempt = locked.attempt;
    let letGo: readonly string[] = change.letGoHolds ? locked.holding : [];
    if (change.started) {
      attempt = change.started;
      writes.create(ATTEMPTS, attempt);
      letGo = locked.holding.filter((id) => id !== attempt!.id);
      rows.started(attempt);
    }
    if (letGo.length > 0) {
      // Left expiring now, without its card: should a new attempt be withdrawn and the process die
      // before the old challenge is ended, the holds job ends it (HoldStore.take: expired).
      writes.statement({
        sql: 'UPDATE payment_attempts SET hold_sealed = NULL, hold_expires_at = ?, updated_at = ? WHERE id IN (?)',
        values: [now, now, letGo],
      });
      rows.letGo(letGo);
    }
    if (attempt) {
      for (const [column, id] of Object.entries(change.release ?? {}))
        for (const other of rows.attemptsOf(before.id))
          if (other.id !== attempt.id && other[column as keyof AttemptRecord] === id) {
            const released = { ...other, [column]: null };
            writes.update(ATTEMPTS, other, released, { [column]: null });
            rows.setAttempt(released);
          }
      const attemptChange = change.attempt ?? {};
      if (Object.keys(attemptChange).length > 0) {
        const was = attempt;
        attempt = { ...attempt, ...attemptChange, updated_at: now };
        writes.update(ATTEMPTS, was, attempt, { ...attemptChange, updated_at: now });
        rows.setAttempt(attempt);
      }
    }
    const changed = Object.entries(change.order ?? {}).filter(
      ([field, value]) => !same(before[field as keyof OrderRecord], value),
    );
    const erased =
      change.erasure && JSON.stringify(before.customer) !== JSON.stringify(change.erasure.customer)
        ? change.erasure.customer
        : null;
    let after = before;
    if (changed.length > 0 || erased) {
      const columns = {
        ...Object.fromEntries(changed),
        ...(erased ? { customer: erased } : {}),
        version: before.version + 1,
        // A payment's change only: an erasure alone leaves the payment's age where it was.
        ...(changed.length > 0 ? { updated_at: now } : {}),
      };
      after = { ...before, ...columns } as OrderRecord;
      writes.update(ORDERS, before, after, columns);
      rows.setOrder(after);
    }
    if (erased)
      // The outbox's bodies of the order, already written: the order as each event told it, less its customer.
      writes.statement({
        sql: `UPDATE order_events SET payload = JSON_SET(payload, '$.data.order.customer', JSON_QUERY(?, '$'))
               WHERE order_id = ?`,
        values: [JSON.stringify(erased), before.id],
      });
    if (change.withdrawn && attempt) {
      writes.statement({
        sql: 'DELETE FROM order_history WHERE order_id = ? AND attempt_id = ?',
        values: [before.id, attempt.id],
      });
      writes.statement({ sql: 'DELETE FROM payment_attempts WHERE id = ?', values: [attempt.id] });
      rows.withdrawn(attempt.id);
    }
    if (change.history)
      writes.insert(
        'order_history',
        historyRow(
          {
            ...change.history,
            orderId: before.id,
            attemptId: attempt?.id ?? null,
            statusBefore: before.status,
            statusAfter: after.status,
          },
          now,
        ),
      );
    if (change.dispute) this.#disputeWrite(writes, rows, change.dispute, before.id, attempt);
    for (const s of change.also ?? []) writes.statement(s);
    // What the shop is told, in the same transaction (the outbox): what the rule names for the move
    // from what it last knew to what is now.
    const known = change.withdrawn ? { ...before, ...change.withdrawn.before } : before;
    if (changed.length > 0 && orderEventsOf(known, after).length > 0) {
      const current = after.current_attempt_id ? rows.attempt(after.current_attempt_id) : null;
      for (const type of orderEventsOf(known, after))
        writes.insert('order_events', {
          id: randomId('oev_', this.random),
          order_id: after.id,
          type,
          payload: JSON.stringify(orderEventPayload(type, now, after, current)),
          created_at: now,
        });
    }
    return { order: after, attempt: change.withdrawn ? null : attempt };
  }

  /**
   * A dispute change's writes: the rule's plan for the step's attempt (records made or changed,
   * reversals kept), or an operator closing the named one lost. `rows` then holds them as they stand.
   */
  #disputeWrite(
    writes: BatchWrites,
    rows: LockedRows,
    d: DisputeChange,
    orderId: string,
    attempt: AttemptRecord | null,
  ): void {
    if (d.kind === 'lost') {
      writes.statement({
        sql: `UPDATE disputes SET outcome = 'lost', closed_at = ?, closed_by = ?, note = ? WHERE id = ?`,
        values: [d.at, d.by, d.note, d.disputeId],
      });
      const lost = rows.dispute(d.disputeId);
      if (lost) rows.setDispute({ ...lost, outcome: 'lost', closed_at: d.at, closed_by: d.by, note: d.note });
      return;
    }
    if (!attempt) return;
    const owner = { orderId, attemptId: attempt.id, transactionId: d.transactionId, currency: d.currency };
    const done = planWrites(d.plan, owner, rows.disputesById(), () => randomId('dsp_', this.random));
    for (const s of done.statements) writes.statement(s);
    for (const r of done.records) rows.setDispute(r);
    for (const r of done.reversals) rows.addReversal(r);
  }
}

/** The rows a batch locked, as records, kept as its steps change them. */
class LockedRows {
  readonly #orders = new Map<string, OrderRecord>();
  readonly #attempts = new Map<string, AttemptRecord>();
  readonly #holding = new Set<string>();
  readonly #byReference = new Map<string, string>();
  readonly #disputes = new Map<string, DisputeRecord>();
  readonly #reversals: ReversalRecord[] = [];

  constructor(
    orders: RowDataPacket[],
    attempts: RowDataPacket[],
    disputes: RowDataPacket[],
    reversals: RowDataPacket[],
  ) {
    for (const { o } of orders) this.#orders.set(o.id, recordFrom(ORDERS, o));
    for (const row of attempts) {
      this.#attempts.set(row.a.id, recordFrom(ATTEMPTS, row.a));
      if (Number(row[''].holding) === 1) this.#holding.add(row.a.id);
    }
    for (const o of this.#orders.values()) this.#byReference.set(o.reference, o.id);
    for (const { d } of disputes) this.#disputes.set(d.id, disputeFrom(d));
    for (const { r } of reversals) this.#reversals.push(r as ReversalRecord);
  }

  /** What a step sees; null: a reference nobody carries with an attempt; an error: nothing to lock. */
  view(t: WriteTarget): Locked | OrderNotFound | null {
    const orderId = 'reference' in t ? this.#byReference.get(t.reference) : t.orderId;
    const order = orderId === undefined ? undefined : this.#orders.get(orderId);
    if (!order) return 'reference' in t ? null : new OrderNotFound(`order ${t.orderId} does not exist`);
    const attemptId = 'attemptId' in t ? t.attemptId : order.current_attempt_id;
    const attempt = attemptId ? this.#attempts.get(attemptId) : undefined;
    if ('attemptId' in t && (!attempt || attempt.order_id !== order.id))
      return new OrderNotFound(`order ${t.orderId} has no attempt ${t.attemptId}`);
    if ('reference' in t && !attempt) return null;
    const dispute = 'disputeId' in t && t.disputeId ? this.#disputes.get(t.disputeId) : undefined;
    const attempts = this.attemptsOf(order.id);
    return {
      order: { ...order },
      attempt: attempt ? { ...attempt } : null,
      attempts: attempts.map((a) => ({ ...a })),
      holding: attempts.filter((a) => this.#holding.has(a.id)).map((a) => a.id),
      dispute: dispute && dispute.order_id === order.id ? { ...dispute } : null,
      disputes: [...this.#disputes.values()].filter((d) => d.order_id === order.id).map((d) => ({ ...d })),
      reversals: this.#reversals.filter((r) => r.order_id === order.id).map((r) => ({ ...r })),
    };
  }

  dispute(id: string): DisputeRecord | null {
    return this.#disputes.get(id) ?? null;
  }

  disputesById(): ReadonlyMap<string, DisputeRecord> {
    return this.#disputes;
  }

  setDispute(dispute: DisputeRecord): void {
    this.#disputes.set(dispute.id, dispute);
  }

  addReversal(reversal: ReversalRecord): void {
    this.#reversals.push(reversal);
  }

  attemptsOf(orderId: string): AttemptRecord[] {
    return [...this.#attempts.values()].filter((a) => a.order_id === orderId);
  }

  attempt(id: string): AttemptRecord | null {
    return this.#attempts.get(id) ?? null;
  }

  setOrder(order: OrderRecord): void {
    this.#orders.set(order.id, order);
  }

  setAttempt(attempt: AttemptRecord): void {
    this.#attempts.set(attempt.id, attempt);
  }

  started(attempt: AttemptRecord): void {
    this.#attempts.set(attempt.id, attempt);
  }

  letGo(attemptIds: readonly string[]): void {
    for (const id of attemptIds) this.#holding.delete(id);
  }

  withdrawn(attemptId: string): void {
    this.#attempts.delete(attemptId);
  }
}

/** Column values compared as stored: dates by their time. */
function same(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  return a === b;
}
