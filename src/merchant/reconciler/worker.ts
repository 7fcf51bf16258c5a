import type { Job } from 'bull';
import type { Logger } from 'pino';
import { eventPayloadSchema } from '../../client/schemas.js';
import type { Clock } from '../../shared/clock.js';
import { observeTransaction } from '../orders/from-gateway.js';
import type { ObservationSource } from '../orders/observation.js';
import type { OrderRepository } from '../orders/repository.js';
import type { Inbox } from '../webhooks/inbox.js';
import type { ObservationJob } from './queue.js';

/** No attempt of ours has this transaction (yet): retried with backoff, then left in the failed set. */
export class UnmatchedEvent extends Error {
  override name = 'UnmatchedEvent';
}

export interface WorkerDeps {
  inbox: Inbox;
  orders: OrderRepository;
  clock: Clock;
  logger: Logger;
}

/**
 * The reconciler: an inbox event becomes an observation and goes through the one state machine
 * (OrderRepository.applyObservation, under a row lock, order and history in one transaction).
 */
export function eventProcessor(deps: WorkerDeps) {
  return async (job: Job<ObservationJob>): Promise<string> => {
    const { eventId } = job.data;
    const row = await deps.inbox.get(eventId);
    if (!row) return 'missing';
    if (row.processed_at) return 'already processed';
    const payload = eventPayloadSchema.parse(JSON.parse(row.payload));
    const source = row.source as ObservationSource;
    const observation = observeTransaction(payload.data.transaction!, source, eventId, deps.clock.now());
    const result = await deps.orders.applyObservation(observation);
    if (!result.matched) {
      await deps.inbox.markFailedAttempt(eventId, `no order has transaction ${observation.transaction.id}`);
      throw new UnmatchedEvent(`no order has transaction ${observation.transaction.id} (event ${eventId})`);
    }
    const outcome = result.decision!.outcome;
    await deps.inbox.markProcessed(eventId, outcome, new Date(deps.clock.now()));
    if (outcome === 'flagged')
      deps.logger.warn(
        { event: eventId, order: result.orderId, note: result.decision!.note },
        'order needs review',
      );
    return outcome;
  };
}
