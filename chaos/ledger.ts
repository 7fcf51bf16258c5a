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
  #next = FIRST_ID;
  #walk: { startedAt: number; done: Promise<void> } | null = null;

  constructor(private readonly reader: GatewayReader) {}

  /** Every transaction for `reference`, as the gateway has it now (children included), oldest first. */
  async of(reference: string): Promise<GatewayRecord[]> {
    await this.#newOnes(Date.now());
    const ours = [...this.#records.values()].filter((r) => r.reference === reference);
    // Only payments that may still move are asked about again: a capture, refund or void record never does.
    for (const r of ours) {
      if (r.relatedId !== null || FINAL.has(r.status)) continue;
      const now = await this.reader.record(r.id);
      if (now) this.#records.set(r.id, now);
    }
    return [...this.#records.values()].filter((r) => r.reference === reference).sort((a, b) => a.id - b.id);
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
      const record = await this.reader.record(id);
      if (record === null) {
        missing += 1;
        continue;
      }
      missing = 0;
      this.#records.set(id, record);
      this.#next = id + 1;
    }
  }
}
