import { delay } from '../test/support/process.js';
import type { KitTables } from './tables.js';

/**
 * Issue 44, part 4: how long after Redis lost what it held (FLUSHALL, a restart without persistence)
 * every event the kit held unapplied then is applied. Those are the events whose queued jobs the
 * fault took: the kit must find them again in its inbox. An event's inbox mark is written in the
 * transaction that applies it to its order, so an event marked is its order's truth reached.
 */

/** The kit's promise (issue 44): within this of the fault. */
export const REDIS_LOSS_WITHIN_S = 15;
/** How long a measure waits before it gives up (the sweeper alone would take a minute and more). */
const GIVE_UP_MS = 120_000;
const LOOK_EVERY_MS = 250;

/** One Redis fault's figure for the table. */
export interface RedisLossTime {
  fault: string;
  /** Events the kit held unapplied when Redis answered empty. */
  events: number;
  /** Seconds from then until every one of them was applied; null: not within GIVE_UP_MS. */
  seconds: number | null;
}

/** The figures of the run's Redis faults, in the order they ran. */
export class RedisLossTimes {
  readonly times: RedisLossTime[] = [];

  /**
   * Waits until every event the inbox holds unapplied now is applied; `since` is when Redis answered
   * empty (the flush; the restart's end). Returns the figure, kept for the table, as a line.
   */
  async measure(tables: KitTables, fault: string, since: number): Promise<string> {
    const held = (await tables.inbox()).filter((row) => Number(row.processed) === 0).map((r) => r.event_id);
    const waiting = new Set(held);
    const deadline = since + GIVE_UP_MS;
    while (waiting.size > 0 && Date.now() < deadline) {
      await delay(LOOK_EVERY_MS);
      const rows = await tables.inbox().catch(() => []);
      for (const row of rows) if (Number(row.processed) === 1) waiting.delete(row.event_id);
    }
    const seconds = waiting.size === 0 ? (Date.now() - since) / 1000 : null;
    this.times.push({ fault, events: held.length, seconds });
    const events = `event${held.length === 1 ? '' : 's'} held unapplied`;
    return seconds === null
      ? `${held.length} ${events}, ${waiting.size} still not applied ${GIVE_UP_MS / 1000} s on`
      : `${held.length} ${events}, all applied ${seconds.toFixed(1)} s on`;
  }
}

/** The table's cell: each fault's seconds. */
export function redisLossCell(times: readonly RedisLossTime[]): string {
  if (times.length === 0) return 'not measured';
  return times
    .map(
      (t) =>
        `${t.fault}: ${t.seconds === null ? 'not applied' : t.seconds.toFixed(1)} ` +
        `(${t.events} event${t.events === 1 ? '' : 's'})`,
    )
    .join('; ');
}

/** Why the figures fail the run: a fault whose events took longer than the kit's promise. */
export function redisLossFailures(times: readonly RedisLossTime[]): string[] {
  return times
    .filter((t) => t.seconds === null || t.seconds > REDIS_LOSS_WITHIN_S)
    .map(
      (t) =>
        `after ${t.fault}, the events held unapplied ${t.seconds === null ? 'not all applied' : `applied in ${t.seconds.toFixed(1)} s`} (at most ${REDIS_LOSS_WITHIN_S})`,
    );
}
