/**
 * `npm run bench`: the kit as it runs in production (the compiled build, `node dist/src/main.js`,
 * NODE_ENV=production, one process per role), measured from outside. Every process is its own: the
 * bare route, the kit's API, its workers, and the load generator (bench/load.ts), so no side pays
 * for the other's load.
 *
 * 1. Receiver against a bare Koa route that only reads the body, and against the durable floor (the
 *    bare route plus the kit's signature check, batched INSERT and addBulk): alternating rounds of
 *    one run, at BENCH_CONNECTIONS (default 4,32,128), BENCH_ROUNDS (3) rounds of BENCH_SECONDS (8) each.
 * 2. Event-to-order latency: signed POST to the order row changed, at each of BENCH_RATES (1000,250)
 *    events a second for BENCH_LATENCY_SECONDS (10), one API and BENCH_LATENCY_WORKERS (2) workers.
 * 3. Reconciler throughput: BENCH_BACKLOG (3000) stored events drained by one worker process, then by
 *    two, alternating, BENCH_DRAIN_ROUNDS (2) rounds.
 *
 * BENCH_ONLY=receiver,latency,reconciler picks sections; BENCH_KIT_NODE_ARGS (e.g.
 * `--cpu-prof --cpu-prof-dir=prof`) are node's arguments for the kit's processes: a profile under load;
 * BENCH_KIT=tsx runs the kit through the TypeScript loader (what `npm start` does) instead of the build. Needs MySQL and Redis, like the tests.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { seedOrders } from './orders.js';
import { type Child, freePort, runToEnd, spawnChild, waitUntil } from './processes.js';

const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = (env.BENCH_CONNECTIONS ?? '4,32,128').split(',').map(Number);
const RATES = (env.BENCH_RATES ?? '1000,250').split(',').map(Number);
const LATENCY_SECONDS = Number(env.BENCH_LATENCY_SECONDS ?? 10);
const LATENCY_WORKERS = Number(env.BENCH_LATENCY_WORKERS ?? 2);
const BACKLOG = Number(env.BENCH_BACKLOG ?? 3000);
const DRAIN_ROUNDS = Number(env.BENCH_DRAIN_ROUNDS ?? 2);
// The compiled build, as production runs it; BENCH_KIT=tsx measures the TypeScript loader instead.
const KIT_COMMAND = [
  ...(env.BENCH_KIT_NODE_ARGS ?? '').split(' ').filter(Boolean),
  ...(env.BENCH_KIT === 'tsx' ? ['--import', 'tsx', 'src/main.ts'] : ['dist/src/main.js']),
];
const ONLY = new Set((env.BENCH_ONLY ?? 'receiver,latency,reconciler').split(','));
const ADMIN_URL = 'mysql://root@127.0.0.1:3306';
const DATABASE = `merchant_bench_${process.pid}`;
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `bench${process.pid}`;
const SECRET = `whsec_${randomBytes(32).toString('base64url')}`;
const work = mkdtempSync(join(tmpdir(), 'bench-'));

/** The settings of every kit process: production, this bench's database, Redis prefix and secret. */
const kitEnv = (roles: string, extra: Record<string, string> = {}) => ({
  NODE_ENV: 'production',
  ROLES: roles,
  DATABASE_URL: `${ADMIN_URL}/${DATABASE}`,
  REDIS_URL,
  REDIS_PREFIX: PREFIX,
  GATEWAY_BASE_URL: 'embedded',
  GATEWAY_SANDBOX_STATE: 'memory',
  GATEWAY_WEBHOOK_SECRETS: SECRET,
  APP_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  OPS_API_TOKEN: 'bench-ops-token-0123456789',
  LOG_LEVEL: 'info',
  ...extra,
});

interface Load {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.ceil((p / 100) * xs.length) - 1]!;
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

// Each kit process runs the embedded sandbox, on a port of its own.
const startWorker = async () =>
  spawnChild('node', KIT_COMMAND, kitEnv('worker', { GATEWAY_PORT: String(await freePort()) }));

/** A yardstick process of the bench (bare route, durable floor): started, and its URL. */
async function startYardstick(
  script: string,
  env: Record<string, string> = {},
): Promise<{ child: Child; url: string }> {
  const child = spawnChild('node', [script], { PORT: String(await freePort()), ...env });
  const port = JSON.parse(await child.firstLine()).port as number;
  return { child, url: `http://127.0.0.1:${port}` };
}

/**
 * Three sides take turns, round after round: the bare route, the durable floor (bench/floor.mjs: the
 * bare route plus the kit's signature check, batched INSERT and addBulk, nothing else) and the receiver.
 */
async function receiverSection(apiUrl: string, databaseUrl: string): Promise<string[]> {
  const bare = await startYardstick('bench/bare.mjs');
  const floor = await startYardstick('bench/floor.mjs', {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: `${PREFIX}floor`,
    WEBHOOK_SECRET: SECRET,
  });
  try {
    // A warm-up for each side, not counted.
    for (const side of [bare, floor, { url: apiUrl }]) await load(side.url, { connections: 4, seconds: 2 });
    const rows: string[] = [];
    for (const connections of CONNECTIONS) {
      const runs = { bare: [] as Load[], floor: [] as Load[], receiver: [] as Load[] };
      for (let round = 1; round <= ROUNDS; round++) {
        runs.bare.push(await load(bare.url, { connections, seconds: SECONDS }));
        runs.floor.push(await load(floor.url, { connections, seconds: SECONDS }));
        runs.receiver.push(await load(apiUrl, { connections, seconds: SECONDS }));
        console.error(
          `  ${connections} connections, round ${round}: bare ${f0(runs.bare.at(-1)!.rps)}/s, floor ${f0(runs.floor.at(-1)!.rps)}/s, receiver ${f0(runs.receiver.at(-1)!.rps)}/s`,
        );
      }
      const m = (side: Load[], key: 'rps' | 'p50' | 'p99') => median(side.map((r) => r[key]));
      const ratio = (a: Load[], b: Load[]) => (m(a, 'rps') / m(b, 'rps')).toFixed(2);
      const failed = Object.values(runs)
        .flat()
        .reduce((n, r) => n + r.non2xx + r.errors, 0);
      rows.push(
        `| ${connections} | ${f0(m(runs.bare, 'rps'))} | ${f0(m(runs.floor, 'rps'))} | ${f0(m(runs.receiver, 'rps'))} | **${ratio(runs.receiver, runs.bare)}** | ${ratio(runs.floor, runs.bare)} | ${ratio(runs.receiver, runs.floor)} | ${f1(m(runs.bare, 'p99'))} | ${f1(m(runs.floor, 'p99'))} | ${f1(m(runs.receiver, 'p50'))} | ${f1(m(runs.receiver, 'p99'))} | ${failed} |`,
      );
    }
    return [
      `Receiver beside a bare Koa route and the durable floor (median of ${ROUNDS} alternating rounds of ${SECONDS} s):`,
      '',
      '| connections | bare req/s | floor events/s | receiver events/s | receiver / bare | floor / bare | receiver / floor | bare p99 ms | floor p99 ms | receiver p50 ms | receiver p99 ms | non-2xx |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
    ];
  } finally {
    await Promise.all([bare.child.stop(), floor.child.stop()]);
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
  const workers = await Promise.all(Array.from({ length: LATENCY_WORKERS }, startWorker));
  try {
    const tag = `${PREFIX}${name}`;
    const sent = await load(apiUrl, { connections: 32, rate, targets: file, tag });
    // A rate the workers cannot keep up with leaves a backlog: allow for draining it at 100/s.
    await waitUntil(
      `every order paid at ${rate}/s`,
      async () => (await paidCount(db, `${PREFIX}${name}`)) === count,
      60_000 + count * 10,
      workers[0],
    );
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
    `Event-to-order latency, signed POST to the order row changed (${LATENCY_SECONDS} s at each rate; one API, ${LATENCY_WORKERS} worker processes):`,
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

async function reconcilerSection(db: mysql.Connection, apiUrl: string): Promise<string[]> {
  const rates: Record<1 | 2, number[]> = { 1: [], 2: [] };
  for (let round = 1; round <= DRAIN_ROUNDS; round++) {
    for (const workers of [1, 2] as const) {
      const name = `drain${round}w${workers}`;
      const file = await targetsFile(db, name, BACKLOG);
      // Stored and queued with no worker running: a backlog, as after an outage of the workers.
      const sent = await load(apiUrl, { connections: 32, targets: file });
      if (sent.non2xx + sent.errors > 0)
        throw new Error(`the backlog was not all stored: ${JSON.stringify(sent)}`);
      const children = await Promise.all(Array.from({ length: workers }, startWorker));
      try {
        await waitUntil(
          'the backlog paid',
          async () => (await paidCount(db, `${PREFIX}${name}`)) === BACKLOG,
          300_000,
          children[0]!,
        );
      } finally {
        await Promise.all(children.map((c) => c.stop()));
      }
      // From the first event applied to the last: the workers' start-up is not counted.
      const [rows] = await db.query<mysql.RowDataPacket[]>(
        `SELECT TIMESTAMPDIFF(MICROSECOND, MIN(h.created_at), MAX(h.created_at)) AS us
           FROM order_history h JOIN orders o ON o.id = h.order_id
          WHERE o.reference LIKE ? AND h.source = 'webhook'`,
        [`${PREFIX}${name}%`],
      );
      const rate = BACKLOG / (Number(rows[0]!.us) / 1e6);
      rates[workers].push(rate);
      console.error(`  round ${round}, ${workers} worker process(es): ${f0(rate)} events applied/s`);
    }
  }
  const one = median(rates[1]);
  const two = median(rates[2]);
  return [
    `Reconciler throughput: a backlog of ${f0(BACKLOG)} stored events drained (median of ${DRAIN_ROUNDS} alternating rounds; 8 jobs at once per process):`,
    '',
    '| worker processes | events applied/s | against one |',
    '|---:|---:|---:|',
    `| 1 | ${f0(one)} | 1.00 |`,
    `| 2 | ${f0(two)} | ${(two / one).toFixed(2)} |`,
  ];
}

async function main(): Promise<void> {
  console.error('building (npm run build): the bench runs the compiled kit, as production does');
  execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
  const admin = await mysql.createConnection(ADMIN_URL);
  await admin.query(`CREATE DATABASE \`${DATABASE}\``);
  const db = await mysql.createConnection(`${ADMIN_URL}/${DATABASE}`);
  const api = await startApi();
  const report = [
    `npm run bench, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${(await import('node:os')).cpus().length} CPUs`,
  ];
  try {
    if (ONLY.has('receiver')) {
      console.error('receiver beside a bare route');
      // A database and queue of its own: its events pay nobody, and their jobs must not stand in
      // the way of the sections after it.
      const receiverApi = await startApi({
        DATABASE_URL: `${ADMIN_URL}/${DATABASE}_receiver`,
        REDIS_PREFIX: `${PREFIX}receiver`,
      });
      try {
        report.push('', ...(await receiverSection(receiverApi.url, `${ADMIN_URL}/${DATABASE}_receiver`)));
      } finally {
        await receiverApi.child.stop();
      }
    }
    if (ONLY.has('latency')) {
      console.error(`event-to-order latency at ${RATES.join(', ')} events/s`);
      report.push('', ...(await latencySection(db, api.url)));
    }
    if (ONLY.has('reconciler')) {
      console.error('reconciler throughput, one and two workers');
      report.push('', ...(await reconcilerSection(db, api.url)));
    }
    console.log(report.join('\n'));
  } finally {
    await api.child.stop();
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
