import { Op, QueryTypes, type Sequelize } from 'sequelize';
import { sqlTime, transaction } from '../../infra/database.js';
import { POLLED } from '../orders/poll-schedule.js';
import { attemptRecord, type Models, orderRecord } from './models.js';
import type { AttemptRecord, OrderRecord } from './records.js';

/** Watched orders whose current attempt has something at the gateway to ask about (replacement: POLLED). */
const AT_THE_GATEWAY = `JOIN payment_attempts a ON a.id = o.current_attempt_id
  WHERE o.status IN (?) AND (a.gateway_transaction_id IS NOT NULL OR a.payment_session_id IS NOT NULL)`;

/** An open order and the attempt at the gateway the poller asks about. */
export interface PollTarget {
  order: OrderRecord;
  attempt: AttemptRecord;
}

/**
 * The poller's view of the orders: which are due (`next_poll_at`, indexed, so a tick reads only what
 * is due), claimed so that two schedulers never ask about the same order at once.
 */
export class PollStore {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly models: Models,
  ) {}

  /**
   * Takes up to `limit` orders due at `now`, oldest due first, and moves each one's `next_poll_at` to
   * `leaseUntil` in the same transaction: another instance's claim skips them (SKIP LOCKED) and, if
   * this one dies before rescheduling, they come due again when the lease ends.
   */
  async claimDue(now: Date, limit: number, leaseUntil: Date): Promise<PollTarget[]> {
    const ids = await transaction(this.sequelize, async (tx) => {
      const rows = await this.sequelize.query<{ id: string }>(
        'SELECT id FROM orders WHERE next_poll_at <= ? ORDER BY next_poll_at LIMIT ? FOR UPDATE SKIP LOCKED',
        { replacements: [sqlTime(now), limit], type: QueryTypes.SELECT, transaction: tx },
      );
      const claimed = rows.map((r) => r.id);
      if (claimed.length > 0)
        await this.models.Order.update(
          { next_poll_at: leaseUntil },
          { where: { id: { [Op.in]: claimed } }, transaction: tx },
        );
      return claimed;
    });
    return this.#targets(ids);
  }

  /** Watched orders with an attempt at the gateway, in id order after `afterId`: what `cli poll` walks. */
  async open(afterId: string, limit: number): Promise<PollTarget[]> {
    const rows = await this.sequelize.query<{ id: string }>(
      `SELECT o.id FROM orders o ${AT_THE_GATEWAY} AND o.id > ? ORDER BY o.id LIMIT ?`,
      { replacements: [[...POLLED], afterId, limit], type: QueryTypes.SELECT },
    );
    return this.#targets(rows.map((r) => r.id));
  }

  /** How many orders are watched with an attempt at the gateway (for a progress bar). */
  async countOpen(): Promise<number> {
    const [row] = await this.sequelize.query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM orders o ${AT_THE_GATEWAY}`,
      { replacements: [[...POLLED]], type: QueryTypes.SELECT },
    );
    return Number(row!.n);
  }

  /**
   * Authorized orders whose current attempt's deadline (`capture_before`) is at or before `before`,
   * soonest first: what the authorisations job warns of and acts on.
   */
  async expiringAuthorizations(before: Date, limit: number): Promise<PollTarget[]> {
    const rows = await this.sequelize.query<{ id: string }>(
      `SELECT o.id FROM orders o JOIN payment_attempts a ON a.id = o.current_attempt_id
        WHERE o.status = 'authorized' AND a.capture_before IS NOT NULL AND a.capture_before <= ?
        ORDER BY a.capture_before LIMIT ?`,
      { replacements: [sqlTime(before), limit], type: QueryTypes.SELECT },
    );
    return this.#targets(rows.map((r) => r.id));
  }

  /**
   * Open orders whose current attempt has nothing at the gateway that the kit knows of (no transaction
   * or session id), holds no 3DS card data (a challenge waiting, or erased: the holds job's), and has
   * not changed since `before`: payments the kit's death may have cut off (jobs/cut-off.ts).
   */
  async unanswered(before: Date, limit: number): Promise<PollTarget[]> {
    const rows = await this.sequelize.query<{ id: string }>(
      `SELECT o.id FROM orders o JOIN payment_attempts a ON a.id = o.current_attempt_id
        WHERE o.status IN ('pending', 'requires_action')
          AND a.gateway_transaction_id IS NULL AND a.payment_session_id IS NULL
          AND a.hold_sealed IS NULL AND a.hold_expires_at IS NULL AND a.updated_at < ?
          AND o.updated_at < ?
        ORDER BY a.updated_at LIMIT ?`,
      // The order changed with its attempt, or after: its own time, indexed with its status, narrows the read.
      { replacements: [sqlTime(before), sqlTime(before), limit], type: QueryTypes.SELECT },
    );
    return this.#targets(rows.map((r) => r.id));
  }

  /**
   * Sets when the order is next due; null: not again. `next_poll_at` is a lease, not a fact of the
   * order: one of the two writes outside the order's one writer (store/order-writer.ts), with no
   * version, history or event: being asked about is not a change of the order, and `updated_at`, the
   * age the schedule counts from, stays its last change.
   */
  async reschedule(orderId: string, at: Date | null): Promise<void> {
    await this.models.Order.update({ next_poll_at: at }, { where: { id: orderId } });
  }

  async #targets(ids: string[]): Promise<PollTarget[]> {
    if (ids.length === 0) return [];
    const orders = await this.models.Order.findAll({ where: { id: { [Op.in]: ids } } });
    const attemptIds = orders.map((o) => o.current_attempt_id).filter((id): id is string => id !== null);
    const attempts = await this.models.Attempt.findAll({ where: { id: { [Op.in]: attemptIds } } });
    const byId = new Map(attempts.map((a) => [a.id, attemptRecord(a)]));
    const targets: PollTarget[] = [];
    for (const id of ids) {
      const order = orders.find((o) => o.id === id);
      const attempt = order?.current_attempt_id ? byId.get(order.current_attempt_id) : undefined;
      if (order && attempt) targets.push({ order: orderRecord(order), attempt });
    }
    return targets;
  }
}
