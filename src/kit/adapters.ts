import type Queue from 'bull';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { Config } from '../config.js';
import { createLockPool, databaseName } from '../infra/database.js';
import type { RedisBudget } from '../infra/gateway-budget.js';
import { KitMetrics } from '../infra/metrics.js';
import { BUSY, NamedLocks } from '../infra/named-locks.js';
import type { MerchantDeps } from '../merchant/checkout/deps.js';
import { CustomerTokens } from '../merchant/customers/customer-token.js';
import { sameMerchantRule } from '../merchant/orders/order-merchant.js';
import { type Apply, type ApplyMany, applier, batchApplier } from '../merchant/reconciler/apply.js';
import {
  closeQueue,
  createObservationQueue,
  enqueueEvents,
  type ObservationJob,
} from '../merchant/reconciler/queue.js';
import type { Store } from '../merchant/store/index.js';
import { type BatchOptions, batched } from '../shared/batcher.js';
import type { Clock } from '../shared/clock.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { GatewayConnection } from './gateway.js';
import { type KitParts, kitParts, type PartOptions } from './parts.js';
import type { Shutdown } from './shutdown.js';

/** What every role runs on, built once per process from the configuration. */
export interface Adapters {
  config: Config;
  logger: Logger;
  clock: Clock;
  sequelize: Sequelize;
  store: Store;
  /** The one apply path (DESIGN.md section 2): every source's observations go through it. */
  apply: Apply;
  /** The same path for a batch (the worker). */
  applyMany: ApplyMany;
  box: SecretBox;
  redis: Redis;
  /** Redis key prefix of the queue and locks. */
  redisPrefix: string;
  queue: Queue.Queue<ObservationJob>;
  /** Queues an inbox event for the reconciler (job id = event id). */
  enqueue: (eventId: string) => Promise<void>;
  gateway: GatewayConnection;
  /** This process's Prometheus metrics. */
  metrics: KitMetrics;
  /** The key's shared budget and what it reports it spends. */
  budget: RedisBudget;
  /** What the checkout flows, landings and jobs run with. */
  checkout: MerchantDeps;
}

export interface AdapterOptions extends PartOptions {
  /** The reconciler's retries. */
  jobRetry?: { attempts: number; delayMs: number };
  /** How long a payment waits for another of its order to end (PAYMENT_WAIT_MS). */
  paymentWaitMs?: number;
}

/**
 * How long a payment waits for another payment of its order to end before it answers 409
 * PAYMENT_IN_PROGRESS: a gateway answers in well under a second, a slow one in a few, and a storefront
 * gives up on a call after about 30 s.
 */
export const PAYMENT_WAIT_MS = 20_000;

/**
 * Group commit for the receiver's writes (inbox rows, queue jobs): up to 200 in one round trip, two
 * round trips at once. Measured with `npm run bench`: one at a time is what kept the receiver slow.
 */
export const BATCHES: BatchOptions = { maxBatch: 200, maxInFlight: 2 };

/**
 * The database (migrated first), the store, Redis, the queue and the gateway, each registered with
 * `shutdown` as it opens, so a start-up that fails half way closes what it opened. Built from the
 * kit's parts (kit/parts.ts): a CLI command passes the ones it may already have used, so that nothing
 * is opened twice.
 */
export async function buildAdapters(
  o: AdapterOptions,
  shutdown: Shutdown,
  parts: KitParts = kitParts(o, shutdown),
): Promise<Adapters> {
  const { config, logger, clock } = o;
  // Before anything is opened or created: a Redis that refuses REDIS_URL is a setting to fix.
  await parts.redisChecked();
  const { sequelize, store, box } = await parts.store({ create: o.createDatabase ?? true });
  const lockPool = createLockPool(config.databaseUrl);
  shutdown.connection({ name: 'lock pool', close: () => lockPool.end() });
  const locks = new NamedLocks(lockPool, databaseName(config.databaseUrl));
  // Several merchants (platform mode): the order metrics carry a `merchant` label.
  const metrics = new KitMetrics({ merchants: config.gateway.merchants });
  // An event changes its own merchant's orders only (issue 45, platform mode).
  const sameMerchant = sameMerchantRule(config.gateway.merchants);
  const apply = counted(applier(store, sameMerchant), metrics);
  const applyMany = countedMany(batchApplier(store, sameMerchant), metrics);

  const { redis, health } = await parts.redis();
  const queue = createObservationQueue(config.redisUrl, o.redisPrefix, o.jobRetry, health);
  shutdown.connection({ name: 'queue', close: () => closeQueue(queue) });
  const budget = await parts.budget();
  const gateway = await parts.gateway();
  return {
    config,
    logger,
    clock,
    sequelize,
    store,
    apply,
    applyMany,
    box,
    redis,
    redisPrefix: o.redisPrefix,
    queue,
    // The sweeper's and recovery's events: what arrives together goes in one job (the receiver's
    // own go through its intake, stored and queued in one flush).
    enqueue: batched((ids: readonly string[]) => enqueueEvents(queue, ids), BATCHES),
    gateway,
    metrics,
    budget,
    checkout: {
      store,
      turns: {
        one: async (orderId, work) => {
          const done = await locks.holding(`pay:${orderId}`, o.paymentWaitMs ?? PAYMENT_WAIT_MS, work);
          return done === BUSY ? 'busy' : done;
        },
      },
      apply,
      gateways: gateway.gateways,
      box,
      clock,
      logger,
      publicBaseUrl: o.publicBaseUrl,
      customerTokens: new CustomerTokens(config.encryptionKey, config.previousEncryptionKeys),
      authExpiryWarningMs: config.authorizations.warningMs,
      savedCardBounds: config.savedCards,
      maxFailedAttempts: config.limits.failedAttemptsPerOrder,
    },
  };
}

/** The apply path, counting what each observation came to (by source and outcome) for the metrics. */
function counted(apply: Apply, metrics: KitMetrics): Apply {
  return async (obs, options) => {
    const result = await apply(obs, options);
    metrics.observed(obs.source, result.decision?.outcome ?? 'unmatched');
    return result;
  };
}

function countedMany(applyMany: ApplyMany, metrics: KitMetrics): ApplyMany {
  return async (items, turn) => {
    const results = await applyMany(items, turn);
    results.forEach((result, i) => {
      if (!(result instanceof Error))
        metrics.observed(items[i]!.obs.source, result.decision?.outcome ?? 'unmatched');
    });
    return results;
  };
}
