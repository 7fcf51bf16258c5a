import mysql from 'mysql2/promise';
import { createSequelize } from '../src/infra/database.js';
import { createStore } from '../src/merchant/store/index.js';
import { secretOwner } from '../src/merchant/store/secrets.js';
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
  `SELECT o.id, o.reference, o.merchant_id, o.status, o.captured_minor, o.refunded_minor, o.needs_review, o.review_reason,
        ${disputed ? 'o.disputed_minor, ' : ''}a.kind, a.gateway_transaction_id, a.payment_session_id
   FROM orders o LEFT JOIN payment_attempts a ON a.id = o.current_attempt_id`;

export interface OrderRow extends OrderColumns {
  id: string;
  reference: string;
  /** The merchant whose order it is (platform mode); null: the kit's one merchant, or one made before. */
  merchant_id: number | null;
  needs_review: number;
  review_reason: string | null;
  kind: string | null;
  gateway_transaction_id: string | null;
  payment_session_id: string | null;
}

export interface InboxRow {
  event_id: string;
  /** The merchant whose endpoint it came to (platform mode); null: the kit's one merchant. */
  merchant_id: number | null;
  source: string;
  processed: number;
  outcome: string | null;
}

/** A row of the outbox: an order event as the kit wrote it, in the change's own transaction. */
export interface OrderEventRow {
  seq: number;
  id: string;
  order_id: string;
  type: string;
  /** The body the shop is sent. */
  payload: string;
}

/** The outbox's deliveries to one subscriber, by status, and every try the kit recorded of them. */
export interface OutboxState {
  /** Events not fanned out to the subscribers yet. */
  unfanned: number;
  deliveries: Record<string, number>;
  /** Tries by what they came to: `delivered`, `HTTP 500`, `ECONNREFUSED`, ... */
  tries: Record<string, number>;
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

  /**
   * How many orders ended, by why (issue 43): `cancelled` by the shop, `expired` by ORDER_TTL. Null
   * on a kit whose orders do not end.
   */
  async closed(): Promise<{ cancelled: number; expired: number } | null> {
    const rows = await this.#select<{ reason: string; n: number }>(
      'SELECT closed_reason AS reason, COUNT(*) AS n FROM orders WHERE closed_reason IS NOT NULL GROUP BY closed_reason',
    ).catch(() => null);
    if (rows === null) return null;
    const count = (reason: string) => Number(rows.find((r) => r.reason === reason)?.n ?? 0);
    return { cancelled: count('cancelled'), expired: count('expired') };
  }

  /** One order, by its reference, with its current attempt; null when there is none by that reference. */
  async order(reference: string): Promise<OrderRow | null> {
    const [rows] = await this.#pool.query<mysql.RowDataPacket[]>({
      sql: `${await this.#orders()} WHERE o.reference = ?`,
      values: [reference],
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
      'SELECT event_id, merchant_id, source, processed_at IS NOT NULL AS processed, outcome FROM webhook_inbox',
    );
  }

  /** Every order event the kit wrote, in the order of writing. */
  async orderEvents(): Promise<OrderEventRow[]> {
    const rows = await this.#select<OrderEventRow>(
      'SELECT seq, id, order_id, type, payload FROM order_events ORDER BY seq',
    );
    return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
  }

  /** The last order event written so far (its seq; 0: none). */
  async lastOrderEvent(): Promise<number> {
    const [row] = await this.#select<{ n: number | null }>('SELECT MAX(seq) AS n FROM order_events');
    return Number(row?.n ?? 0);
  }

  /** Every order's id and status. */
  orderStatuses(): Promise<{ id: string; status: string }[]> {
    return this.#select('SELECT id, status FROM orders');
  }

  /** Where the outbox stands for `subscriber` (`url:<endpoint>`). */
  async outbox(subscriber: string): Promise<OutboxState> {
    const query = async (sql: string, values: unknown[]) => {
      const [rows] = await this.#pool.query<mysql.RowDataPacket[]>({ sql, values, timeout: QUERY_MS });
      return rows;
    };
    const [unfanned, deliveries, tries] = await Promise.all([
      query('SELECT COUNT(*) AS n FROM order_events WHERE fanned_out_at IS NULL', []),
      query(
        'SELECT status AS k, COUNT(*) AS n FROM order_event_deliveries WHERE subscriber = ? GROUP BY status',
        [subscriber],
      ),
      query(
        `SELECT CASE WHEN a.result = 'delivered' THEN 'delivered' ELSE COALESCE(a.error, 'failed') END AS k,
                COUNT(*) AS n
           FROM order_event_attempts a JOIN order_event_deliveries d ON d.id = a.delivery_id
          WHERE d.subscriber = ? GROUP BY k`,
        [subscriber],
      ),
    ]);
    const counts = (rows: mysql.RowDataPacket[]) =>
      Object.fromEntries(rows.map((r) => [String(r.k), Number(r.n)]));
    return { unfanned: Number(unfanned[0]?.n ?? 0), deliveries: counts(deliveries), tries: counts(tries) };
  }

  /**
   * How much the dispatcher could send to `subscriber` at `now` (the kit's clock) and has not yet:
   * events not fanned out, and deliveries due and unclaimed with no earlier one of their order
   * pending (its claim's own rule). The run moves the clock on only when none is left.
   */
  async outboxDue(subscriber: string, now: Date): Promise<number> {
    const [[unfanned], [due]] = await Promise.all([
      this.#select<{ n: number }>('SELECT COUNT(*) AS n FROM order_events WHERE fanned_out_at IS NULL'),
      this.#pool
        .query<mysql.RowDataPacket[]>({
          sql: `SELECT COUNT(*) AS n FROM order_event_deliveries d
                 WHERE d.subscriber = ? AND d.status = 'pending' AND d.next_attempt_at <= ?
                   AND (d.locked_until IS NULL OR d.locked_until <= ?)
                   AND NOT EXISTS (SELECT 1 FROM order_event_deliveries p
                                    WHERE p.order_id = d.order_id AND p.subscriber = d.subscriber
                                      AND p.status = 'pending' AND p.event_seq < d.event_seq)`,
          values: [subscriber, now, now],
          timeout: QUERY_MS,
        })
        .then(([rows]) => rows),
    ]);
    return Number(unfanned?.n ?? 0) + Number(due?.n ?? 0);
  }

  /** Every order's version: the one writer bumps it with each change it makes (DESIGN.md section 2). */
  async versions(): Promise<Map<string, number>> {
    const rows = await this.#select<{ id: string; version: number }>('SELECT id, version FROM orders');
    return new Map(rows.map((r) => [r.id, Number(r.version)]));
  }

  /** The `customer` each of these orders names now (null: none), by order id. */
  async customers(orderIds: string[]): Promise<Map<string, Record<string, unknown> | null>> {
    if (orderIds.length === 0) return new Map();
    const [rows] = await this.#pool.query<mysql.RowDataPacket[]>({
      sql: 'SELECT id, customer FROM orders WHERE id IN (?)',
      values: [orderIds],
      timeout: QUERY_MS,
    });
    const parsed = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : (v ?? null));
    return new Map(rows.map((r) => [r.id as string, parsed(r.customer)]));
  }

  /**
   * A dump of every table of the kit's database, as text to search: a line per row, each column's
   * value as it is stored (binary columns read as UTF-8 text, so that nothing kept in one is missed).
   */
  async dump(): Promise<{ tables: number; rows: number; text: string }> {
    const tables = await this.#select<{ name: string }>(
      `SELECT TABLE_NAME AS name FROM information_schema.TABLES
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME`,
    );
    const lines: string[] = [];
    for (const { name } of tables) {
      const rows = await this.#select<Record<string, unknown>>(`SELECT * FROM \`${name}\``);
      for (const row of rows) lines.push(`${name}: ${Object.values(row).map(cellText).join('\t')}`);
    }
    return { tables: tables.length, rows: lines.length, text: lines.join('\n') };
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

  /**
   * The secret the gateway signs with now: the newest active one the kit stored (in platform mode,
   * for `merchant` among the merchants `served`: that merchant's endpoint's).
   */
  async signingSecret(
    encryptionKey: string,
    whose?: { merchant: number; served: readonly number[] },
  ): Promise<string> {
    const sequelize = createSequelize(this.databaseUrl);
    try {
      const box = new SecretBox(Buffer.from(encryptionKey, 'base64'), cryptoRandom);
      const store = createStore({
        sequelize,
        pool: this.#pool,
        transitionPool: this.#pool, // only the secrets are read here
        clock: systemClock,
        random: cryptoRandom,
        box,
      });
      const owner = whose && secretOwner(whose.served, whose.merchant);
      const [newest] = await store.secrets.active([], owner);
      if (!newest)
        throw new Error(
          `the kit has stored no signing secret${whose ? ` for merchant ${whose.merchant}` : ''}`,
        );
      return newest;
    } finally {
      await sequelize.close();
    }
  }

  close(): Promise<void> {
    return this.#pool.end();
  }
}

/** A column's value as text: binary as UTF-8, a date as ISO 8601, JSON as written. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
