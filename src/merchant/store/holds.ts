import { Op, type Sequelize } from 'sequelize';
import { transaction } from '../../infra/database.js';
import type { Clock } from '../../shared/clock.js';
import type { Statement } from './batch-writes.js';
import type { Models } from './models.js';

export type TakenHold = { kind: 'taken'; sealed: string } | { kind: 'expired' } | { kind: 'gone' };

/**
 * merchant.md, Card data: what a card payment still needs across a 3DS challenge, as ciphertext only,
 * with its expiry; taken out once, and erased in the same step. The hold is a lease on the attempt,
 * not a fact of the order: one of the two writes outside the order's one writer
 * (store/order-writer.ts, which lets an earlier attempt's hold go when a new attempt starts).
 */
export class HoldStore {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly models: Models,
    private readonly clock: Clock,
  ) {}

  async put(attemptId: string, sealed: string, expiresAt: Date): Promise<void> {
    await this.models.Attempt.update(
      { hold_sealed: sealed, hold_expires_at: expiresAt, updated_at: new Date(this.clock.now()) },
      { where: { id: attemptId } },
    );
  }

  /**
   * Takes the hold out, erasing it in the same step. `taken`: this caller alone finishes the payment.
   * `expired`: it outlived its 15 minutes, or a newer attempt erased its card (erased, not returned). `gone`: another caller (a second tab,
   * a reload) took it already, or there never was one.
   */
  async take(attemptId: string): Promise<TakenHold> {
    return transaction(this.sequelize, async (tx) => {
      const attempt = await this.models.Attempt.findByPk(attemptId, {
        transaction: tx,
        lock: tx.LOCK.UPDATE,
      });
      if (!attempt || (!attempt.hold_sealed && attempt.hold_expires_at === null))
        return { kind: 'gone' } as const;
      // No card but still an expiry: a hold a newer attempt erased (OrderStore.startAttempt), ended here.
      const live =
        attempt.hold_sealed !== null &&
        attempt.hold_expires_at !== null &&
        attempt.hold_expires_at.getTime() > this.clock.now();
      const sealed = attempt.hold_sealed;
      await attempt.update(
        { hold_sealed: null, hold_expires_at: null, updated_at: new Date(this.clock.now()) },
        { transaction: tx },
      );
      return live && sealed ? ({ kind: 'taken', sealed } as const) : ({ kind: 'expired' } as const);
    });
  }

  /** The attempts of an order that hold sealed card data now (a 3DS challenge open), with it. */
  async heldOf(orderId: string): Promise<{ attemptId: string; sealed: string }[]> {
    const rows = await this.models.Attempt.findAll({
      attributes: ['id', 'hold_sealed'],
      where: { order_id: orderId, hold_sealed: { [Op.ne]: null } },
    });
    return rows.flatMap((r) => (r.hold_sealed ? [{ attemptId: r.id, sealed: r.hold_sealed }] : []));
  }

  /** Attempts whose hold outlived its 15 minutes and is still stored. */
  async expired(limit = 500): Promise<string[]> {
    const rows = await this.models.Attempt.findAll({
      attributes: ['id'],
      where: { hold_expires_at: { [Op.lte]: new Date(this.clock.now()) } },
      limit,
    });
    return rows.map((r) => r.id);
  }
}

/**
 * A hold sealed again as an erasure made it (without the customer), unless it is no longer the one
 * read (taken, expired or erased meanwhile); its expiry stays. A statement of the order's erasure
 * (store/orders.ts eraseCustomer), under the order's lock, so the hold is never taken half changed.
 */
export function holdRewrite(attemptId: string, before: string, after: string): Statement {
  return {
    sql: 'UPDATE payment_attempts SET hold_sealed = ? WHERE id = ? AND hold_sealed = ?',
    values: [after, attemptId, before],
  };
}
