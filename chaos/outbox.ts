import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDeadline } from '../src/shared/deadline.js';
import { delay } from '../test/support/process.js';
import type { Cleanup } from './cleanup.js';
import { GatewayReader } from './gateway.js';
import { KitProcesses } from './kit.js';
import { type OutboxFacts, outboxTable } from './outbox-report.js';
import { judgeOutbox, type OutboxLook, type OutboxRun, outboxFailures } from './outbox-verdict.js';
import { seeded } from './random.js';
import { type MariaDb, type PrivateRedis, removeFolder } from './services.js';
import { ShopEndpoint } from './shop-endpoint.js';
import { type StreamResult, startStream } from './stream.js';
import { KitTables } from './tables.js';

/**
 * The outbox part: the kit's order events out to a shop endpoint the run serves (chaos/shop-endpoint.ts)
 * while payments go on, the endpoint down for an hour of the kit's clock, the dispatcher's process
 * SIGKILLed while the endpoint holds deliveries open, then the endpoint back; every event the kit
 * wrote must reach the shop, verified, each order's in order (chaos/outbox-verdict.ts).
 *
 * The dispatcher runs in the api process, beside the embedded sandbox (ROLES=api,worker): a worker
 * apart reaches the sandbox over HTTP and keeps real time, so only there does an hour of the
 * sandbox's clock move the dispatcher's retries on. The sandbox keeps its state in a file, so that it
 * outlives the SIGKILL as a real gateway would; the scheduler runs apart.
 */

export interface OutboxScale {
  /** About this many orders, spread over the phases. */
  orders: number;
  /** The endpoint up before the outage (ms). */
  upMs: number;
  /** Sandbox seconds the endpoint is down: the first half answering 500, the second refusing connections. */
  downSeconds: number;
  /** The clock moves on by this (sandbox s) after each pause (real ms). */
  stepSeconds: number;
  stepPauseMs: number;
  /** In the outage's last step, the SIGKILL waits for this many deliveries held open (or fewer, 5 s after the first). */
  holdAtLeast: number;
  /** Payments go on this long after the endpoint is back (ms). */
  afterMs: number;
  /** From the endpoint's return, how long (real) every event has to reach it. */
  convergeMs: number;
  /** The sandbox's `auth_lifetime_s`: the auths left open lapse within the outage's hour. */
  authLifetimeSeconds: number;
}

export const OUTBOX_SCALES: Record<'full' | 'short', OutboxScale> = {
  full: {
    orders: 250,
    upMs: 20_000,
    downSeconds: 3600,
    stepSeconds: 60,
    stepPauseMs: 1500,
    holdAtLeast: 8,
    afterMs: 20_000,
    convergeMs: 420_000,
    authLifetimeSeconds: 600,
  },
  short: {
    orders: 70,
    upMs: 8000,
    downSeconds: 3600,
    stepSeconds: 120,
    stepPauseMs: 1500,
    holdAtLeast: 3,
    afterMs: 8000,
    convergeMs: 180_000,
    authLifetimeSeconds: 600,
  },
};

const DATABASE = 'merchant_outbox';
const REDIS_PREFIX = 'outbox';
/** What the kill and the restart take, about: to pace the orders. */
const KILL_TIME_MS = 15_000;
/** Beyond its pause, what a step takes, about (it waits for the dispatcher's pass): to pace the orders. */
const STEP_TIME_MS = 1000;
/** The endpoint must hold a delivery within this, or the SIGKILL is not mid-delivery. */
const HOLD_WITHIN_MS = 60_000;
/** The dispatcher gives up on an answer after 10 s: the kill comes well before. */
const HOLD_AT_MOST_MS = 5000;
const LOG_EVERY_MS = 10_000;
/** A step waits at most this for the dispatcher to send what is due. */
const DUE_AT_MOST_MS = 15_000;

export interface OutboxOptions {
  db: MariaDb;
  redis: PrivateRedis;
  cleanup: Cleanup;
  log: (line: string) => void;
  /** Each process's output is kept under it (CHAOS_LOG_DIR). */
  logDir?: string;
  seed: number;
  scale: OutboxScale;
}

/** The sandbox's clock as the run moves it: each move's answer is an anchor to read it at any moment. */
class SandboxTime {
  readonly #anchors: { wall: number; sandbox: number }[] = [];
  /** Seconds moved on, in all. */
  advanced = 0;

  constructor(private readonly reader: GatewayReader) {}

  async advance(seconds: number): Promise<void> {
    const sandbox = await this.reader.advanceClock(seconds);
    this.#anchors.push({ wall: Date.now(), sandbox });
    this.advanced += seconds;
  }

  /** The sandbox's clock at a wall-clock moment: the last anchor before it, plus the time since. */
  at(wall: number): number {
    const anchor = this.#anchors.findLast((a) => a.wall <= wall) ?? this.#anchors[0];
    if (!anchor) return wall;
    return anchor.sandbox + (wall - anchor.wall);
  }
}

/**
 * One step of the kit's clock: once the dispatcher has sent what is due now (bounded: a pass is a
 * second of real time, and an order's events go one per pass), the clock moves on by `seconds`. So
 * the clock never runs ahead of work the kit could do in its own time, and a wait the run measures is
 * the retry schedule's, not the run's pace.
 */
async function step(p: Parts, seconds: number, pauseMs: number): Promise<void> {
  const from = Date.now();
  await delay(pauseMs);
  while (Date.now() - from < DUE_AT_MOST_MS) {
    const due = await p.tables.outboxDue(p.subscriber, new Date(p.time.at(Date.now()))).catch(() => 0);
    if (due === 0) break;
    await delay(200);
  }
  await p.time.advance(seconds);
}

interface Parts {
  kit: KitProcesses;
  endpoint: ShopEndpoint;
  tables: KitTables;
  reader: GatewayReader;
  time: SandboxTime;
  subscriber: string;
}

/** The part, then its table; true when it passed. */
export async function outboxPart(o: OutboxOptions): Promise<boolean> {
  const started = Date.now();
  const s = o.scale;
  const p = await setUp(o);
  const { kit, endpoint, time } = p;
  const stepsMs = (s.downSeconds / s.stepSeconds) * (s.stepPauseMs + STEP_TIME_MS);
  const paymentsMs = s.upMs + stepsMs + KILL_TIME_MS + s.afterMs;
  const stream = startStream({
    api: { url: kit.apiUrl, opsToken: kit.opsToken },
    gateway: p.reader,
    random: seeded(o.seed),
    everyMs: paymentsMs / s.orders,
    concurrency: 8,
    eachStoryFirst: true,
  });

  await delay(s.upMs);
  o.log(`outbox: ${endpoint.receipts.length} requests while up; the endpoint goes down`);
  const { down, ...kill } = await outage(p, s, o.log);

  // The endpoint back: everything written so far is what waited for it.
  await time.advance(1);
  const backSeq = await p.tables.lastOrderEvent();
  await endpoint.set('up');
  const backAt = Date.now();
  o.log(`outbox: the endpoint is back; ${backSeq} events written so far`);
  const stopping = delay(s.afterMs).then(() => stream.stop());
  const payments = withDeadline(
    stopping.then(() => stream.done),
    s.afterMs + 120_000,
    'the last payments',
  );
  let paid: StreamResult | null = null;
  void payments.then(
    (r) => {
      paid = r;
    },
    () => undefined,
  );
  const convergedSeconds = await catchUp(p, s, backAt, () => paid !== null, o.log);
  const result = await payments;
  o.log(
    `outbox: payments done: ${result.orders} orders, ${result.cutShort} stories cut short, ${result.notCreated} orders not created; the stories: ` +
      Object.entries(result.told)
        .sort(([, a], [, b]) => b - a)
        .map(([name, count]) => `${count} ${name}`)
        .join(', '),
  );

  const [rows, orders, outbox] = await Promise.all([
    p.tables.orderEvents(),
    p.tables.orderStatuses(),
    p.tables.outbox(p.subscriber),
  ]);
  const look = judgeOutbox({
    rows,
    receipts: endpoint.receipts,
    orders,
    backAt,
    backSeq,
    sandboxAt: (wall) => time.at(wall),
  });
  const run: OutboxRun = {
    heldAtKill: kill.held,
    leftOver: (outbox.deliveries.pending ?? 0) + (outbox.deliveries.failed ?? 0),
    crashed: kit.crashed().length,
    convergedSeconds,
  };
  const facts: OutboxFacts = {
    orders: result.orders,
    cutShort: result.cutShort,
    down,
    restartSeconds: kill.restartSeconds,
    tries: outbox.tries,
    advancedMinutes: Math.round(time.advanced / 60),
  };
  explain(look, kit.crashed(), o.log);
  console.log(`\n${outboxTable(look, run, facts)}\n`);
  o.log(`the outbox: ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const why = outboxFailures(look, run);
  if (why.length > 0) o.log(`the outbox failed: ${why.join('; ')}`);
  return why.length === 0;
}

async function setUp(o: OutboxOptions): Promise<Parts> {
  const dir = await mkdtemp(join(tmpdir(), 'kit-chaos-outbox-'));
  o.cleanup.add("remove the outbox part's folder", () => removeFolder(dir));
  const seed = JSON.parse(await readFile('config/gateway-seed.json', 'utf8'));
  seed.settings = { ...seed.settings, auth_lifetime_s: o.scale.authLifetimeSeconds };
  const sandboxSeed = join(dir, 'gateway-seed.json');
  await writeFile(sandboxSeed, JSON.stringify(seed, null, 2));

  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const endpoint = await ShopEndpoint.start(secret);
  o.cleanup.add("close the shop's endpoint", () => endpoint.close());
  const kit = await KitProcesses.start(
    {
      databaseUrl: o.db.url(DATABASE),
      redisUrl: o.redis.url,
      redisPrefix: REDIS_PREFIX,
      logDir: o.logDir && join(o.logDir, 'outbox'),
      sandboxSeed,
      workerInApi: true,
      env: {
        SHOP_WEBHOOK_URLS: endpoint.url,
        SHOP_WEBHOOK_SECRET: secret,
        // Like a real gateway, the sandbox outlives the SIGKILL of the process it runs in.
        GATEWAY_SANDBOX_STATE: join(dir, 'sandbox-state.json'),
      },
    },
    o.cleanup,
  );
  o.log(
    `outbox: api and worker (the dispatcher) ${kit.apiUrl} beside the sandbox ${kit.gatewayUrl}, a scheduler; the shop's endpoint ${endpoint.url}`,
  );
  const tables = new KitTables(o.db.url(DATABASE));
  o.cleanup.add("close the outbox part's table reader", () => tables.close());
  const reader = new GatewayReader(kit.gatewayUrl);
  return { kit, endpoint, tables, reader, time: new SandboxTime(reader), subscriber: `url:${endpoint.url}` };
}

/**
 * The endpoint down for `downSeconds` of the sandbox's clock, moved on in steps while payments go on:
 * answering 500 for the first half, then refusing connections, and for the last step hanging: it
 * takes what it is sent (the shop has the event) and never answers. The tries that step makes due go
 * out together; once `holdAtLeast` are held (or fewer, a few seconds after the first), the
 * dispatcher's process is SIGKILLed, the held connections cut, and it starts again on the same
 * database and sandbox state. The endpoint stays down (500) until the run brings it back.
 */
async function outage(
  p: Parts,
  s: OutboxScale,
  log: (line: string) => void,
): Promise<{ down: OutboxFacts['down']; held: number; restartSeconds: number }> {
  const from = Date.now();
  const hangFrom = s.downSeconds - s.stepSeconds;
  await p.endpoint.set('error');
  let moved = 0;
  let errorSeconds = hangFrom;
  let loggedAt = from;
  while (moved < hangFrom) {
    if (p.endpoint.mode === 'error' && moved >= s.downSeconds / 2) {
      errorSeconds = moved;
      await p.endpoint.set('refuse');
    }
    const seconds = Math.min(s.stepSeconds, hangFrom - moved);
    await step(p, seconds, s.stepPauseMs);
    moved += seconds;
    if (Date.now() - loggedAt >= LOG_EVERY_MS) {
      loggedAt = Date.now();
      log(`outbox: down for ${(moved / 60).toFixed(0)} min of sandbox clock (${p.endpoint.mode})`);
    }
  }
  await delay(s.stepPauseMs); // the tries the last step made due, refused

  await p.endpoint.set('hold');
  await p.time.advance(s.downSeconds - moved);
  const holdFrom = Date.now();
  let firstHeldAt: number | null = null;
  while (Date.now() - holdFrom < HOLD_WITHIN_MS) {
    const held = p.endpoint.holding;
    if (held > 0) firstHeldAt ??= Date.now();
    if (held >= s.holdAtLeast || (firstHeldAt !== null && Date.now() - firstHeldAt >= HOLD_AT_MOST_MS)) break;
    await delay(20);
  }
  await p.kit.killApi();
  const wallSeconds = (Date.now() - from) / 1000;
  // Every request held now was in flight when the process died: those that came while it was dying too.
  const held = p.endpoint.drop();
  await p.endpoint.set('error');
  const killed = Date.now();
  await p.kit.startApi();
  const restartSeconds = (Date.now() - killed) / 1000;
  log(
    `outbox: the api and worker process SIGKILLed with ${held} deliveries held open, their connections cut; up again in ${restartSeconds.toFixed(1)} s`,
  );
  const minutes = (seconds: number) => Math.round(seconds / 60);
  return {
    down: {
      errorMinutes: minutes(errorSeconds),
      refuseMinutes: minutes(hangFrom - errorSeconds),
      hangMinutes: minutes(s.downSeconds - hangFrom),
      wallSeconds,
    },
    held,
    restartSeconds,
  };
}

/**
 * From the endpoint's return: the sandbox's clock moved on step by step, so that every try waiting in
 * the retry schedule comes due, until the payments are done, every event the kit wrote was taken by
 * the endpoint, the kit has nothing left to send, and that holds on a second look after one more step
 * (a lapse the step brought would be a new event). Seconds from the return to the first such look;
 * null: not within the bound.
 */
async function catchUp(
  p: Parts,
  s: OutboxScale,
  backAt: number,
  paymentsDone: () => boolean,
  log: (line: string) => void,
): Promise<number | null> {
  let doneAt: number | null = null;
  let lastEvents = -1;
  let loggedAt = backAt;
  for (;;) {
    const look = await progress(p).catch(() => null);
    const done =
      look !== null &&
      paymentsDone() &&
      look.untaken === 0 &&
      look.waiting === 0 &&
      look.events === lastEvents;
    if (look) lastEvents = look.events;
    if (done && doneAt !== null) return (doneAt - backAt) / 1000;
    doneAt = done ? Date.now() : null;
    const died = p.kit.crashed();
    if (died.length > 0) {
      log(`outbox: a kit process died, no use waiting: ${died.map((d) => d.slice(0, 200)).join('; ')}`);
      return null;
    }
    if (Date.now() - backAt > s.convergeMs) {
      log(`outbox: not caught up within ${s.convergeMs / 1000} s`);
      return null;
    }
    if (look && Date.now() - loggedAt >= LOG_EVERY_MS) {
      loggedAt = Date.now();
      log(
        `outbox: catching up: ${look.events - look.untaken} of ${look.events} events taken, ` +
          `${look.waiting} deliveries waiting, the clock ${((p.time.at(Date.now()) - p.time.at(backAt)) / 60_000).toFixed(0)} min past the return`,
      );
    }
    await step(p, s.stepSeconds, s.stepPauseMs).catch(() => undefined);
  }
}

/** Events written, those the endpoint has not taken, and the kit's deliveries not yet delivered. */
async function progress(p: Parts): Promise<{ events: number; untaken: number; waiting: number }> {
  const [rows, outbox] = await Promise.all([p.tables.orderEvents(), p.tables.outbox(p.subscriber)]);
  const taken = new Set(
    p.endpoint.receipts.filter((r) => r.outcome === 'taken' || r.outcome === 'held').map((r) => r.id),
  );
  return {
    events: rows.length,
    untaken: rows.filter((row) => !taken.has(row.id)).length,
    waiting: outbox.unfanned + (outbox.deliveries.pending ?? 0) + (outbox.deliveries.failed ?? 0),
  };
}

/** The details behind a failing count: the first few of each. */
function explain(look: OutboxLook, crashed: string[], log: (line: string) => void): void {
  const first = (what: string, lines: readonly string[]) => {
    if (lines.length > 0) log(`${what} (${lines.length}):\n  ${lines.slice(0, 10).join('\n  ')}`);
  };
  first('requests that did not verify', look.unverified);
  first('events never taken', look.lost);
  first('requests with an unknown id', look.unknown);
  first("requests with another body than their event's", look.altered);
  first('orders out of order', look.outOfOrder);
  first('orders whose last event is not what they are', look.untold);
  first('kit processes that died', crashed);
}
