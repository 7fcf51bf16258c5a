import { sameMerchantRule } from '../merchant/orders/order-merchant.js';
import { requeueAlone } from '../merchant/reconciler/queue.js';
import { keepUnmatched } from '../merchant/reconciler/unmatched.js';
import { eventProcessor, UnmatchedEvent } from '../merchant/reconciler/worker.js';
import type { Adapters } from './adapters.js';
import type { Shutdown } from './shutdown.js';

/**
 * The `worker` role: the reconciler, taking inbox events off the queue `concurrency` at a time; the
 * events in hand are applied together (reconciler/worker.ts BATCH).
 */
export function startWorker(a: Adapters, shutdown: Shutdown, concurrency: number): void {
  const { queue, logger } = a;
  void queue.process(
    concurrency,
    eventProcessor({
      inbox: a.store.inbox,
      applyMany: a.applyMany,
      keep: async (obs) => {
        const kept = await keepUnmatched(
          {
            store: a.store,
            apply: a.apply,
            clock: a.clock,
            logger,
            sameMerchant: sameMerchantRule(a.config.gateway.merchants),
          },
          obs,
        );
        if (kept.first) a.metrics.unmatchedMoney(kept.money.currency, kept.money.merchant_id);
        return kept;
      },
      requeueAlone: (eventIds) => requeueAlone(queue, eventIds),
      clock: a.clock,
      logger,
    }),
  );
  // bull's local pause: takes no new job at once, resolves when the jobs in hand are done.
  shutdown.work({ name: 'worker', drain: async () => void (await queue.pause(true)) });
  // Which process applied which event: with several workers, their lines show the split.
  queue.on('completed', (job, result) => logger.debug({ job: job.id, result }, 'reconciler job done'));
  queue.on('failed', (job, error) => {
    const line = { job: job.id, attempts: job.attemptsMade, err: { message: error.message } };
    // Money no attempt holds yet is the retries' normal path, not a failure: the attempt is often being
    // written at that very moment, and what is still unmatched at the last attempt is kept, and logged
    // once then (reconciler/unmatched.ts). A warning per retry would cry wolf on every stray payment.
    if (error instanceof UnmatchedEvent)
      logger.debug(line, 'reconciler job retried: no attempt holds its money yet');
    else logger.warn(line, 'reconciler job failed');
  });
}
