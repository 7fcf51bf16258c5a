import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { lockConflict } from '../../infra/database.js';

/** Who an event goes to: a shop endpoint (`url:<url>`) or a handler in the fork's code (`handler:<name>`). */
export interface Subscriber {
  id: string;
  /** The event types it takes; null: every type. */
  types: ReadonlySet<string> | null;
}

export interface OrderEventRecord {
  seq: number;
  id: string;
  order_id: string;
  type: string;
  payload: string;
  created_at: Date;
  fanned_out_at: Date | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryRecord {
  id: number;
  event_seq: number;
  order_id: string;
  subscriber: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date;
  locked_until: Date | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
}

export interface AttemptLine {
  delivery_id: number;
  subscriber: string;
  at: Date;
  result: 'delivered' | 'failed';
  http_status: number | null;
  error: string | null;
  ms: number;
}

/** A delivery claimed for sending, with its event. */
export interface Claimed {
  delivery: DeliveryRecord;
  event: OrderEventRecord;
}

/** What one try of a delivery came to. */
export type TryResult =
  | { ok: true; httpStatus: number | null; ms: number }
  | { ok: false; httpStatus: number | null; error: string; ms: number; nextAt: Date | null };

export interface SubscriberStatus {
  subscriber: string;
  pending: number;
  failed: number;
  oldest_pending_at: Date | null;
  last_delivered_at: Date | null;
  last_error: string | null;
}

/**
 * The outbox of order events (issue 20): event rows are written by the order's own change
 * (OrderStore.transition); here the dispatcher fans them out to subscribers, claims what is due, and
 * records each try. SQL through mysql2, as on the other hot paths.
 */
export class OutboxStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Makes the deliveries of events not fanned out yet, one per subscriber that takes the type, and
   * marks them fanned out, in one transaction. Rows another dispatcher is fanning out are skipped.
   */
  async fanOut(subscribers: readonly Subscriber[], now: Date, limit = 200): Promise<number> {
    const db = await this.pool.getConnection();
    try {
      await db.query('START TRANSACTION');
      const [events] = await db.query<RowDataPacket[]>(
        `SELECT seq, order_id, type FROM order_events WHERE fanned_out_at IS NULL
          ORDER BY seq LIMIT ? FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      if (events.length === 0) {
        await db.query('COMMIT');
        return 0;
      }
      const rows = events.flatMap((e) =>
        subscribers
          .filter((s) => s.types === null || s.types.has(e.type))
          .map((s) => [Number(e.seq), e.order_id, s.id, 'pending', 0, now, now]),
      );
      if (rows.length > 0)
        await db.query(
          `INSERT IGNORE INTO order_event_deliveries
             (event_seq, order_id, subscriber, status, attempts, next_attempt_at, created_at) VALUES ?`,
          [rows],
        );
      await db.query('UPDATE order_events SET fanned_out_at = ? WHERE seq IN (?)', [
        now,
        events.map((e) => e.seq),
      ]);
      await db.query('COMMIT');
      return events.length;
    } catch (error) {
      await db.rollback().catch(() => {});
      throw error;
    } finally {
      db.release();
    }
  }

  /**
   * Claims up to `limit` due deliveries of these subscribers for `leaseMs`: for each order and
   * subscriber, only the oldest one still pending (events of one order arrive in order), and none
   * while an earlier event of the order is not fanned out yet (another dispatcher's fan-out holds it,
   * SKIP LOCKED, and has not made its deliveries). A claim that lapses (its dispatcher died
   * mid-delivery) is taken again: at least once, same event id.
   */
  async claimDue(
    subscribers: readonly string[],
    now: Date,
    leaseMs: number,
    limit: number,
  ): Promise<Claimed[]> {
    if (subscribers.length === 0) return [];
    const [candidates] = await this.pool.query<RowDataPacket[]>(
      `SELECT d.id FROM order_event_deliveries d
        WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND d.subscriber IN (?)
          AND (d.locked_until IS NULL OR d.locked_until <= ?)
          AND NOT EXISTS (SELECT 1 FROM order_event_deliveries p
                           WHERE p.order_id = d.order_id AND p.subscriber = d.subscriber
                             AND p.status = 'pending' AND p.event_seq < d.event_seq)
          AND NOT EXISTS (SELECT 1 FROM order_events u
                           WHERE u.order_id = d.order_id AND u.seq < d.event_seq AND u.fanned_out_at IS NULL)
        ORDER BY d.event_seq LIMIT ?`,
      [now, subscribers, now, limit],
    );
    const until = new Date(now.getTime() + leaseMs);
    const claimed: number[] = [];
    for (const { id } of candidates) {
      const [done] = await this.pool.query<ResultSetHeader>(
        `UPDATE order_event_deliveries SET locked_until = ?
          WHERE id = ? AND status = 'pending' AND (locked_until IS NULL OR locked_until <= ?)`,
        [until, id, now],
      );
      if (done.affectedRows === 1) claimed.push(Number(id));
    }
    if (claimed.length === 0) return [];
    const [rows] = await this.pool.query<RowDataPacket[][]>(
      {
        sql: `SELECT d.*, e.* FROM order_event_deliveries d JOIN order_events e ON e.seq = d.event_seq
               WHERE d.id IN (?) ORDER BY d.event_seq`,
        nestTables: true,
      },
      [claimed],
    );
    return (rows as unknown as { d: RowDataPacket; e: RowDataPacket }[]).map(({ d, e }) => ({
      delivery: delivery(d),
      event: event(e),
    }));
  }

  /**
   * Records one try: delivered, or failed with its next time (null: given up, `failed`). The
   * deliveries of one pass settle at once, and a delivered one brings forward the others of its
   * subscriber: two such settles can deadlock on those rows, and the one MariaDB rolls back is run
   * again (up to three times), so the pass does not fail over it.
   */
  async settle(claimed: Claimed, result: TryResult, at: Date): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        return await this.#settleOnce(claimed, result, at);
      } catch (error) {
        if (!lockConflict(error) || tries >= 3) throw error;
      }
    }
  }

  async #settleOnce(claimed: Claimed, result: TryResult, at: Date): Promise<void> {
    const d = claimed.delivery;
    const error = result.ok ? null : result.error.slice(0, 512);
    const [status, next] = result.ok
      ? (['delivered', d.next_attempt_at] as const)
      : ([result.nextAt === null ? 'failed' : 'pending', result.nextAt ?? d.next_attempt_at] as const);
    // One transaction, a statement a query: only the transitions' pool takes several in one.
    const db = await this.pool.getConnection();
    try {
      await db.beginTransaction();
      await db.query(
        `UPDATE order_event_deliveries
            SET status = ?, attempts = attempts + 1, next_attempt_at = ?, locked_until = NULL,
                last_error = ?, delivered_at = ?
          WHERE id = ?${
            // A failure is recorded only under this pass's own claim: a dispatcher that stalled past
            // it must not put back to pending what another pass has delivered meanwhile.
            result.ok ? '' : " AND status = 'pending' AND locked_until <=> ?"
          }`,
        [status, next, error, result.ok ? at : null, d.id, ...(result.ok ? [] : [d.locked_until])],
      );
      await db.query('INSERT INTO order_event_attempts SET ?', [
        {
          delivery_id: d.id,
          event_seq: d.event_seq,
          at,
          result: result.ok ? 'delivered' : 'failed',
          http_status: result.httpStatus,
          error,
          ms: result.ms,
        },
      ]);
      // An endpoint that takes an event is back: what waits for it is tried now, not at its hourly
      // try (an hour's outage would otherwise keep events up to an hour after the return).
      if (result.ok)
        await db.query(
          `UPDATE order_event_deliveries SET next_attempt_at = ?
            WHERE subscriber = ? AND status = 'pending' AND attempts > 0 AND next_attempt_at > ?`,
          [at, d.subscriber, at],
        );
      await db.commit();
    } catch (error) {
      await db.rollback().catch(() => {});
      throw error;
    } finally {
      db.release();
    }
  }

  /** Sends an event again to every subscriber it went to (a replay): pending, due now. */
  async replay(eventId: string, now: Date): Promise<number | null> {
    const found = await this.event(eventId);
    if (!found) return null;
    const [done] = await this.pool.query<ResultSetHeader>(
      `UPDATE order_event_deliveries SET status = 'pending', next_attempt_at = ?, locked_until = NULL
        WHERE event_seq = ?`,
      [now, found.seq],
    );
    return done.affectedRows;
  }

  async event(id: string): Promise<OrderEventRecord | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>('SELECT * FROM order_events WHERE id = ?', [id]);
    return rows[0] ? event(rows[0]) : null;
  }

  /** An event's deliveries and every try of them, oldest first: its history. */
  async history(seq: number): Promise<{ deliveries: DeliveryRecord[]; attempts: AttemptLine[] }> {
    const [deliveries] = await this.pool.query<RowDataPacket[]>(
      'SELECT * FROM order_event_deliveries WHERE event_seq = ? ORDER BY id',
      [seq],
    );
    const [attempts] = await this.pool.query<RowDataPacket[]>(
      `SELECT a.delivery_id, d.subscriber, a.at, a.result, a.http_status, a.error, a.ms
         FROM order_event_attempts a JOIN order_event_deliveries d ON d.id = a.delivery_id
        WHERE a.event_seq = ? ORDER BY a.id`,
      [seq],
    );
    return {
      deliveries: deliveries.map(delivery),
      attempts: attempts.map((a) => ({ ...(a as AttemptLine), delivery_id: Number(a.delivery_id) })),
    };
  }

  /** Events newest first; those of one order, or all. */
  async list(o: { orderId?: string; limit: number }): Promise<OrderEventRecord[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT * FROM order_events ${o.orderId ? 'WHERE order_id = ?' : ''} ORDER BY seq DESC LIMIT ?`,
      o.orderId ? [o.orderId, o.limit] : [o.limit],
    );
    return rows.map(event);
  }

  /** Per subscriber: what waits, what was given up, the oldest waiting, the last delivered, the last error. */
  async status(): Promise<SubscriberStatus[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT subscriber,
              SUM(status = 'pending') AS pending, SUM(status = 'failed') AS failed,
              MIN(CASE WHEN status = 'pending' THEN created_at END) AS oldest_pending_at,
              MAX(delivered_at) AS last_delivered_at
         FROM order_event_deliveries GROUP BY subscriber ORDER BY subscriber`,
    );
    const [errors] = await this.pool.query<RowDataPacket[]>(
      `SELECT d.subscriber, d.last_error FROM order_event_deliveries d
        JOIN (SELECT subscriber, MAX(id) AS id FROM order_event_deliveries
               WHERE last_error IS NOT NULL GROUP BY subscriber) l ON l.id = d.id`,
    );
    const lastError = new Map(errors.map((e) => [e.subscriber as string, e.last_error as string]));
    return rows.map((r) => ({
      subscriber: r.subscriber,
      pending: Number(r.pending),
      failed: Number(r.failed),
      oldest_pending_at: r.oldest_pending_at,
      last_delivered_at: r.last_delivered_at,
      last_error: lastError.get(r.subscriber) ?? null,
    }));
  }

  /** How many events of these orders the outbox holds. */
  async countOf(orderIds: readonly string[]): Promise<number> {
    if (orderIds.length === 0) return 0;
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT COUNT(*) AS n FROM order_events WHERE order_id IN (?)',
      [orderIds],
    );
    return Number(rows[0]!.n);
  }

  /** Events written and not fanned out yet: the dispatcher's lag. */
  async unfannedCount(): Promise<number> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT COUNT(*) AS n FROM order_events WHERE fanned_out_at IS NULL',
    );
    return Number(rows[0]!.n);
  }
}

const delivery = (r: RowDataPacket): DeliveryRecord => ({
  ...(r as DeliveryRecord),
  id: Number(r.id),
  event_seq: Number(r.event_seq),
});
const event = (r: RowDataPacket): OrderEventRecord => ({ ...(r as OrderEventRecord), seq: Number(r.seq) });
