import type Queue from 'bull';
import type { Redis } from 'ioredis';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { BudgetReport } from './client/budget.js';
import type { GatewayClient } from './client/gateway-client.js';
import type { ClientDeps } from './client/request.js';
import { type Config, localUrl } from './config.js';
import type { Gateway } from './gateway/app.js';
import type { Seed } from './gateway/state/seed.js';
import { RedisEndedSessions } from './infra/ended-sessions.js';
import { bindHttpServer } from './infra/http-server.js';
import { NO_LIMITS } from './infra/rate-limits.js';
import { securityHeaderList } from './infra/security-headers.js';
import { type Adapters, buildAdapters } from './kit/adapters.js';
import { limitsOf, metricsEndpoint, startApi } from './kit/api.js';
import { startEmbeddedSandbox } from './kit/embedded-sandbox.js';
import { type Jobs, jobsOf } from './kit/jobs.js';
import { metricSources } from './kit/metric-sources.js';
import { watchQueueLoss } from './kit/queue-loss.js';
import { type Schedules, startScheduler } from './kit/scheduler.js';
import { Shutdown } from './kit/shutdown.js';
import { startWorker } from './kit/worker.js';
import type { MerchantDeps } from './merchant/checkout/deps.js';
import { type ChargeOutcome, chargeSavedCard } from './merchant/checkout/saved.js';
import { demoShopFor, demoShopOf } from './merchant/http/demo-shop.js';
import { createMetricsApp } from './merchant/http/metrics-route.js';
import { OpsAuth } from './merchant/http/ops-auth.js';
import { customersOf, orderMerchant } from './merchant/orders/order-merchant.js';
import { type DispatcherDeps, dispatchOnce, startDispatcher } from './merchant/outbox/dispatcher.js';
import { endpointSender } from './merchant/outbox/endpoint.js';
import { OrderEventHandlers } from './merchant/outbox/handlers.js';
import type { Apply } from './merchant/reconciler/apply.js';
import type { ObservationJob, RetryPolicy } from './merchant/reconciler/queue.js';
import { JOBS_IN_HAND } from './merchant/reconciler/worker.js';
import type { Store } from './merchant/store/index.js';
import { type AdvanceableClock, type Clock, OffsetClock, systemClock } from './shared/clock.js';
import { cryptoRandom, type RandomSource } from './shared/ids.js';
import type { SecretBox } from './shared/secret-box.js';

export interface KitOptions {
  config: Config;
  logger: Logger;
  /**
   * The merchant side's clock (signature age, hold expiry, timestamps, the budget). Default: the
   * embedded sandbox's clock when the kit runs one, so both sides agree on the time however the
   * sandbox's clock is moved; real time against a real gateway.
   */
  clock?: Clock;
  random?: RandomSource;
  /** Seams of the gateway client (tests: a recording sleep). */
  clientDeps?: Partial<ClientDeps>;
  /** The embedded sandbox's clock and seed, for tests; default real time (that its controls can advance) and GATEWAY_SEED. */
  sandbox?: { clock?: AdvanceableClock; seed?: Seed };
  /** Redis key prefix of the queue, locks and budget (tests: one per kit). Default REDIS_PREFIX (`kit`). */
  redisPrefix?: string;
  /** Jobs the reconciler holds at once, applied together in batches. Default JOBS_IN_HAND (256). */
  workerConcurrency?: number;
  /** The reconciler's retries. Default 8 attempts, backoff from 1 s, doubling. */
  jobRetry?: RetryPolicy;
  /** How long a payment waits for another of its order to end. Default PAYMENT_WAIT_MS (20 s). */
  paymentWaitMs?: number;
  /**
   * Cron expressions (seconds first); null turns a job off. Over JOB_SCHEDULES (`config.jobSchedules`),
   * over the defaults: `JOB_TIMING` in src/kit/jobs.ts.
   */
  schedules?: Schedules;
  /**
   * Handlers of order events in the fork's own code (`new OrderEventHandlers().on('order.paid', ...)`),
   * registered before the kit starts so no event is fanned out without them. Default: an empty
   * registry, `kit.events`, to add to.
   */
  orderEvents?: OrderEventHandlers;
  /** The order event dispatcher's pause between passes. Default 1000 ms. */
  orderEventsEveryMs?: number;
  /**
   * How often the process looks whether Redis lost what it held, to queue the inbox again at once
   * (kit/queue-loss.ts); null: it does not look (a test of the sweeper alone). Default
   * QUEUE_LOSS_LOOK_MS (1 s).
   */
  queueLossLookMs?: number | null;
  /**
   * Called once the API's port is bound (at once without the api role), before the database or the
   * gateway is reached, just after the demo shop's address is logged: `npm start` prints its own
   * first warnings here, so that the address is the first line a person reads.
   */
  onBound?: () => void;
}

export interface Kit {
  /** Where the merchant API listens (null without the api role). */
  url: string | null;
  /** The merchant app that server runs (null without the api role): its routes, for tests that list them. */
  app: Koa | null;
  publicBaseUrl: string;
  gatewayUrl: string;
  sandbox: Gateway | null;
  client: GatewayClient;
  /** The API key's budget, shared with every process of the kit: what each caller spends. */
  budget: BudgetReport;
  store: Store;
  /** The one apply path. */
  apply: Apply;
  queue: Queue.Queue<ObservationJob>;
  redis: Redis;
  sequelize: Sequelize;
  box: SecretBox;
  /** What the checkout flows and jobs run with. */
  checkout: MerchantDeps;
  /** Queues an inbox event for the reconciler. */
  enqueue(eventId: string): Promise<void>;
  /** The sweeper, run now (what the scheduler runs on its schedule). */
  sweep(): Promise<number>;
  /** The background jobs, to run now (tests, the CLI): the poller, recovery, the health check, ... */
  jobs: Jobs;
  /** Order events for code in the fork: `kit.events.on('order.paid', handler)` (issue 20). */
  events: OrderEventHandlers;
  /** One pass of the order event dispatcher, now (tests, the CLI): the deliveries it sent. */
  dispatchOrderEvents(): Promise<number>;
  /**
   * A merchant-initiated charge of a customer's saved card, for a job in the fork (a subscription's
   * renewal, a top-up): what POST /customers/{id}/charges does, with the same stored key and the same
   * answer to the same key. `card_refused`: the card is not the customer's, removed, or expired.
   */
  chargeSavedCard(input: KitCharge): Promise<ChargeOutcome | CardRefused>;
  /**
   * Stops taking work (HTTP, cron, the worker's next job), lets the work in hand finish for up to
   * `config.shutdownGraceMs`, cuts off what is left, then closes the connections. Called twice, it
   * returns the same promise.
   */
  close(): Promise<void>;
}

export interface KitCharge {
  customerId: string;
  /**
   * The merchant whose customer it is (platform mode, issue 45): required when the kit acts for
   * several (GATEWAY_MERCHANTS); left out, its one merchant. The new order is that merchant's.
   */
  merchantId?: number;
  /** The saved card (`card_...`). */
  cardId: string;
  amountMinor: number;
  currency: string;
  mode?: 'sale' | 'auth';
  description?: string;
  /** The charge: the same key is the same charge (e.g. `renewal:<subscription>:<period>`). */
  idempotencyKey: string;
  /** Who the audit log and the order's history name (default `kit`). */
  by?: string;
}

export interface CardRefused {
  kind: 'card_refused';
  code: 'CARD_NOT_FOUND' | 'CARD_REVOKED' | 'CARD_EXPIRED';
  message: string;
}

async function chargeFromFork(a: Adapters, input: KitCharge): Promise<ChargeOutcome | CardRefused> {
  const served = a.gateway.gateways.merchants;
  const chosen = orderMerchant(served, input.merchantId);
  if ('problem' in chosen) throw new Error(`KitCharge.merchantId ${chosen.problem}`);
  const { merchantId } = chosen;
  const card = await a.store.savedCards.ofCustomer(
    input.customerId,
    input.cardId,
    customersOf(merchantId, served),
  );
  if (!card)
    return { kind: 'card_refused', code: 'CARD_NOT_FOUND', message: 'This customer has no such saved card.' };
  const outcome = await chargeSavedCard(a.checkout, {
    merchantId,
    customerId: input.customerId,
    card,
    amountMinor: input.amountMinor,
    currency: input.currency,
    mode: input.mode ?? 'sale',
    description: input.description,
    idempotencyKey: input.idempotencyKey,
    initiatedBy: { name: input.by ?? 'kit', role: 'system', credential: 'system' },
  });
  return outcome.kind === 'card_refused'
    ? { kind: 'card_refused', code: outcome.code, message: outcome.message }
    : outcome;
}

/** What the order event dispatcher runs with: the outbox, the shop's endpoints, the handlers. */
function dispatcherOf(a: Adapters, handlers: OrderEventHandlers): DispatcherDeps {
  const { urls, secret } = a.config.shopWebhooks;
  return {
    outbox: a.store.outbox,
    endpoints: urls,
    send: secret ? endpointSender(secret) : null,
    handlers,
    clock: a.clock,
    logger: a.logger,
    onTry: (kind, result) => a.metrics.orderEventTried(kind, result),
  };
}

/**
 * The composition root `npm start` and the tests share: the adapters, built once, then the roles the
 * configuration asks for (ROLES), each registering with the one shutdown what it must stop.
 */
export async function startKit(options: KitOptions): Promise<Kit> {
  const { config, logger } = options;
  const random = options.random ?? cryptoRandom;
  const roles = new Set(config.roles);
  const shutdown = new Shutdown(config.shutdownGraceMs, logger);
  try {
    // The merchant server is bound first, before the database is even reached: from then on every
    // request gets an answer, 503 STARTING until the app is ready (issue 8). With PORT=0 the public URL
    // is known only then.
    const server = roles.has('api')
      ? await bindHttpServer(
          config.port,
          config.httpRequestTimeoutMs,
          securityHeaderList({ publicUrl: config.publicBaseUrl }),
          config.host,
        )
      : null;
    if (server) shutdown.work({ name: 'http', drain: server.drain, cutOff: server.cutOff });
    const port = server?.port ?? null;
    // The demo shop's script is bundled (about 50 ms, in esbuild's own process) while the adapters are
    // built; awaited before the API starts. Handled here too, so that a start-up failing before then
    // leaves no unhandled rejection behind.
    const demoShop = server ? demoShopOf(config) : Promise.resolve(null);
    demoShop.catch(() => {});
    const publicBaseUrl = config.publicBaseUrl ?? localUrl(config.host, port ?? config.port);
    // The first line of the log (issue 42): where a newcomer opens the kit in a browser.
    if (server && demoShopFor(config) !== null) logger.info(`demo shop: ${publicBaseUrl}/`);
    options.onBound?.();

    const sandboxClock =
      config.gateway.baseUrl === null ? (options.sandbox?.clock ?? new OffsetClock()) : undefined;
    const clock = options.clock ?? sandboxClock ?? systemClock;
    const a = await buildAdapters(
      {
        config,
        logger,
        clock,
        random,
        redisPrefix: options.redisPrefix ?? config.redisPrefix,
        jobRetry: options.jobRetry,
        paymentWaitMs: options.paymentWaitMs,
        clientDeps: { now: () => clock.now(), ...options.clientDeps },
        sandbox: { ...options.sandbox, clock: sandboxClock },
        startSandbox: startEmbeddedSandbox,
        publicBaseUrl,
        // Counted in the share of the process's own calls: an api's foreground, a scheduler's background.
        checkKeyAs: roles.has('api') ? 'operator' : roles.has('scheduler') ? 'health' : undefined,
      },
      shutdown,
    );
    const jobs = jobsOf(a, random);
    a.metrics.watch(metricSources(a, jobs));
    // Every role: any process holds the store and the queue, and the first to see the loss answers it.
    if (options.queueLossLookMs !== null) watchQueueLoss(a, shutdown, random, options.queueLossLookMs);
    const events = options.orderEvents ?? new OrderEventHandlers();
    const dispatcher = dispatcherOf(a, events);
    if (roles.has('worker')) {
      startWorker(a, shutdown, options.workerConcurrency ?? JOBS_IN_HAND);
      const running = startDispatcher(dispatcher, options.orderEventsEveryMs);
      shutdown.work({ name: 'order events', drain: running.stop });
    }
    if (roles.has('scheduler'))
      startScheduler(a, jobs, shutdown, random, { ...config.jobSchedules, ...options.schedules });
    // One count of wrong tokens for the API and METRICS_PORT alike (in Redis, for every process).
    const limits = server || config.metricsPort !== null ? limitsOf(a) : NO_LIMITS;
    const app = server ? startApi(a, server, limits, await demoShop) : null;
    if (config.metricsPort !== null) {
      const metricsServer = await bindHttpServer(
        config.metricsPort,
        config.httpRequestTimeoutMs,
        securityHeaderList(),
        config.host,
      );
      shutdown.work({ name: 'metrics', drain: metricsServer.drain, cutOff: metricsServer.cutOff });
      const ops = new OpsAuth(
        config.opsApiToken,
        a.store.operators,
        new RedisEndedSessions(a.redis, a.redisPrefix),
        limits,
      );
      metricsServer.ready(createMetricsApp(metricsEndpoint(a), logger, ops).callback());
      logger.info({ port: metricsServer.port }, 'metrics listening');
    }
    // A worker or a scheduler serves no port: this line is how a supervisor (or a test) sees it is up.
    logger.info({ roles: config.roles }, 'started');

    return {
      url: port === null ? null : localUrl(config.host, port),
      app,
      publicBaseUrl,
      gatewayUrl: a.gateway.url,
      sandbox: a.gateway.sandbox,
      client: a.gateway.client,
      budget: a.budget,
      store: a.store,
      apply: a.apply,
      queue: a.queue,
      redis: a.redis,
      sequelize: a.sequelize,
      box: a.box,
      checkout: a.checkout,
      enqueue: a.enqueue,
      sweep: jobs.sweep,
      jobs,
      events,
      dispatchOrderEvents: () => dispatchOnce(dispatcher),
      chargeSavedCard: (input) => chargeFromFork(a, input),
      close: () => shutdown.stop(),
    };
  } catch (error) {
    await shutdown.stop();
    throw error;
  }
}
