/**
 * `npm run bench`: the kit as it runs in production (the compiled build, `node dist/src/main.js`,
 * NODE_ENV=production, one process per role), measured from outside. Every process is its own: the
 * bare route, the kit's API, its workers, and the load generator (bench/load.ts), so no side pays
 * for the other's load.
 *
 * 1. Receiver: four sides take turns in alternating rounds, at BENCH_CONNECTIONS (default 4,32,128),
 *    BENCH_ROUNDS (3) rounds of BENCH_SECONDS (8) each, closed loop: a bare Koa route that only reads
 *    the body (bench/bare.mjs), the durable floor (Node's own request, as the kit takes a delivery,
 *    plus the kit's signature check, batched INSERT and one queue job a batch: bench/floor.mjs), the receiver a merchant writes by hand from the
 *    usual docs (koa, raw-body, one INSERT IGNORE and one bull add a request, none of the kit's code:
 *    bench/handwritten-receiver.mjs), and the kit's receiver. The ratio that counts: kit / hand-written.
 *    Each round also measures the commit ceiling (bench/commit-ceiling.mjs): the events a second
 *    MySQL alone commits with that many in flight, which no receiver that stores first can pass.
 *    Around each run, the CPU each process spent an event (bench/cpu.ts: the side's process, MySQL's
 *    and Redis's servers when local, from /proc; the load generator reports its own).
 * 2. Event-to-order latency: signed POST to the order row changed, at each of BENCH_RATES (1000,250)
 *    events a second for BENCH_LATENCY_SECONDS (10), one API and BENCH_LATENCY_WORKERS (1) worker
 *    process (one applies thousands a second; a second only shares the two cores).
 *    The events are paced evenly, one every 1000/rate ms, as a gateway sends them (bench/load.ts),
 *    after BENCH_WARM_UP_SECONDS (5) of the same pace on orders of their own, not counted.
 * 3. Reconciler throughput: a backlog of BENCH_BACKLOG (10000) stored events drained, BENCH_DRAIN_ROUNDS
 *    (3) alternating rounds of three sides: the reconciler a merchant writes by hand (one process,
 *    bull with 8 jobs at once, one transaction an event: bench/handwritten-reconciler.mjs, its events
 *    stored and queued by the hand-written receiver), then the kit with one worker process, then two.
 *    BENCH_BASELINE (a directory): another version of the kit, built there (`npm run build`), drains
 *    in the same rounds with one worker process and two, after the kit's: a change of the worker
 *    measured against the code before it in one run, where runs on a shared machine differ by a third.
 * 4. The CLI's start: `npm run cli -- --help`, `operator list` and `order-events status` to their
 *    exit, each a child process, beside `node -e 0`, BENCH_CLI_ROUNDS (7) alternating rounds
 *    (bench/cli.ts). Run first, before the kit's processes start: it needs only the database.
 *
 * BENCH_ONLY=cli,receiver,latency,reconciler picks sections (BENCH_ONLY=cli: neither the build nor a
 * kit process is started); BENCH_KIT_NODE_ARGS (e.g.
 * `--cpu-prof --cpu-prof-dir=prof`) are node's arguments for the kit's processes: a profile under load;
 * BENCH_YARDSTICK_NODE_ARGS: the same for the yardsticks (the bare route, the floor, the hand-written receiver);
 * BENCH_KIT=tsx runs the kit through the TypeScript loader (what `npm start` does) instead of the build.
 * The sandbox gateway runs in a process of its own (the build's dist/src/gateway/main.js), as the
 * compose file and production have the gateway elsewhere, so that a kit process holds only the kit;
 * BENCH_GATEWAY=embedded has every kit process embed a sandbox of its own instead, as bench runs did
 * before 2026-11-28. Needs MySQL and Redis, like the tests.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { SANDBOX_MERCHANT_KEY } from '../src/config.js';
import { cliSection } from './cli.js';
import { cpuUs, pidFromFile, pidOf } from './cpu.js';
import type { LoadResult } from './load.js';
import { seedOrders } from './orders.js';
import { type Child, freePort, runToEnd, spawnChild, waitUntil } from './processes.js';
import { median, percentile } from './stats.js';

const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = (env.BENCH_CONNECTIONS ?? '4,32,128').split(',').map(Number);
const RATES = (env.BENCH_RATES ?? '1000,250').split(',').map(Number);
const LATENCY_SECONDS = Number(env.BENCH_LATENCY_SECONDS ?? 10);
const LATENCY_WORKERS = Number(env.BENCH_LATENCY_WORKERS ?? 1);
const WARM_UP_SECONDS = Number(env.BENCH_WARM_UP_SECONDS ?? 5);
// Long enough that the kit's drain lasts seconds: at 3,000 it lasted half a second, and one pause of
// the shared machine moved its rate by a tenth.
const BACKLOG = Number(env.BENCH_BACKLOG ?? 10000);
const DRAIN_ROUNDS = Number(env.BENCH_DRAIN_ROUNDS ?? 3);
// The compiled build, as production runs it; BENCH_KIT=tsx measures the TypeScript loader instead.
const KIT_COMMAND = [
  ...(env.BENCH_KIT_NODE_ARGS ?? '').split(' ').filter(Boolean),
  ...(env.BENCH_KIT === 'tsx' ? ['--import', 'tsx', 'src/main.ts'] : ['dist/src/main.js']),
];
/** node's arguments for the yardsticks' processes (the bare route, the floor, the hand-written receiver). */
const YARDSTICK_NODE_ARGS = (env.BENCH_YARDSTICK_NODE_ARGS ?? '').split(' ').filter(Boolean);
const CLI_ROUNDS = Number(env.BENCH_CLI_ROUNDS ?? 7);
/** Another build of the kit whose workers drain beside this one's (its dist/src/main.js). */
const BASELINE = env.BENCH_BASELINE ? join(env.BENCH_BASELINE, 'dist/src/main.js') : null;
/** `process`: one sandbox gateway process the kit's processes call; `embedded`: one inside each. */
const GATEWAY = env.BENCH_GATEWAY ?? 'process';
if (GATEWAY !== 'process' && GATEWAY !== 'embedded') throw new Error('BENCH_GATEWAY: process or embedded');
const ONLY = new Set((env.BENCH_ONLY ?? 'cli,receiver,latency,reconciler').split(','));
/** The sections that run the kit's processes (the compiled build, an API). */
const KIT_SECTIONS = ['receiver', 'latency', 'reconciler'].filter((s) => ONLY.has(s));
const ADMIN_URL = 'mysql://root@127.0.0.1:3306';
const DATABASE = `merchant_bench_${process.pid}`;
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `bench${process.pid}`;
const SECRET = `whsec_${randomBytes(32).toString('base64url')}`;
// Production settings as production refuses them otherwise: a key and a token of this run's own.
const BENCH_KEY = randomBytes(32).toString('base64');
const BENCH_OPS_TOKEN = randomBytes(24).toString('base64url');
const work = mkdtempSync(join(tmpdir(), 'bench-'));
/** The MySQL server's process, when it runs on this machine: its CPU an event is counted too. */
let mysqlServer: number | null = null;
/** The sandbox gateway's own process and URL (BENCH_GATEWAY=process), once started. */
let gateway: { child: Child; url: string } | null = null;

/** The settings of every kit process: production, this bench's database, Redis prefix and secret. */
const kitEnv = (roles: string, extra: Record<string, string> = {}) => ({
  NODE_ENV: 'production',
  ROLES: roles,
  DATABASE_URL: `${ADMIN_URL}/${DATABASE}`,
  REDIS_URL,
  REDIS_PREFIX: PREFIX,
  ...(gateway
    ? { GATEWAY_BASE_URL: gateway.url, GATEWAY_API_KEY: SANDBOX_MERCHANT_KEY }
    : { GATEWAY_BASE_URL: 'embedded', GATEWAY_SANDBOX_STATE: 'memory' }),
  GATEWAY_WEBHOOK_SECRETS: SECRET,
  APP_ENCRYPTION_KEY: BENCH_KEY,
  OPS_API_TOKEN: BENCH_OPS_TOKEN,
  METRICS_TOKEN: randomBytes(24).toString('base64url'),
  LOG_LEVEL: 'info',
  ...extra,
});

type Load = LoadResult;

let tags = 0;
/** One run of the load generator, in its own process. */
async function load(url: string, options: Record<string, unknown>): Promise<Load> {
  tags += 1;
  const out = await runToEnd('node', [
    '--import',
    'tsx',
    'bench/load.ts',
    JSON.stringify({ url, secret: SECRET, tag: `${PREFIX}r${tags}`, ...options }),
  ]);
  return JSON.parse(out.trim().split('\n').at(-1)!) as Load;
}

const f0 = (n: number) => Math.round(n).toLocaleString('en');
const f1 = (n: number) => n.toFixed(1);

async function startApi(extra: Record<string, string> = {}): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const child = spawnChild(
    'node',
    KIT_COMMAND,
    kitEnv('api', { PORT: String(port), GATEWAY_PORT: String(await freePort()), ...extra }),
  );
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(
    'the API ready',
    async () => (await fetch(`${url}/readyz`).catch(() => null))?.ok === true,
    60_000,
    child,
  );
  return { child, url };
}

/**
 * A worker process, once it takes jobs (its `started` log line): events sent before would wait for
 * its start-up, which the latency run is not about. With BENCH_GATEWAY=embedded each kit process runs
 * a sandbox of its own, on a port of its own (GATEWAY_PORT; unused otherwise).
 */
async function startWorker(main?: string): Promise<Child> {
  const command = main ? [...KIT_COMMAND.slice(0, -1), main] : KIT_COMMAND;
  const child = spawnChild('node', command, kitEnv('worker', { GATEWAY_PORT: String(await freePort()) }));
  await child.said('"msg":"started"');
  return child;
}

/**
 * The sandbox gateway in a process of its own, as the compose file runs it: its state in memory, the
 * seed's merchant key the kit's. It answers the kit's start-up and nothing else; the load generator
 * signs the events it would send.
 */
async function startGateway(): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const child = spawnChild('node', ['dist/src/gateway/main.js'], {
    NODE_ENV: 'production',
    GATEWAY_PORT: String(port),
    GATEWAY_SANDBOX_STATE: 'memory',
    APP_ENCRYPTION_KEY: BENCH_KEY,
    LOG_LEVEL: 'warn',
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(
    'the sandbox gateway answering',
    async () => (await fetch(`${url}/`).catch(() => null)) !== null,
    60_000,
    child,
  );
  return { child, url };
}

/** A yardstick process of the bench (bare route, durable floor): started, and its URL. */
async function startYardstick(
  script: string,
  env: Record<string, string> = {},
): Promise<{ child: Child; url: string }> {
  const child = spawnChild('node', [...YARDSTICK_NODE_ARGS, script], {
    PORT: String(await freePort()),
    ...env,
  });
  const port = JSON.parse(await child.firstLine()).port as number;
  return { child, url: `http://127.0.0.1:${port}` };
}

/**
 * The commit ceiling (bench/commit-ceiling.mjs), in a process of its own: events a second MySQL
 * commits with `connections` in flight and nothing else, the most any receiver that commits before
 * its 200 could answer at that many connections.
 */
async function commitCeiling(databaseUrl: string, connections: number): Promise<number> {
  tags += 1;
  const out = await runToEnd('node', [
    'bench/commit-ceiling.mjs',
    JSON.stringify({ databaseUrl, connections, seconds: SECONDS, tag: `${PREFIX}c${tags}` }),
  ]);
  return (JSON.parse(out.trim().split('\n').at(-1)!) as { rps: number }).rps;
}

/** The hand-written receiver (bench/handwritten-receiver.mjs) on a database and a Redis prefix. */
const startHandwrittenReceiver = (databaseUrl: string, prefix: string) =>
  startYardstick('bench/handwritten-receiver.mjs', {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: prefix,
    WEBHOOK_SECRET: SECRET,
  });

/**
 * Four sides take turns, round after round: the bare route, the durable floor (bench/floor.mjs: Node's
 * own request plus the kit's signature check, batched INSERT and one queue job a batch, nothing else), the
 * hand-written receiver (bench/handwritten-receiver.mjs: one INSERT IGNORE and one bull add a request,
 * no kit code) and the kit's receiver. All but the bare route store into the same migrated database.
 */
async function receiverSection(api: { url: string; child: Child }, databaseUrl: string): Promise<string[]> {
  const bare = await startYardstick('bench/bare.mjs');
  const floor = await startYardstick('bench/floor.mjs', {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: `${PREFIX}floor`,
    WEBHOOK_SECRET: SECRET,
  });
  const hand = await startHandwrittenReceiver(databaseUrl, `${PREFIX}handreceiver`);
  // MySQL's and Redis's servers, when they run on this machine: their CPU an event is counted too.
  const servers = { mysql: mysqlServer, redis: pidOf('redis-server') };
  try {
    const sides = { bare, floor, hand, kit: api };
    type Side = keyof typeof sides;
    const labels: Record<Side, string> = {
      bare: 'bare route',
      floor: 'floor',
      hand: 'hand-written',
      kit: 'kit',
    };
    /** One run of one side, with the CPU each process spent an event. */
    const measured = async (side: Side, connections: number) => {
      const pids = [sides[side].child.process.pid, servers.mysql, servers.redis];
      const before = pids.map(cpuUs);
      const run = await load(sides[side].url, { connections, seconds: SECONDS });
      const spent = pids.map((pid, i) => {
        const [b, a] = [before[i] ?? null, cpuUs(pid)];
        return b === null || a === null ? null : (a - b) / run.requests;
      });
      return {
        ...run,
        cpu: { process: spent[0]!, mysql: spent[1]!, redis: spent[2]!, load: run.cpuUs / run.requests },
      };
    };
    type Measured = Awaited<ReturnType<typeof measured>>;
    // A warm-up for each side, not counted.
    for (const { url } of Object.values(sides)) await load(url, { connections: 4, seconds: 2 });
    const rows: string[] = [];
    const cpuRows: string[] = [];
    for (const connections of CONNECTIONS) {
      const runs: Record<Side, Measured[]> = { bare: [], floor: [], hand: [], kit: [] };
      const ceilings: number[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        for (const side of Object.keys(sides) as Side[]) runs[side].push(await measured(side, connections));
        ceilings.push(await commitCeiling(databaseUrl, connections));
        console.error(
          `  ${connections} connections, round ${round}: commit ceiling ${f0(ceilings.at(-1)!)}/s, bare ${f0(runs.bare.at(-1)!.rps)}/s, floor ${f0(runs.floor.at(-1)!.rps)}/s, hand-written ${f0(runs.hand.at(-1)!.rps)}/s, kit ${f0(runs.kit.at(-1)!.rps)}/s`,
        );
      }
      const m = (side: Load[], key: 'rps' | 'p50' | 'p99') => median(side.map((r) => r[key]));
      const ratio = (a: Load[], b: Load[]) => (m(a, 'rps') / m(b, 'rps')).toFixed(2);
      const failed = Object.values(runs)
        .flat()
        .reduce((n, r) => n + r.non2xx + r.errors, 0);
      rows.push(
        `| ${connections} | ${f0(median(ceilings))} | ${f0(m(runs.bare, 'rps'))} | ${f0(m(runs.floor, 'rps'))} | ${f0(m(runs.hand, 'rps'))} | ${f0(m(runs.kit, 'rps'))} | **${ratio(runs.kit, runs.hand)}** | ${ratio(runs.kit, runs.floor)} | ${f1(m(runs.hand, 'p99'))} | ${f1(m(runs.kit, 'p50'))} | ${f1(m(runs.kit, 'p99'))} | ${failed} |`,
      );
      for (const side of Object.keys(sides) as Side[]) {
        const us = (key: keyof Measured['cpu']) => {
          const values = runs[side].map((r) => r.cpu[key]).filter((v): v is number => v !== null);
          return values.length === 0 ? null : median(values);
        };
        const parts = [us('process'), us('mysql'), us('redis'), us('load')];
        const all = parts.every((p) => p !== null) ? f0(parts.reduce((a, b) => a! + b!, 0)!) : '-';
        cpuRows.push(
          `| ${connections} | ${labels[side]} | ${f0(m(runs[side], 'rps'))} | ${parts.map((p) => (p === null ? '-' : f0(p))).join(' | ')} | ${all} |`,
        );
      }
    }
    return [
      `Receiver beside a bare Koa route, the durable floor and a hand-written receiver (median of ${ROUNDS} alternating rounds of ${SECONDS} s):`,
      '',
      '| connections | commit ceiling ev/s | bare req/s | floor ev/s | hand-written ev/s | kit ev/s | **kit / hand-written** | kit / floor | hand-written p99 ms | kit p50 ms | kit p99 ms | non-2xx |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      'CPU an event, µs, in each process that served it (the same runs, medians; from /proc; `-` where it could not be read):',
      '',
      '| connections | side | events/s | its process | MySQL | Redis | load generator | all |',
      '|---:|---|---:|---:|---:|---:|---:|---:|',
      ...cpuRows,
    ];
  } finally {
    await Promise.all([bare.child.stop(), floor.child.stop(), hand.child.stop()]);
  }
}

/** Orders waiting for their capture event, written as the load generator's targets. */
async function targetsFile(db: mysql.Connection, name: string, count: number): Promise<string> {
  const targets = await seedOrders(db, `${PREFIX}${name}`, count);
  const file = join(work, `${name}.jsonl`);
  writeFileSync(file, targets.map((t) => JSON.stringify(t)).join('\n'));
  return file;
}

/** One rate: the latency of every event from its send to its order's change, and what was achieved. */
async function latencyAt(db: mysql.Connection, apiUrl: string, rate: number): Promise<string> {
  const count = rate * LATENCY_SECONDS;
  const name = `lat${rate}`;
  const file = await targetsFile(db, name, count);
  const warmUp = { name: `warm${rate}`, count: rate * WARM_UP_SECONDS };
  const warmUpFile = await targetsFile(db, warmUp.name, warmUp.count);
  const workers = await Promise.all(Array.from({ length: LATENCY_WORKERS }, () => startWorker()));
  // A rate the workers cannot keep up with leaves a backlog: allow for draining it at 100/s.
  const allPaid = (what: { name: string; count: number }) =>
    waitUntil(
      `every order paid at ${rate}/s`,
      async () => (await paidCount(db, `${PREFIX}${what.name}`)) === what.count,
      60_000 + what.count * 10,
      workers[0],
    );
  try {
    // Not counted: the same pace first, on orders of their own, until the processes' code is
    // compiled (V8 optimises what runs hot); a fresh process is slower for its first seconds.
    await load(apiUrl, { connections: 32, rate, targets: warmUpFile });
    await allPaid(warmUp);
    const tag = `${PREFIX}${name}`;
    const sent = await load(apiUrl, { connections: 32, rate, targets: file, tag });
    await allPaid({ name, count });
    // The event's created_at is its send time (bench/events.ts); the history line is the order's change.
    const [rows] = await db.query<mysql.RowDataPacket[]>(
      `SELECT TIMESTAMPDIFF(MICROSECOND, STR_TO_DATE(JSON_VALUE(i.payload, '$.created_at'), '%Y-%m-%dT%H:%i:%s.%fZ'), h.created_at) AS us
         FROM order_history h JOIN webhook_inbox i ON i.event_id = h.source_id
        WHERE h.source = 'webhook' AND h.outcome = 'applied' AND i.event_id LIKE ?`,
      [`evt_${tag}\\_%`],
    );
    const ms = rows.map((r) => Number(r.us) / 1000);
    const [drained] = await db.query<mysql.RowDataPacket[]>(
      `SELECT TIMESTAMPDIFF(MICROSECOND, MIN(h.created_at), MAX(h.created_at)) AS us FROM order_history h
         JOIN webhook_inbox i ON i.event_id = h.source_id WHERE i.event_id LIKE ?`,
      [`evt_${tag}\\_%`],
    );
    const applied = count / (Number(drained[0]!.us) / 1e6);
    return `| ${f0(rate)} | ${f0(ms.length)} | ${f0(sent.rps)} | ${f0(applied)} | ${f1(percentile(ms, 50))} | ${f1(percentile(ms, 90))} | ${f1(percentile(ms, 99))} | ${f1(Math.max(...ms))} | ${f1(sent.p99)} | ${sent.non2xx + sent.errors} |`;
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

async function latencySection(db: mysql.Connection, apiUrl: string): Promise<string[]> {
  const rows: string[] = [];
  for (const rate of RATES) {
    rows.push(await latencyAt(db, apiUrl, rate));
    console.error(`  ${rate}/s: ${rows.at(-1)}`);
  }
  return [
    `Event-to-order latency, signed POST to the order row changed (${LATENCY_SECONDS} s at each rate, events paced evenly; one API, ${LATENCY_WORKERS} worker process${LATENCY_WORKERS === 1 ? '' : 'es'}):`,
    '',
    '| events/s sent | events | achieved sent/s | applied/s | p50 ms | p90 ms | p99 ms | max ms | receiver p99 ms | non-2xx |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ];
}

async function paidCount(db: mysql.Connection, referencePrefix: string): Promise<number> {
  const [rows] = await db.query<mysql.RowDataPacket[]>(
    "SELECT COUNT(*) AS n FROM orders WHERE reference LIKE ? AND status = 'paid'",
    [`${referencePrefix}%`],
  );
  return Number(rows[0]!.n);
}

/** From the first event applied to the last, of the orders whose reference starts so: events a second. */
async function drainRate(db: mysql.Connection, referencePrefix: string): Promise<number> {
  const [rows] = await db.query<mysql.RowDataPacket[]>(
    `SELECT TIMESTAMPDIFF(MICROSECOND, MIN(h.created_at), MAX(h.created_at)) AS us
       FROM order_history h JOIN orders o ON o.id = h.order_id
      WHERE o.reference LIKE ? AND h.source = 'webhook'`,
    [`${referencePrefix}%`],
  );
  return BACKLOG / (Number(rows[0]!.us) / 1e6);
}

/** The hand-written reconciler, the kit with one or two worker processes, the baseline build's. */
type Drainer = 'hand' | 1 | 2 | 'baseline 1' | 'baseline 2';

/** A drain's rate, and the CPU an event cost its processes and MySQL's server (µs; null: unread). */
interface Drained {
  rate: number;
  cpu: { process: number | null; mysql: number | null };
}

/**
 * One round of one side: a backlog of BACKLOG orders' capture events stored and queued with nothing
 * draining it (as after an outage of the workers), then drained. The hand-written side's events go
 * through the hand-written receiver onto its own queue, the kit's through the kit's API. The CPU is
 * read from the processes' start (the kit's workers: once they take jobs) to the last event paid.
 */
async function drain(
  db: mysql.Connection,
  side: Drainer,
  round: number,
  apiUrl: string,
  hand: { url: string; prefix: string },
): Promise<Drained> {
  const name = `drain${round}${side === 'hand' ? 'h' : `w${String(side).replace('baseline ', 'b')}`}`;
  const file = await targetsFile(db, name, BACKLOG);
  const sent = await load(side === 'hand' ? hand.url : apiUrl, { connections: 32, targets: file });
  if (sent.non2xx + sent.errors > 0)
    throw new Error(`the backlog was not all stored: ${JSON.stringify(sent)}`);
  const children =
    side === 'hand'
      ? [
          spawnChild('node', ['bench/handwritten-reconciler.mjs'], {
            DATABASE_URL: `${ADMIN_URL}/${DATABASE}`,
            REDIS_URL,
            REDIS_PREFIX: hand.prefix,
          }),
        ]
      : typeof side === 'number'
        ? await Promise.all(Array.from({ length: side }, () => startWorker()))
        : await Promise.all(Array.from({ length: Number(side.slice(-1)) }, () => startWorker(BASELINE!)));
  const mysqld = mysqlServer;
  const spent = (pids: (number | undefined)[]) => {
    const us = pids.map(cpuUs);
    return us.some((u) => u === null) ? null : us.reduce((a, b) => a! + b!, 0)!;
  };
  const pids = children.map((c) => c.process.pid);
  let before: (number | null)[] = [];
  let after: (number | null)[] = [];
  try {
    // The hand-written reconciler says when it processes: a crash at start is reported here.
    if (side === 'hand') await children[0]!.firstLine();
    before = [spent(pids), cpuUs(mysqld)];
    await waitUntil(
      'the backlog paid',
      async () => (await paidCount(db, `${PREFIX}${name}`)) === BACKLOG,
      300_000,
      children[0]!,
    );
    after = [spent(pids), cpuUs(mysqld)];
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
  const perEvent = (i: number) =>
    before[i] == null || after[i] == null ? null : (after[i]! - before[i]!) / BACKLOG;
  // The processes' start-up is not counted.
  return { rate: await drainRate(db, `${PREFIX}${name}`), cpu: { process: perEvent(0), mysql: perEvent(1) } };
}

async function reconcilerSection(db: mysql.Connection, apiUrl: string): Promise<string[]> {
  const prefix = `${PREFIX}handreconciler`;
  const receiver = await startHandwrittenReceiver(`${ADMIN_URL}/${DATABASE}`, prefix);
  const runs: Record<Drainer, Drained[]> = { hand: [], 1: [], 2: [], 'baseline 1': [], 'baseline 2': [] };
  const label: Record<Drainer, string> = {
    hand: 'hand-written reconciler, 1 process',
    1: 'kit, 1 worker process',
    2: 'kit, 2 worker processes',
    'baseline 1': 'baseline kit (BENCH_BASELINE), 1 worker process',
    'baseline 2': 'baseline kit (BENCH_BASELINE), 2 worker processes',
  };
  const sides: Drainer[] = ['hand', 1, 2, ...(BASELINE ? (['baseline 1', 'baseline 2'] as const) : [])];
  try {
    for (let round = 1; round <= DRAIN_ROUNDS; round++) {
      for (const side of sides) {
        const run = await drain(db, side, round, apiUrl, { url: receiver.url, prefix });
        runs[side].push(run);
        const cpu = (us: number | null) => (us === null ? '-' : f0(us));
        console.error(
          `  round ${round}, ${label[side]}: ${f0(run.rate)} events applied/s, CPU an event ${cpu(run.cpu.process)} µs, MySQL ${cpu(run.cpu.mysql)} µs`,
        );
      }
    }
  } finally {
    await receiver.child.stop();
  }
  const rate = (side: Drainer) => median(runs[side].map((r) => r.rate));
  const cpu = (side: Drainer, key: keyof Drained['cpu']) => {
    const values = runs[side].map((r) => r.cpu[key]).filter((v): v is number => v !== null);
    return values.length === 0 ? '-' : f0(median(values));
  };
  const row = (side: Drainer) =>
    `| ${label[side]} | ${f0(rate(side))} | ${(rate(side) / rate('hand')).toFixed(2)} | ${runs[side].map((r) => f0(r.rate)).join(', ')} | ${cpu(side, 'process')} | ${cpu(side, 'mysql')} |`;
  return [
    `Reconciler throughput: a backlog of ${f0(BACKLOG)} stored events drained (median of ${DRAIN_ROUNDS} alternating rounds; the hand-written side holds 8 jobs at once, each its own transaction; the kit 256, applied in batches; CPU an event in µs, medians, from /proc: its processes, and MySQL's server with whatever else it served meanwhile):`,
    '',
    '| side | events applied/s | against hand-written | the rounds | its processes, CPU µs/event | MySQL, CPU µs/event |',
    '|---|---:|---:|---|---:|---:|',
    ...sides.map(row),
  ];
}

async function main(): Promise<void> {
  if (KIT_SECTIONS.length > 0) {
    console.error('building (npm run build): the bench runs the compiled kit, as production does');
    execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
  }
  const admin = await mysql.createConnection(ADMIN_URL);
  await admin.query(`CREATE DATABASE \`${DATABASE}\``);
  const db = await mysql.createConnection(`${ADMIN_URL}/${DATABASE}`);
  // The server the bench talks to, by its pid file: a machine may run more than one.
  const [[server]] = await db.query<mysql.RowDataPacket[]>('SELECT @@pid_file AS file');
  mysqlServer = pidFromFile(String(server?.file)) ?? pidOf('mariadbd', 'mysqld');
  const report = [
    `npm run bench, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${(await import('node:os')).cpus().length} CPUs`,
  ];
  let api: { child: Child; url: string } | null = null;
  try {
    if (ONLY.has('cli')) {
      console.error(`the CLI's start: --help, operator list, order-events status, beside node -e 0`);
      // As an operator beside a kit in development runs it: the bench's database, no kit answering.
      const cliEnv = {
        NODE_ENV: 'development',
        LOG_LEVEL: 'warn',
        DATABASE_URL: `${ADMIN_URL}/${DATABASE}`,
        REDIS_URL,
        REDIS_PREFIX: PREFIX,
        GATEWAY_PORT: String(await freePort()),
        GATEWAY_SANDBOX_STATE: 'memory',
      };
      execFileSync('npm', ['run', '-s', 'cli', '--', 'migrate'], {
        env: { ...env, ...cliEnv },
        stdio: 'ignore',
      });
      report.push('', ...(await cliSection(CLI_ROUNDS, cliEnv)));
    }
    if (KIT_SECTIONS.length > 0 && GATEWAY === 'process') gateway = await startGateway();
    if (KIT_SECTIONS.length > 0) api = await startApi();
    if (ONLY.has('receiver')) {
      console.error('receiver beside a bare route, the durable floor and a hand-written receiver');
      // A database and queue of its own: its events pay nobody, and their jobs must not stand in
      // the way of the sections after it.
      const receiverApi = await startApi({
        DATABASE_URL: `${ADMIN_URL}/${DATABASE}_receiver`,
        REDIS_PREFIX: `${PREFIX}receiver`,
      });
      try {
        report.push('', ...(await receiverSection(receiverApi, `${ADMIN_URL}/${DATABASE}_receiver`)));
      } finally {
        await receiverApi.child.stop();
      }
    }
    if (ONLY.has('latency') && api) {
      console.error(`event-to-order latency at ${RATES.join(', ')} events/s`);
      report.push('', ...(await latencySection(db, api.url)));
    }
    if (ONLY.has('reconciler') && api) {
      console.error('reconciler throughput: hand-written, then the kit with one and two workers');
      report.push('', ...(await reconcilerSection(db, api.url)));
    }
    console.log(report.join('\n'));
  } finally {
    await api?.child.stop();
    await gateway?.child.stop();
    await db.end();
    await admin.query(`DROP DATABASE IF EXISTS \`${DATABASE}\``);
    await admin.query(`DROP DATABASE IF EXISTS \`${DATABASE}_receiver\``);
    await admin.end();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${PREFIX}*:*`);
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
    redis.disconnect();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
