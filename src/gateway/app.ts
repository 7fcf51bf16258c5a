import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa, { type Context, type Next } from 'koa';
import { type Logger, pino } from 'pino';
import { requestLog } from '../infra/request-log.js';
import { type AdvanceableClock, OffsetClock } from '../shared/clock.js';
import { cryptoRandom, type RandomSource } from '../shared/ids.js';
import { Dispatcher } from './delivery/dispatcher.js';
import { type Resolver, systemResolver } from './delivery/send.js';
import { DELIVERY_TIMEOUT_MS } from './domain/webhooks.js';
import { runDueWork, type TickReport } from './due-work.js';
import { checkoutPageRoutes } from './hosted/checkout-page.js';
import { threeDsPageRoutes } from './hosted/three-ds-page.js';
import { authenticate, principalOf } from './http/auth.js';
import { envelopeMiddleware } from './http/envelope.js';
import { byApiKey, byIp, rateLimit } from './http/rate-limit.js';
import { paymentMethodRoutes } from './routes/payment-methods.js';
import { paymentSessionRoutes } from './routes/payment-sessions.js';
import { sandboxControlRoutes } from './routes/sandbox-controls.js';
import { threeDsRoutes } from './routes/three-ds.js';
import { transactionRoutes } from './routes/transactions.js';
import { webhookRoutes } from './routes/webhooks.js';
import type { Seed } from './seed.js';
import { expireDueSessions } from './sessions.js';
import { CARD_PROVIDER, type GatewayDeps, GatewayState, type Operation } from './state.js';

export interface GatewayOptions {
  /** The accounts (sandbox.md section 2), already validated by `parseSeed` or `loadSeedFile`. */
  seed: Seed;
  /** Default: real time that `/sandbox/clock/advance` can move forward. */
  clock?: AdvanceableClock;
  /** Default: `crypto.randomBytes`. */
  random?: RandomSource;
  /** How the rate-limit slowdown and injected latency wait. Default: a real timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Default: silent. */
  logger?: Logger;
  /** The origin browsers reach the hosted pages on. Default: the origin of each request. */
  publicBaseUrl?: string;
  /** Webhook host resolution. Default: the system resolver. */
  resolve?: Resolver;
  /** How long a receiver has to answer. Default: 10 s (sandbox.md section 8). */
  deliveryTimeoutMs?: number;
  /**
   * Deliver as soon as an event is recorded, instead of only on tick. Default false: tests tick the
   * sandbox clock; the standalone and embedded sandboxes turn it on.
   */
  autoDeliver?: boolean;
}

export interface Gateway {
  app: Koa;
  deps: GatewayDeps;
  controls: {
    advance(seconds: number): void;
    tick(): Promise<TickReport>;
    /** Fault injection: hold every `operation` this long after it takes its idempotency key. */
    setLatency(operation: Operation, ms: number): void;
  };
  listen(port?: number, host?: string): Promise<{ url: string; close(): Promise<void> }>;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The sandbox gateway: the reference implementation of gateway-api.md, with sandbox.md's decisions. */
export function createGateway(options: GatewayOptions): Gateway {
  const clock = options.clock ?? new OffsetClock();
  const random = options.random ?? cryptoRandom;
  const sleep = options.sleep ?? realSleep;
  const logger = options.logger ?? pino({ level: 'silent' });
  const state = new GatewayState(options.seed, random);
  const resolve = options.resolve ?? systemResolver;
  const dispatcher = new Dispatcher({
    registry: state.webhooks,
    clock,
    random,
    logger,
    allowPrivate: options.seed.settings.allow_private_webhook_urls,
    resolve,
    timeoutMs: options.deliveryTimeoutMs ?? DELIVERY_TIMEOUT_MS,
    outages: state.outages,
  });
  let kicked = false;
  const kick = () => {
    if (!options.autoDeliver || kicked) return;
    kicked = true;
    setImmediate(() => {
      kicked = false;
      dispatcher.deliverDue().catch((error) => logger.error({ err: error }, 'delivery failed'));
    });
  };
  const deps: GatewayDeps = {
    seed: options.seed,
    clock,
    random,
    sleep,
    logger,
    state,
    dispatcher,
    resolve,
    kick,
    emit: (type, t) => {
      const root = t.relatedId === null ? t.id : t.relatedId;
      const sessionId = state.sessionByTransaction.get(root);
      const provider = sessionId === undefined ? CARD_PROVIDER : state.sessions.get(sessionId)!.provider;
      if (state.webhooks.record(type, t, provider, clock.now())) kick();
    },
  };
  const baseUrlOf = (ctx: Context) => options.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`;

  const app = new Koa();
  app.use(requestLog(logger, 'debug'));
  app.use(envelopeMiddleware(logger, () => state.apiRate.policy.limit));
  // Whatever a request reads, no session past its 15 minutes is still open (gateway-api.md, session states).
  app.use(async (_ctx, next) => {
    expireDueSessions(deps);
    await next();
  });

  const api = new Router();
  api.use(authenticate(state), rateLimit(state.apiRate, clock, sleep, byApiKey));
  transactionRoutes(api, deps);
  threeDsRoutes(api, deps, baseUrlOf);
  paymentSessionRoutes(api, deps, baseUrlOf);
  paymentMethodRoutes(api, deps);
  webhookRoutes(api, deps);

  const hosted = new Router();
  hosted.use(rateLimit(state.pageRate, clock, sleep, byIp));
  threeDsPageRoutes(hosted, deps);
  checkoutPageRoutes(hosted, deps);

  // Controls need a key but are not API calls: they show the key's remaining budget without using it.
  const controls = new Router();
  controls.use(authenticate(state), async (ctx: Context, next: Next) => {
    ctx.state.rateRemaining = state.apiRate.remaining(principalOf(ctx).key, clock.now());
    await next();
  });
  sandboxControlRoutes(controls, deps, baseUrlOf);

  for (const router of [api, hosted, controls]) app.use(router.routes());

  return {
    app,
    deps,
    controls: {
      advance: (seconds) => clock.advance(seconds * 1000),
      tick: () => runDueWork(deps),
      setLatency: (operation, ms) => state.latencyMs.set(operation, ms),
    },
    listen: (port = 0, host = '127.0.0.1') =>
      new Promise((resolve, reject) => {
        const server = createServer(app.callback());
        server.once('error', reject);
        server.listen(port, host, () => {
          const { port: bound } = server.address() as AddressInfo;
          resolve({
            url: `http://${host}:${bound}`,
            close: () =>
              new Promise<void>((done) => {
                server.close(() => done());
                server.closeAllConnections();
              }),
          });
        });
      }),
  };
}
