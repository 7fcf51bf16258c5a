import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Queue from 'bull';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { GatewayClient } from './client/gateway-client.js';
import type { ClientDeps } from './client/request.js';
import type { Config } from './config.js';
import { createGateway, type Gateway } from './gateway/app.js';
import { loadSeedFile, type Seed } from './gateway/seed.js';
import { createSequelize, migrate } from './infra/database.js';
import { initModels, type Models } from './infra/models.js';
import { createRedis } from './infra/redis.js';
import { expireHolds } from './merchant/checkout/card.js';
import type { CheckoutDeps } from './merchant/checkout/deps.js';
import { createMerchantApp } from './merchant/http/app.js';
import { Scheduler } from './merchant/jobs/scheduler.js';
import { sweepInbox } from './merchant/jobs/sweeper.js';
import { OrderRepository } from './merchant/orders/repository.js';
import {
  createObservationQueue,
  enqueueEvent,
  type ObservationJob,
  type RetryPolicy,
} from './merchant/reconciler/queue.js';
import { eventProcessor } from './merchant/reconciler/worker.js';
import { Inbox } from './merchant/webhooks/inbox.js';
import { webhookReceiver } from './merchant/webhooks/receiver.js';
import { SecretCache } from './merchant/webhooks/secret-cache.js';
import { activeSecrets, storeSecret } from './merchant/webhooks/secrets.js';
import { type AdvanceableClock, type Clock, systemClock } from './shared/clock.js';
import { cryptoRandom, type RandomSource } from './shared/ids.js';
import { SecretBox } from './shared/secret-box.js';

export interface KitOptions {
  config: Config;
  logger: Logger;
  /** The merchant side's clock (hold expiry, timestamps). Default: real time. */
  clock?: Clock;
  random?: RandomSource;
  /** Seams of the gateway client (tests: a recording sleep). */
  clientDeps?: Partial<ClientDeps>;
  /** The embedded sandbox's clock and seed, for tests; default real time and GATEWAY_SEED. */
  sandbox?: { clock?: AdvanceableClock; seed?: Seed };
  /** Redis key prefix of the queue and locks (tests: one per kit). Default `kit`. */
  redisPrefix?: string;
  /** Jobs the reconciler runs at once. Default 8. */
  workerConcurrency?: number;
  /** The reconciler's retries. Default 8 attempts, backoff from 1 s, doubling. */
  jobRetry?: RetryPolicy;
  /** Cron expressions (seconds first); null turns a job off. Default: the sweeper every 20 s, the hold eraser every minute. */
  schedules?: { sweeper?: string | null; holds?: string | null };
}

export interface Kit {
  /** Where the merchant API listens (null without the api role). */
  url: string | null;
  publicBaseUrl: string;
  gatewayUrl: string;
  sandbox: Gateway | null;
  client: GatewayClient;
  orders: OrderRepository;
  inbox: Inbox;
  queue: Queue.Queue<ObservationJob>;
  redis: Redis;
  models: Models;
  sequelize: Sequelize;
  box: SecretBox;
  /** What the checkout flows and jobs run with. */
  checkout: CheckoutDeps;
  /** Queues an inbox event for the reconciler. */
  enqueue(eventId: string): Promise<void>;
  /** The sweeper, run now (what the scheduler runs on its schedule). */
  sweep(): Promise<number>;
  /** Stops taking work, finishes the work in hand (the worker's current job), closes connections. */
  close(): Promise<void>;
}

/** Builds and starts the kit from its configuration: what `npm start` runs, and what tests start too. */
export async function startKit(options: KitOptions): Promise<Kit> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? cryptoRandom;
  const prefix = options.redisPrefix ?? 'kit';
  const roles = new Set(config.roles);
  // Closed in this order: intake first (HTTP, cron), then the worker drains, then the connections.
  const stages: Record<'intake' | 'drain' | 'connections', (() => Promise<void>)[]> = {
    intake: [],
    drain: [],
    connections: [],
  };
  const close = async () => {
    for (const stage of ['intake', 'drain', 'connections'] as const) {
      for (const fn of stages[stage].splice(0))
        await fn().catch((error: Error) => logger.warn({ err: { message: error.message } }, 'while closing'));
    }
  };

  try {
    const sequelize = createSequelize(config.databaseUrl);
    stages.connections.push(() => sequelize.close());
    const applied = await migrate(config.databaseUrl, sequelize);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
    const models = initModels(sequelize);
    const box = new SecretBox(config.encryptionKey, random);
    const orders = new OrderRepository(sequelize, models, clock, random);
    const inbox = new Inbox(sequelize);
    const redisDown = (error: Error) => logger.warn({ err: { message: error.message } }, 'redis unavailable');
    const redis = createRedis(config.redisUrl, 'client', redisDown);
    stages.connections.push(async () => void (await redis.quit()));
    const queue = createObservationQueue(config.redisUrl, prefix, options.jobRetry, redisDown);
    stages.drain.push(() => queue.close()); // bull: takes no new job, waits for the one in hand
    const enqueue = (eventId: string) => enqueueEvent(queue, eventId);
    const sweep = () => sweepInbox({ inbox, enqueue, now: clock.now() });

    // The merchant server is bound first: with PORT=0 the public URL is known only then.
    const server = createServer();
    const port = roles.has('api') ? await listen(server, config.port) : null;
    if (port !== null) stages.intake.push(() => closeServer(server));
    const publicBaseUrl = config.publicBaseUrl ?? `http://127.0.0.1:${port ?? config.port}`;

    let sandbox: Gateway | null = null;
    let gatewayUrl = config.gateway.baseUrl;
    if (gatewayUrl === null) {
      const seed = options.sandbox?.seed ?? (await loadSeedFile(config.gateway.sandboxSeed));
      // The embedded sandbox is ours and local: it may deliver to the kit on 127.0.0.1.
      const localSeed: Seed = { ...seed, settings: { ...seed.settings, allow_private_webhook_urls: true } };
      sandbox = createGateway({
        seed: localSeed,
        clock: options.sandbox?.clock,
        logger: logger.child({ side: 'sandbox' }),
        autoDeliver: true,
      });
      const listening = await sandbox.listen(config.gateway.sandboxPort, '127.0.0.1');
      const gw = sandbox;
      const ticker = setInterval(
        () =>
          void gw.controls
            .tick()
            .catch((error: Error) =>
              logger.error({ err: { message: error.message } }, 'sandbox tick failed'),
            ),
        1000,
      );
      stages.connections.push(async () => {
        clearInterval(ticker);
        await listening.close();
      });
      gatewayUrl = listening.url;
      logger.info({ url: gatewayUrl }, 'embedded sandbox gateway listening');
    }

    const client = new GatewayClient({
      baseUrl: gatewayUrl,
      apiKey: config.gateway.apiKey,
      merchantId: config.gateway.merchantId,
      deps: options.clientDeps,
    });

    if (sandbox) {
      // merchant.md: against the embedded sandbox the kit registers its own endpoint and keeps the secret.
      const registered = await client.putWebhook({ url: `${publicBaseUrl}/webhooks/gateway` });
      if (registered.data.secret)
        await storeSecret(models, box, registered.data.secret, 'embedded-sandbox', new Date(clock.now()));
    }

    const checkout: CheckoutDeps = { orders, gateway: client, box, clock, logger, publicBaseUrl };

    if (roles.has('worker')) {
      void queue.process(options.workerConcurrency ?? 8, eventProcessor({ inbox, orders, clock, logger }));
      queue.on('failed', (job, error) =>
        logger.warn(
          { job: job.id, attempts: job.attemptsMade, err: { message: error.message } },
          'reconciler job failed',
        ),
      );
    }

    if (roles.has('scheduler')) {
      const scheduler = new Scheduler(redis, logger, prefix);
      const schedule = (name: 'sweeper' | 'holds', fallback: string) => {
        const chosen = options.schedules?.[name];
        return chosen === undefined ? fallback : chosen;
      };
      scheduler.start([
        { name: 'sweeper', schedule: schedule('sweeper', '*/20 * * * * *'), lockMs: 60_000, run: sweep },
        {
          name: 'holds',
          schedule: schedule('holds', '0 * * * * *'),
          lockMs: 60_000,
          run: () => expireHolds(checkout),
        },
      ]);
      stages.intake.push(() => scheduler.stop());
    }

    if (port !== null) {
      const secrets = new SecretCache(
        () => activeSecrets(models, box, config.gateway.extraWebhookSecrets),
        clock,
      );
      const app = createMerchantApp({
        ...checkout,
        opsApiToken: config.opsApiToken,
        shopUrl: config.shopUrl ?? `${publicBaseUrl}/`,
        orderRules: config.orders,
        receiver: webhookReceiver({ inbox, secrets, enqueue, clock, logger }),
        readiness: [
          { name: 'database', check: async () => void (await sequelize.query('SELECT 1')) },
          { name: 'redis', check: async () => void (await redis.ping()) },
          {
            name: 'gateway',
            check: async () => void (await fetch(gatewayUrl!, { signal: AbortSignal.timeout(2000) })),
          },
        ],
      });
      server.on('request', app.callback());
      logger.info(
        { url: `http://127.0.0.1:${port}`, publicBaseUrl, roles: [...roles] },
        'merchant API listening',
      );
    }

    return {
      url: port === null ? null : `http://127.0.0.1:${port}`,
      publicBaseUrl,
      gatewayUrl,
      sandbox,
      client,
      orders,
      inbox,
      queue,
      redis,
      models,
      sequelize,
      box,
      checkout,
      enqueue,
      sweep,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '0.0.0.0', () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
