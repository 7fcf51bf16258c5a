import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { card } from '../../support/gateway.js';
import { pressButton } from '../../support/kit.js';
import {
  ADMIN_URL,
  call,
  databaseName,
  exitWithin,
  freePort,
  healthy,
  leftovers,
  logLines,
  type Proc,
  start,
  waitFor,
} from '../../support/process.js';
import { claimRedisDatabase, REDIS_BASE, releaseRedisDatabase } from '../../support/redis.js';
import { recordingProxy, tee, type Wire } from '../../support/wire.js';

/**
 * Scale-out (merchant.md, Background work: "With several instances running, each cron job runs on
 * one of them at a time"): the real `src/main.ts` as two `ROLES=api`, two `ROLES=worker` and two
 * `ROLES=scheduler` processes on one database and one Redis index, against one standalone sandbox
 * (`src/gateway/main.ts`), as docker-compose.yml runs them. Orders are paid through both apis; each
 * webhook reaches both (a tee delivers the same bytes to each at once); deliveries are cut for a
 * while, so recovery fetches what was missed and the gateway's retries come later as duplicates.
 *
 * What the test sees: every call a kit process makes to the gateway goes through a recording proxy
 * (each process has its own base URL on it, so every call names its process); the workers and the
 * schedulers log at debug which event each applied and when each job ran; MySQL and the Redis budget
 * are read directly. The kit processes run on real time against a gateway of their own (no shared
 * clock): the jobs run every few seconds (JOB_SCHEDULES), and the poll schedule's first point (2
 * minutes after a change) is brought forward in the database rather than waited for.
 */

const READY_DEADLINE_MS = 25_000;
const SANDBOX_KEY = 'sk_test_merchant_1001';
const OPS_TOKEN = 'scale-out-ops-token-0123456789';
/**
 * The key's background calls a minute, all processes together (GATEWAY_BACKGROUND_PER_MINUTE), below
 * the default 400: every call of this test fits in one minute of it, so none waits for one to pass.
 */
const BUDGET = 120;
const SCHEDULES = [
  'poller=* * * * * *',
  'recovery=*/4 * * * * *',
  'health=*/5 * * * * *',
  'sweeper=*/5 * * * * *',
  'holds=*/10 * * * * *',
  'report=off',
].join(';');

const APIS = ['api-a', 'api-b'] as const;
const WORKERS = ['worker-a', 'worker-b'] as const;
const SCHEDULERS = ['scheduler-a', 'scheduler-b'] as const;
type Name = (typeof APIS)[number] | (typeof WORKERS)[number] | (typeof SCHEDULERS)[number];

/** The most entries of `times` (ms) in any 60 s window. */
function busiestMinute(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j]! - sorted[i]! >= 60_000) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

const countBy = <T>(items: T[], key: (item: T) => string) => {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
};

interface OrderRow {
  id: string;
  status: string;
  amount_minor: number;
  captured_minor: number | null;
  refunded_minor: number;
  needs_review: number;
  review_reason: string | null;
  next_poll_at: Date | null;
  kind: string | null;
  gateway_transaction_id: string | null;
  payment_session_id: string | null;
}

interface EventRow {
  id: string;
  event_type: string;
  transaction_id: number;
  status: string;
}

describe('merchant: scale-out, two api, two worker and two scheduler processes on one MySQL and one Redis', function () {
  this.timeout(120_000);
  const { databases, track, cleanUp } = leftovers();
  const database = databaseName('scaleout', 'six');
  databases.push(database);
  let redis: Redis;
  let db: mysql.Connection;
  let wire: Wire;
  let hooks: Awaited<ReturnType<typeof tee>>;
  let sandbox: Proc;
  let sandboxUrl: string;
  const procs = new Map<Name, Proc>();
  const apiUrl: Record<(typeof APIS)[number], string> = { 'api-a': '', 'api-b': '' };
  /** Orders the gateway moved on while deliveries were cut. */
  const duringOutage: string[] = [];
  /** The orders whose poll was brought forward, and their gateway transaction. */
  let polled: { id: string; transaction: string }[] = [];
  /** The scheduler stopped in the middle of the poll round. */
  let stoppedFirst: (typeof SCHEDULERS)[number] | undefined;

  const gateway = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(sandboxUrl, method, path, body, { authorization: `Bearer ${SANDBOX_KEY}`, ...headers });

  const orders = async (): Promise<OrderRow[]> => {
    const [rows] = await db.query<mysql.RowDataPacket[]>(
      `SELECT o.id, o.status, o.amount_minor, o.captured_minor, o.refunded_minor, o.needs_review,
              o.review_reason, o.next_poll_at, a.kind, a.gateway_transaction_id, a.payment_session_id
         FROM orders o LEFT JOIN payment_attempts a ON a.id = o.current_attempt_id`,
    );
    return rows as OrderRow[];
  };

  /** Every event the gateway recorded, from its own history (newest first, pages of 100). */
  const gatewayEvents = async (): Promise<EventRow[]> => {
    const events: EventRow[] = [];
    for (let page = 1, last = 1; page <= last; page++) {
      const res = await gateway('GET', `/api/v1/webhook/events?per_page=100&page=${page}`);
      expect(res.status, res.text).to.equal(200);
      events.push(...(res.body.data.events as EventRow[]));
      last = res.body.data.pagination.last_page;
    }
    return events;
  };

  const inbox = async () => {
    const [rows] = await db.query<mysql.RowDataPacket[]>(
      'SELECT event_id, source, processed_at, outcome FROM webhook_inbox',
    );
    return rows as { event_id: string; source: string; processed_at: Date | null; outcome: string | null }[];
  };

  /** Every event the gateway recorded is in the inbox and processed. */
  const settled = async () => {
    const events = await gatewayEvents();
    const held = new Map((await inbox()).map((r) => [r.event_id, r]));
    return events.length > 0 && events.every((e) => held.get(e.id)?.processed_at) ? events : undefined;
  };

  const stderrs = () =>
    [...procs.entries()].map(([name, p]) => `${name}: ${p.stderr().slice(-500)}`).join('\n');

  before(async function () {
    this.timeout(3 * READY_DEADLINE_MS);
    const claimed = await claimRedisDatabase();
    redis = claimed.redis;
    const sandboxPort = await freePort();
    sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
    // The compose file's sandbox service: on its own, with the seed that lets it deliver to 127.0.0.1.
    sandbox = track(
      start('src/gateway/main.ts', [], {
        GATEWAY_PORT: String(sandboxPort),
        GATEWAY_SEED: 'config/gateway-seed.compose.json',
      }),
    );
    wire = await recordingProxy(sandboxUrl);
    const ports = { 'api-a': await freePort([sandboxPort]), 'api-b': 0 };
    ports['api-b'] = await freePort([sandboxPort, ports['api-a']]);
    for (const name of APIS) apiUrl[name] = `http://127.0.0.1:${ports[name]}`;
    // The gateway delivers to one address; both apis receive every delivery, at the same moment.
    hooks = await tee(apiUrl['api-a'], apiUrl['api-b']);
    await waitFor(
      'the sandbox answering',
      async () => {
        if (!sandbox.running()) throw new Error(`the sandbox exited: ${sandbox.stderr()}`);
        return fetch(`${sandboxUrl}/`, { signal: AbortSignal.timeout(1000) }).then(
          () => true,
          () => false,
        );
      },
      READY_DEADLINE_MS,
      { everyMs: 50, context: () => sandbox.stderr() },
    );

    const common = {
      DATABASE_URL: `${ADMIN_URL}/${database}`,
      REDIS_URL: `${REDIS_BASE}/${claimed.index}`,
      GATEWAY_API_KEY: SANDBOX_KEY,
      OPS_API_TOKEN: OPS_TOKEN,
      APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      GATEWAY_BACKGROUND_PER_MINUTE: String(BUDGET),
      JOB_SCHEDULES: SCHEDULES,
    };
    // The compose file's one-shot: migrates, registers the endpoint, stores its secret.
    const register = track(
      start('src/cli.ts', ['webhook', 'register', '--url', `${hooks.url}/webhooks/gateway`], {
        ...common,
        GATEWAY_BASE_URL: wire.baseFor('register'),
      }),
    );
    expect((await exitWithin(register, 30_000)).code, register.stderr()).to.equal(0);

    const roleOf = (name: Name) => name.split('-')[0]!;
    for (const name of [...APIS, ...WORKERS, ...SCHEDULERS]) {
      const api = (APIS as readonly string[]).includes(name);
      procs.set(
        name,
        track(
          start('src/main.ts', [], {
            ...common,
            ROLES: roleOf(name),
            GATEWAY_BASE_URL: wire.baseFor(name),
            ...(api ? { PORT: String(ports[name as (typeof APIS)[number]]) } : { LOG_LEVEL: 'debug' }),
          }),
        ),
      );
    }
    for (const name of APIS) await healthy(procs.get(name)!, apiUrl[name], READY_DEADLINE_MS);
    for (const name of [...WORKERS, ...SCHEDULERS]) {
      const p = procs.get(name)!;
      await waitFor(
        `${name} started`,
        () => {
          if (!p.running()) throw new Error(`${name} exited: ${p.stderr()}`);
          return logLines(p.stdout()).some((l) => l.msg === 'started');
        },
        READY_DEADLINE_MS,
        { everyMs: 100, context: () => p.stderr() },
      );
    }
    db = await mysql.createConnection({ uri: `${ADMIN_URL}/${database}`, timezone: 'Z' });
  });

  after(async () => {
    await db?.end().catch(() => undefined);
    await cleanUp();
    await wire?.close();
    await hooks?.close();
    if (redis) await releaseRedisDatabase(redis).catch(() => undefined);
  });

  /** A shopper's and an operator's steps on one api. */
  const on = (name: (typeof APIS)[number]) => {
    const url = apiUrl[name];
    const ops = { authorization: `Bearer ${OPS_TOKEN}` };
    return {
      async order(amount: string): Promise<string> {
        const res = await call(url, 'POST', '/orders', { amount, currency: 'EUR' });
        expect(res.status, `${name}: ${res.text}`).to.equal(201);
        return res.body.data.order.id as string;
      },
      async card(id: string, mode: 'sale' | 'auth'): Promise<number> {
        const res = await call(url, 'POST', `/orders/${id}/pay/card`, { card: card(), mode });
        expect(res.status, `${name}: ${res.text}`).to.equal(200);
        expect(res.body.data.order.status).to.equal(mode === 'sale' ? 'paid' : 'authorized');
        // The payment's answer is the public view; the operator's read names the transaction.
        const read = await call(url, 'GET', `/orders/${id}`, undefined, ops);
        expect(read.status, `${name}: ${read.text}`).to.equal(200);
        return Number(read.body.data.order.payment.gateway_transaction_id);
      },
      async redirect(id: string): Promise<string> {
        const res = await call(url, 'POST', `/orders/${id}/pay/redirect`, {
          payment_method: 'ideal',
          customer: { country_code: 'NL' },
        });
        expect(res.status, `${name}: ${res.text}`).to.equal(200);
        return res.body.data.next_action.url as string;
      },
      async operate(id: string, operation: 'capture' | 'refund' | 'void', body: unknown, want: string) {
        const key = { 'idempotency-key': `op-${randomBytes(8).toString('base64url')}` };
        const res = await call(url, 'POST', `/orders/${id}/${operation}`, body, { ...ops, ...key });
        expect(res.status, `${name}: ${res.text}`).to.equal(200);
        expect(res.body.data.order.status, res.text).to.equal(want);
      },
    };
  };

  /** What the gateway does behind the kit's back: its dashboard, its chargebacks. */
  const atGateway = async (transaction: number, operation: 'capture' | 'refund' | 'void', amount: number) => {
    const res = await gateway(
      'POST',
      `/api/v1/transactions/${transaction}/${operation}`,
      { amount, reason: 'done at the gateway' },
      { 'idempotency-key': `gw-${randomBytes(8).toString('base64url')}` },
    );
    expect(res.status, res.text).to.equal(200);
  };

  it('takes payments of every kind through both apis; each delivery reaches both, which store it once', async () => {
    // Each api runs the same story at once; captures, refunds and voids go through the other api.
    await Promise.all(
      APIS.map(async (name) => {
        const here = on(name);
        const there = on(name === 'api-a' ? 'api-b' : 'api-a');
        await here.card(await here.order('10.00'), 'sale');
        const captured = await here.order('11.00');
        await here.card(captured, 'auth');
        await there.operate(captured, 'capture', {}, 'paid');
        const refunded = await here.order('12.00');
        await here.card(refunded, 'sale');
        await there.operate(refunded, 'refund', { amount: '2.00', reason: 'damaged' }, 'partially_refunded');
        const voided = await here.order('13.00');
        await here.card(voided, 'auth');
        await here.operate(voided, 'void', {}, 'voided');
        await pressButton(await here.redirect(await here.order('14.00')), 'pay');
        await pressButton(await here.redirect(await here.order('15.00')), 'cancel');
      }),
    );
    const events = await waitFor('every event delivered, stored and processed', settled, 30_000, {
      everyMs: 200,
      context: stderrs,
    });
    expect(events.length).to.be.greaterThan(12);
    // Both apis answered each delivery 200: one stored it, the other found it stored.
    expect(hooks.deliveries.length).to.be.at.least(events.length);
    expect(hooks.deliveries.filter((d) => d.primary !== 200 || d.mirror !== 200)).to.deep.equal([]);
  });

  it('with deliveries cut, recovery on one scheduler or the other fetches every missed event once', async () => {
    const outage = await gateway('POST', '/sandbox/webhook/outage', { seconds: 60 });
    expect(outage.status, outage.text).to.equal(200);
    const before = new Set((await gatewayEvents()).map((e) => e.id));
    await Promise.all(
      APIS.map(async (name) => {
        const here = on(name);
        const order = async (amount: string) => {
          const id = await here.order(amount);
          duringOutage.push(id);
          return id;
        };
        await atGateway(await here.card(await order('20.00'), 'sale'), 'refund', 20);
        await atGateway(await here.card(await order('21.00'), 'auth'), 'capture', 21);
        await atGateway(await here.card(await order('22.00'), 'auth'), 'void', 22);
        await pressButton(await here.redirect(await order('23.00')), 'pay');
        const charged = await here.card(await order('24.00'), 'sale');
        expect((await gateway('POST', `/sandbox/transactions/${charged}/chargeback`)).status).to.equal(200);
        await here.card(await order('25.00'), 'auth'); // left open
      }),
    );
    const events = await waitFor('every missed event recovered and processed', settled, 30_000, {
      everyMs: 200,
      context: stderrs,
    });
    const missed = events.filter((e) => !before.has(e.id));
    expect(missed.length).to.be.greaterThan(10);
    expect(
      missed.filter((e) => e.status === 'delivered'),
      'delivered during the outage',
    ).to.deep.equal([]);
    const sources = new Map((await inbox()).map((r) => [r.event_id, r.source]));
    for (const e of missed) expect(sources.get(e.id), `${e.event_type} ${e.id}`).to.equal('recovery');
  });

  it('polls brought due one after another: each order asked about once; the scheduler that polled first stops mid-round, the other takes over', async () => {
    const due = (await orders()).filter((o) => o.next_poll_at !== null);
    expect(due.length).to.be.greaterThan(10);
    polled = due.map((o) => ({ id: o.id, transaction: o.gateway_transaction_id! }));
    expect(polled.every((p) => p.transaction)).to.equal(true);
    // Due 0.4 s apart, from a second from now: the poller ticks every second.
    const from = Date.now() + 1000;
    for (const [i, o] of due.entries())
      await db.query('UPDATE orders SET next_poll_at = ? WHERE id = ?', [new Date(from + i * 400), o.id]);
    const statusCalls = () =>
      wire.calls.filter((c) => c.method === 'GET' && /^\/api\/v1\/transactions\/\d+\/status$/.test(c.path));
    // A scheduler going away loses nothing: SIGTERM lets its tick in hand finish and frees the lock.
    const first = await waitFor('the first poll', () => statusCalls()[0], 10_000, { context: stderrs });
    stoppedFirst = first.who as (typeof SCHEDULERS)[number];
    const leaving = procs.get(stoppedFirst)!;
    leaving.child.kill('SIGTERM');
    expect((await exitWithin(leaving, 15_000)).code, leaving.stderr()).to.equal(0);
    await waitFor(
      'every order brought due polled',
      () => {
        const asked = new Set(statusCalls().map((c) => c.path.split('/')[4]));
        return polled.every((p) => asked.has(p.transaction));
      },
      30_000,
      { everyMs: 100, context: stderrs },
    );
    await new Promise((resolve) => setTimeout(resolve, 2000)); // a second poll, were there one, would show
    const byTransaction = countBy(statusCalls(), (c) => c.path.split('/')[4]!);
    for (const p of polled) expect(byTransaction.get(p.transaction), `order ${p.id}`).to.equal(1);
    expect([...byTransaction.keys()].sort()).to.deep.equal(polled.map((p) => p.transaction).sort());
    const pollers = countBy(statusCalls(), (c) => c.who);
    expect([...pollers.keys()].sort(), 'who polled').to.deep.equal([...SCHEDULERS]);
  });

  it("the gateway's retries, once deliveries work again, reach both apis as duplicates: nothing stored twice", async () => {
    const inboxBefore = (await inbox()).length;
    const deliveredBefore = hooks.deliveries.length;
    // Past the outage and the first retry (1 minute): the sandbox's own ticker delivers what is due.
    const moved = await gateway('POST', '/sandbox/clock/advance', { seconds: 90 });
    expect(moved.status, moved.text).to.equal(200);
    await waitFor(
      'every event delivered',
      async () => (await gatewayEvents()).every((e) => e.status === 'delivered'),
      30_000,
      { everyMs: 250, context: stderrs },
    );
    const retries = hooks.deliveries.slice(deliveredBefore);
    expect(retries.length).to.be.at.least(duringOutage.length);
    expect(retries.filter((d) => d.primary !== 200 || d.mirror !== 200)).to.deep.equal([]);
    expect((await inbox()).length).to.equal(inboxBefore);
    await waitFor('the inbox settled', settled, 10_000, { everyMs: 200 });
  });

  it('every order equals the gateway’s truth, and none needs review', async () => {
    const rows = await orders();
    expect(rows.length).to.equal(2 * 12);
    for (const o of rows) {
      let transaction = o.gateway_transaction_id;
      if (o.payment_session_id) {
        const session = await gateway('GET', `/api/v1/payment-sessions/${o.payment_session_id}`);
        expect(session.status, session.text).to.equal(200);
        transaction = String((session.body.data.payment_session ?? session.body.data).transaction_id);
      }
      const txn = await gateway('GET', `/api/v1/transactions/${transaction}/status`);
      let status: string;
      expect(txn.status, `${o.id}: ${txn.text}`).to.equal(200);
      const t = txn.body.data.transaction ?? txn.body.data;
      switch (t.status as string) {
        case 'auth':
          status = 'authorized';
          break;
        case 'captured':
          status = t.refunded_amount === 0 ? 'paid' : 'partially_refunded';
          break;
        case 'chargeback':
          status = 'disputed';
          break;
        default:
          status = t.status;
      }
      const money = ['paid', 'partially_refunded', 'refunded', 'disputed'].includes(status);
      expect(
        { status: o.status, captured: o.captured_minor, refunded: Number(o.refunded_minor) },
        `order ${o.id}`,
      ).to.deep.equal({
        status,
        // Every capture here takes the whole amount.
        captured: money ? Number(o.amount_minor) : o.captured_minor,
        refunded: money ? t.refunded_amount : Number(o.refunded_minor),
      });
      expect(o.needs_review, `${o.id}: ${o.review_reason}`).to.equal(0);
    }
  });

  it('SIGTERM stops the other five, each with exit 0', async () => {
    await Promise.all(
      [...procs.entries()]
        .filter(([name]) => name !== stoppedFirst)
        .map(async ([name, p]) => {
          p.child.kill('SIGTERM');
          expect((await exitWithin(p, 20_000)).code, `${name}: ${p.stderr()}`).to.equal(0);
        }),
    );
  });

  it('every event applied once: one inbox row each, one worker applied it, and both workers did some', async () => {
    const rows = await inbox();
    const events = await gatewayEvents();
    expect(rows.map((r) => r.event_id).sort()).to.deep.equal(events.map((e) => e.id).sort());
    const [history] = await db.query<mysql.RowDataPacket[]>(
      "SELECT source_id, COUNT(*) AS n FROM order_history WHERE outcome = 'applied' AND source_id LIKE 'evt\\_%' GROUP BY source_id HAVING n > 1",
    );
    expect(history, 'events applied twice').to.deep.equal([]);
    // The workers' own account: which process took which event off the queue.
    const done = WORKERS.flatMap((name) =>
      logLines(procs.get(name)!.stdout())
        .filter(
          (l) =>
            l.msg === 'reconciler job done' && !['already processed', 'missing'].includes(String(l.result)),
        )
        .map((l) => ({ name, event: String(l.job) })),
    );
    const byEvent = countBy(done, (d) => d.event);
    for (const r of rows) expect(byEvent.get(r.event_id), `event ${r.event_id}`).to.equal(1);
    expect(done.length).to.equal(rows.length);
    const split = countBy(done, (d) => d.name);
    for (const name of WORKERS) expect(split.get(name) ?? 0, `${name}'s events`).to.be.greaterThan(0);
    console.log(
      `      workers: ${WORKERS.map((n) => `${n} ${split.get(n) ?? 0}`).join(', ')} of ${rows.length} events`,
    );
    // Workers ask the gateway nothing.
    expect(wire.calls.filter((c) => (WORKERS as readonly string[]).includes(c.who))).to.deep.equal([]);
  });

  it('each cron job ran on one scheduler at a time, both took turns, and recovery fetched each event once', () => {
    const runs = SCHEDULERS.flatMap((name) =>
      logLines(procs.get(name)!.stdout())
        .filter((l) => l.msg === 'cron job ran')
        .map((l) => ({
          name,
          job: String(l.job),
          from: Number(l.time) - Number(l.ms),
          to: Number(l.time),
          result: l.result as Record<string, number>,
        })),
    );
    for (const job of ['poller', 'recovery', 'health', 'sweeper']) {
      const ofJob = runs.filter((r) => r.job === job).sort((a, b) => a.from - b.from);
      expect(ofJob.length, `${job} runs`).to.be.greaterThan(1);
      // The lock: no run of a job starts before the one before it ended (1 ms: the lines' rounding).
      for (let i = 1; i < ofJob.length; i++)
        expect(ofJob[i]!.from, `${job}: ${JSON.stringify([ofJob[i - 1], ofJob[i]])}`).to.be.at.least(
          ofJob[i - 1]!.to - 1,
        );
    }
    const split = countBy(runs, (r) => r.name);
    for (const name of SCHEDULERS) expect(split.get(name) ?? 0, `${name}'s runs`).to.be.greaterThan(0);
    // The poller's ticks between them asked about each order brought due once.
    const polls = runs.filter((r) => r.job === 'poller');
    expect(polls.reduce((n, r) => n + r.result.orders!, 0)).to.equal(polled.length);
    // Recovery: each missed event fetched by id once, whichever scheduler ran it.
    const fetches = wire.calls.filter((c) => /^\/api\/v1\/webhook\/events\/evt_\w+$/.test(c.path));
    const fetched = countBy(fetches, (c) => c.path);
    expect([...fetched.values()].filter((n) => n > 1)).to.deep.equal([]);
    expect(fetched.size).to.be.at.least(duringOutage.length);
    const ticks = countBy(
      polls.filter((r) => r.result.orders! > 0),
      (r) => r.name,
    );
    console.log(
      `      schedulers: ${SCHEDULERS.map((n) => `${n} ${split.get(n) ?? 0} runs (${ticks.get(n) ?? 0} poller ticks with orders)`).join(', ')}`,
    );
  });

  it('one budget for the key: its Redis window holds every call of both schedulers, both apis and the CLI, never more than the budget a minute', async () => {
    const background = wire.calls.filter((c) => (SCHEDULERS as readonly string[]).includes(c.who));
    const foreground = wire.calls.filter((c) => (APIS as readonly string[]).includes(c.who));
    // The compose file's one-shot (`webhook register`, through the CLI) spends from it as an operator.
    const oneShot = wire.calls.filter((c) => c.who === 'register');
    for (const name of SCHEDULERS)
      expect(background.filter((c) => c.who === name).length, `${name}'s calls`).to.be.greaterThan(0);
    expect(oneShot, "the one-shot's call").to.have.length.greaterThan(0);
    // The budget's sliding window: one sorted set in Redis, an entry per call admitted by any process,
    // scored with when. Every call the gateway saw from the kit in the last minute is in it, and
    // nothing else (calls older than the window may have been dropped from it: compared from there).
    const [log] = await redis.keys('*:budget:*:log');
    expect(log, 'the budget window in Redis').to.be.a('string');
    const scores = (await redis.zrange(log!, 0, -1, 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number);
    const kit = [...background, ...foreground, ...oneShot];
    const since = Math.max(...kit.map((c) => c.at)) - 55_000;
    expect(scores.filter((at) => at >= since).length, 'calls in the window').to.equal(
      kit.filter((c) => c.at >= since).length,
    );
    // Its account by caller and minute: the schedulers' calls are background, the apis' and the
    // CLI's foreground.
    const spent: Record<string, number> = {};
    for (const key of await redis.keys('*:budget:*:spend:*'))
      for (const [caller, n] of Object.entries(await redis.hgetall(key)))
        spent[caller] = (spent[caller] ?? 0) + Number(n);
    const sum = (callers: string[]) => callers.reduce((n, c) => n + (spent[c] ?? 0), 0);
    expect(sum(['poller', 'recovery', 'health']), JSON.stringify(spent)).to.equal(background.length);
    expect(sum(['checkout', 'landing', 'operator']), JSON.stringify(spent)).to.equal(
      foreground.length + oneShot.length,
    );
    const busiest = busiestMinute(background.map((c) => c.at));
    expect(busiest).to.be.at.most(BUDGET);
    console.log(
      `      budget ${BUDGET}/min: ${background.length} background calls (busiest 60 s: ${busiest}), ${foreground.length} foreground; ` +
        `Redis: ${JSON.stringify(spent)}`,
    );
  });
});
