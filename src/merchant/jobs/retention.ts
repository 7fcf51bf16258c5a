import type { RetentionStore, ScannedEvent } from '../store/retention.js';

/**
 * Ageing out (issue 43, part 5): what the kit keeps only for a while. Run by the scheduler under the
 * job's lock (kit/jobs.ts), a small batch a statement so that no statement holds many rows, and a
 * cap per run so that a first run over years of data leaves the rest to the next.
 *
 * - The body of a webhook event the kit applied is cleared after RETENTION_DAYS: an order's state
 *   and history hold what it said, and the gateway keeps the event (gateway-api.md: 30 days).
 * - Its row (the event id) stays while the gateway may deliver it again: retries end within two days,
 *   a replay is refused after its 30-day history (gateway-api.md, Limits), and recovery lists only
 *   that history. Kept 31 days at least, a redelivery or a recovered event is always a duplicate.
 * - An order event delivered to every subscriber goes after RETENTION_DAYS, with its deliveries and
 *   tries; one given up (`failed`), still pending or never fanned out stays for operators.
 * An event not applied yet keeps its body whatever its age. Orders, their history, disputes,
 * operations and the audit log stay: the report reads them alone, so it does not move.
 */

const DAY_MS = 86_400_000;
/** The gateway's event history (30 days) and a day besides: how long an event id is kept at least. */
export const REDELIVERY_DAYS = 31;
/** Rows a statement touches. */
export const BATCH = 500;
/** Batches of each kind a run makes at most. */
export const MAX_BATCHES = 200;

/** What a run removed. */
export interface RetentionSummary {
  /** Webhook bodies cleared (their ids kept). */
  webhookPayloads: number;
  /** Webhook event ids deleted, the gateway being unable to deliver them again. */
  webhookEvents: number;
  orderEvents: number;
  orderEventDeliveries: number;
  orderEventTries: number;
}

/** Where each kind ages out, for a run at `now`. */
export function retentionCutoffs(now: number, days: number) {
  return {
    bodies: new Date(now - days * DAY_MS),
    ids: new Date(now - Math.max(days, REDELIVERY_DAYS) * DAY_MS),
    orderEvents: new Date(now - days * DAY_MS),
  };
}

/**
 * Of a scan of order events in the order they were written, the ones old enough and fanned out (the
 * deliveries decide the rest), and whether the scan reached events younger than `before`: those
 * written after them are younger still, so the run stops there.
 */
export function oldEvents(scanned: readonly ScannedEvent[], before: Date): { seqs: number[]; done: boolean } {
  const seqs: number[] = [];
  for (const e of scanned) {
    if (e.created_at.getTime() >= before.getTime()) return { seqs, done: true };
    if (e.fanned_out_at !== null) seqs.push(e.seq);
  }
  return { seqs, done: false };
}

/** The events to keep: those with a delivery not delivered (pending, or given up). */
export function undelivered(deliveries: readonly { event_seq: number; status: string }[]): Set<number> {
  return new Set(deliveries.filter((d) => d.status !== 'delivered').map((d) => d.event_seq));
}

export interface RetentionDeps {
  retention: Pick<RetentionStore, 'clearBodies' | 'deleteEvents' | 'scanOrderEvents' | 'pruneOrderEvents'>;
  now: () => number;
}

export interface RetentionOptions {
  days: number;
  batch?: number;
  maxBatches?: number;
}

/** One run: ids past the redelivery window, then bodies past RETENTION_DAYS, then delivered order events. */
export async function ageOut(deps: RetentionDeps, o: RetentionOptions): Promise<RetentionSummary> {
  const { batch = BATCH, maxBatches = MAX_BATCHES } = o;
  const cut = retentionCutoffs(deps.now(), o.days);
  const summary: RetentionSummary = {
    webhookPayloads: 0,
    webhookEvents: 0,
    orderEvents: 0,
    orderEventDeliveries: 0,
    orderEventTries: 0,
  };
  // Deleted first: a row on its way out need not be cleared.
  summary.webhookEvents = await repeat(() => deps.retention.deleteEvents(cut.ids, batch), batch, maxBatches);
  summary.webhookPayloads = await repeat(
    () => deps.retention.clearBodies(cut.bodies, batch),
    batch,
    maxBatches,
  );
  let after = 0;
  for (let n = 0; n < maxBatches; n++) {
    const scanned = await deps.retention.scanOrderEvents(after, batch);
    const { seqs, done } = oldEvents(scanned, cut.orderEvents);
    const pruned = await deps.retention.pruneOrderEvents(seqs, undelivered);
    summary.orderEvents += pruned.events;
    summary.orderEventDeliveries += pruned.deliveries;
    summary.orderEventTries += pruned.tries;
    if (done || scanned.length < batch) break;
    after = scanned.at(-1)!.seq;
  }
  return summary;
}

/** `step` again while it fills its batch, at most `max` times; what it did in all. */
async function repeat(step: () => Promise<number>, batch: number, max: number): Promise<number> {
  let total = 0;
  for (let n = 0; n < max; n++) {
    const done = await step();
    total += done;
    if (done < batch) break;
  }
  return total;
}
