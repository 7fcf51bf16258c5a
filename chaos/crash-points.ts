import { join } from 'node:path';
import { withDeadline } from '../src/shared/deadline.js';
import { delay, freePort } from '../test/support/process.js';
import type { Cleanup } from './cleanup.js';
import { CASES, type CaseOrder, type CaseSteps, type CrashCase } from './crash-cases.js';
import { crashTable } from './crash-report.js';
import { type CaseResult, caseProblems, movements, orderIsTrue, truthOf } from './crash-verdict.js';
import { GatewayReader } from './gateway.js';
import { HoldProxy } from './hold-proxy.js';
import { KitProcesses } from './kit.js';
import { GatewayLedger } from './ledger.js';
import { lookAtEvents } from './measure.js';
import { type Sandbox, standaloneSandbox } from './sandbox.js';
import type { MariaDb, PrivateRedis } from './services.js';
import { type Answer, Shop } from './shop.js';
import { KitTables } from './tables.js';

/**
 * The crash points: the kit's api process SIGKILLed in the middle of a payment or an operation
 * (chaos/crash-cases.ts), started again on the same database, and the shopper or operator trying
 * again; then the verdict from the gateway's records (chaos/crash-verdict.ts). The gateway is a
 * standalone sandbox that outlives every death; worker and scheduler run on; every kit process
 * reaches the sandbox through a proxy that can hold one exchange (chaos/hold-proxy.ts), and the
 * shopper, the browser and the gateway's webhooks reach the api through another.
 */

const DATABASE = 'merchant_crash';
const REDIS_PREFIX = 'crash';
/**
 * The scheduler's jobs every few seconds, not minutes: recovery fetches what the webhooks did not
 * bring well within the bound. The poller's own schedule (2 minutes after a change, then later) is
 * the kit's and stays.
 */
const SCHEDULES = [
  'poller=*/2 * * * * *',
  'recovery=*/5 * * * * *',
  'health=*/10 * * * * *',
  'sweeper=*/5 * * * * *',
  'holds=*/10 * * * * *',
  'report=off',
].join(';');
/** From the retry's last answer, how long the order has to equal the gateway's truth. */
const BOUND_MS = 90_000;
const LOOK_EVERY_MS = 2000;
/** The armed exchange is held within this, or the case never reached its death point. */
const REACH_MS = 30_000;
/** After the last case, how long the kit has to store and apply every event the gateway recorded. */
const SETTLE_MS = 60_000;

export interface CrashOptions {
  db: MariaDb;
  redis: PrivateRedis;
  cleanup: Cleanup;
  log: (line: string) => void;
  /** Each process's output is kept under it (CHAOS_LOG_DIR). */
  logDir?: string;
  /** How many times each case runs. */
  rounds: number;
}

interface Parts {
  sandbox: Sandbox;
  kit: KitProcesses;
  /** Between the kit's processes and the sandbox: each caller at its own base URL. */
  back: HoldProxy;
  /** In front of the api: the shopper, the browser and the gateway's webhooks come through it. */
  front: HoldProxy;
  shop: Shop;
  tables: KitTables;
  reader: GatewayReader;
  ledger: GatewayLedger;
}

/** Every case, then the table; true when every case and the run itself passed. */
export async function crashPoints(o: CrashOptions): Promise<boolean> {
  const started = Date.now();
  const parts = await setUp(o);
  const watch = watcher(parts);
  const watches: Promise<CaseResult>[] = [];
  let n = 0;
  for (let round = 1; round <= o.rounds; round++) {
    for (const c of CASES) {
      n += 1;
      const run = await runCase(c, parts, `${10 + n}.00`, o.log);
      o.log(`crash ${n}: ${c.name}, ${c.death}: ${said(run)}`);
      // The wait for the truth runs beside the next cases: a case that never converges costs the bound once.
      watches.push(watch(run));
    }
  }
  const watched = await Promise.all(watches);
  const look = await settle(parts, o.log);
  const results = await Promise.all(watched.map((r) => finalLook(r, parts)));
  console.log(`\n${crashTable(results)}\n`);
  o.log(`crash points: ${results.length} cases, ${((Date.now() - started) / 1000).toFixed(0)} s`);

  const why = results.flatMap((r, i) => caseProblems(r).map((p) => `case ${i + 1} (${r.name}): ${p}`));
  if (look.lost.length > 0) why.push(`${look.lost.length} gateway events never applied`);
  if (look.appliedTwice.length > 0) why.push(`applied twice: ${look.appliedTwice.slice(0, 5).join(', ')}`);
  const died = [...parts.kit.crashed(), parts.sandbox.died()].filter((d) => d !== null);
  for (const d of died) why.push(`died on its own: ${d}`);
  if (why.length > 0) {
    o.log(`crash points failed:\n  ${why.join('\n  ')}`);
    await explain(results, parts, o.log);
  }
  return why.length === 0;
}

async function setUp(o: CrashOptions): Promise<Parts> {
  const logDir = o.logDir && join(o.logDir, 'crash');
  const sandbox = await standaloneSandbox(o.cleanup, logDir);
  const back = await HoldProxy.start(sandbox.url, { byCaller: true });
  o.cleanup.add('close the proxy to the sandbox', () => back.close());
  const port = await freePort();
  const front = await HoldProxy.start(`http://127.0.0.1:${port}`, { byCaller: false });
  o.cleanup.add("close the api's front door", () => front.close());
  const kit = await KitProcesses.start(
    {
      databaseUrl: o.db.url(DATABASE),
      redisUrl: o.redis.url,
      redisPrefix: REDIS_PREFIX,
      port,
      jobSchedules: SCHEDULES,
      logDir,
      gateway: { baseUrlFor: (who) => back.baseFor(who), publicUrl: front.url },
    },
    o.cleanup,
  );
  o.log(`crash points: sandbox ${sandbox.url}, api ${kit.apiUrl} behind ${front.url}, a worker, a scheduler`);
  const tables = new KitTables(o.db.url(DATABASE));
  o.cleanup.add('close the crash points’ table reader', () => tables.close());
  const reader = new GatewayReader(sandbox.url);
  return {
    sandbox,
    kit,
    back,
    front,
    shop: new Shop(front.url, kit.opsToken),
    tables,
    reader,
    ledger: new GatewayLedger(reader),
  };
}

interface CaseRun {
  c: CrashCase;
  /** Null when the set-up broke off before the case had one. */
  order: CaseOrder | null;
  notReached: string | null;
  cut: Answer | null;
  answers: Answer[];
  /** When the retry's last answer came: the bound counts from here. */
  retriedAt: number;
}

/**
 * One case: its order brought to where it starts, the exchange held, the api SIGKILLed and the
 * exchange dropped, the api started again, the retry. Until the retry is answered, the gateway's
 * webhooks wait at the front door and the scheduler's calls at the back: the shopper's retry
 * reaches the kit before any other news of the payment, the harshest order, and the same every run.
 */
async function runCase(
  c: CrashCase,
  p: Parts,
  amount: string,
  log: (line: string) => void,
): Promise<CaseRun> {
  const run: CaseRun = { c, order: null, notReached: null, cut: null, answers: [], retriedAt: Date.now() };
  const door = c.door === 'front' ? p.front : p.back;
  let steps: CaseSteps;
  try {
    steps = await c.start(p.shop, amount);
  } catch (error) {
    return { ...run, notReached: `set-up: ${(error as Error).message}` };
  }
  const { order } = steps;
  run.order = order;
  p.back.pause((x) => x.who === 'scheduler');
  p.front.pause((x) => x.path === '/webhooks/gateway');
  try {
    const held = door.arm(c.rule(order));
    held.catch(() => undefined); // a rule disarmed unmatched: reported below, not unhandled
    const acting = steps.act();
    let first: { held: Awaited<typeof held> } | { answered: Answer };
    try {
      first = await withDeadline(
        Promise.race([held.then((h) => ({ held: h })), acting.then((a) => ({ answered: a }))]),
        REACH_MS,
        'the armed exchange',
      );
    } catch (error) {
      door.disarm();
      return { ...run, notReached: `not reached: ${(error as Error).message}` };
    }
    if ('answered' in first) {
      door.disarm();
      const a = first.answered;
      return { ...run, notReached: `not reached: answered ${a.status} ${a.code} before the hold` };
    }
    await p.kit.killApi();
    first.held.drop();
    const cut = await acting;
    const down = Date.now();
    await p.kit.startApi();
    log(
      `crash: api SIGKILLed at ${first.held.passing.method} ${first.held.passing.path}, up again in ${((Date.now() - down) / 1000).toFixed(1)} s`,
    );
    // A retry that breaks off (a hosted page that does not send the browser on) is the case's failure, not the run's.
    const answers = await steps
      .retry()
      .catch((error: Error) => [{ ...cutOff, step: `retry broke off (${error.message})` }]);
    return { ...run, cut, answers, retriedAt: Date.now() };
  } finally {
    p.back.resume();
    p.front.resume();
  }
}

const cutOff: Answer = {
  step: '',
  status: 0,
  code: '',
  orderStatus: null,
  nextAction: null,
  retryAfter: null,
};

const said = (run: CaseRun) =>
  run.notReached ??
  `cut off: ${run.cut?.status === 0 ? 'yes' : `no (${run.cut?.status})`}; then ${run.answers
    .map((a) => `${a.step} ${a.status}${a.code ? ` ${a.code}` : ''} (${a.orderStatus ?? '-'})`)
    .join(', ')}`;

/**
 * Watches each case's order until it equals the gateway's truth, for at most the bound from its
 * retry; resolves with how long that took. A first look at once, then one round of looks for every
 * case every 2 s, sharing one walk of the gateway's records.
 */
function watcher(p: Parts): (run: CaseRun) => Promise<CaseResult> {
  const watching = new Map<CaseRun, (result: CaseResult) => void>();
  let looping = false;
  /** True when the run's case is decided: equal to the truth, or past the bound. */
  const look = async (run: CaseRun, done: (result: CaseResult) => void): Promise<boolean> => {
    const looked = Date.now();
    const { reference } = run.order!; // only a case that reached its death point is looked at
    const [records, order] = await Promise.all([p.ledger.of(reference), p.tables.order(reference)]);
    const converged = order !== null && orderIsTrue(order, truthOf(run.c.kind, records));
    if (!converged && looked <= run.retriedAt + BOUND_MS) return false;
    done({
      ...resultOf(run),
      convergedSeconds: converged ? Math.max(0, looked - run.retriedAt) / 1000 : null,
    });
    return true;
  };
  const loop = async () => {
    looping = true;
    while (watching.size > 0) {
      await delay(LOOK_EVERY_MS);
      await Promise.all(
        [...watching].map(async ([run, done]) => {
          // A read that fails (the database or the gateway slow for a moment) is only a look missed.
          if (await look(run, done).catch(() => false)) watching.delete(run);
        }),
      );
    }
    looping = false;
  };
  return (run) =>
    new Promise<CaseResult>((resolve) => {
      if (run.notReached !== null) return resolve(resultOf(run));
      void look(run, resolve)
        .catch(() => false)
        .then((decided) => {
          if (decided) return;
          watching.set(run, resolve);
          if (!looping) void loop();
        });
    });
}

function resultOf(run: CaseRun): CaseResult {
  return {
    name: run.c.name,
    death: run.c.death,
    intent: run.c.intent,
    kind: run.c.kind,
    orderId: run.order?.id ?? null,
    reference: run.order?.reference ?? null,
    notReached: run.notReached,
    cut: run.cut,
    answers: run.answers,
    movements: null,
    truth: null,
    order: null,
    convergedSeconds: null,
  };
}

/** Once every gateway event is stored and applied (bounded), or the bound passed: the last look. */
async function settle(p: Parts, log: (line: string) => void) {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const look = await lookAtEvents(p.tables, p.reader);
    if (look.lost.length === 0 || Date.now() > deadline) {
      log(`crash points: ${look.events.length} gateway events, ${look.lost.length} not applied`);
      return look;
    }
    await delay(LOOK_EVERY_MS);
  }
}

/** The gateway's records and the order, by its reference, as they are at the end: what the verdict reads. */
async function finalLook(r: CaseResult, p: Parts): Promise<CaseResult> {
  if (r.notReached !== null || r.reference === null) return r;
  const [records, order] = await Promise.all([p.ledger.of(r.reference), p.tables.order(r.reference)]);
  return {
    ...r,
    orderId: order?.id ?? r.orderId,
    movements: movements(records),
    truth: truthOf(r.kind, records),
    order,
  };
}

/** The kit's own account of each failing case's order: its history, line by line. */
async function explain(results: readonly CaseResult[], p: Parts, log: (line: string) => void): Promise<void> {
  const history = await p.tables.history();
  for (const [i, r] of results.entries()) {
    if (caseProblems(r).length === 0 || r.notReached !== null) continue;
    const lines = history
      .filter((h) => h.order_id === r.orderId)
      .map((h) => `${h.source_id}: ${h.status_before} -> ${h.status_after} (${h.outcome})`);
    log(`case ${i + 1} (${r.name}), order ${r.orderId}, its history:\n    ${lines.join('\n    ')}`);
  }
}
