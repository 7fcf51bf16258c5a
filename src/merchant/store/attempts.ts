import type { Pool, RowDataPacket } from 'mysql2/promise';
import type { Sequelize } from 'sequelize';
import type { Clock } from '../../shared/clock.js';
import { attemptRecord, type Models } from './models.js';
import type { AttemptRecord } from './records.js';
import { ATTEMPT_COLUMNS, attemptFromRow } from './rows.js';

/** The gateway's ids an attempt is found by. */
export type AttemptKey = 'verification_id' | 'payment_session_id' | 'gateway_transaction_id';

/** Payment attempts: how they are found, and the gateway ids they learn as a payment goes on. */
export class AttemptStore {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly pool: Pool,
    private readonly models: Models,
    private readonly clock: Clock,
  ) {}

  async get(id: string): Promise<AttemptRecord | null> {
    const row = await this.models.Attempt.findByPk(id);
    return row && attemptRecord(row);
  }

  async by(key: AttemptKey, value: string): Promise<AttemptRecord | null> {
    const row = await this.models.Attempt.findOne({ where: { [key]: value } });
    return row && attemptRecord(row);
  }

  /** What the gateway answered an attempt with: its ids, and a session's expiry. */
  async setIds(
    id: string,
    ids: Partial<Record<AttemptKey, string>> & { session_expires_at?: Date },
  ): Promise<void> {
    await this.models.Attempt.update({ ...ids, updated_at: new Date(this.clock.now()) }, { where: { id } });
  }

  /**
   * Attempts holding one of these transaction ids, at most two (enough to tell one holder from
   * several). With a reference, only the attempts of the order that carries it.
   */
  async holding(transactionIds: string[], reference: string | null): Promise<AttemptRecord[]> {
    // One query over mysql2 (the worker asks this for every event): the reference's order inline.
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT ${ATTEMPT_COLUMNS.join(', ')} FROM payment_attempts WHERE gateway_transaction_id IN (?)${
        reference === null ? '' : ' AND order_id = (SELECT id FROM orders WHERE reference = ?)'
      } LIMIT 2`,
      reference === null ? [transactionIds] : [transactionIds, reference],
    );
    return rows.map(attemptFromRow);
  }

  /**
   * Gives a transaction id to the current attempt of the order with this reference, if that attempt
   * has none yet (under the order's row lock). Null when there is no such attempt.
   */
  async adopt(reference: string, transactionId: string): Promise<AttemptRecord | null> {
    return this.sequelize.transaction(async (tx) => {
      const order = await this.models.Order.findOne({
        where: { reference },
        transaction: tx,
        lock: tx.LOCK.UPDATE,
      });
      if (!order?.current_attempt_id) return null;
      const attempt = await this.models.Attempt.findByPk(order.current_attempt_id, {
        transaction: tx,
        lock: tx.LOCK.UPDATE,
      });
      if (!attempt || attempt.gateway_transaction_id !== null) return null;
      await attempt.update(
        { gateway_transaction_id: transactionId, updated_at: new Date(this.clock.now()) },
        { transaction: tx },
      );
      return attemptRecord(attempt);
    });
  }
}
