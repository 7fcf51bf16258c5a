import { Op, type Sequelize, type Transaction, UniqueConstraintError } from 'sequelize';
import { transaction } from '../../infra/database.js';
import type { Clock } from '../../shared/clock.js';
import { type RandomSource, randomId } from '../../shared/ids.js';
import { isErased } from '../customers/erasure.js';
import { countsTowardCap, TooManyAttempts } from '../orders/attempt-cap.js';
import { clientSecretHash, newClientSecret, secretMatches } from '../orders/client-secret.js';
import type { DisputeBook } from '../orders/disputes.js';
import type { MerchantFilter } from '../orders/order-merchant.js';
import { wasResolved, withReason } from '../orders/review.js';
import { statusOnNewAttempt } from '../orders/status.js';
import {
  type AttemptStart,
  type AttemptStarted,
  beforeAttempt,
  newAttempt,
  type OrderBeforeAttempt,
} from './attempt-rows.js';
import type { Statement } from './batch-writes.js';
import { bookOf } from './dispute-writes.js';
import type { HistoryEntry } from './history.js';
import { merchantWhere } from './merchant-where.js';
import { type Models, orderRecord } from './models.js';
import {
  type LockTurn,
  type OrderChange,
  OrderNotFound,
  type OrderWriter,
  type WriteTarget,
  type Written,
} from './order-writer.js';
import type { AttemptRecord, OrderRecord } from './records.js';

export type { AttemptStart, AttemptStarted, LockTurn, OrderBeforeAttempt };
export { OrderNotFound };

export class DuplicateReference extends Error {
  override name = 'DuplicateReference';
  constructor(
    message: string,
    /** The order that holds the reference (null when it could not be read: gone meanwhile). */
    readonly orderId: string | null = null,
  ) {
    super(message);
  }
}

/** A new order's id and secret, before its row is written: what a claim made with it keeps. */
export interface OrderToBe {
  orderId: string;
  clientSecret: string;
  now: Date;
}

/**
 * Rows that stand or fall with a new order, written first in its transaction (an Idempotency-Key's
 * row: store/order-requests.ts). A claim that throws makes no order.
 */
export type OrderClaim = (order: OrderToBe, tx: Transaction) => Promise<void>;

/** A new order, and its client secret: answered by POST /orders once, kept nowhere. */
export interface CreatedOrder {
  order: OrderRecord;
  clientSecret: string;
}

export interface NewOrder {
  /** The gateway merchant it is for; null: the key's own account, its id unknown. */
  merchantId?: number | null;
  amountMinor: number;
  currency: string;
  reference?: string;
  description?: string | null;
  customer?: Record<string, unknown> | null;
}

/** What one observation does to the attempt and its order, as `decide` worked it out. */
export type Change = OrderChange;

/**
 * Which order and attempt a transition locks: an attempt of an order, or the current attempt of the
 * order that carries a reference (a payment the gateway made that no attempt holds yet).
 */
export type TransitionTarget = { orderId: string; attemptId: string } | { reference: string };

/**
 * What a transition does to the locked order and attempt, worked out by a pure function; `disputes`
 * is what the dispute rule knows of the attempt (orders/disputes.ts).
 */
export type Plan<T> = (
  order: OrderRecord,
  attempt: AttemptRecord,
  now: Date,
  disputes: DisputeBook,
) => { change: Change | null; result: T };

/** One transition of a batch: which order and attempt, and what becomes of them. */
export interface TransitionStep<T> {
  target: TransitionTarget;
  plan: Plan<T>;
}

/** What a transition left: the plan's result, and the order and attempt as they now stand. */
export interface Transitioned<T> {
  result: T;
  order: OrderRecord;
  attempt: AttemptRecord;
}

/**
 * Orders: made and read here; every change to one is a value handed to the one writer
 * (order-writer.ts), which locks it, writes it, its history and its events in one transaction.
 */
export class OrderStore {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly models: Models,
    private readonly writer: OrderWriter,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  /**
   * A new order is a row, not a change: nothing happened to it yet, so it has no history or event.
   * Its client secret is made here and answered once; the row keeps only its hash. With a `claim`,
   * the claim's rows are written first, in one transaction with the order's: both or neither.
   * A reference another order holds is DuplicateReference, naming that order.
   */
  async create(input: NewOrder, claim?: OrderClaim): Promise<CreatedOrder> {
    const id = randomId('ord_', this.random);
    const clientSecret = newClientSecret(this.random);
    const now = new Date(this.clock.now());
    const values = {
      id,
      merchant_id: input.merchantId ?? null,
      reference: input.reference ?? id,
      amount_minor: input.amountMinor,
      currency: input.currency,
      description: input.description ?? null,
      customer: input.customer ?? null,
      status: 'pending' as const,
      captured_minor: null,
      failure_code: null,
      review_reason: null,
      resolved_reasons: null,
      current_attempt_id: null,
      created_at: now,
      updated_at: now,
      client_secret_hash: clientSecretHash(clientSecret),
    };
    try {
      const row = claim
        ? await transaction(this.sequelize, async (tx) => {
            await claim({ orderId: id, clientSecret, now }, tx);
            return this.models.Order.create(values, { transaction: tx });
          })
        : await this.models.Order.create(values);
      // What it was not given (next_poll_at, say) is NULL, as the record says.
      return { order: orderRecord(row), clientSecret };
    } catch (error) {
      // The order's own insert: its one unique column besides the id is the reference. A claim
      // answers its own duplicates.
      if (!(error instanceof UniqueConstraintError)) throw error;
      const holder = input.reference === undefined ? null : await this.byReference(input.reference);
      throw new DuplicateReference(`reference ${input.reference} is already used`, holder?.id ?? null);
    }
  }

  async find(id: string): Promise<OrderRecord | null> {
    const row = await this.models.Order.findByPk(id);
    return row && orderRecord(row);
  }

  /**
   * The order, for a request that presents its client secret: null for an id no order has, an order
   * without a secret, no secret and a wrong one alike (compared in constant time), so that none of
   * them can be told from another.
   */
  async findWithSecret(id: string, secret: string | undefined): Promise<OrderRecord | null> {
    const row = await this.models.Order.findByPk(id);
    return secretMatches(secret, row?.client_secret_hash ?? null) && row ? orderRecord(row) : null;
  }

  /** The order that carries a reference (unique), if any. */
  async byReference(reference: string): Promise<OrderRecord | null> {
    const row = await this.models.Order.findOne({ where: { reference } });
    return row && orderRecord(row);
  }

  /**
   * Flags an order that has no payment attempt, for a reason found outside it (gateway money that
   * carries its reference: issue 19). An order with an attempt is flagged through the apply path, as
   * a review finding on that attempt; this is the same rule for an order without one: the reason is
   * added once (withReason) and the history line written, `flagged` or, for a reason it already has
   * or a person resolved, `duplicate`. Null: the order has an attempt now (the caller goes through the
   * apply path).
   */
  async flagWithoutAttempt(
    orderId: string,
    finding: { reason: string; source: HistoryEntry['source']; sourceId: string },
  ): Promise<{ outcome: 'flagged' | 'duplicate'; order: OrderRecord } | null> {
    const done = await this.writer.one({ orderId }, ({ order }) => {
      if (order.current_attempt_id !== null) return { change: null, result: null };
      const reason = withReason(order.needs_review ? order.review_reason : null, finding.reason);
      const known =
        (order.needs_review && reason === order.review_reason) ||
        wasResolved(order.resolved_reasons, finding.reason);
      const outcome = known ? ('duplicate' as const) : ('flagged' as const);
      return {
        change: {
          order: known ? {} : { needs_review: true, review_reason: reason },
          history: {
            source: finding.source,
            sourceId: finding.sourceId,
            outcome,
            detail: known ? null : finding.reason,
          },
        },
        result: outcome,
      };
    });
    return done?.result ? { outcome: done.result, order: done.order } : null;
  }

  /**
   * The ids of the orders whose customer is `customerId` (the indexed `customer_id`), after `after`,
   * in id order: an erased order names nobody, and is not among them. `merchant`: that merchant's
   * customer's alone (platform mode: a customer id names a customer of one merchant).
   */
  async idsOfCustomer(
    customerId: string,
    after: string,
    limit: number,
    merchant?: MerchantFilter,
  ): Promise<string[]> {
    const rows = await this.models.Order.findAll({
      attributes: ['id'],
      where: {
        ...(merchant ? merchantWhere(merchant) : {}),
        customer_id: customerId,
        id: { [Op.gt]: after },
      },
      order: [['id', 'ASC']],
      limit,
    });
    return rows.map((r) => r.id);
  }

  /**
   * Forgets the order's customer (issue 43, part 4): `customer` becomes `marker`, on the row and in
   * the bodies of the order's events in the outbox, with a history line; every fact of the money stays
   * as it is. `scrub` answers, from what `customer` was, the other rows that lose the person with it
   * (the kept webhook payloads, a held payment's sealed details): written in the same transaction, so
   * an erasure that stops part-way leaves the order as it was, for the next one to find. Answers what
   * `customer` was; null when the order names nobody now (erased already: an erasure is idempotent).
   */
  async eraseCustomer(
    orderId: string,
    marker: Record<string, unknown>,
    line: { sourceId: string; detail: string },
    scrub: (customer: Record<string, unknown>) => readonly Statement[] = () => [],
  ): Promise<Record<string, unknown> | null> {
    const done = await this.writer.one({ orderId }, ({ order }) =>
      order.customer === null || isErased(order.customer)
        ? { change: null, result: null }
        : {
            change: {
              erasure: { customer: marker },
              history: { source: 'api', sourceId: line.sourceId, outcome: 'applied', detail: line.detail },
              also: scrub(order.customer),
            },
            result: order.customer,
          },
    );
    return done!.result;
  }

  /** A new attempt supersedes the last; the order goes back to pending (merchant.md: "a new attempt may follow"). */
  async startAttempt(orderId: string, input: AttemptStart): Promise<AttemptStarted> {
    const id = randomId('att_', this.random);
    const done = await this.writer.one({ orderId }, ({ order, attempts, holding }, now) => {
      const status = statusOnNewAttempt(
        { status: order.status, closedReason: order.closed_reason },
        input.adopting,
      );
      // Counted under the order's lock: two tries at once cannot both pass the last place.
      if (input.maxFailedAttempts != null) {
        const failed = attempts.filter(
          (a) => a.status === 'failed' && countsTowardCap(a.failure_code),
        ).length;
        if (failed >= input.maxFailedAttempts)
          throw new TooManyAttempts(orderId, failed, input.maxFailedAttempts);
      }
      const started = newAttempt(id, orderId, input, now);
      return {
        change: {
          started,
          order: {
            status,
            current_attempt_id: id,
            failure_code: null,
            captured_minor: null,
            refunded_minor: 0,
            disputed_minor: 0,
            // Nothing at the gateway to ask about yet: the attempt's first answer schedules the poll.
            next_poll_at: null,
          },
          history: {
            source: 'api',
            sourceId: `attempt:${id}`,
            outcome: 'applied',
            detail: input.detail ?? `${input.kind} attempt started`,
          },
        },
        result: { previous: beforeAttempt(order), replacedChallenges: [...holding] },
      };
    });
    return { order: done!.order, attempt: done!.attempt!, ...done!.result };
  }

  /**
   * An attempt the gateway refused before anything existed there (a method it does not offer, a
   * field it rejects): undone, as if it never started, so a typo leaves the order as it was. Nothing
   * is lost: no transaction, session or money exists for it. A no-op once another attempt followed.
   */
  async withdrawAttempt(orderId: string, attemptId: string, previous: OrderBeforeAttempt): Promise<void> {
    await this.writer.one({ orderId }, ({ order }) =>
      order.current_attempt_id === attemptId
        ? { change: { order: previous, withdrawn: { before: previous } }, result: null }
        : { change: null, result: null },
    );
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

  /** Many transitions in one database transaction (the worker's batches): OrderWriter.write. */
  async transitionMany<T>(
    steps: readonly TransitionStep<T>[],
    turn?: LockTurn,
  ): Promise<(Transitioned<T> | null | Error)[]> {
    const done = await this.writer.write(
      steps.map((s) => ({
        target: s.target satisfies WriteTarget,
        plan: ({ order, attempt, disputes, reversals }, now) =>
          s.plan(order, attempt!, now, bookOf(disputes, reversals, attempt!.id)),
      })),
      turn,
    );
    return done as ((Written<T> & { attempt: AttemptRecord }) | null | Error)[];
  }
}
