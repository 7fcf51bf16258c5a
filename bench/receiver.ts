/**
 * `npm run bench`: the webhook receiver under load, beside a bare Koa route that only reads the body.
 * Both get the same signed event payloads (a fresh event id per request) from autocannon, in
 * alternating rounds of one run, so the ratio holds on a noisy shared machine.
 *
 * BENCH_SECONDS (default 8) per round, BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 4,32: a light
 * load for latency, a heavy one for throughput).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import Koa from 'koa';
import mysql from 'mysql2/promise';
import { pino } from 'pino';
import getRawBody from 'raw-body';
import { createSequelize, migrate } from '../src/infra/database.js';
import { closeQueue, createObservationQueue, enqueueEvent } from '../src/merchant/reconciler/queue.js';
import { createStore } from '../src/merchant/store/index.js';
import { webhookReceiver } from '../src/merchant/webhooks/receiver.js';
import { SecretCache } from '../src/merchant/webhooks/secret-cache.js';
import { systemClock } from '../src/shared/clock.js';
import { cryptoRandom } from '../src/shared/ids.js';
import { SecretBox } from '../src/shared/secret-box.js';
import { sign } from '../src/shared/signature.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '4,32').split(',').map(Number);
const DATABASE = `merchant_bench_${process.pid}`;
const DATABASE_URL = `mysql://root@127.0.0.1:3306/${DATABASE}`;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECRET = `whsec_${randomBytes(32).toString('base64url')}`;

let counter = 0;
/** A signed transaction.captured event, as the gateway sends it, with a new id each time. */
function signedEvent(): { body: string; headers: Record<string, string> } {
  counter += 1;
  const id = `evt_bench${process.pid}x${counter}`;
  const body = JSON.stringify({
    id,
    type: 'transaction.captured',
    created_at: new Date().toISOString(),
    api_version: '2026-11-01',
    data: {
      transaction: {
        id: 100000 + counter,
        merchant_trans_id: `order-${counter}`,
        related_trans_id: null,
        transaction_type: 'sale',
        status: 'captured',
        amount: 1234,
        currency: 'EUR',
        acquirer_provider: 'sandbox-acquirer',
        acquirer_trans_id: 'a',
        acquirer_auth_code: 'X',
        description: null,
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
        refunded_amount: 0,
      },
    },
  });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-service-signature': sign(body, SECRET, Math.floor(Date.now() / 1000)),
    },
  };
}

async function listen(app: Koa): Promise<{ url: string; server: Server }> {
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function load(
  url: string,
  connections: number,
): Promise<{ rps: number; p50: number; p99: number; non2xx: number }> {
  const result = await autocannon({
    url,
    method: 'POST',
    connections,
    duration: SECONDS,
    requests: [{ setupRequest: (req) => ({ ...req, ...signedEvent() }) }],
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const sequelize = createSequelize(DATABASE_URL);
  await migrate(DATABASE_URL, sequelize);
  const box = new SecretBox(randomBytes(32), cryptoRandom);
  const { inbox } = createStore({ sequelize, clock: systemClock, random: cryptoRandom, box });
  const queue = createObservationQueue(REDIS_URL, `bench${process.pid}`);
  const receiverApp = new Koa();
  receiverApp.use(
    webhookReceiver({
      inbox,
      secrets: new SecretCache(async () => [SECRET], systemClock),
      enqueue: (id) => enqueueEvent(queue, id),
      clock: systemClock,
      logger: pino({ level: 'silent' }),
    }),
  );
  const bareApp = new Koa();
  bareApp.use(async (ctx) => {
    await getRawBody(ctx.req, { limit: 256 * 1024 });
    ctx.body = { success: true };
  });
  const receiver = await listen(receiverApp);
  const bare = await listen(bareApp);

  type Result = Awaited<ReturnType<typeof load>>;
  const line = (name: string, rs: Result[]) =>
    `  ${name.padEnd(30)} ${median(rs.map((r) => r.rps))
      .toFixed(0)
      .padStart(7)} /s   p50 ${median(rs.map((r) => r.p50))
      .toFixed(1)
      .padStart(6)} ms   p99 ${median(rs.map((r) => r.p99))
      .toFixed(1)
      .padStart(6)} ms   non-2xx ${rs.reduce((n, r) => n + r.non2xx, 0)}`;
  try {
    await load(bare.url, CONNECTIONS[0]!); // warm-up, not counted
    const summary: string[] = [];
    for (const connections of CONNECTIONS) {
      const results = { bare: [] as Result[], receiver: [] as Result[] };
      for (let round = 1; round <= ROUNDS; round++) {
        results.bare.push(await load(bare.url, connections));
        results.receiver.push(await load(receiver.url, connections));
        console.log(
          `${connections} connections, round ${round}: bare ${results.bare.at(-1)!.rps.toFixed(0)} req/s, receiver ${results.receiver.at(-1)!.rps.toFixed(0)} events/s`,
        );
      }
      const ratio = median(results.receiver.map((r) => r.rps)) / median(results.bare.map((r) => r.rps));
      summary.push(
        `${connections} connections (median of ${ROUNDS} rounds of ${SECONDS} s, side by side):`,
        line('bare Koa route (body only)', results.bare),
        line('receiver (verify+inbox+queue)', results.receiver),
        `  receiver / bare throughput: ${ratio.toFixed(2)}`,
      );
    }
    const [stored] = (await sequelize.query('SELECT COUNT(*) AS n FROM webhook_inbox')) as [
      { n: number }[],
      unknown,
    ];
    console.log(`\n${summary.join('\n')}`);
    console.log(`events stored in the inbox: ${stored[0]!.n}; jobs queued: ${await queue.count()}`);
  } finally {
    receiver.server.close();
    bare.server.close();
    await queue.obliterate({ force: true }).catch(() => {});
    await closeQueue(queue);
    await sequelize.close();
    const admin = await mysql.createConnection('mysql://root@127.0.0.1:3306');
    await admin.query(`DROP DATABASE IF EXISTS \`${DATABASE}\``);
    await admin.end();
  }
}

await main();
