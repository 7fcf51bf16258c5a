import mysql from 'mysql2/promise';
import { createSequelize } from '../src/infra/database.js';
import { createStore } from '../src/merchant/store/index.js';
import { systemClock } from '../src/shared/clock.js';
import { cryptoRandom } from '../src/shared/ids.js';
import { SecretBox } from '../src/shared/secret-box.js';
import type { HistoryLine, OrderColumns } from '../test/support/truth-rules.js';

/**
 * What the run reads straight from the kit's tables in the private MariaDB: the orders and their
 * current attempts, the history, the inbox; and the signing secret the kit holds, to sign copies with.
 */

const QUERY_MS = 30_000;

/** The orders with their current attempts; `disputed_minor` where the kit's schema has it. */
const ordersSql = (disputed: boolean) =>
  `SELECT o.id, o.reference, o.status, o.captured_minor, o.refunded_minor, o.needs_review, o.review_reason,
        ${disputed ? 'o.disputed_minor, ' : ''}a.kind, a.gateway_transaction_id, a.payment_session_id
   FROM orders o LEFT JOIN payment_attempts a ON a.id = o.current_attempt_id`;

export interface OrderRow extends OrderColumns {
  id: string;
  reference: string;
  needs_review: number;
  review_reason: string | null;
  kind: string | null;
  gateway_transaction_id: string | null;
  payment_session_id: string | null;
}

export interface InboxRow {
  event_id: string;
  source: string;
  processed: number;
  outcome: string | null;
}

export class KitTables {
  readonly #pool: mysql.Pool;
  #ordersSql: Promise<string> | null = null;

  constructor(private readonly databaseUrl: string) {
    // Few connections, each short-lived: the run reads across a MariaDB restart.
    this.#pool = mysql.createPool({
      uri: databaseUrl,
      connectionLimit: 4,
      connectTimeout: 5000,
      idleTimeout: 5000,
    });
  }

  async #select<T>(sql: string): Promise<T[]> {
    const [rows] = await this.#pool.query<mysql.RowDataPacket[]>({ sql, timeout: QUERY_MS });
    return rows as T[];
  }

  /** The orders' query, once the schema is known (asked again after a failure: MariaDB restarts). */
  #orders(): Promise<string> {
    this.#ordersSql ??= this.#select<{ n: number }>(
      `SELECT COUNT(*) AS n FROM information_schema.COLUMNS
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders' AND COLUMN_NAME = 'disputed_minor'`,
    ).then(
      ([row]) => ordersSql(Number(row?.n) > 0),
      (error) => {
        this.#ordersSql = null;
        throw error;
      },
    );
    return this.#ordersSql;
  }

  /** Every order with its current attempt (null columns when it has none). */
  async orders(): Promise<OrderRow[]> {
    return this.#select<OrderRow>(await this.#orders());
  }

  /** One order with its current attempt; null when there is none by that id. */
  async order(id: string): Promise<OrderRow | null> {
    const [rows] = await this.#pool.query<mysql.RowDataPacket[]>({
      sql: `${await this.#orders()} WHERE o.id = ?`,
      values: [id],
      timeout: QUERY_MS,
    });
    return (rows[0] as OrderRow | undefined) ?? null;
  }

  history(): Promise<HistoryLine[]> {
    return this.#select<HistoryLine>(
      'SELECT order_id, source_id, status_before, status_after, outcome FROM order_history ORDER BY id',
    );
  }

  inbox(): Promise<InboxRow[]> {
    return this.#select<InboxRow>(
      'SELECT event_id, source, processed_at IS NOT NULL AS processed, outcome FROM webhook_inbox',
    );
  }

  /** Which of `eventIds` the inbox holds. */
  async stored(eventIds: string[]): Promise<Set<string>> {
    if (eventIds.length === 0) return new Set();
    const [rows] = await this.#pool.query<mysql.RowDataPacket[]>({
      sql: 'SELECT event_id FROM webhook_inbox WHERE event_id IN (?)',
      values: [eventIds],
      timeout: QUERY_MS,
    });
    return new Set(rows.map((r) => r.event_id as string));
  }

  /** The secret the gateway signs with now: the newest active one the kit stored. */
  async signingSecret(encryptionKey: string): Promise<string> {
    const sequelize = createSequelize(this.databaseUrl);
    try {
      const box = new SecretBox(Buffer.from(encryptionKey, 'base64'), cryptoRandom);
      const store = createStore({
        sequelize,
        pool: this.#pool,
        clock: systemClock,
        random: cryptoRandom,
        box,
      });
      const [newest] = await store.secrets.active();
      if (!newest) throw new Error('the kit has stored no signing secret');
      return newest;
    } finally {
      await sequelize.close();
    }
  }

  close(): Promise<void> {
    return this.#pool.end();
  }
}
