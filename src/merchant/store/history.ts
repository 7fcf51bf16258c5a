import type { Outcome } from '../orders/decide.js';
import type { ObservationSource } from '../orders/observation.js';
import { type Models, plain } from './models.js';
import type { HistoryRecord } from './records.js';

/** One line of an order's history: what was learned or done, and what it did to the order. */
export interface HistoryEntry {
  orderId: string;
  attemptId: string | null;
  source: ObservationSource;
  /** The event id, the request or attempt step, or the poll: what makes a repeat a repeat. */
  sourceId: string;
  statusBefore: string;
  statusAfter: string;
  /**
   * decide's verdict on an observation; `refused`: an operator's request the gateway turned down;
   * `requested`: an operator's capture, refund or void, stored before the call, with who and why;
   * `resolved`: a person resolved the order's review (who, the resolution, the note).
   */
  outcome: Outcome | 'refused' | 'requested' | 'resolved';
  /** Why it was not applied, what was flagged, or which code failed the attempt. */
  detail: string | null;
}

/** The row of one line (order-writer.ts). */
export function historyRow(entry: HistoryEntry, at: Date) {
  return {
    order_id: entry.orderId,
    attempt_id: entry.attemptId,
    source: entry.source,
    source_id: entry.sourceId.slice(0, 128),
    status_before: entry.statusBefore,
    status_after: entry.statusAfter,
    outcome: entry.outcome,
    detail: entry.detail?.slice(0, 512) ?? null,
    created_at: at,
  };
}

/** Every order's history, read; written only by the order's one writer (order-writer.ts), with the change it records. */
export class HistoryStore {
  constructor(private readonly models: Models) {}

  /** An order's history, oldest first. */
  async ofOrder(orderId: string): Promise<HistoryRecord[]> {
    const rows = await this.models.History.findAll({ where: { order_id: orderId }, order: [['id', 'ASC']] });
    return rows.map(plain);
  }
}
