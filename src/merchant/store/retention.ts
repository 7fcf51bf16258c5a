import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';

/** An order event as the retention job scans it: where it stands, not what it says. */
export interface ScannedEvent {
  seq: number;
  created_at: Date;
  fanned_out_at: Date | null;
}

/** What one batch of pruned order events took with it. */
export interface Pruned {
  events: number;
  deliveries: number;
  tries: number;
}

/**
 * What ages out (issue 43, part 5), a small batch a statement: the bodies of webhook events the kit
 * applied, their ids once the gateway can no longer deliver them again, and order events delivered to
 * every subscriber with their deliveries and tries. Orders, their history, disputes and operations are
 * never touched: the report reads those alone. The inbox's rows go by the index on
 * (payload_cleared, received_at); an event not yet applied keeps its body and its row.
 */
export class RetentionStore {
  constructor(private readonly pool: Pool) {}

  /** Clears up to `limit` bodies of applied events received before `before`; how many it cleared. */
  async clearBodies(before: Date, limit: number): Promise<number> {
    const [done] = await this.pool.query<ResultSetHeader>(
      `UPDATE webhook_inbox SET payload = '', payload_cleared = 1
        WHERE payload_cleared = 0 AND received_at < ? AND processed_at IS NOT NULL
        ORDER BY received_at LIMIT ?`,
      [before, limit],
    );
    return done.affectedRows;
  }

  /** Deletes up to `limit` rows of applied events received before `before`, cleared or not; how many. */
  async deleteEvents(before: Date, limit: number): Promise<number> {
    const [done] = await this.pool.query<ResultSetHeader>(
      `DELETE FROM webhook_inbox
        WHERE payload_cleared IN (0, 1) AND received_at < ? AND processed_at IS NOT NULL LIMIT ?`,
      [before, limit],
    );
    return done.affectedRows;
  }

  /** The next `limit` order events after `afterSeq`, in the order they were written. */
  async scanOrderEvents(afterSeq: number, limit: number): Promise<ScannedEvent[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT seq, created_at, fanned_out_at FROM order_events WHERE seq > ? ORDER BY seq LIMIT ?',
      [afterSeq, limit],
    );
    return rows.map((r) => ({
      seq: Number(r.seq),
      created_at: r.created_at,
      fanned_out_at: r.fanned_out_at,
    }));
  }

  /**
   * Deletes these order events, their deliveries and their tries, in one transaction, unless `keep`
   * says otherwise of an event once its deliveries are locked (a replay made one pending again).
   */
  async pruneOrderEvents(
    seqs: readonly number[],
    keep: (deliveries: { event_seq: number; status: string }[]) => Set<number>,
  ): Promise<Pruned> {
    if (seqs.length === 0) return { events: 0, deliveries: 0, tries: 0 };
    const db = await this.pool.getConnection();
    try {
      await db.beginTransaction();
      const [deliveries] = await db.query<RowDataPacket[]>(
        'SELECT event_seq, status FROM order_event_deliveries WHERE event_seq IN (?) FOR UPDATE',
        [seqs],
      );
      const kept = keep(deliveries.map((d) => ({ event_seq: Number(d.event_seq), status: d.status })));
      const gone = seqs.filter((s) => !kept.has(s));
      let pruned: Pruned = { events: 0, deliveries: 0, tries: 0 };
      if (gone.length > 0) {
        const [tries] = await db.query<ResultSetHeader>(
          'DELETE FROM order_event_attempts WHERE event_seq IN (?)',
          [gone],
        );
        const [made] = await db.query<ResultSetHeader>(
          'DELETE FROM order_event_deliveries WHERE event_seq IN (?)',
          [gone],
        );
        const [events] = await db.query<ResultSetHeader>('DELETE FROM order_events WHERE seq IN (?)', [gone]);
        pruned = { events: events.affectedRows, deliveries: made.affectedRows, tries: tries.affectedRows };
      }
      await db.commit();
      return pruned;
    } catch (error) {
      await db.rollback().catch(() => {});
      throw error;
    } finally {
      db.release();
    }
  }
}
