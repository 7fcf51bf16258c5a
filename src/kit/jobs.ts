import type { JobName } from '../config.js';
import { OutageLog } from '../infra/outage-log.js';
import { expireHolds } from '../merchant/checkout/card.js';
import { type AuthorizationSummary, watchAuthorizations } from '../merchant/jobs/authorizations.js';
import { endCutOffPayments } from '../merchant/jobs/cut-off.js';
import { closeExpiredOrders, type ExpiryOptions, type ExpirySummary } from '../merchant/jobs/order-expiry.js';
import {
  type PollAllSummary,
  type PollSummary,
  pollAll,
  pollDue,
  type TickOptions,
} from '../merchant/jobs/poller.js';
import {
  combinedSummary,
  type RecoveryOptions,
  type RecoverySummary,
  recoverEvents,
  recoveryCheckpoint,
} from '../merchant/jobs/recovery.js';
import { ageOut, type RetentionSummary } from '../merchant/jobs/retention.js';
import { runLocked } from '../merchant/jobs/scheduler.js';
import { sweepInbox } from '../merchant/jobs/sweeper.js';
import {
  checkWebhookHealth,
  type HealthMemory,
  type WebhookHealth,
} from '../merchant/jobs/webhook-health.js';
import { type Report, reconciliationReport } from '../merchant/reports/generate.js';
import { systemClock } from '../shared/clock.js';
import type { RandomSource } from '../shared/ids.js';
import type { Adapters } from './adapters.js';
import { webhookMerchants } from './gateway.js';

/** The background jobs by name (JOB_NAMES in src/config.ts): what the scheduler runs, each under its own lock. */
export type { JobName };

/**
 * Cron expressions (seconds first) and how long each job's lock lasts without renewal. JOB_SCHEDULES
 * replaces a schedule; the locks stay.
 */
export const JOB_TIMING: Record<JobName, { schedule: string; lockMs: number }> = {
  sweeper: { schedule: '*/20 * * * * *', lockMs: 60_000 },
  holds: { schedule: '0 * * * * *', lockMs: 60_000 },
  // Every 15 s: an order due 2 minutes after its change is asked about within about 2 minutes.
  poller: { schedule: '*/15 * * * * *', lockMs: 60_000 },
  recovery: { schedule: '0 */5 * * * *', lockMs: 60_000 },
  health: { schedule: '30 * * * * *', lockMs: 30_000 },
  // The day before's reconciliation, ten minutes after midnight (the process's time zone: UTC in the image).
  report: { schedule: '0 10 0 * * *', lockMs: 5 * 60_000 },
  // Every 15 minutes: a 48-hour warning is said (and acted on) well before the deadline.
  authorizations: { schedule: '0 */15 * * * *', lockMs: 5 * 60_000 },
  // Hourly, off the other jobs' minutes: what RETENTION_DAYS ages out, in small batches.
  retention: { schedule: '0 40 * * * *', lockMs: 5 * 60_000 },
  // Hourly: a key past its 24 hours names nothing already (it is read with its expiry); its row and
  // the sealed client secret in it go within the hour.
  'idempotency-keys': { schedule: '0 7 * * * *', lockMs: 5 * 60_000 },
  // Every 5 minutes, off the minute recovery starts on: an order past ORDER_TTL ends within 5 minutes.
  expiry: { schedule: '40 */5 * * * *', lockMs: 60_000 },
};

/** The jobs' work, over the adapters: what the scheduler runs, and what tests and the CLI call. */
export interface Jobs {
  sweep(): Promise<number>;
  expireHolds(): Promise<number>;
  /** One poller tick: the orders due now. */
  poll(options?: TickOptions): Promise<PollSummary>;
  /** Every open order now, whatever its schedule (`cli poll`). */
  pollAll(onOrder?: (done: number, total: number) => void): Promise<PollAllSummary>;
  /**
   * Event recovery: in a kit of several merchants (issue 45) each merchant's events listed through its
   * own gateway, from its own checkpoint (`merchant`: that merchant's only), the summary adding them up.
   */
  recover(options?: RecoveryOptions & { merchant?: number }): Promise<RecoverySummary>;
  /**
   * The webhook health check: in a kit of several merchants each merchant's endpoint (`merchants`),
   * the fields above being the least healthy one's, `recovered` true when any came back.
   */
  checkHealth(): Promise<WebhookHealth & { recovered: boolean; merchants?: Record<string, WebhookHealth> }>;
  /** The last health check's result (any instance's): several merchants, the least healthy endpoint's. */
  lastHealth(): Promise<WebhookHealth | null>;
  /** The last health of each endpoint: merchant null for the kit's one endpoint. */
  lastHealths(): Promise<{ merchant: number | null; health: WebhookHealth }[]>;
  /** Yesterday's (UTC) reconciliation: its totals and mismatches to the log and the metrics. */
  dailyReport(): Promise<Report>;
  /** Authorisations close to lapsing: warned of, counted, and acted on per AUTH_EXPIRY_POLICY. */
  watchAuthorizations(): Promise<AuthorizationSummary>;
  /** What RETENTION_DAYS ages out (webhook bodies, old event ids, delivered order events), removed and counted. */
  ageOut(): Promise<RetentionSummary>;
  /** Deletes the Idempotency-Keys of POST /orders past their 24 hours; how many. */
  purgeOrderKeys(): Promise<number>;
  /** Orders past ORDER_TTL with no money and nothing in flight: closed (`expired`). */
  closeExpired(options?: ExpiryOptions): Promise<ExpirySummary>;
  /** A job run now as the scheduler runs it: under its lock; null when another instance holds it. */
  run(name: JobName): Promise<unknown | null>;
  /**
   * `work` under the lock of job `name`: an operator's run of that job with options of its own (`cli
   * recover --since`, `cli poll`), never beside the scheduler's. Null when another instance holds it.
   */
  underLock<T>(name: JobName, work: () => Promise<T>): Promise<T | null>;
  /** Each job's work, unlocked: what the scheduler runs under its lock. */
  work: Record<JobName, () => Promise<unknown>>;
}

export function jobsOf(a: Adapters, random: RandomSource): Jobs {
  const { gateways } = a.gateway;
  // The webhook endpoints (issue 45): one per merchant in a kit of several, else the one (null).
  const endpoints = webhookMerchants(gateways.merchants);
  const several = endpoints[0] !== null;
  const deps = {
    store: a.store,
    gateways,
    apply: a.apply,
    clock: a.clock,
    logger: a.logger,
    gatewayOutage: new OutageLog(a.logger, systemClock, {
      down: 'poller paused: the gateway does not answer; the orders due wait for the next tick',
      stillDown: 'poller still paused: the gateway does not answer',
      back: 'poller: the gateway answers again',
    }),
  };
  const locked = <T>(name: JobName, run: () => Promise<T>) =>
    runLocked(a.redis, a.redisPrefix, { name, lockMs: JOB_TIMING[name].lockMs, run }, random);
  const memoryOf = (id: number | null) => healthMemory(a, id);
  /** One merchant's recovery: its events, through its gateway, from its checkpoint, kept as its. */
  const recoverOne = (id: number | null, options?: RecoveryOptions) =>
    recoverEvents(
      {
        ...deps,
        gateway: gateways.of(id),
        merchantId: id ?? gateways.merchants[0] ?? null,
        checkpoint: recoveryCheckpoint(gateways.merchants, id),
        enqueue: a.enqueue,
      },
      options,
    );
  const recover = async (options: RecoveryOptions & { merchant?: number } = {}) => {
    const listedAt = a.clock.now();
    const { merchant, ...rest } = options;
    let summary: RecoverySummary;
    if (!several) summary = await recoverOne(null, rest);
    else {
      const runs: [number, RecoverySummary][] = [];
      let failure: unknown = null;
      for (const id of merchant === undefined ? (endpoints as number[]) : [merchant]) {
        // One merchant's failure (its gateway calls refused) stops no other's recovery.
        try {
          runs.push([id, await recoverOne(id, rest)]);
        } catch (error) {
          failure ??= error;
          a.logger.warn({ merchant: id, err: { message: (error as Error).message } }, 'recovery failed');
        }
      }
      if (failure !== null) throw failure;
      summary = combinedSummary(runs);
    }
    a.metrics.recovered(summary);
    // A run that stored every event it listed shows what the gateway holds: payments cut off before
    // they reached it (the kit died) end now, rather than wait for ever. Every merchant's listed.
    if (summary.failed === 0 && summary.replayed === 0 && merchant === undefined)
      await endCutOffPayments({ store: a.store, checkout: a.checkout, logger: a.logger }, listedAt);
    return summary;
  };
  /** Each endpoint's health; back to healthy after a streak: its merchant's recovery at once, under the job's lock. */
  const checkHealth = async () => {
    const checks: { merchant: number | null; health: WebhookHealth & { recovered: boolean } }[] = [];
    for (const id of endpoints)
      checks.push({
        merchant: id,
        health: await checkWebhookHealth({
          ...deps,
          gateway: gateways.of(id),
          ...(id === null ? {} : { merchantId: id }),
          memory: memoryOf(id),
          recover: () => locked('recovery', () => recover(id === null ? {} : { merchant: id })),
        }),
      });
    if (!several) return checks[0]!.health;
    const worst = leastHealthy(checks.map((c) => c.health));
    return {
      ...worst,
      recovered: checks.some((c) => c.health.recovered),
      merchants: Object.fromEntries(checks.map((c) => [String(c.merchant), c.health])),
    };
  };
  const lastHealths = async () => {
    const found: { merchant: number | null; health: WebhookHealth }[] = [];
    for (const id of endpoints) {
      const health = await memoryOf(id).get();
      if (health) found.push({ merchant: id, health });
    }
    return found;
  };
  const jobs: Omit<Jobs, 'run' | 'work' | 'underLock'> = {
    sweep: () => sweepInbox({ inbox: a.store.inbox, enqueue: a.enqueue, now: a.clock.now() }),
    expireHolds: () => expireHolds(a.checkout),
    poll: (options) => pollDue(deps, options).then(tap((s) => a.metrics.polled(s))),
    pollAll: (onOrder) => pollAll(deps, onOrder).then(tap((s) => a.metrics.polled(s))),
    recover,
    // Back to healthy after a streak: recovery at once, under its own lock so it never runs twice.
    checkHealth,
    lastHealth: async () => {
      const healths = (await lastHealths()).map((h) => h.health);
      return healths.length === 0 ? null : leastHealthy(healths);
    },
    lastHealths,
    dailyReport: () => dailyReport(a),
    watchAuthorizations: () =>
      watchAuthorizations(
        { ...deps, checkout: a.checkout, served: a.checkout.gateways.merchants },
        a.config.authorizations,
      ).then(tap((s) => a.metrics.authorizationsExpiring(s))),
    ageOut: () =>
      ageOut(
        { retention: a.store.retention, now: () => a.clock.now() },
        { days: a.config.retentionDays },
      ).then(tap((s) => a.metrics.aged(s))),
    purgeOrderKeys: () => a.store.orderRequests.purgeExpired(),
    closeExpired: (options) =>
      closeExpiredOrders(
        { store: a.store, checkout: a.checkout, logger: a.logger },
        a.config.orderTtlMs,
        options,
      ).then(tap((s) => a.metrics.expired(s))),
  };
  const work: Record<JobName, () => Promise<unknown>> = {
    sweeper: jobs.sweep,
    holds: jobs.expireHolds,
    poller: () => jobs.poll(),
    recovery: () => jobs.recover(),
    health: jobs.checkHealth,
    report: jobs.dailyReport,
    authorizations: jobs.watchAuthorizations,
    retention: jobs.ageOut,
    'idempotency-keys': jobs.purgeOrderKeys,
    expiry: () => jobs.closeExpired(),
  };
  return { ...jobs, work, run: (name) => locked(name, work[name]), underLock: locked };
}

/** Passes a value on after `use` has seen it. */
const tap =
  <T>(use: (value: T) => void) =>
  (value: T): T => {
    use(value);
    return value;
  };

async function dailyReport(a: Adapters): Promise<Report> {
  const today = Math.floor(a.clock.now() / DAY) * DAY;
  const report = await reconciliationReport(a.checkout, { from: new Date(today - DAY), to: new Date(today) });
  const day = report.from.toISOString().slice(0, 10);
  a.metrics.reported(report.totals, report.totalsByMerchant);
  a.logger.info(
    {
      day,
      totals: report.totals,
      totals_by_merchant: report.totalsByMerchant,
      unmatched_money: report.unmatched.totals,
    },
    'daily reconciliation',
  );
  const mismatched = report.rows.filter((r) => r.classification === 'mismatched');
  if (mismatched.length > 0)
    a.logger.warn(
      {
        day,
        count: mismatched.length,
        // The first 50 name the orders; the report has them all.
        orders: mismatched.slice(0, 50).map((r) => ({ order: r.order_id, reason: r.reason })),
      },
      'daily reconciliation: orders that do not match the gateway',
    );
  const open = report.unmatched.rows.filter((r) => r.resolution === 'open');
  if (open.length > 0)
    a.logger.warn(
      {
        day,
        count: open.length,
        money: open.slice(0, 50).map((r) => ({ id: r.id, transaction: r.transaction_id, order: r.order_id })),
      },
      'daily reconciliation: gateway money with no order, still open',
    );
  return report;
}

const DAY = 24 * 60 * 60_000;

/** The order in which an endpoint's health is worse than another's (unknown statuses count as failing). */
const SEVERITY = ['healthy', 'paused', 'degraded', 'failing', 'missing'];
const severity = (status: string) => {
  const at = SEVERITY.indexOf(status);
  return at < 0 ? SEVERITY.indexOf('failing') : at;
};

/** Of several endpoints' health, the least healthy (the first of equals). */
function leastHealthy<H extends WebhookHealth>(healths: readonly H[]): H {
  return healths.reduce((worst, h) => (severity(h.status) > severity(worst.status) ? h : worst));
}

/**
 * The last health of an endpoint, in Redis: shared by every scheduler, read by whoever reports it.
 * The kit's one endpoint (null) under the key it always had; a merchant's (platform mode) its own.
 */
function healthMemory(a: Adapters, merchant: number | null): HealthMemory {
  const key = `${a.redisPrefix}:webhook-health${merchant === null ? '' : `:${merchant}`}`;
  return {
    get: async () => {
      const text = await a.redis.get(key);
      return text === null ? null : (JSON.parse(text) as WebhookHealth);
    },
    set: async (health) => void (await a.redis.set(key, JSON.stringify(health))),
  };
}
