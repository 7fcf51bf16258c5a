import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa, { type Context, type Next } from 'koa';
import { type Logger, pino } from 'pino';
import { apiDocsRouter } from '../infra/api-docs.js';
import { requestLog } from '../infra/request-log.js';
import { securityHeaders } from '../infra/security-headers.js';
import { type AdvanceableClock, OffsetClock } from '../shared/clock.js';
import { cryptoRandom, type RandomSource } from '../shared/ids.js';
import { Dispatcher } from './delivery/dispatcher.js';
import { type Resolver, systemResolver } from './delivery/send.js';
import type { GatewayDeps } from './deps.js';
import type { Operation } from './domain/transactions.js';
import { CARD_PROVIDER, DELIVERY_TIMEOUT_MS } from './domain/webhooks.js';
import { checkoutPageRoutes } from './hosted/checkout-page.js';
import { threeDsPageRoutes } from './hosted/three-ds-page.js';
import { gatewayApi } from './http/api-document.js';
import { authenticate, principalOf } from './http/auth.js';
import { envelopeMiddleware } from './http/envelope.js';
import { byApiKey, byIp, rateLimit } from './http/rate-limit.js';
import { lapseDueAuths } from './lifecycle/auth-lapses.js';
import { runDueWork, type TickReport } from './lifecycle/due-work.js';
import { expireDueSessions } from './lifecycle/session-moves.js';
import { deriveSandboxKeys, randomSandboxKeys } from './persistence/keys.js';
import { StateFile } from './persistence/state-file.js';
import { apiKeyRoutes } from './routes/api-key.js';
import { paymentInstrumentRoutes } from './routes/payment-instruments.js';
import { paymentMethodRoutes } from './routes/payment-methods.js';
import { paymentSessionRoutes } from './routes/payment-sessions.js';
import { sandboxControlRoutes } from './routes/sandbox-controls.js';
import { threeDsRoutes } from './routes/three-ds.js';
import { transactionRoutes } from './routes/transactions.js';
import { webhookRoutes } from './routes/webhooks.js';
import { GatewayState } from './state/gateway-state.js';
import type { Seed } from './state/seed.js';

/** Where the sandbox keeps its state across restarts (a real gateway keeps its state). */
export interface GatewayPersistence {
  /**
   * The JSON state file, e.g. `var/sandbox-state.json`. Missing: the sandbox starts empty and creates
   * it (and its folder) at once. Unreadable, corrupt, of another format version or written under another
   * key: `createGateway` throws a `SandboxStateError` naming the file; it never starts empty instead.
   */
  file: string;
  /**
   * 32 bytes (the kit's APP_ENCRYPTION_KEY); never written anywhere. The webhook-secret sealing key and
   * the card-fingerprint key are derived from it (HKDF), so both still work after a restart.
   */
  key: Uint8Array;
}

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
  /**
   * How webhook deliveries and test pings are sent. Default: the global `fetch`, looked up at each
   * send, so that an interceptor installed after the gateway is created still sees them.
   */
  fetch?: typeof fetch;
  /** How long a receiver has to answer. Default: 10 s (sandbox.md section 8). */
  deliveryTimeoutMs?: number;
  /**
   * Deliver as soon as an event is recorded, instead of only on tick. Default false: tests tick the
   * sandbox clock; the standalone and embedded sandboxes turn it on.
   */
  autoDeliver?: boolean;
  /**
   * Keep the state in a file, saved after every request that changed it (before the answer goes out),
   * after every delivery pass and tick, and on close. Default: in memory only, with per-process keys.
   */
  persistence?: GatewayPersistence;
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
  const baseClock = options.clock ?? new OffsetClock();
  let clockMoves = 0;
  // The gateway's own moves of the clock are counted: a save after one writes even if nothing else changed.
  const clock: AdvanceableClock = {
    now: () => baseClock.now(),
    advance: (ms) => {
      baseClock.advance(ms);
      clockMoves += 1;
    },
  };
  const random = options.random ?? cryptoRandom;
  const sleep = options.sleep ?? realSleep;
  const logger = options.logger ?? pino({ level: 'silent' });
  const { persistence } = options;
  const keys = persistence ? deriveSandboxKeys(persistence.key) : randomSandboxKeys(random);
  const state = new GatewayState(options.seed, random, keys);
  const stateFile = persistence
    ? new StateFile(persistence.file, persistence.key, state, { now: clock.now, moves: () => clockMoves })
    : null;
  if (stateFile) {
    const restored = stateFile.load();
    // After a restart the sandbox's time never goes back: not behind anything it recorded or answered.
    const behind = restored === null ? 0 : restored.now - baseClock.now();
    if (behind > 0) baseClock.advance(behind);
    stateFile.save(); // creates the file now: a path that cannot be written stops start-up, not a payment
  }
  const save = (final = false) => {
    stateFile?.save(final);
  };
  const resolve = options.resolve ?? systemResolver;
  const dispatcher = new Dispatcher({
    registry: state.webhooks,
    clock,
    random,
    logger,
    allowPrivate: options.seed.settings.allow_private_webhook_urls,
    resolve,
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    timeoutMs: options.deliveryTimeoutMs ?? DELIVERY_TIMEOUT_MS,
    outages: state.outages,
  });
  let kicked = false;
  const kick = () => {
    if (!options.autoDeliver || kicked) return;
    kicked = true;
    setImmediate(() => {
      kicked = false;
      dispatcher
        .deliverDue()
        .then(() => save())
        .catch((error) => logger.error({ err: error }, 'delivery failed'));
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
  // First, so that error answers carry them too. The hosted forms post here and are answered with a
  // 303 to the merchant's return URL, on another origin: form-action must let that through.
  app.use(securityHeaders({ publicUrl: options.publicBaseUrl, formAction: 'anywhere' }));
  app.use(requestLog(logger, 'debug'));
  app.use(envelopeMiddleware(logger, () => state.apiRate.policy.limit));
  if (stateFile) {
    // A response the kit has seen is durable before the kit acts on it: saved after the route, errors
    // included, before Koa sends the body. A failed save becomes a 500, never a success left unsaved.
    app.use(async (_ctx, next) => {
      try {
        await next();
      } finally {
        save();
      }
    });
  }
  // Whatever a request reads, no session past its 15 minutes is still open (gateway-api.md, session
  // states), and no auth past its lifetime (sandbox.md section 11).
  app.use(async (_ctx, next) => {
    expireDueSessions(deps);
    lapseDueAuths(deps);
    await next();
  });

  const api = new Router();
  api.use(authenticate(state), rateLimit(state.apiRate, clock, sleep, byApiKey));
  transactionRoutes(api, deps);
  threeDsRoutes(api, deps, baseUrlOf);
  paymentSessionRoutes(api, deps, baseUrlOf);
  paymentMethodRoutes(api, deps);
  paymentInstrumentRoutes(api, deps);
  webhookRoutes(api, deps);
  apiKeyRoutes(api, deps);

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
  app.use(apiDocsRouter(gatewayApi).routes());

  // Restored events that are due (pending attempts, queued replays) go out without waiting for a tick.
  if (stateFile) kick();

  return {
    app,
    deps,
    controls: {
      advance: (seconds) => {
        clock.advance(seconds * 1000);
        save();
      },
      tick: async () => {
        try {
          return await runDueWork(deps);
        } finally {
          save();
        }
      },
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
              new Promise<void>((done, fail) => {
                server.close(() => {
                  try {
                    save(true);
                    done();
                  } catch (error) {
                    fail(error);
                  }
                });
                server.closeAllConnections();
              }),
          });
        });
      }),
  };
}
