import type { Pool, RowDataPacket } from 'mysql2/promise';
import { attemptRecord, type Models } from './models.js';
import type { AttemptRecord } from './records.js';
import { ATTEMPT_COLUMNS, attemptFromRow } from './rows.js';

/** The gateway's ids an attempt is found by. */
export type AttemptKey = 'verification_id' | 'payment_session_id' | 'gateway_transaction_id';

/**
 * Payment attempts: how they are found. What they learn from the gateway (ids, statuses) is written
 * only by the order's transition (orders.ts), with the observation that told it.
 */
export class AttemptStore {
  constructor(
    private readonly pool: Pool,
    private readonly models: Models,
  ) {}

  async get(id: string): Promise<AttemptRecord | null> {
    const row = await this.models.Attempt.findByPk(id);
    return row && attemptRecord(row);
  }

  async by(key: AttemptKey, value: string): Promise<AttemptRecord | null> {
    const row = await this.models.Attempt.findOne({ where: { [key]: value } });
    return row && attemptRecord(row);
  }

  /**
   * Attempts holding one of these transaction ids, at most two (enough to tell one holder from
   * several). With a reference, only the attempts of the order that carries it, its current attempt
   * first: a payment a new attempt adopted (ERR_DUPLICATE) may still be held by the one it superseded.
   */
  async holding(transactionIds: string[], reference: string | null): Promise<AttemptRecord[]> {
    // One query over mysql2 (the worker asks this for every event): the reference's order inline.
    const columns = ATTEMPT_COLUMNS.map((c) => `a.${c}`).join(', ');
    const [rows] = await this.pool.query<RowDataPacket[]>(
      reference === null
        ? `SELECT ${columns} FROM payment_attempts a WHERE a.gateway_transaction_id IN (?) LIMIT 2`
        : `SELECT ${columns} FROM payment_attempts a JOIN orders o ON o.id = a.order_id
            WHERE a.gateway_transaction_id IN (?) AND o.reference = ?
            ORDER BY a.id = o.current_attempt_id DESC LIMIT 2`,
      reference === null ? [transactionIds] : [transactionIds, reference],
    );
    return rows.map(attemptFromRow);
  }
}
