import { expect } from 'chai';
import type { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { OPS_TOKEN, pressButton } from '../../support/kit.js';
import {
  ADMIN_URL,
  call,
  databaseExists,
  databaseName,
  delay,
  exitWithin,
  freePort,
  healthy,
  leftovers,
  lines,
  type Proc,
  SUITE_PREFIX,
  start,
  waitFor,
} from '../../support/process.js';
import { claimRedisDatabase, REDIS_BASE, releaseRedisDatabase } from '../../support/redis.js';

/**
 * merchant.md, Running it: "`ROLES=api`, `ROLES=worker`, `ROLES=scheduler` run one part, for containers."
 * The real `src/main.ts` as child processes: an api process (with the embedded sandbox) that takes a
 * webhook and leaves it for a worker, then a worker process on the same database and Redis that applies
 * it. Each process group gets its own database (dropped afterwards) and its own Redis database index
 * (claimed empty, emptied afterwards). Every wait is bounded.
 */
const READY_DEADLINE_MS = 25_000;
const SANDBOX_KEY = 'sk_test_merchant_1001';

/** `src/main.ts` with `env`: which ROLES it runs is the test's choice. */
const startMain = (env: Record<string, string>): Proc => start('src/main.ts', [], env);

interface InboxRow {
  event_id: string;
  event_type: string;
  processed_at: Date | null;
  outcome: string | null;
}

async function inboxRows(database: string): Promise<InboxRow[]> {
  const connection = await mysql.createConnection(`${ADMIN_URL}/${database}`);
  try {
    const [rows] = await connection.query<mysql.RowDataPacket[]>(
      'SELECT event_id, event_type, processed_at, outcome FROM webhook_inbox ORDER BY received_at',
    );
    return rows as InboxRow[];
  } catch (error) {
    if ((error as { code?: string }).code === 'ER_NO_SUCH_TABLE') return [];
    throw error;
  } finally {
    await connection.end();
  }
}

describe('merchant: ROLES as processes (merchant.md, Running it)', function () {
  this.timeout(90_000);
  const { databases, track, cleanUp } = leftovers();
  const redisClaims: Redis[] = [];

  after(async () => {
    await cleanUp();
    for (const redis of redisClaims) await releaseRedisDatabase(redis).catch(() => undefined);
  });

  describe('ROLES=api, then ROLES=worker on the same database and Redis', () => {
    const database = databaseName('roles', 'split');
    let databaseUrl: string;
    let redisUrl: string;
    let redis: Redis;
    let api: Proc;
    let apiUrl: string;
    let gatewayPort: number;
    let order: { id: string; reference: string };
    let eventId: string;

    before(async function () {
      this.timeout(READY_DEADLINE_MS + 15_000);
      databases.push(database);
      databaseUrl = `${ADMIN_URL}/${database}`;
      const claimed = await claimRedisDatabase();
      redisClaims.push(claimed.redis);
      redis = claimed.redis;
      redisUrl = `${REDIS_BASE}/${claimed.index}`;
      const port = await freePort();
      gatewayPort = await freePort([port]);
      apiUrl = `http://127.0.0.1:${port}`;
      api = track(
        startMain({
          ROLES: 'api',
          PORT: String(port),
          GATEWAY_PORT: String(gatewayPort),
          DATABASE_URL: databaseUrl,
          REDIS_URL: redisUrl,
          // The order's history is the operator's to read.
          OPS_API_TOKEN: OPS_TOKEN,
        }),
      );
      await healthy(api, apiUrl, READY_DEADLINE_MS);
    });

    it('ROLES=api serves /healthz', async () => {
      const res = await call(apiUrl, 'GET', '/healthz');
      expect(res.status, res.text).to.equal(200);
    });

    it('ROLES=api serves /readyz: database, redis and gateway ok', async () => {
      const res = await call(apiUrl, 'GET', '/readyz', undefined, { authorization: `Bearer ${OPS_TOKEN}` });
      expect(res.status, res.text).to.equal(200);
      const checks = res.body.data as Record<string, string>;
      expect(checks.database, res.text).to.equal('ok');
      expect(checks.gateway, res.text).to.equal('ok');
      const redisCheck = Object.entries(checks).find(([name]) => /redis/i.test(name));
      expect(redisCheck, `readiness checks: ${Object.keys(checks).join(', ')}`).to.not.equal(undefined);
      expect(redisCheck![1]).to.equal('ok');
    });

    it('ROLES=api accepts its sandbox’s signed webhook for a paid redirect, stores and queues it, and does not process it', async () => {
      const created = await call(apiUrl, 'POST', '/orders', { amount: '23.45', currency: 'EUR' });
      expect(created.status, created.text).to.equal(201);
      order = created.body.data.order;
      const pay = await call(apiUrl, 'POST', `/orders/${order.id}/pay/redirect`, {
        payment_method: 'ideal',
        customer: { country_code: 'NL' },
      });
      expect(pay.status, pay.text).to.equal(200);
      expect(pay.body.data.order.status).to.equal('requires_action');
      const pageUrl = pay.body.data.next_action.url as string;
      expect(pageUrl.startsWith(`http://127.0.0.1:${gatewayPort}/`), pageUrl).to.equal(true);

      // The customer presses Pay on the hosted page (a form POST, as a browser sends it).
      const back = await pressButton(pageUrl, 'pay');
      expect(back.startsWith(`${apiUrl}/checkout/return?`), back).to.equal(true);

      // The sandbox signs and delivers transaction.captured to the api process, which stores it.
      const row = await waitFor(
        'the transaction.captured event in the inbox',
        async () => (await inboxRows(database)).find((r) => r.event_type === 'transaction.captured'),
        20_000,
        { everyMs: 100, context: () => api.stderr() },
      );
      eventId = row.event_id;

      // From the gateway's side the delivery was accepted: the receiver answered 2xx.
      const delivered = await waitFor(
        'the sandbox recording the delivery as delivered',
        async () => {
          const res = await fetch(
            `http://127.0.0.1:${gatewayPort}/api/v1/webhook/events?event_type=transaction.captured`,
            { headers: { authorization: `Bearer ${SANDBOX_KEY}` } },
          );
          const body = (await res.json()) as {
            data: {
              events: {
                id: string;
                status: string;
                merchant_trans_id: string;
                last_attempt: { status_code: number } | null;
              }[];
            };
          };
          const event = body.data.events.find((e) => e.id === eventId);
          return event?.status === 'delivered' ? event : undefined;
        },
        10_000,
        { everyMs: 100 },
      );
      expect(delivered.merchant_trans_id).to.equal(order.reference);
      expect(delivered.last_attempt?.status_code).to.equal(200);

      // Queued for a worker, and nobody takes it: it waits in the bull queue (job id = event id).
      const waiting = await waitFor(
        'the job waiting in the queue',
        async () =>
          (await redis.lrange(`${SUITE_PREFIX}:observations:wait`, 0, -1)).includes(eventId)
            ? true
            : undefined,
        5000,
        { everyMs: 100 },
      );
      expect(waiting).to.equal(true);
      // Bounded: for a second and a half, neither the inbox row nor the order moves.
      const deadline = Date.now() + 1500;
      while (Date.now() < deadline) {
        const stored = (await inboxRows(database)).find((r) => r.event_id === eventId);
        expect(stored?.processed_at ?? null, 'processed with no worker running').to.equal(null);
        await delay(150);
      }
      expect(
        await redis.lrange(`${SUITE_PREFIX}:observations:active`, 0, -1),
        'no worker took the job',
      ).to.not.include(eventId);
      const got = await call(apiUrl, 'GET', `/orders/${order.id}`);
      expect(got.body.data.order.status, 'the order waits for the worker').to.equal('requires_action');
    });

    it('ROLES=worker against the first process’s sandbox, on the same database and Redis, processes it: the order becomes paid', async function () {
      this.timeout(READY_DEADLINE_MS + 30_000);
      expect(eventId, 'the previous test left an unprocessed event').to.be.a('string');
      const workerPort = await freePort([gatewayPort]);
      const worker = track(
        startMain({
          ROLES: 'worker',
          PORT: String(workerPort),
          GATEWAY_BASE_URL: `http://127.0.0.1:${gatewayPort}`,
          GATEWAY_API_KEY: SANDBOX_KEY,
          DATABASE_URL: databaseUrl,
          REDIS_URL: redisUrl,
        }),
      );

      const row = await waitFor(
        'the worker processing the inbox row',
        async () => {
          if (!worker.running()) throw new Error(`the worker exited: ${worker.stderr()}`);
          const found = (await inboxRows(database)).find((r) => r.event_id === eventId);
          return found?.processed_at ? found : undefined;
        },
        READY_DEADLINE_MS + 10_000,
        { everyMs: 100, context: () => worker.stderr() },
      );
      expect(row.outcome).to.equal('applied');

      const got = await call(apiUrl, 'GET', `/orders/${order.id}`, undefined, {
        authorization: `Bearer ${OPS_TOKEN}`,
      });
      expect(got.status, got.text).to.equal(200);
      expect(got.body.data.order.status, got.text).to.equal('paid');
      const applied = (
        got.body.data.order.history as { source: string; source_id: string; outcome: string }[]
      ).find((h) => h.source_id === eventId);
      expect(applied, JSON.stringify(got.body.data.order.history)).to.include({
        source: 'webhook',
        outcome: 'applied',
      });

      // A worker runs no HTTP server: its PORT stays closed.
      let answered = false;
      try {
        await fetch(`http://127.0.0.1:${workerPort}/healthz`, { signal: AbortSignal.timeout(1000) });
        answered = true;
      } catch {
        answered = false;
      }
      expect(answered, 'the worker answered HTTP').to.equal(false);

      worker.child.kill('SIGTERM');
      expect((await exitWithin(worker, 10_000)).code, worker.stderr()).to.equal(0);
    });

    after(async () => {
      if (api?.running()) {
        api.child.kill('SIGTERM');
        await exitWithin(api, 10_000).catch(() => undefined);
      }
    });
  });

  describe('ROLES=bogus', () => {
    it('exits 1 with one stderr line naming ROLES, having started nothing', async () => {
      const database = databaseName('roles', 'bogus');
      databases.push(database);
      const port = await freePort();
      const p = track(
        startMain({
          ROLES: 'bogus',
          PORT: String(port),
          GATEWAY_PORT: String(await freePort([port])),
          DATABASE_URL: `${ADMIN_URL}/${database}`,
        }),
      );
      const { code } = await exitWithin(p, 15_000);
      expect(code, p.stderr()).to.equal(1);
      const errLines = lines(p.stderr());
      expect(errLines, p.stderr()).to.have.length(1);
      expect(errLines[0]).to.match(/\bROLES\b/);
      expect(await databaseExists(database), 'no database created').to.equal(false);
    });
  });

  describe('all roles (ROLES unset)', () => {
    it('SIGTERM: exits 0 within a few seconds', async function () {
      this.timeout(READY_DEADLINE_MS + 20_000);
      const database = databaseName('roles', 'all');
      databases.push(database);
      const claimed = await claimRedisDatabase();
      redisClaims.push(claimed.redis);
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const p = track(
        startMain({
          PORT: String(port),
          GATEWAY_PORT: String(await freePort([port])),
          DATABASE_URL: `${ADMIN_URL}/${database}`,
          REDIS_URL: `${REDIS_BASE}/${claimed.index}`,
        }),
      );
      await healthy(p, url, READY_DEADLINE_MS);
      const ready = await call(url, 'GET', '/readyz');
      expect(ready.status, ready.text).to.equal(200);

      const sent = Date.now();
      p.child.kill('SIGTERM');
      const { code, signal } = await exitWithin(p, 8000);
      expect(signal, p.stderr()).to.equal(null);
      expect(code, p.stderr()).to.equal(0);
      expect(Date.now() - sent, 'seconds to exit').to.be.below(8000);
    });
  });
});
