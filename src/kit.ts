import { createServer, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Queue from 'bull';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { GatewayClient } from './client/gateway-client.js';
import type { ClientDeps } from './client/request.js';
import type { Config } from './config.js';
import { createGateway, type Gateway } from './gateway/app.js';
import { loadSeedFile, type Seed } from './gateway/state/seed.js';
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
import { activeSecrets, hasSecret, storeSecret } from './merchant/webhooks/secrets.js';
import { type AdvanceableClock, type Clock, systemClock } from './shared/clock.js';
import { cryptoRandom, type RandomSource } from './shared/ids.js';
import { SecretBox } from './shared/secret-box.js';

/** The label of the embedded sandbox's signing secret in webhook_secrets. */
const SANDBOX_SECRET_LABEL = 'embedded-sandbox';

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
  /**
   * Stops taking work (HTTP, cron, the worker's next job), lets the work in hand finish for up to
   * `config.shutdownGraceMs`, cuts off what is left, then closes the connections. Called twice, it
   * returns the same promise.
   */
  close(): Promise<void>;
}

/** Builds and starts the kit from its configuration: what `npm start` runs, and what tests start too. */
export async function startKit(options: KitOptions): Promise<Kit> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? cryptoRandom;
  const prefix = options.redisPrefix ?? 'kit';
  const roles = new Set(config.roles);
  // What close() stops, registered as each part starts; stopInOrder is the one place that stops them.
  const stages: Stages = { work: [], connections: [] };
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= stopInOrder(stages, config.shutdownGraceMs, logger);
    return closing;
  };

  try {
    // The merchant server is bound first, before the database is even reached: from then on every
    // request gets an answer, 503 STARTING until the app is ready (issue 8). With PORT=0 the public URL
    // is known only then.
    const http = roles.has('api') ? await bindMerchantServer(config.port, config.httpRequestTimeoutMs) : null;
    if (http) stages.work.push({ name: 'http', drain: http.drain, cutOff: http.cutOff });
    const port = http?.port ?? null;
    const publicBaseUrl = config.publicBaseUrl ?? `http://127.0.0.1:${port ?? config.port}`;

    const sequelize = createSequelize(config.databaseUrl);
    stages.connections.push({ name: 'database', close: () => sequelize.close() });
    const applied = await migrate(config.databaseUrl, sequelize);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
    const models = initModels(sequelize);
    const box = new SecretBox(config.encryptionKey, random);
    const orders = new OrderRepository(sequelize, models, clock, random);
    const inbox = new Inbox(sequelize);
    const redisDown = (error: Error) => logger.warn({ err: { message: error.message } }, 'redis unavailable');
    const redis = createRedis(config.redisUrl, 'client', redisDown);
    stages.connections.push({ name: 'redis', close: async () => void (await redis.quit()) });
    const queue = createObservationQueue(config.redisUrl, prefix, options.jobRetry, redisDown);
    // By then the worker is paused and its job in hand done or given up. bull closes no connection
    // it got from a createClient (queue.ts makes them): they are ours to close.
    stages.connections.push({
      name: 'queue',
      close: async () => {
        await queue.close(true);
        for (const connection of bullConnections(queue)) connection.disconnect();
      },
    });
    const enqueue = (eventId: string) => enqueueEvent(queue, eventId);
    const sweep = () => sweepInbox({ inbox, enqueue, now: clock.now() });

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
        // Like a real gateway, it remembers across restarts: ids continue, the endpoint and secret stay.
        persistence:
          config.gateway.sandboxStateFile === null
            ? undefined
            : { file: config.gateway.sandboxStateFile, key: config.encryptionKey },
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
      stages.connections.push({
        name: 'sandbox',
        close: async () => {
          clearInterval(ticker);
          await listening.close();
        },
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
      let secret = registered.data.secret;
      // A kept endpoint answers without its secret: a database that never stored it (a new one beside
      // the kept sandbox state) takes a new secret, or no delivery would ever verify.
      if (!secret && !(await hasSecret(models, SANDBOX_SECRET_LABEL)))
        secret = (await client.rotateWebhookSecret()).data.secret;
      if (secret) await storeSecret(models, box, secret, SANDBOX_SECRET_LABEL, new Date(clock.now()));
    }

    const checkout: CheckoutDeps = { orders, gateway: client, box, clock, logger, publicBaseUrl };

    if (roles.has('worker')) {
      void queue.process(options.workerConcurrency ?? 8, eventProcessor({ inbox, orders, clock, logger }));
      // bull's local pause: takes no new job at once, resolves when the jobs in hand are done.
      stages.work.push({ name: 'worker', drain: async () => void (await queue.pause(true)) });
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
      stages.work.push({ name: 'cron', drain: () => scheduler.stop() }); // no new run; waits for those in hand
    }

    if (http) {
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
      http.ready(app.callback());
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

/** A part with work in hand: it stops taking more at once, and `drain` resolves when what it holds is done. */
interface Work {
  name: string;
  drain: () => Promise<void>;
  /** Cuts off what is still in hand when the grace is over. */
  cutOff?: () => void;
}

interface Stages {
  work: Work[];
  /** Closed last, once nothing uses them, in the order they were opened. */
  connections: { name: string; close: () => Promise<void> }[];
}

/** A connection that takes longer than this to close is left to the process's exit. */
const CONNECTION_CLOSE_MS = 2000;

/**
 * The one place that stops the kit, in order (issue 8): intake (every part stops taking work at once:
 * no new connection, cron run or job), drain (the requests and jobs in hand finish, for up to
 * `graceMs`), cut-off (what is still in hand is dropped), connections (the database, Redis, the sandbox).
 */
async function stopInOrder(stages: Stages, graceMs: number, logger: Logger): Promise<void> {
  const warn = (what: string) => (error: Error) =>
    logger.warn({ err: { message: error.message } }, `while closing ${what}`);
  const inHand = new Set(stages.work);
  const drained = Promise.all(
    stages.work.splice(0).map((work) =>
      work
        .drain()
        .catch(warn(work.name))
        .finally(() => inHand.delete(work)),
    ),
  );
  if (!(await within(drained, graceMs))) {
    logger.warn(
      { graceMs, left: [...inHand].map((w) => w.name) },
      'shutdown grace over: cutting off the work left',
    );
    for (const work of inHand) work.cutOff?.();
  }
  for (const connection of stages.connections.splice(0)) {
    const closed = connection.close().catch(warn(connection.name));
    if (!(await within(closed, CONNECTION_CLOSE_MS)))
      logger.warn({ connection: connection.name }, 'connection not closed in time: left to the exit');
  }
}

/** The Redis connections bull has opened for `queue` (bull opens them when first used). */
function bullConnections(queue: Queue.Queue): Redis[] {
  const q = queue as unknown as Record<string, unknown>;
  const opened = [
    ['clientInitialized', 'client'],
    ['subscriberInitialized', 'eclient'],
    ['bclientInitialized', 'bclient'],
  ].filter(([flag]) => q[flag!] === true);
  return opened.map(([, getter]) => q[getter!] as Redis);
}

/** Whether `promise` settled within `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The merchant error envelope (src/merchant/http/errors.ts) of a request that came before the app was ready. */
const STARTING = JSON.stringify({
  success: false,
  message: 'The service is starting; retry in a moment.',
  code: 'STARTING',
  data: null,
});

const answerStarting: RequestListener = (_req, res) => {
  res.writeHead(503, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(STARTING),
    'retry-after': '1',
  });
  res.end(STARTING);
};

interface MerchantServer {
  port: number;
  /** From now on requests go to `handler` (until now: 503 STARTING). */
  ready(handler: RequestListener): void;
  /**
   * Takes no new connection, closes idle keep-alive connections at once and each other one as soon as
   * its request in hand is answered; resolves when none is left.
   */
  drain(): Promise<void>;
  /** Closes every connection left, requests in hand too. */
  cutOff(): void;
}

/**
 * Binds the merchant HTTP server. One request listener, attached before the port is bound and kept for
 * the server's life, passes each request to the handler of the moment: no request ever finds no
 * listener, so none waits forever for an answer (issue 8).
 */
async function bindMerchantServer(port: number, requestTimeoutMs: number): Promise<MerchantServer> {
  let handler = answerStarting;
  let draining = false;
  const inHand = new Set<ServerResponse>();
  const server = createServer({
    // A request not complete (headers and body) in time is answered 408 and its socket closed
    // (HTTP_REQUEST_TIMEOUT_MS); the headers alone get at most 10 s. Node checks for both every
    // `connectionsCheckingInterval` (its default, 30 s, would let a 1 s timeout run 30 s).
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.min(10_000, requestTimeoutMs),
    connectionsCheckingInterval: Math.min(1000, Math.floor(requestTimeoutMs / 4)),
    // Node's default, stated: an idle client connection is kept 5 s (and closed at once on shutdown).
    // Behind a proxy that reuses connections longer, this must exceed the proxy's idle timeout.
    keepAliveTimeout: 5000,
  });
  server.on('request', (req, res) => {
    inHand.add(res);
    res.once('close', () => {
      inHand.delete(res);
      // Node keeps a keep-alive connection open after its answer even when the server is closing.
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
    if (draining) res.setHeader('connection', 'close');
    handler(req, res);
  });
  const bound = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '0.0.0.0', () => resolve((server.address() as AddressInfo).port));
  });
  return {
    port: bound,
    ready: (next) => {
      handler = next;
    },
    drain: () =>
      new Promise<void>((resolve) => {
        draining = true;
        server.close(() => resolve());
        server.closeIdleConnections();
        // Answers not yet begun tell their clients that the connection ends with them.
        for (const res of inHand) if (!res.headersSent) res.setHeader('connection', 'close');
      }),
    cutOff: () => server.closeAllConnections(),
  };
}
