import type Queue from 'bull';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { DEFAULT_BUDGET } from '../client/budget.js';
import type { Config } from '../config.js';
import {
  createLockPool,
  createPool,
  createSequelize,
  createTransitionPool,
  databaseName,
  migrate,
} from '../infra/database.js';
import { RedisBudget } from '../infra/gateway-budget.js';
import { KitMetrics } from '../infra/metrics.js';
import { BUSY, NamedLocks } from '../infra/named-locks.js';
import { OutageLog } from '../infra/outage-log.js';
import { createRedis, redisRefusal } from '../infra/redis.js';
import type { MerchantDeps } from '../merchant/checkout/deps.js';
import { CustomerTokens } from '../merchant/customers/customer-token.js';
import { type Apply, type ApplyMany, applier, batchApplier } from '../merchant/reconciler/apply.js';
import {
  closeQueue,
  createObservationQueue,
  enqueueEvents,
  type ObservationJob,
} from '../merchant/reconciler/queue.js';
import { createStore, type Store } from '../merchant/store/index.js';
import { type BatchOptions, batched } from '../shared/batcher.js';
import { type Clock, systemClock } from '../shared/clock.js';
import type { RandomSource } from '../shared/ids.js';
import { SecretBox } from '../shared/secret-box.js';
import { settleEncryptionKeys } from './encryption-keys.js';
import { type ConnectOptions, connectGateway, type GatewayConnection } from './gateway.js';
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

export interface AdapterOptions
  extends Pick<ConnectOptions, 'clientDeps' | 'sandbox' | 'publicBaseUrl' | 'embedded' | 'checkKeyAs'> {
  config: Config;
  logger: Logger;
  clock: Clock;
  random: RandomSource;
  redisPrefix: string;
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
 * `shutdown` as it opens, so a start-up that fails half way closes what it opened.
 */
export async function buildAdapters(o: AdapterOptions, shutdown: Shutdown): Promise<Adapters> {
  const { config, logger, clock, random } = o;
  // Before anything is opened or created: a Redis that refuses REDIS_URL is a setting to fix.
  const refusal = await redisRefusal(config.redisUrl);
  if (refusal) throw refusal;
  const sequelize = createSequelize(config.databaseUrl);
  shutdown.connection({ name: 'database', close: () => sequelize.close() });
  const pool = createPool(config.databaseUrl);
  shutdown.connection({ name: 'database pool', close: () => pool.end() });
  const transitionPool = createTransitionPool(config.databaseUrl);
  shutdown.connection({ name: 'transition pool', close: () => transitionPool.end() });
  const lockPool = createLockPool(config.databaseUrl);
  shutdown.connection({ name: 'lock pool', close: () => lockPool.end() });
  const locks = new NamedLocks(lockPool, databaseName(config.databaseUrl));
  const applied = await migrate(config.databaseUrl, sequelize);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  const box = new SecretBox(config.encryptionKey, random, config.previousEncryptionKeys);
  const store = createStore({ sequelize, pool, transitionPool, clock, random, box });
  await settleEncryptionKeys(store, { rotating: config.previousEncryptionKeys.length > 0, logger });
  const metrics = new KitMetrics();
  const apply = counted(applier(store), metrics);
  const applyMany = countedMany(batchApplier(store), metrics);

  // Every client's failures in one log, paced by real time whatever clock the kit runs on.
  const outage = OutageLog.of('redis', logger, systemClock);
  const redisHealth = { failed: (e: Error) => outage.failed(e), available: () => outage.available() };
  const redis = createRedis(config.redisUrl, 'client', redisHealth);
  shutdown.connection({ name: 'redis', close: async () => void (await redis.quit()) });
  const queue = createObservationQueue(config.redisUrl, o.redisPrefix, o.jobRetry, redisHealth);
  shutdown.connection({ name: 'queue', close: () => closeQueue(queue) });

  // One budget for the API key in every process of this kit, in two shares: checkout traffic's
  // (checkout, landings, operators) and background work's (the poller, recovery, the CLI's bulk
  // commands), each with a part the other cannot take.
  const budget = new RedisBudget({
    redis,
    prefix: o.redisPrefix,
    apiKey: config.gateway.apiKey,
    now: () => clock.now(),
    options: {
      ...DEFAULT_BUDGET,
      backgroundPerMinute: config.gateway.backgroundPerMinute,
      keyPerMinute: config.gateway.keyPerMinute,
      backgroundReserved: config.gateway.backgroundReservedPerMinute,
    },
  });
  const gateway = await connectGateway({ ...o, shutdown, secrets: store.secrets, budget });
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
      gateway: gateway.client,
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
