import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import mysql from 'mysql2/promise';
import type { ClientDeps } from '../../src/client/request.js';
import { type Config, loadConfig } from '../../src/config.js';
import { parseSeed, type SeedInput } from '../../src/gateway/state/seed.js';
import { createLogger } from '../../src/infra/logger.js';
import type { Schedules } from '../../src/kit/scheduler.js';
import { type Kit, startKit } from '../../src/kit.js';
import type { OrderEventHandlers } from '../../src/merchant/outbox/handlers.js';
import type { NewOrder } from '../../src/merchant/store/index.js';
import type { OrderRecord } from '../../src/merchant/store/records.js';
import { type AdvanceableClock, type Clock, ManualClock, OffsetClock } from '../../src/shared/clock.js';
import { type Answer, jsonOf, MERCHANT_KEY, testSeed } from './gateway.js';
import { logged } from './log-sink.js';
import { keepSecret, withSecret } from './order-secrets.js';
import { ADMIN_URL, dropDatabases, dropRedisKeys } from './process.js';

export const OPS_TOKEN = 'test-ops-token-0123456789abcdefghij';
/** What production asks of a kit beside it (config-guards.ts): a gateway said on purpose, closed metrics. */
export const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  GATEWAY_BASE_URL: 'embedded',
  METRICS_TOKEN: 'test-metrics-token-0123456789',
} as const;

export interface TestKit {
  kit: Kit;
  url: string;
  /**
   * The embedded sandbox's clock: advance it to expire challenges and sessions. Unless the test gave
   * the kit a clock of its own, it is the kit's too (real time, plus what it was advanced by).
   */
  sandboxClock: AdvanceableClock;
  /** The kit's clock: signatures the test makes are timed by it. */
  clock: Clock;
  /** The kit's Redis key prefix (queue, locks, budget). */
  redisPrefix: string;
  config: Config;
  /** Every log line, from both sides. */
  logs: string[];
  database: string;
  /**
   * The merchant API: `ops: true` sends the bootstrap operator token (admin), `token` another one.
   * Like a storefront, it keeps each order's client secret (POST /orders answers it; `storeOrder`
   * makes one through the store) and sends it as `Order-Secret` on the order's shopper routes (its
   * pay routes, GET /orders/{id}) when no token is sent: `secret` sends another one, null none.
   */
  // biome-ignore lint/suspicious/noExplicitAny: tests read envelopes of every shape
  call<T = any>(method: string, path: string, o?: CallOptions): Promise<Answer<T>>;
  /** The client secret of each order this kit made (order id -> secret), as a storefront keeps them. */
  secrets: Map<string, string>;
  /** Every row of every table of the kit's database, as text. */
  dump(): Promise<string>;
  close(): Promise<void>;
}

export interface CallOptions {
  body?: unknown;
  rawBody?: string;
  ops?: boolean;
  token?: string;
  headers?: Record<string, string>;
  /** The order's `Order-Secret` to send: by default the one kept; null sends none. */
  secret?: string | null;
}

let counter = 0;

export interface TestKitOptions {
  env?: Record<string, string>;
  /** Passed to startKit: the reconciler's retries (default here: 3 attempts from 20 ms). */
  jobRetry?: { attempts: number; delayMs: number };
  /** Passed to startKit: cron schedules (default: none; tests run the jobs themselves, kit.jobs). */
  schedules?: Schedules;
  /** The merchant side's clock, apart from the sandbox's (which then stands still unless advanced). */
  clock?: Clock;
  seed?: (seed: SeedInput) => void;
  clientDeps?: Partial<ClientDeps>;
  /** Passed to startKit: handlers of order events, and the dispatcher's pause (default here: an hour, tests dispatch themselves). */
  orderEvents?: OrderEventHandlers;
  orderEventsEveryMs?: number;
  /** Passed to startKit: how long a payment waits for another of its order (default 20 s). */
  paymentWaitMs?: number;
  /** Passed to startKit: how often the kit looks whether Redis lost what it held (null: never). */
  queueLossLookMs?: number | null;
}

/** A whole kit on port 0, against its own database (dropped on close) and an embedded sandbox. */
export async function startTestKit(options: TestKitOptions = {}): Promise<TestKit> {
  counter += 1;
  const database = `merchant_test_${process.pid}_${counter}_${randomBytes(3).toString('hex')}`;
  const config = loadConfig(
    {
      NODE_ENV: 'test',
      DATABASE_URL: `${ADMIN_URL}/${database}`,
      PORT: '0',
      GATEWAY_PORT: '0',
      OPS_API_TOKEN: OPS_TOKEN,
      APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'trace',
      GATEWAY_SANDBOX_STATE: 'memory',
      ...options.env,
    },
    () => 'unused-generated-token',
  );
  const logs: string[] = [];
  const logger = createLogger('trace', collect(logs));
  const seedInput = testSeed();
  options.seed?.(seedInput);
  const sandboxClock: AdvanceableClock = options.clock ? new ManualClock(Date.now()) : new OffsetClock();
  const kitClock = options.clock ?? sandboxClock;
  const redisPrefix = `test-${database}`;
  const kit = await startKit({
    redisPrefix,
    schedules: {
      sweeper: null,
      holds: null,
      poller: null,
      recovery: null,
      health: null,
      retention: null,
      // ORDER_TTL's job on the wall clock would close a test's orders once it moved the clock a day on.
      expiry: null,
      ...options.schedules,
    },
    jobRetry: options.jobRetry ?? { attempts: 3, delayMs: 20 },
    paymentWaitMs: options.paymentWaitMs,
    queueLossLookMs: options.queueLossLookMs,
    config,
    logger,
    clock: options.clock,
    // The client waits (retry backoff, the budget's pace) on the kit's clock: moved forward at once,
    // so a test never sleeps, and the budget and the sandbox see the time those waits would take.
    clientDeps: { sleep: virtualSleep(kitClock), ...options.clientDeps },
    sandbox: { clock: sandboxClock, seed: parseSeed(seedInput) },
    orderEvents: options.orderEvents,
    orderEventsEveryMs: options.orderEventsEveryMs ?? 3_600_000,
  });
  const url = kit.url!;
  const secrets = new Map<string, string>();
  return {
    kit,
    url,
    sandboxClock,
    clock: options.clock ?? sandboxClock,
    logs,
    database,
    redisPrefix,
    config,
    secrets,
    call: async (method, path, o = {}) => {
      const headers: Record<string, string> = { ...o.headers };
      if (o.ops) headers.authorization = `Bearer ${OPS_TOKEN}`;
      if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`;
      if (typeof o.secret === 'string') headers['order-secret'] = o.secret;
      const sent = o.secret === undefined ? withSecret(secrets, method, path, headers) : headers;
      const body = o.rawBody ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
      if (body !== undefined) headers['content-type'] ??= 'application/json';
      const res = await fetch(url + path, { method, headers: sent, body, redirect: 'manual' });
      const text = await res.text();
      const answer = { status: res.status, headers: res.headers, body: jsonOf(text) as never, text };
      keepSecret(secrets, method, path, answer);
      return answer;
    },
    dump: async () => {
      const connection = await mysql.createConnection(`${ADMIN_URL}/${database}`);
      try {
        const [tables] = await connection.query<mysql.RowDataPacket[]>('SHOW TABLES');
        const out: string[] = [];
        for (const row of tables) {
          const table = String(Object.values(row)[0]);
          const [rows] = await connection.query(`SELECT * FROM \`${table}\``);
          out.push(`${table}: ${JSON.stringify(rows)}`);
        }
        return out.join('\n');
      } finally {
        await connection.end();
      }
    },
    close: async () => {
      // The kit first: running, it would find its keys gone and write its marker again (kit/queue-loss.ts).
      await kit.close();
      await dropRedisKeys(`${redisPrefix}:*`, config.redisUrl);
      await dropDatabases([database]);
    },
  };
}

/** The settings a CLI command run against `t`'s database needs: the database, and the key of what it sealed. */
export const cliEnv = (t: TestKit): Record<string, string> => ({
  DATABASE_URL: `${ADMIN_URL}/${t.database}`,
  APP_ENCRYPTION_KEY: t.config.encryptionKey.toString('base64'),
});

/**
 * Another kit process's worth beside `t`: the same database, Redis and prefix and API key, `t`'s sandbox
 * as its gateway (GATEWAY_BASE_URL: it starts no sandbox of its own) and `t`'s clock. For tests of
 * several instances at once, or of a kit started again on `t`'s database (`env`: its settings, over
 * these); closed by the caller, before `t`.
 */
export async function startSiblingKit(
  t: TestKit,
  roles: string,
  logs: string[] = [],
  env: Record<string, string> = {},
): Promise<Kit> {
  const config = loadConfig(
    {
      NODE_ENV: 'test',
      DATABASE_URL: `${ADMIN_URL}/${t.database}`,
      REDIS_URL: t.config.redisUrl,
      PORT: '0',
      GATEWAY_BASE_URL: t.kit.gatewayUrl,
      GATEWAY_API_KEY: MERCHANT_KEY,
      OPS_API_TOKEN: OPS_TOKEN,
      APP_ENCRYPTION_KEY: t.config.encryptionKey.toString('base64'),
      LOG_LEVEL: 'trace',
      ROLES: roles,
      ...env,
    },
    () => 'unused-generated-token',
  );
  return startKit({
    config,
    logger: createLogger('trace', collect(logs)),
    clock: t.clock,
    redisPrefix: t.redisPrefix,
    schedules: { sweeper: null, holds: null, poller: null, recovery: null, health: null, expiry: null },
    clientDeps: { sleep: virtualSleep(t.clock) },
  });
}

/**
 * A sleep that moves `clock` to the moment the wait would end (once the caller's turn comes), and no
 * further: sleepers waiting side by side do not add up their waits. A clock that cannot move (a test's
 * own) is not waited on at all.
 */
export function virtualSleep(clock: Clock): (ms: number) => Promise<void> {
  return async (ms) => {
    const until = clock.now() + ms;
    await new Promise((resolve) => setImmediate(resolve));
    const left = until - clock.now();
    if (left > 0 && 'advance' in clock) (clock as AdvanceableClock).advance(left);
  };
}

/** A stream that keeps every log line in `lines`. */
function collect(lines: string[]): Writable {
  return new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      logged(String(chunk));
      done();
    },
  });
}

/** Follows a hosted page's form the way a browser would: POST the button, return the 303's Location. */
export async function pressButton(pageUrl: string, action: string): Promise<string> {
  const res = await fetch(pageUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `action=${encodeURIComponent(action)}`,
    redirect: 'manual',
  });
  if (res.status !== 303) throw new Error(`expected a 303 from ${pageUrl}, got ${res.status}`);
  return res.headers.get('location')!;
}

/** An order made through the store (no HTTP), its client secret kept for the test's shopper calls. */
export async function storeOrder(t: TestKit, input: NewOrder): Promise<OrderRecord> {
  const { order, clientSecret } = await t.kit.store.orders.create(input);
  t.secrets.set(order.id, clientSecret);
  return order;
}

/** GET /orders/{id} with the operator token, which must answer 200: the whole order, with its history. */
export async function getOrder(t: TestKit, id: string) {
  const res = await t.call('GET', `/orders/${id}`, { ops: true });
  expect(res.status, res.text).to.equal(200);
  return res.body.data.order;
}

/** The outcome a hosted landing page shows (its `data-status`). */
export const landingStatus = (html: string) => /data-status="([a-z_]+)"/.exec(html)?.[1];
