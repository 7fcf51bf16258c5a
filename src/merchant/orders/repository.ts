import { Op, type Sequelize, type Transaction, UniqueConstraintError } from 'sequelize';
import type { AttemptRow, Models, OperationKind, OperationRow, OrderRow } from '../../infra/models.js';
import type { Clock } from '../../shared/clock.js';
import { type RandomSource, randomId } from '../../shared/ids.js';
import { type Decision, decide, INITIAL_PAYMENT } from './decide.js';
import type { Observation } from './observation.js';
import { type LocalEvent, localTransition, type OrderStatus } from './status.js';

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
  OrderRow,
  'status' | 'current_attempt_id' | 'failure_code' | 'captured_minor' | 'refunded_minor'
>;

export interface ApplyResult {
  matched: boolean;
  orderId?: string;
  decision?: Decision;
}

/**
 * The orders' only door to the database. Every status change happens here, under a row lock on the
 * order, with its history row in the same transaction (MariaDB's repeatable read would otherwise
 * lose updates). Locks are taken order first, then attempt, everywhere.
 */
export class OrderRepository {
  constructor(
    readonly sequelize: Sequelize,
    readonly models: Models,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  #now(): Date {
    return new Date(this.clock.now());
  }

  async create(input: NewOrder): Promise<OrderRow> {
    const id = randomId('ord_', this.random);
    const now = this.#now();
    try {
      return await this.models.Order.create({
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
        current_attempt_id: null,
        created_at: now,
        updated_at: now,
      });
    } catch (error) {
      if (error instanceof UniqueConstraintError)
        throw new DuplicateReference(`reference ${input.reference} is already used`);
      throw error;
    }
  }

  async find(id: string): Promise<OrderRow | null> {
    return this.models.Order.findByPk(id);
  }

  async details(id: string) {
    const order = await this.models.Order.findByPk(id);
    if (!order) return null;
    const [attempts, history] = await Promise.all([
      this.models.Attempt.findAll({ where: { order_id: id }, order: [['created_at', 'ASC']] }),
      this.models.History.findAll({ where: { order_id: id }, order: [['id', 'ASC']] }),
    ]);
    return { order, attempts, history };
  }

  async attempt(id: string): Promise<AttemptRow | null> {
    return this.models.Attempt.findByPk(id);
  }

  async attemptBy(field: 'verification_id' | 'payment_session_id' | 'gateway_transaction_id', value: string) {
    return this.models.Attempt.findOne({ where: { [field]: value } });
  }

  /** A new attempt supersedes the last; the order goes back to pending (merchant.md: "a new attempt may follow"). */
  async startAttempt(
    orderId: string,
    input: { kind: 'card' | 'redirect'; mode?: 'sale' | 'auth'; paymentMethod?: string },
  ) {
    return this.sequelize.transaction(async (tx) => {
      const order = await this.#lockOrder(orderId, tx);
      const before = order.status;
      const status = localTransition(before, 'attempt_started');
      const previous: OrderBeforeAttempt = {
        status: before,
        current_attempt_id: order.current_attempt_id,
        failure_code: order.failure_code,
        captured_minor: order.captured_minor,
        refunded_minor: order.refunded_minor,
      };
      const now = this.#now();
      const attempt = await this.models.Attempt.create(
        {
          id: randomId('att_', this.random),
          order_id: orderId,
          kind: input.kind,
          mode: input.mode ?? null,
          payment_method: input.paymentMethod ?? null,
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
      await order.update(
        {
          status,
          current_attempt_id: attempt.id,
          failure_code: null,
          captured_minor: null,
          refunded_minor: 0,
          version: order.version + 1,
          updated_at: now,
        },
        { transaction: tx },
      );
      await this.#history(
        tx,
        order.id,
        attempt.id,
        'api',
        `attempt:${attempt.id}`,
        before,
        status,
        'applied',
        `${input.kind} attempt started`,
      );
      return { order, attempt, previous };
    });
  }

  /**
   * An attempt the gateway refused before anything existed there (a method it does not offer, a
   * field it rejects): undone, as if it never started, so a typo leaves the order as it was. Nothing
   * is lost: no transaction, session or money exists for it. A no-op once another attempt followed.
   */
  async withdrawAttempt(orderId: string, attemptId: string, previous: OrderBeforeAttempt): Promise<void> {
    await this.sequelize.transaction(async (tx) => {
      const order = await this.#lockOrder(orderId, tx);
      if (order.current_attempt_id !== attemptId) return;
      await this.models.History.destroy({
        where: { order_id: orderId, attempt_id: attemptId },
        transaction: tx,
      });
      await this.models.Attempt.destroy({ where: { id: attemptId }, transaction: tx });
      await order.update(
        { ...previous, version: order.version + 1, updated_at: this.#now() },
        { transaction: tx },
      );
    });
  }

  async setAttemptIds(
    attemptId: string,
    ids: { verification_id?: string; gateway_transaction_id?: string; payment_session_id?: string },
  ): Promise<void> {
    await this.models.Attempt.update({ ...ids, updated_at: this.#now() }, { where: { id: attemptId } });
  }

  /** The checkout's own moves (a challenge to finish, a refusal with no transaction to observe). */
  async localMove(
    orderId: string,
    attemptId: string,
    event: LocalEvent,
    detail: { code?: string; sourceId: string },
  ) {
    return this.sequelize.transaction(async (tx) => {
      const order = await this.#lockOrder(orderId, tx);
      if (order.current_attempt_id !== attemptId) return order; // superseded: the order follows another attempt
      const before = order.status;
      const status = localTransition(before, event);
      const now = this.#now();
      await this.models.Attempt.update(
        { status, failure_code: detail.code ?? null, updated_at: now },
        { where: { id: attemptId }, transaction: tx },
      );
      await order.update(
        {
          status,
          failure_code: detail.code ?? order.failure_code,
          version: order.version + 1,
          updated_at: now,
        },
        { transaction: tx },
      );
      await this.#history(
        tx,
        order.id,
        attemptId,
        'api',
        detail.sourceId,
        before,
        status,
        'applied',
        detail.code ?? event,
      );
      return order;
    });
  }

  /**
   * Applies one observation through `decide` (DESIGN.md section 2). Unmatched: no attempt of ours
   * made that transaction (yet).
   */
  async applyObservation(obs: Observation): Promise<ApplyResult> {
    const t = obs.transaction;
    const found = (await this.#attemptOf(t)) ?? (await this.#adopt(obs));
    if (!found) return { matched: false };
    return this.sequelize.transaction(async (tx) => {
      const order = await this.#lockOrder(found.order_id, tx);
      const attempt = (await this.models.Attempt.findByPk(found.id, {
        transaction: tx,
        lock: tx.LOCK.UPDATE,
      }))!;
      const state = {
        status: attempt.status,
        capturedMinor: attempt.captured_minor,
        refundedMinor: attempt.refunded_minor,
        captureId: attempt.capture_id,
      };
      const decision = decide(
        { status: order.status, amountMinor: order.amount_minor, currency: order.currency },
        {
          kind: attempt.kind,
          sale: attempt.kind === 'redirect' || attempt.mode === 'sale',
          transactionId: attempt.gateway_transaction_id!,
          current: order.current_attempt_id === attempt.id,
          state,
        },
        obs,
      );
      const now = this.#now();
      const before = order.status;
      const ended = decision.attempt.status === 'failed' || decision.attempt.status === 'cancelled';
      const failureCode = ended ? (t.statusReason ?? attempt.failure_code) : attempt.failure_code;
      if (decision.attempt !== state) {
        // decide returns the very same object when nothing changed
        await attempt.update(
          {
            status: decision.attempt.status,
            captured_minor: decision.attempt.capturedMinor,
            refunded_minor: decision.attempt.refundedMinor,
            capture_id: decision.attempt.captureId,
            failure_code: failureCode,
            updated_at: now,
          },
          { transaction: tx },
        );
      }
      const current = order.current_attempt_id === attempt.id;
      await order.update(
        {
          status: decision.orderStatus,
          ...(current
            ? {
                captured_minor: decision.attempt.capturedMinor,
                refunded_minor: decision.attempt.refundedMinor,
              }
            : {}),
          ...(current && ended ? { failure_code: failureCode } : {}),
          ...(decision.review
            ? {
                needs_review: true,
                review_reason: appendReason(order.review_reason, decision.review),
              }
            : {}),
          version: order.version + 1,
          updated_at: now,
        },
        { transaction: tx },
      );
      await this.#history(
        tx,
        order.id,
        attempt.id,
        obs.source,
        obs.sourceId,
        before,
        decision.orderStatus,
        decision.outcome,
        decision.note,
      );
      return { matched: true, orderId: order.id, decision };
    });
  }

  /**
   * The attempt that made this transaction (or its parent). A transaction id alone is not enough: a
   * gateway that numbers again (a sandbox started afresh) can give a new payment the id an old attempt
   * holds, so the transaction's reference must be its order's. Without a reference (a record that
   * does not carry one), only a single holder of the id is trusted.
   */
  async #attemptOf(t: Observation['transaction']): Promise<AttemptRow | null> {
    const ids = [t.id, ...(t.relatedId ? [t.relatedId] : [])];
    const byId = { gateway_transaction_id: { [Op.in]: ids } };
    if (!t.reference) {
      const holders = await this.models.Attempt.findAll({ where: byId, limit: 2 });
      return holders.length === 1 ? holders[0]! : null;
    }
    const order = await this.models.Order.findOne({ attributes: ['id'], where: { reference: t.reference } });
    if (!order) return null;
    return this.models.Attempt.findOne({ where: { ...byId, order_id: order.id } });
  }

  /**
   * A payment the gateway made whose id the kit never stored (it crashed, or a write failed, between
   * the gateway's answer and storing the id): the order's reference finds it, and the order's current
   * attempt, if it has no transaction yet, takes this one. Only a sale's or auth's own record adopts.
   */
  async #adopt(obs: Observation): Promise<AttemptRow | null> {
    const t = obs.transaction;
    if (!t.reference || t.relatedId !== null || (t.type !== 'sale' && t.type !== 'auth')) return null;
    return this.sequelize.transaction(async (tx) => {
      const order = await this.models.Order.findOne({
        where: { reference: t.reference! },
        transaction: tx,
        lock: tx.LOCK.UPDATE,
      });
      if (!order?.current_attempt_id) return null;
      const attempt = await this.models.Attempt.findByPk(order.current_attempt_id, {
        transaction: tx,
        lock: tx.LOCK.UPDATE,
      });
      if (!attempt || attempt.gateway_transaction_id !== null) return null;
      await attempt.update({ gateway_transaction_id: t.id, updated_at: this.#now() }, { transaction: tx });
      return attempt;
    });
  }

  /** The 3DS hold (merchant.md): ciphertext only, with its expiry. */
  async hold(attemptId: string, sealed: string, expiresAt: Date): Promise<void> {
    await this.models.Attempt.update(
      { hold_sealed: sealed, hold_expires_at: expiresAt, updated_at: this.#now() },
      { where: { id: attemptId } },
    );
  }

  /**
   * Takes the hold out, erasing it in the same step. `taken`: this caller alone finishes the payment.
   * `expired`: it outlived its 15 minutes (erased, not returned). `gone`: another caller (a second tab,
   * a reload) took it already, or there never was one.
   */
  async takeHold(
    attemptId: string,
  ): Promise<{ kind: 'taken'; sealed: string } | { kind: 'expired' } | { kind: 'gone' }> {
    return this.sequelize.transaction(async (tx) => {
      const attempt = await this.models.Attempt.findByPk(attemptId, {
        transaction: tx,
        lock: tx.LOCK.UPDATE,
      });
      if (!attempt?.hold_sealed) return { kind: 'gone' } as const;
      const live = attempt.hold_expires_at !== null && attempt.hold_expires_at.getTime() > this.clock.now();
      const sealed = attempt.hold_sealed;
      await attempt.update(
        { hold_sealed: null, hold_expires_at: null, updated_at: this.#now() },
        { transaction: tx },
      );
      return live ? ({ kind: 'taken', sealed } as const) : ({ kind: 'expired' } as const);
    });
  }

  /** Attempts whose hold outlived its 15 minutes and is still stored. */
  async attemptsWithExpiredHolds(limit = 500): Promise<string[]> {
    const rows = await this.models.Attempt.findAll({
      attributes: ['id'],
      where: { hold_expires_at: { [Op.lte]: this.#now() } },
      limit,
    });
    return rows.map((r) => r.id);
  }

  async findOperation(
    orderId: string,
    operation: OperationKind,
    requestKey: string,
  ): Promise<OperationRow | null> {
    return this.models.Operation.findOne({
      where: { order_id: orderId, operation, request_key: requestKey },
    });
  }

  /** Stored before the gateway is called: a crash after this line reuses the same Idempotency-Key. */
  async createOperation(input: {
    orderId: string;
    attemptId: string;
    operation: OperationKind;
    requestKey: string;
    amountMinor: number;
    reason: string | null;
  }): Promise<OperationRow> {
    const now = this.#now();
    try {
      return await this.models.Operation.create({
        id: randomId('op_', this.random),
        order_id: input.orderId,
        attempt_id: input.attemptId,
        operation: input.operation,
        idempotency_key: randomId('idem_', this.random, 32),
        request_key: input.requestKey,
        amount_minor: input.amountMinor,
        reason: input.reason,
        status: 'pending',
        result_transaction_id: null,
        error_code: null,
        error_message: null,
        created_at: now,
        updated_at: now,
      });
    } catch (error) {
      // Two retries racing: the first stored the row; the second uses it.
      if (error instanceof UniqueConstraintError) {
        const existing = await this.findOperation(input.orderId, input.operation, input.requestKey);
        if (existing) return existing;
      }
      throw error;
    }
  }

  async settleOperation(
    op: OperationRow,
    result:
      | { status: 'succeeded'; transactionId: string }
      | { status: 'failed'; code: string; message: string },
  ): Promise<void> {
    await op.update(
      result.status === 'succeeded'
        ? { status: 'succeeded', result_transaction_id: result.transactionId, updated_at: this.#now() }
        : {
            status: 'failed',
            error_code: result.code,
            error_message: result.message.slice(0, 512),
            updated_at: this.#now(),
          },
    );
  }

  async #lockOrder(orderId: string, tx: Transaction): Promise<OrderRow> {
    const order = await this.models.Order.findByPk(orderId, { transaction: tx, lock: tx.LOCK.UPDATE });
    if (!order) throw new OrderNotFound(`order ${orderId} does not exist`);
    return order;
  }

  async #history(
    tx: Transaction,
    orderId: string,
    attemptId: string | null,
    source: string,
    sourceId: string,
    before: OrderStatus | string,
    after: OrderStatus | string,
    outcome: string,
    detail: string | null,
  ): Promise<void> {
    await this.models.History.create(
      {
        order_id: orderId,
        attempt_id: attemptId,
        source,
        source_id: sourceId.slice(0, 128),
        status_before: before,
        status_after: after,
        outcome,
        detail: detail?.slice(0, 512) ?? null,
        created_at: this.#now(),
      },
      { transaction: tx },
    );
  }
}

/** Adds a review reason once: the same problem seen again (a redelivery) is not repeated. */
function appendReason(existing: string | null, reason: string): string {
  if (!existing) return reason;
  return existing.split('; ').includes(reason) ? existing : `${existing}; ${reason}`.slice(0, 512);
}
