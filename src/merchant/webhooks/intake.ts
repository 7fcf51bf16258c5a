import type { Logger } from 'pino';
import { type BatchOptions, batched } from '../../shared/batcher.js';
import { withDeadline } from '../../shared/deadline.js';
import type { InboxEvent, InboxStore } from '../store/inbox.js';

/** How long the receiver waits on Redis before answering anyway (the sweeper queues what missed). */
export const ENQUEUE_DEADLINE_MS = 250;

/**
 * What became of a verified event: new and queued; new and stored but not queued (Redis did not
 * answer in time: the sweeper queues it after a minute); or a repeat, stored and queued before.
 */
export type Intake = 'queued' | 'stored' | 'duplicate';

export interface IntakeDeps {
  inbox: Pick<InboxStore, 'storeMany'>;
  /** Queues these new events for the reconciler (reconciler/queue.ts enqueueEvents). */
  enqueue: (eventIds: readonly string[]) => Promise<unknown>;
  logger: Logger;
}

/**
 * The receiver's durable step, one batch at a time (group commit): the deliveries that arrived while
 * the previous batches were in flight are stored in one INSERT, then the new ones among them queued
 * in one job, and only then is each answered. One flush does both, so a batch costs one round trip
 * to MySQL and one to Redis however many it carries; a delivery that finds nothing in flight goes at
 * once, alone. A row the database refuses fails its own delivery (503); the database down, every
 * one of its batch.
 */
export function inboxIntake(deps: IntakeDeps, options: BatchOptions): (event: InboxEvent) => Promise<Intake> {
  return batched(async (events: readonly InboxEvent[]) => {
    const stored = await deps.inbox.storeMany(events);
    const fresh = events.filter((_, i) => stored[i] === 'stored').map((e) => e.id);
    let queued = true;
    if (fresh.length > 0) {
      try {
        await withDeadline(deps.enqueue(fresh), ENQUEUE_DEADLINE_MS, 'the queue');
      } catch (error) {
        // Stored is what matters: the sweeper queues whatever is stored and unprocessed after a minute.
        queued = false;
        deps.logger.warn(
          { err: { message: (error as Error).message }, events: fresh },
          'webhooks stored, not queued',
        );
      }
    }
    return stored.map((s): Intake | Error =>
      s instanceof Error ? s : s === 'duplicate' ? 'duplicate' : queued ? 'queued' : 'stored',
    );
  }, options);
}
