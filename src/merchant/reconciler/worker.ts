import type { Job } from 'bull';
import type { Logger } from 'pino';
import type { Clock } from '../../shared/clock.js';
import { parseEvent } from '../orders/from-gateway.js';
import type { ObservationSource, TransactionObservation } from '../orders/observation.js';
import type { InboxStore } from '../store/inbox.js';
import type { Kept } from '../store/unmatched.js';
import type { Apply } from './apply.js';
import type { ObservationJob } from './queue.js';

/**
 * No attempt of ours has this transaction (yet): retried with backoff. A payment whose attempt is
 * being written at that very moment (the kit's own answer, a duplicate adopted) is found on a retry;
 * what is still unmatched at the last attempt is kept as gateway money with no order.
 */
export class UnmatchedEvent extends Error {
  override name = 'UnmatchedEvent';
}

/** A stored event that no longer reads as one: retrying cannot help, so it goes to the failed set at once. */
export class UnreadableEvent extends Error {
  override name = 'UnreadableEvent';
}

export interface WorkerDeps {
  inbox: InboxStore;
  apply: Apply;
  /** Keeps gateway money no attempt holds and flags its order (reconciler/unmatched.ts keepUnmatched). */
  keep: (obs: TransactionObservation) => Promise<Kept>;
  clock: Clock;
  logger: Logger;
}

/** Whether this run of the job is its last: bull counts the attempts made before this one. */
const lastAttempt = (job: Job) => job.attemptsMade + 1 >= (job.opts.attempts ?? 1);

/**
 * The reconciler: an inbox event becomes an observation (parseEvent, the receiver's own reading) and
 * goes through the one apply path.
 */
export function eventProcessor(deps: WorkerDeps) {
  return async (job: Job<ObservationJob>): Promise<string> => {
    const { eventId } = job.data;
    const row = await deps.inbox.get(eventId);
    if (!row) return 'missing';
    if (row.processed_at) return 'already processed';
    const event = parseEvent(row.payload, row.source as ObservationSource, deps.clock.now());
    if (event.kind !== 'observation') {
      const problem = event.kind === 'ping' ? 'a ping carries no transaction' : event.message;
      await deps.inbox.markFailedAttempt(eventId, `unreadable: ${problem}`);
      await job.discard();
      throw new UnreadableEvent(`inbox event ${eventId} is unreadable: ${problem}`);
    }
    const { observation } = event;
    // Applied and marked processed in one transaction: a crash in between cannot apply it twice.
    const result = await deps.apply(observation, { inboxEventId: eventId });
    if (!result.matched && lastAttempt(job)) {
      // Still no attempt holds it after every retry: gateway money with no order. Kept in
      // unmatched_money and its order flagged (a failure to do so throws: the job fails and an
      // operator can retry it), then processed with the outcome `unmatched`: nothing is lost, and
      // retrying would change nothing.
      const kept = await deps.keep(observation);
      await deps.inbox.markProcessed(eventId, 'unmatched', new Date(deps.clock.now()));
      return kept.first ? 'unmatched: kept' : 'unmatched: seen again';
    }
    if (!result.matched) {
      await deps.inbox.markFailedAttempt(eventId, `no order has transaction ${observation.transaction.id}`);
      throw new UnmatchedEvent(`no order has transaction ${observation.transaction.id} (event ${eventId})`);
    }
    const outcome = result.decision!.outcome;
    if (outcome === 'flagged')
      deps.logger.warn(
        { event: eventId, order: result.orderId, note: result.decision!.note },
        'order needs review',
      );
    return outcome;
  };
}
