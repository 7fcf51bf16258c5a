import type { MetricSources } from '../infra/metrics.js';
import { withDeadline } from '../shared/deadline.js';
import type { Adapters } from './adapters.js';
import type { Jobs } from './jobs.js';

/** A scrape waits this long for each shared source; one that does not answer is left out. */
const SCRAPE_MS = 1000;

/** What the gauges read when scraped: the inbox, the queue, the shared budget, the last health check. */
export function metricSources(a: Adapters, jobs: Jobs): MetricSources {
  const bounded = <T>(what: string, work: Promise<T>) => withDeadline(work, SCRAPE_MS, what);
  return {
    inboxLagSeconds: async () => {
      const oldest = await bounded('the inbox', a.store.inbox.oldestUnprocessed());
      return oldest === null ? 0 : Math.max(0, (a.clock.now() - oldest.getTime()) / 1000);
    },
    queueJobs: async () => {
      const counts = await bounded('the queue', a.queue.getJobCounts());
      return {
        waiting: counts.waiting,
        active: counts.active,
        delayed: counts.delayed,
        failed: counts.failed,
      };
    },
    budget: async () => {
      // The last complete minute: the current one is still filling.
      const [last] = await bounded('the budget', a.budget.spending(2));
      return {
        calls: last?.byCaller ?? {},
        waits: last?.waited ?? {},
        remaining: await bounded('the budget', a.budget.lastRemaining()),
      };
    },
    unmatchedOpen: () => bounded('gateway money with no order', a.store.unmatched.openByMerchant()),
    disputesOpen: () => bounded('the disputes', a.store.disputes.openByMerchant()),
    orderEvents: async () => {
      const status = await bounded('the order events', a.store.outbox.status());
      const oldest = Math.min(
        ...status.map((s) => s.oldest_pending_at?.getTime() ?? Number.POSITIVE_INFINITY),
      );
      return {
        pending: status.reduce((n, s) => n + s.pending, 0),
        failed: status.reduce((n, s) => n + s.failed, 0),
        oldestPendingSeconds: Number.isFinite(oldest) ? Math.max(0, (a.clock.now() - oldest) / 1000) : 0,
      };
    },
    // Each endpoint's: the kit's one with no merchant label, a merchant's (platform mode) with its.
    webhookHealth: async () =>
      (await bounded('the health', jobs.lastHealths())).map(({ merchant, health }) => ({
        status: health.status,
        consecutiveFailures: health.consecutiveFailures,
        ...(merchant === null ? {} : { merchant }),
      })),
  };
}
