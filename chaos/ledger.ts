import type { GatewayReader, GatewayRecord } from './gateway.js';

/**
 * The gateway's transactions by the order reference they carry, read over its API. The API lists
 * events, not transactions, and an auth or a new payment session makes no event in the default set:
 * so the ledger reads every record by id. The sandbox numbers them from 100000 up, one after the
 * other (sandbox.md section 3); an operation it refuses may use a number and record nothing, so the
 * walk stops only after a few missing ids in a row.
 */

const FIRST_ID = 100000;
/** Missing ids in a row that end the walk. */
const GAP = 3;

/** Statuses that nothing in a case changes any more (sandbox.md sections 6 and 7). */
const FINAL = new Set(['failed', 'cancelled', 'voided', 'refunded']);

export class GatewayLedger {
  readonly #records = new Map<number, GatewayRecord>();
  /** When each record was read. */
  readonly #readAt = new Map<number, number>();
  #next = FIRST_ID;
  #walk: { startedAt: number; done: Promise<void> } | null = null;

  constructor(private readonly reader: GatewayReader) {}

  /** Every transaction for `reference`, as the gateway has it now (children included), oldest first. */
  async of(reference: string): Promise<GatewayRecord[]> {
    return this.#now((r) => r.reference === reference);
  }

  /** Every transaction the gateway holds, as it has them now, oldest first. */
  async all(): Promise<GatewayRecord[]> {
    return this.#now(() => true);
  }

  async #now(ours: (r: GatewayRecord) => boolean): Promise<GatewayRecord[]> {
    const since = Date.now();
    await this.#newOnes(since);
    // Only payments that may still move are asked about again: a capture, refund or void record never
    // does, and one read since `since` is as the gateway has it now.
    for (const r of [...this.#records.values()].filter(ours)) {
      if (r.relatedId !== null || FINAL.has(r.status) || this.#readAt.get(r.id)! >= since) continue;
      await this.#read(r.id);
    }
    return [...this.#records.values()].filter(ours).sort((a, b) => a.id - b.id);
  }

  /** The record with this id, kept; null when the gateway has none. */
  async #read(id: number): Promise<GatewayRecord | null> {
    const readAt = Date.now();
    const record = await this.reader.record(id);
    if (record) {
      this.#records.set(id, record);
      this.#readAt.set(id, readAt);
    }
    return record;
  }

  /**
   * Reads the records made since the last walk, as of `since` at least: callers at the same moment
   * share one walk (the run's looks at many orders cost one), a walk begun before `since` is not enough.
   */
  async #newOnes(since: number): Promise<void> {
    while (this.#walk) {
      const walk = this.#walk;
      await walk.done;
      if (walk.startedAt >= since) return;
    }
    const done = this.#walkOnce().finally(() => {
      this.#walk = null;
    });
    this.#walk = { startedAt: Date.now(), done };
    await done;
  }

  async #walkOnce(): Promise<void> {
    let missing = 0;
    for (let id = this.#next; missing < GAP; id++) {
      if ((await this.#read(id)) === null) {
        missing += 1;
        continue;
      }
      missing = 0;
      this.#next = id + 1;
    }
  }
}
