import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { Config } from '../config.js';
import {
  createPool,
  createSequelize,
  createTransitionPool,
  migrate,
  requireDatabase,
} from '../infra/database.js';
import type { RedisBudget } from '../infra/gateway-budget.js';
import type { RedisHealth } from '../infra/redis.js';
import { createStore, type Store } from '../merchant/store/index.js';
import { type Clock, systemClock } from '../shared/clock.js';
import type { RandomSource } from '../shared/ids.js';
import { once } from '../shared/once.js';
import { SecretBox } from '../shared/secret-box.js';
import { settleEncryptionKeys } from './encryption-keys.js';
import type { ConnectOptions, GatewayConnection } from './gateway.js';
import type { Shutdown } from './shutdown.js';

export interface PartOptions
  extends Pick<ConnectOptions, 'clientDeps' | 'sandbox' | 'publicBaseUrl' | 'startSandbox' | 'checkKeyAs'> {
  config: Config;
  logger: Logger;
  /** The clock of the store and of the key's budget: every process of the kit counts on the same one. */
  clock: Clock;
  random: RandomSource;
  /** Redis key prefix of the queue, locks and budget. */
  redisPrefix: string;
  /**
   * A database that does not exist is created (default: the kit's start), or refused with one line
   * naming DATABASE_URL (a CLI command beside a kit that has run: a mistyped name, said, not made).
   */
  createDatabase?: boolean;
}

/** The database, migrated. */
export interface DatabasePart {
  sequelize: Sequelize;
  /** The migrations this opening applied. */
  applied: string[];
}

export interface StorePart {
  sequelize: Sequelize;
  store: Store;
  box: SecretBox;
}

export interface StoreOptions {
  create?: boolean;
  settleKeys?: boolean;
}

export interface RedisPart {
  redis: Redis;
  /** What every Redis client of the process reports its failures to (one outage log). */
  health: RedisHealth;
}

/**
 * The parts every process of the kit is built from: the database, the store, Redis, the API key's
 * shared budget and the gateway client spending from it. Each is built once, on first use (with the
 * options of that first use), and registered with `shutdown` as it opens. `buildAdapters` takes them
 * all (a process of the kit); a CLI command only those it uses: one that reads a table opens no
 * Redis, one that asks the gateway no database (but in platform mode, GATEWAY_MERCHANTS set: the
 * gateway's clients are made with the merchant keys stored there).
 */
export interface KitParts {
  /** A Redis that answers and refuses REDIS_URL is a setting to fix (RedisUrlError): looked at once. */
  redisChecked(): Promise<void>;
  /**
   * The database, migrated. `create` (default true): a database that does not exist is created (the
   * kit, `migrate`, the commands that set the kit up); false: it is one line naming DATABASE_URL.
   */
  database(o?: { create?: boolean }): Promise<DatabasePart>;
  /**
   * The store on the migrated database, with the encryption key settled as start-up settles it
   * (unless `settleKeys` is false: what forgets what a lost key sealed).
   */
  store(o?: StoreOptions): Promise<StorePart>;
  redis(): Promise<RedisPart>;
  /** The API key's budget, shared through Redis by every process of the kit. */
  budget(): Promise<RedisBudget>;
  /** The gateway, and the client whose every call the shared budget admits first. */
  gateway(): Promise<GatewayConnection>;
}

export function kitParts(o: PartOptions, shutdown: Shutdown): KitParts {
  const { config, logger, clock, random } = o;
  // The modules of Redis, the budget and the gateway client are loaded by the first part that uses
  // them: a CLI command that reads a table loads neither ioredis nor the client.
  const redisModule = () => import('../infra/redis.js');

  const redisChecked = once(async () => {
    const { redisRefusal } = await redisModule();
    const refusal = await redisRefusal(config.redisUrl);
    if (refusal) throw refusal;
  });

  const database = once(async ({ create = true }: { create?: boolean } = {}): Promise<DatabasePart> => {
    if (!create) await requireDatabase(config.databaseUrl);
    const sequelize = createSequelize(config.databaseUrl);
    shutdown.connection({ name: 'database', close: () => sequelize.close() });
    const applied = await migrate(config.databaseUrl, sequelize);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
    return { sequelize, applied };
  });

  const store = once(async ({ create, settleKeys = true }: StoreOptions = {}): Promise<StorePart> => {
    const { sequelize } = await database({ create });
    const pool = createPool(config.databaseUrl);
    shutdown.connection({ name: 'database pool', close: () => pool.end() });
    const transitionPool = createTransitionPool(config.databaseUrl);
    shutdown.connection({ name: 'transition pool', close: () => transitionPool.end() });
    const box = new SecretBox(config.encryptionKey, random, config.previousEncryptionKeys);
    const store = createStore({ sequelize, pool, transitionPool, clock, random, box });
    if (settleKeys)
      await settleEncryptionKeys(store, { rotating: config.previousEncryptionKeys.length > 0, logger });
    return { sequelize, store, box };
  });

  const redis = once(async (): Promise<RedisPart> => {
    const [{ createRedis }, { OutageLog }] = await Promise.all([
      redisModule(),
      import('../infra/outage-log.js'),
      redisChecked(),
    ]);
    // Every client's failures in one log, paced by real time whatever clock the kit runs on.
    const outage = OutageLog.of('redis', logger, systemClock);
    const health = { failed: (e: Error) => outage.failed(e), available: () => outage.available() };
    const client = createRedis(config.redisUrl, 'client', health);
    shutdown.connection({ name: 'redis', close: async () => void (await client.quit()) });
    return { redis: client, health };
  });

  const budget = once(async (): Promise<RedisBudget> => {
    const [{ redis: client }, { DEFAULT_BUDGET }, { RedisBudget }] = await Promise.all([
      redis(),
      import('../client/budget.js'),
      import('../infra/gateway-budget.js'),
    ]);
    // One budget for the API key in every process of this kit (api, worker, scheduler, the CLI), in
    // two shares: checkout traffic's (checkout, landings, operators) and background work's (the
    // poller, recovery, the CLI's bulk commands), each with a part the other cannot take; and, with
    // two or more merchants behind a partner key, a part of each for every merchant.
    return new RedisBudget({
      redis: client,
      prefix: o.redisPrefix,
      apiKey: config.gateway.apiKey,
      now: () => clock.now(),
      options: {
        ...DEFAULT_BUDGET,
        backgroundPerMinute: config.gateway.backgroundPerMinute,
        keyPerMinute: config.gateway.keyPerMinute,
        backgroundReserved: config.gateway.backgroundReservedPerMinute,
        // A partner key's linked merchants each keep a part of the key's minute (client/budget.ts).
        merchants: config.gateway.merchants.map(String),
      },
    });
  });

  const gateway = once(async (): Promise<GatewayConnection> => {
    const { connectGateway } = await import('./gateway.js');
    return connectGateway({
      ...o,
      shutdown,
      budget: await budget(),
      // Asked only by an embedded sandbox started here (its signing secret is kept): never by the CLI.
      secrets: async () => (await store()).store.secrets,
      // Asked in platform mode only, before the key is judged. The kit's start has the store open
      // already (the encryption key settled: a stored key that does not open stopped it); a CLI command
      // opens it here, settled the same way, and makes the database only where it may.
      storedMerchantKeys: async () =>
        (await store({ create: o.createDatabase ?? true })).store.merchantKeys.all(),
    });
  });

  return { redisChecked, database, store, redis, budget, gateway };
}
