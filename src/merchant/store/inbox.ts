import type { ExecuteValues, Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { Op } from 'sequelize';
import { maskVaultTokens } from '../../shared/vault-tokens.js';
import type { ObservationSource } from '../orders/observation.js';
import type { Statement } from './batch-writes.js';
import type { Models } from './models.js';
import type { InboxRecord } from './records.js';
import { INBOX, recordFrom, selectList } from './tables.js';

export interface InboxEvent {
  id: string;
  type: string;
  transactionId: string | null;
  source: ObservationSource;
  /**
   * The event as checked (from-gateway.ts checkEvent's `kept`): its bytes as signed, or written again
   * with its card numbers truncated; kept so, but with any vault token masked (storeMany).
   */
  payload: string;
  /** Where a card number was truncated in `payload` (checkEvent's `masked`); absent or empty: nowhere. */
  masked?: readonly string[];
  /**
   * The merchant whose endpoint it came to (the receiver's path; recovery: the merchant whose events
   * were listed); the reconciler applies it to that merchant's orders only. Absent or null: the kit's
   * one merchant, its id unknown.
   */
  merchantId?: number | null;
  now: Date;
}

/**
 * The statement that marks events processed, each with what it came to (null: no event). The orders'
 * transition runs it in its own transaction (store/order-writer.ts), so an event is never applied
 * without its mark nor marked without being applied. One statement whatever the outcomes: when they
 * differ, the inbox joined to a table of the events' ids and outcomes (as store/batch-writes.ts
 * updates rows).
 */
export function processedMarks(
  marks: readonly { eventId: string; outcome: string }[],
  now: Date,
): Statement | null {
  if (marks.length === 0) return null;
  const outcome = marks[0]!.outcome;
  if (marks.every((m) => m.outcome === outcome))
    return {
      sql: 'UPDATE webhook_inbox SET processed_at = ?, outcome = ?, last_error = NULL WHERE event_id IN (?)',
      values: [now, outcome, marks.map((m) => m.eventId)],
    };
  return {
    sql: `UPDATE webhook_inbox i JOIN (WITH n (event_id, outcome) AS (VALUES ?) SELECT * FROM n) n
      ON i.event_id = n.event_id SET i.processed_at = ?, i.outcome = n.outcome, i.last_error = NULL`,
    values: [marks.map((m) => [m.eventId, m.outcome]), now],
  };
}

/**
 * A kept payload written again (an erasure's, without the person), unless it changed since it was
 * read (the retention job cleared it): a statement of the order's erasure (store/orders.ts
 * eraseCustomer), which stands or falls with it.
 */
export function payloadRewrite(eventId: string, before: string, after: string): Statement {
  return {
    sql: 'UPDATE webhook_inbox SET payload = ? WHERE event_id = ? AND payload = ?',
    values: [after, eventId, before],
  };
}

const INSERT =
  'INSERT INTO webhook_inbox (event_id, event_type, transaction_id, source, payload, masked_fields, received_at, attempts, receipt, merchant_id)';
const ON_REPEAT = 'ON DUPLICATE KEY UPDATE repeats = repeats + 1';

/**
 * Batches of up to this many rows go as prepared statements, one per size, on each connection: a
 * bounded number of them in MySQL (32 a connection), where most batches are small (a few deliveries
 * in flight), and each costs MySQL a tenth less to run. Larger batches go as text: rare, and their
 * parse is shared by many rows.
 */
const PREPARED_ROWS = 32;
const statements: string[] = [];
const insertStatement = (rows: number): string =>
  (statements[rows] ??=
    `${INSERT} VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')} ${ON_REPEAT}`);

/** The durable inbox (merchant.md, The receiver): an event is stored once by its id, before anyone acts on it. */
export class InboxStore {
  constructor(
    private readonly models: Models,
    /** mysql2's own pool, for the batches: the ORM costs three times as much per row. */
    private readonly pool: Pool,
    /** A new batch receipt (16 characters). */
    private readonly receipt: () => string,
  ) {}

  /** 'stored' the first time an event id is seen, 'duplicate' after (the unique key decides, not a read). */
  async store(event: InboxEvent): Promise<'stored' | 'duplicate'> {
    const [result] = await this.storeMany([event]);
    if (result instanceof Error) throw result;
    return result!;
  }

  /**
   * Stores a batch in one multi-row INSERT, over mysql2 without the ORM (the receiver's hot path);
   * answers each event in order: 'stored', 'duplicate', or the Error that kept it out. A repeat
   * counts in `repeats`. The batch's `receipt` tells, when some were repeats, which rows it stored;
   * the first of an id twice in one batch is the one stored.
   */
  async storeMany(events: readonly InboxEvent[]): Promise<('stored' | 'duplicate' | Error)[]> {
    const receipt = this.receipt();
    const rows = events.map((e) => [
      e.id,
      e.type,
      e.transactionId,
      e.source,
      // A vault token pays with the kit's key and no 3DS: the kept copy holds none (shared/vault-tokens.ts).
      maskVaultTokens(e.payload),
      e.masked && e.masked.length > 0 ? e.masked.join(', ').slice(0, 512) : null,
      e.now.toISOString().slice(0, 23).replace('T', ' '),
      0,
      receipt,
      e.merchantId ?? null,
    ]);
    let affected: number;
    try {
      const result =
        rows.length <= PREPARED_ROWS
          ? await this.#execute(insertStatement(rows.length), rows.flat())
          : await this.#query<ResultSetHeader>(`${INSERT} VALUES ? ${ON_REPEAT}`, [rows]);
      affected = result.affectedRows;
    } catch (error) {
      // One bad row must not take its batch with it: each alone, so only it fails. In order, so the
      // first of an id twice is still the one stored (a rare path: one round trip each is fine).
      if (events.length === 1) return [error as Error];
      const answers: ('stored' | 'duplicate' | Error)[] = [];
      for (const e of events) answers.push((await this.storeMany([e]))[0]!);
      return answers;
    }
    // Each new row counts 1, each repeat 2 (an update): with no repeat, every row is new.
    if (affected === events.length) return events.map(() => 'stored');
    const mine = await this.#query<RowDataPacket[]>(
      'SELECT event_id FROM webhook_inbox WHERE event_id IN (?) AND receipt = ?',
      [events.map((e) => e.id), receipt],
    );
    const stored = new Set(mine.map((r) => r.event_id as string));
    return events.map((e) => (stored.delete(e.id) ? 'stored' : 'duplicate'));
  }

  /**
   * One query of the receiver's path, on mysql2's own pool under its promise wrapper: the wrapper
   * captures a stack trace for every call, 10 µs of a delivery (a profile at 4 connections).
   */
  #query<T extends ResultSetHeader | RowDataPacket[]>(sql: string, values: unknown[]): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.pool.pool.query<T>(sql, values, (error, result) => (error ? reject(error) : resolve(result))),
    );
  }

  /**
   * A prepared statement: its values travel as they are, neither escaped into the text nor parsed
   * from it again by MySQL (a payload is a kilobyte of JSON). mysql2 keeps it on its connection.
   */
  #execute(sql: string, values: ExecuteValues): Promise<ResultSetHeader> {
    return new Promise<ResultSetHeader>((resolve, reject) =>
      this.pool.pool.execute<ResultSetHeader>(sql, values, (error, result) =>
        error ? reject(error) : resolve(result),
      ),
    );
  }

  /** Which of these event ids the inbox holds. */
  async holding(eventIds: readonly string[]): Promise<Set<string>> {
    const held = new Set<string>();
    for (let i = 0; i < eventIds.length; i += 500) {
      const rows = await this.models.Inbox.findAll({
        attributes: ['event_id'],
        where: { event_id: { [Op.in]: eventIds.slice(i, i + 500) } },
      });
      for (const row of rows) held.add(row.event_id);
    }
    return held;
  }

  async get(eventId: string): Promise<InboxRecord | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT ${selectList(INBOX)} FROM webhook_inbox WHERE event_id = ?`,
      [eventId],
    );
    return rows[0] ? recordFrom(INBOX, rows[0]) : null;
  }

  /** The rows of these event ids, in one read (the worker's batches); an id the inbox lacks is absent. */
  async getMany(eventIds: readonly string[]): Promise<Map<string, InboxRecord>> {
    if (eventIds.length === 0) return new Map();
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT ${selectList(INBOX)} FROM webhook_inbox WHERE event_id IN (?)`,
      [eventIds],
    );
    return new Map(rows.map((r) => [r.event_id as string, recordFrom(INBOX, r)]));
  }

  async markQueued(eventIds: string[], now: Date): Promise<void> {
    if (eventIds.length > 0)
      await this.models.Inbox.update({ queued_at: now }, { where: { event_id: { [Op.in]: eventIds } } });
  }

  async markProcessed(eventId: string, outcome: string, now: Date): Promise<void> {
    const mark = processedMarks([{ eventId, outcome }], now);
    await this.pool.query(mark!.sql, mark!.values);
  }

  async markFailedAttempt(eventId: string, error: string): Promise<void> {
    await this.models.Inbox.increment('attempts', { where: { event_id: eventId } });
    await this.models.Inbox.update({ last_error: error.slice(0, 512) }, { where: { event_id: eventId } });
  }

  /**
   * The kept payloads about an order (an erasure reads them): the events its history names (each
   * observation applied, or not, writes its line, with the event id as its source id), and the
   * events not applied yet about its transactions (its attempts', their captures', the operations').
   * Bodies the retention job cleared are not among them.
   */
  async keptOfOrder(orderId: string): Promise<{ eventId: string; payload: string }[]> {
    // From the order's history to the inbox, in that order (STRAIGHT_JOIN): the inbox's rows not
    // cleared are most of it, the order's lines a handful.
    const [named] = await this.pool.query<RowDataPacket[]>(
      `SELECT STRAIGHT_JOIN DISTINCT i.event_id, i.payload
         FROM order_history h JOIN webhook_inbox i ON i.event_id = h.source_id
        WHERE h.order_id = ? AND h.source IN ('webhook', 'replay', 'recovery') AND i.payload_cleared = 0`,
      [orderId],
    );
    const [ids] = await this.pool.query<RowDataPacket[]>(
      `SELECT gateway_transaction_id AS id FROM payment_attempts WHERE order_id = ?
        UNION SELECT capture_id FROM payment_attempts WHERE order_id = ?
        UNION SELECT result_transaction_id FROM gateway_operations WHERE order_id = ?`,
      [orderId, orderId, orderId],
    );
    const transactions = ids.map((r) => r.id as string | null).filter((id) => id !== null);
    const [pending] =
      transactions.length === 0
        ? [[] as RowDataPacket[]]
        : await this.pool.query<RowDataPacket[]>(
            `SELECT event_id, payload FROM webhook_inbox
              WHERE processed_at IS NULL AND payload_cleared = 0 AND transaction_id IN (?)`,
            [transactions],
          );
    const kept = new Map<string, string>();
    for (const r of [...named, ...pending]) kept.set(r.event_id as string, r.payload as string);
    return [...kept].map(([eventId, payload]) => ({ eventId, payload }));
  }

  /** When the oldest event still unprocessed was stored; null when none is (the metrics' inbox lag). */
  async oldestUnprocessed(): Promise<Date | null> {
    const row = await this.models.Inbox.findOne({
      attributes: ['received_at'],
      where: { processed_at: null },
      order: [['received_at', 'ASC']],
    });
    return row?.received_at ?? null;
  }

  /** Whether an event received since `since` is not applied yet. */
  async unprocessedSince(since: Date): Promise<boolean> {
    const row = await this.models.Inbox.findOne({
      attributes: ['event_id'],
      where: { processed_at: null, received_at: { [Op.gte]: since } },
    });
    return row !== null;
  }

  /** Stored but not processed, and older than `before`: what the sweeper queues again. */
  async stuck(before: Date, limit: number): Promise<string[]> {
    return (await this.unprocessed(before, limit)).map((r) => r.eventId);
  }

  /**
   * A page of the rows stored and not processed, received up to `before`, oldest first (then by
   * id), after `after` (the last row of the page before): every such row once, however many there
   * are and whatever their age (what is queued again after Redis lost the queue).
   */
  async unprocessed(before: Date, limit: number, after?: InboxCursor): Promise<InboxCursor[]> {
    const from = after && {
      [Op.or]: [
        { received_at: { [Op.gt]: after.receivedAt } },
        { received_at: after.receivedAt, event_id: { [Op.gt]: after.eventId } },
      ],
    };
    const rows = await this.models.Inbox.findAll({
      attributes: ['event_id', 'received_at'],
      where: { processed_at: null, received_at: { [Op.lte]: before }, ...from },
      order: [
        ['received_at', 'ASC'],
        ['event_id', 'ASC'],
      ],
      limit,
    });
    return rows.map((r) => ({ eventId: r.event_id, receivedAt: r.received_at }));
  }
}

/** Where a page of the unprocessed rows ends: the next page starts after it. */
export interface InboxCursor {
  eventId: string;
  receivedAt: Date;
}
