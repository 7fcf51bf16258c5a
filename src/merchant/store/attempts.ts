import type { Pool, RowDataPacket } from 'mysql2/promise';
import { attemptRecord, type Models } from './models.js';
import type { AttemptRecord } from './records.js';
import { ATTEMPTS, recordFrom, selectList } from './tables.js';

/** Which transactions' holders to find, and the reference their order must carry (null: any). */
export interface HoldingAsk {
  transactionIds: string[];
  reference: string | null;
}

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
    const [holders] = await this.holdingMany([{ transactionIds, reference }]);
    return holders!;
  }

  /** `holding` for many transactions at once, in one query (the worker asks it for every event of a batch). */
  async holdingMany(asks: readonly HoldingAsk[]): Promise<AttemptRecord[][]> {
    const ids = [...new Set(asks.flatMap((a) => a.transactionIds))];
    if (ids.length === 0) return asks.map(() => []);
    const [rows] = await this.pool.query<RowDataPacket[]>(
      {
        sql: `SELECT ${selectList(ATTEMPTS, 'a')}, o.reference, o.current_attempt_id
                FROM payment_attempts a JOIN orders o ON o.id = a.order_id
               WHERE a.gateway_transaction_id IN (?)`,
        nestTables: true,
      },
      [ids],
    );
    return asks.map(({ transactionIds, reference }) =>
      rows
        .filter((r) => transactionIds.includes(r.a.gateway_transaction_id))
        .filter((r) => reference === null || r.o.reference === reference)
        .sort((x, y) => Number(y.a.id === y.o.current_attempt_id) - Number(x.a.id === x.o.current_attempt_id))
        .slice(0, 2)
        .map((r) => recordFrom(ATTEMPTS, r.a)),
    );
  }
}
