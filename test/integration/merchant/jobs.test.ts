import { randomBytes } from 'node:crypto';
import { createServer, type Socket, connect as tcpConnect } from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { GatewayNetworkError } from '../../../src/client/errors.js';
import { createRedis, withLock } from '../../../src/infra/redis.js';
import { expireHolds } from '../../../src/merchant/checkout/card.js';
import { Scheduler } from '../../../src/merchant/jobs/scheduler.js';
import { requeueUnprocessed, sweepInbox } from '../../../src/merchant/jobs/sweeper.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { row } from '../../support/db.js';
import { card } from '../../support/gateway.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { delay, waitFor } from '../../support/process.js';

/**
 * merchant.md, Background work, against real MySQL and Redis:
 * - "The sweeper: inbox rows stored but not processed after a minute are queued again."
 * - "With several instances running, each cron job runs on one of them at a time (a lock in Redis)."
 * and Card data: the 3DS hold lives "at most 15 minutes", and a hold nobody came back for fails its order.
 *
 * One kit with the api role only (no worker takes jobs off the queue, no cron runs behind the tests'
 * backs) and a merchant clock that moves only when told.
 */

const MINUTE = 60_000;
const CHALLENGE = '4000000000003220';
const REDIS_URL = 'redis://127.0.0.1:6379';

/** A promise and the function that resolves it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

const silent = pino({ level: 'silent' });

/**
 * A TCP proxy in front of a local port that can be cut (every connection dropped, new ones refused:
 * the port closed) and restored on the same port: a Redis outage as its clients see it.
 */
async function cuttableProxy(targetPort: number) {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = tcpConnect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) =>
    new Promise<number>((resolve) =>
      server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
    );
  const port = await listen(0);
  const cut = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  return { port, cut, restore: () => listen(port), close: cut };
}

describe('merchant: background jobs (merchant.md, Background work)', function () {
  this.timeout(60_000);
  let t: TestKit;
  let clock: ManualClock;
  /** Redis keys of this file live under the kit's own prefix, deleted by t.close(). */
  let keySpace: string;

  before(async () => {
    clock = new ManualClock(Date.now());
    t = await startTestKit({ clock, env: { ROLES: 'api' } });
    keySpace = `test-${t.database}`;
  });
  after(async () => {
    await t?.close();
  });

  describe('the sweeper (sweepInbox)', () => {
    const tag = randomBytes(4).toString('hex');
    const id = (name: string) => `evt_sweep_${tag}_${name}`;

    const store = (name: string, receivedAt: number) =>
      t.kit.store.inbox.store({
        id: id(name),
        type: 'transaction.captured',
        transactionId: `9${tag.replace(/\D/g, '')}`,
        source: 'webhook',
        payload: JSON.stringify({ id: id(name), type: 'transaction.captured' }),
        now: new Date(receivedAt),
      });

    const sweep = (now: number) =>
      sweepInbox({ inbox: t.kit.store.inbox, enqueue: (eventId) => t.kit.enqueue(eventId), now });

    const jobsInQueue = async () => {
      const counts = await t.kit.queue.getJobCounts();
      return Object.values(counts).reduce((sum, n) => sum + n, 0);
    };

    it('queues exactly the rows stored, unprocessed and older than a minute, marks them queued, and a second sweep queues nothing twice', async () => {
      // A whole second, and whole-second ages: what this test checks does not hang on sub-second precision.
      const now = Math.floor(Date.now() / 1000) * 1000;
      expect(await jobsInQueue(), 'the queue starts empty').to.equal(0);

      // Stuck: stored and unprocessed for more than a minute.
      expect(await store('old_5min', now - 5 * MINUTE)).to.equal('stored');
      expect(await store('old_61s', now - 61_000)).to.equal('stored');
      // Stuck too: queued once long ago (the job was lost), still unprocessed: "queued again".
      await store('requeue', now - 10 * MINUTE);
      await t.kit.store.inbox.markQueued([id('requeue')], new Date(now - 9 * MINUTE));
      // Not stuck: too new.
      await store('new_59s', now - 59_000);
      await store('new_1s', now - 1000);
      // Not stuck: processed.
      await store('processed', now - 10 * MINUTE);
      await t.kit.store.inbox.markProcessed(id('processed'), 'applied', new Date(now - 9 * MINUTE));

      const stuck = ['old_5min', 'old_61s', 'requeue'];
      const left = ['new_59s', 'new_1s', 'processed'];

      const queued = await sweep(now);
      expect(queued, 'what the sweep reports').to.equal(stuck.length);

      const counts = await t.kit.queue.getJobCounts();
      expect(counts.waiting, JSON.stringify(counts)).to.equal(stuck.length);
      expect(await jobsInQueue(), JSON.stringify(counts)).to.equal(stuck.length);
      for (const name of stuck) {
        const job = await t.kit.queue.getJob(id(name));
        expect(job, `a job for ${name}`).to.not.equal(null);
        expect(job!.data, 'the job carries the event id only').to.deep.equal({ eventId: id(name) });
        const row = await t.kit.store.inbox.get(id(name));
        expect(row!.queued_at?.getTime(), `${name} marked queued at the sweep's time`).to.equal(now);
        expect(row!.processed_at, 'the sweep processes nothing').to.equal(null);
      }
      for (const name of left) {
        expect(await t.kit.queue.getJob(id(name)), `no job for ${name}`).to.equal(null);
      }
      expect((await t.kit.store.inbox.get(id('new_59s')))!.queued_at, 'new_59s untouched').to.equal(null);
      expect((await t.kit.store.inbox.get(id('new_1s')))!.queued_at, 'new_1s untouched').to.equal(null);
      expect((await t.kit.store.inbox.get(id('processed')))!.queued_at, 'processed untouched').to.equal(null);

      // Right after: the same rows are still unprocessed, and the queue still holds one job each.
      await sweep(now + 500);
      const again = await t.kit.queue.getJobCounts();
      expect(again, 'nothing queued twice').to.deep.equal(counts);
      for (const name of stuck) {
        const jobs = (await t.kit.queue.getJobs(['waiting', 'delayed', 'active'])).filter(
          (j) => 'eventId' in j.data && j.data.eventId === id(name),
        );
        expect(jobs, `one job for ${name}`).to.have.length(1);
        expect(String(jobs[0]!.id), 'the job id is the event id').to.equal(id(name));
      }

      // Two minutes on, the rows that were too new are stuck as well; the processed one never is.
      await sweep(now + 2 * MINUTE);
      expect((await t.kit.queue.getJobCounts()).waiting).to.equal(stuck.length + 2);
      expect(await t.kit.queue.getJob(id('new_59s'))).to.not.equal(null);
      expect(await t.kit.queue.getJob(id('new_1s'))).to.not.equal(null);
      expect(await t.kit.queue.getJob(id('processed'))).to.equal(null);
    });

    it('does not queue a row 59.7 s old: "after a minute" holds to the millisecond', async () => {
      // Half past a second: a row stored 59.7 s before is stored at .8 of its second.
      const now = Math.floor(Date.now() / 1000) * 1000 + 500;
      await store('under_a_minute', now - 59_700);
      await store('over_a_minute', now - 60_300);
      await sweep(now);
      expect(await t.kit.queue.getJob(id('over_a_minute')), 'the row 60.3 s old is queued').to.not.equal(
        null,
      );
      const row = await t.kit.store.inbox.get(id('under_a_minute'));
      expect(
        await t.kit.queue.getJob(id('under_a_minute')),
        `the row 59.7 s old is queued (received_at stored as ${row?.received_at.toISOString()}, ` +
          `received at ${new Date(now - 59_700).toISOString()})`,
      ).to.equal(null);
      expect(row!.queued_at).to.equal(null);
    });

    it('requeueUnprocessed (after Redis lost the queue): every row stored and unprocessed, whatever its age, page by page, each once', async () => {
      const now = Math.floor(Date.now() / 1000) * 1000;
      // Rows received in the same millisecond: a page may end between them.
      const unprocessed = {
        old: now - 10 * MINUTE,
        same_a: now - MINUTE,
        same_b: now - MINUTE,
        same_c: now - MINUTE,
      };
      for (const [name, at] of Object.entries(unprocessed)) await store(name, at);
      await store('just_now', now);
      await store('done', now - 5 * MINUTE);
      await t.kit.store.inbox.markProcessed(id('done'), 'applied', new Date(now - 4 * MINUTE));
      const all = [...Object.keys(unprocessed), 'just_now'];

      const queued = await requeueUnprocessed({
        inbox: t.kit.store.inbox,
        enqueue: (eventId) => t.kit.enqueue(eventId),
        now,
        pageSize: 2,
      });
      expect(queued).to.equal(all.length);
      const jobs = await t.kit.queue.getJobs(['waiting']);
      expect(jobs.map((j) => String(j.id)).sort(), 'a job each, its id the event id').to.deep.equal(
        all.map(id).sort(),
      );
      for (const name of all)
        expect((await t.kit.store.inbox.get(id(name)))!.queued_at?.getTime(), name).to.equal(now);
      expect(await t.kit.queue.getJob(id('done')), 'the processed row left alone').to.equal(null);
    });

    afterEach(async () => {
      await t?.kit.queue.empty();
      await t?.kit.sequelize.query('DELETE FROM webhook_inbox');
    });
  });

  describe('withLock (a lock in Redis)', () => {
    let n = 0;
    const lockKey = () => `${keySpace}:lock-test:${++n}`;

    it('two concurrent callers with the same key: exactly one runs, the other is turned away at once', async () => {
      const key = lockKey();
      let runs = 0;
      const held = gate();
      const fn = async () => {
        runs += 1;
        await held.opened;
        return 'ran';
      };
      const a = withLock(t.kit.redis, key, 10_000, fn);
      const b = withLock(t.kit.redis, key, 10_000, fn);
      // While the winner holds the lock, the loser has already answered null.
      const first = await Promise.race([a, b]);
      expect(first, 'the caller that did not get the lock').to.equal(null);
      expect(runs).to.equal(1);
      const ttl = await t.kit.redis.pttl(key);
      expect(ttl, 'the lock expires by itself (PX)').to.be.greaterThan(0).and.at.most(10_000);
      held.open();
      const results = await Promise.all([a, b]);
      expect(results.filter((r) => r === 'ran')).to.have.length(1);
      expect(results.filter((r) => r === null)).to.have.length(1);
      expect(runs).to.equal(1);
    });

    it('is released after the run, whether it returns or throws', async () => {
      const key = lockKey();
      expect(await withLock(t.kit.redis, key, 10_000, async () => 'first')).to.equal('first');
      expect(await t.kit.redis.exists(key), 'released after a return').to.equal(0);
      expect(await withLock(t.kit.redis, key, 10_000, async () => 'second')).to.equal('second');

      let caught: unknown;
      try {
        await withLock(t.kit.redis, key, 10_000, async () => {
          throw new Error('job failed');
        });
      } catch (error) {
        caught = error;
      }
      expect((caught as Error | undefined)?.message, 'the error reaches the caller').to.equal('job failed');
      expect(await t.kit.redis.exists(key), 'released after a throw').to.equal(0);
      expect(await withLock(t.kit.redis, key, 10_000, async () => 'third')).to.equal('third');
    });

    it('a holder keeps its lock past the TTL while it works (renewed every third of it)', async () => {
      const key = lockKey();
      const result = withLock(t.kit.redis, key, 300, async () => {
        await delay(1_000);
        return 'done';
      });
      await delay(700);
      expect(await t.kit.redis.exists(key), 'held past its 300 ms').to.equal(1);
      expect(await withLock(t.kit.redis, key, 300, async () => 'other')).to.equal(null);
      expect(await result).to.equal('done');
      expect(await t.kit.redis.exists(key), 'released at the end').to.equal(0);
    });

    it('a holder whose lock expired does not delete the lock another holder took since', async () => {
      const key = lockKey();
      const secondStarted = gate();
      const secondMayEnd = gate();
      let second: Promise<string | null> | undefined;

      const first = withLock(t.kit.redis, key, 150, async () => {
        // The lock is lost under its holder (a pause longer than the TTL, a Redis failover): expire it.
        await t.kit.redis.pexpire(key, 1);
        await waitFor('the first lock expires', async () => (await t.kit.redis.exists(key)) === 0, 5000, {
          everyMs: 20,
        });
        second = withLock(t.kit.redis, key, 10_000, async () => {
          secondStarted.open();
          await secondMayEnd.opened;
          return 'second';
        });
        await secondStarted.opened;
        return 'first';
      });

      expect(await first).to.equal('first');
      expect(second, 'the second holder got the lock').to.not.equal(undefined);
      expect(await t.kit.redis.exists(key), 'the second holder’s lock survives the first’s release').to.equal(
        1,
      );
      // And it still keeps a third caller out.
      expect(await withLock(t.kit.redis, key, 10_000, async () => 'third')).to.equal(null);

      secondMayEnd.open();
      expect(await second).to.equal('second');
      expect(await t.kit.redis.exists(key), 'released by its own holder').to.equal(0);
    });
  });

  describe('Scheduler (each cron job on one instance at a time)', () => {
    const connections: Redis[] = [];
    const schedulers: Scheduler[] = [];
    const connect = () => {
      const redis = createRedis(REDIS_URL);
      connections.push(redis);
      return redis;
    };
    afterEach(async () => {
      for (const s of schedulers.splice(0)) await s.stop();
      for (const r of connections.splice(0)) await r.quit();
    });
    /** A scheduler whose log lines are kept, parsed, in `told`. */
    const listened = (redis: Redis, prefix: string) => {
      const told: { level: number; msg: string; job?: string }[] = [];
      const sink = new Writable({
        write(chunk, _encoding, done) {
          told.push(JSON.parse(String(chunk)));
          done();
        },
      });
      const scheduler = new Scheduler(redis, pino(sink), prefix);
      schedulers.push(scheduler);
      return { scheduler, told };
    };
    /** A job every second that throws `failure` until `recover()`. */
    const failingUntilRecovered = (name: string, failure: () => Error) => {
      let runs = 0;
      let failing = true;
      const job = {
        name,
        schedule: '* * * * * *',
        lockMs: 10_000,
        run: async () => {
          runs += 1;
          if (failing) throw failure();
        },
      };
      const recover = () => {
        failing = false;
      };
      return { job, runs: () => runs, recover };
    };

    it('two instances on one Redis and lock prefix, a job every second: never two runs at once, each run on one instance', async () => {
      const prefix = `${keySpace}:sched-a`;
      const runs: { instance: string; start: number; end: number }[] = [];
      let active = 0;
      let maxActive = 0;
      const job = (instance: string) => ({
        name: 'every-second',
        schedule: '* * * * * *',
        lockMs: 10_000,
        run: async () => {
          active += 1;
          maxActive = Math.max(maxActive, active);
          const start = Date.now();
          // The job's own work: long enough that two instances' ticks of one second overlap it.
          await delay(600);
          active -= 1;
          runs.push({ instance, start, end: Date.now() });
        },
      });
      const one = new Scheduler(connect(), silent, prefix);
      const two = new Scheduler(connect(), silent, prefix);
      schedulers.push(one, two);
      one.start([job('one')]);
      two.start([job('two')]);

      await waitFor('three runs', () => runs.length >= 3, 10_000, { everyMs: 50 });
      await one.stop();
      await two.stop();
      schedulers.length = 0;

      expect(maxActive, JSON.stringify(runs)).to.equal(1);
      const sorted = [...runs].sort((x, y) => x.start - y.start);
      for (let i = 1; i < sorted.length; i++)
        expect(
          sorted[i]!.start,
          `run ${i} starts after run ${i - 1} ended: ${JSON.stringify(sorted)}`,
        ).to.be.at.least(sorted[i - 1]!.end);
      // One run per tick: no second of the clock saw the job start twice (on either instance).
      const ticks = sorted.map((r) => Math.floor(r.start / 1000));
      expect(new Set(ticks).size, JSON.stringify(sorted)).to.equal(ticks.length);
      expect(await t.kit.redis.exists(`${prefix}:lock:every-second`), 'no lock left behind').to.equal(0);
    });

    it('stop() waits for the run in hand to finish', async () => {
      const prefix = `${keySpace}:sched-b`;
      const started = gate();
      const mayFinish = gate();
      let runs = 0;
      let finished = false;
      const scheduler = new Scheduler(connect(), silent, prefix);
      schedulers.push(scheduler);
      scheduler.start([
        {
          name: 'slow',
          schedule: '* * * * * *',
          lockMs: 10_000,
          run: async () => {
            runs += 1;
            started.open();
            await mayFinish.opened;
            finished = true;
          },
        },
      ]);
      await Promise.race([
        started.opened,
        delay(5000).then(() => {
          throw new Error('the job did not start within 5 s');
        }),
      ]);

      let stopped = false;
      const stopping = scheduler.stop().then(() => {
        stopped = true;
      });
      // Bounded: for half a second stop() must still be waiting on the run.
      const deadline = Date.now() + 500;
      while (Date.now() < deadline) {
        expect(stopped, 'stop() returned while a run was in hand').to.equal(false);
        await delay(25);
      }
      expect(await t.kit.redis.exists(`${prefix}:lock:slow`), 'the run still holds its lock').to.equal(1);

      mayFinish.open();
      await Promise.race([
        stopping,
        delay(5000).then(() => {
          throw new Error('stop() did not return within 5 s of the run finishing');
        }),
      ]);
      expect(finished, 'the run finished before stop() returned').to.equal(true);
      expect(stopped).to.equal(true);
      expect(runs).to.equal(1);
      expect(await t.kit.redis.exists(`${prefix}:lock:slow`), 'the lock was released').to.equal(0);
      schedulers.length = 0;
    });

    it('the database down: a line when the runs start failing and one when it answers again, never one a run', async () => {
      const { scheduler, told } = listened(connect(), `${keySpace}:sched-d`);
      // What the store throws while MySQL is down (mysql2's code, through Sequelize).
      const failing = failingUntilRecovered('every-second', () =>
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { parent: { code: 'ECONNREFUSED' } }),
      );
      scheduler.start([
        failing.job,
        // A job that reads no table (the health check asks the gateway): its runs say nothing of the database.
        { name: 'no-table', schedule: '* * * * * *', lockMs: 10_000, run: async () => 'fine' },
      ]);
      await waitFor('four runs that failed', () => failing.runs() >= 4, 10_000, { everyMs: 50 });
      failing.recover();
      await waitFor('a run that went through', () => failing.runs() >= 6, 10_000, { everyMs: 50 });
      expect(told.map((l) => [l.level, l.msg, l.job])).to.deep.equal([
        [40, 'cron jobs failed: the database is unavailable', 'every-second'],
        [30, 'cron jobs: the database answers again', undefined],
      ]);
    });

    it('the gateway down: the health and recovery jobs say so once, not an error a run', async () => {
      const { scheduler, told } = listened(connect(), `${keySpace}:sched-e`);
      const failing = failingUntilRecovered(
        'health',
        () =>
          new GatewayNetworkError(
            'connection',
            'GET /api/v1/webhook: connection failed (ECONNREFUSED)',
            true,
          ),
      );
      scheduler.start([failing.job]);
      await waitFor('three runs that failed', () => failing.runs() >= 3, 10_000, { everyMs: 50 });
      failing.recover();
      await waitFor('a run that went through', () => failing.runs() >= 5, 10_000, { everyMs: 50 });
      expect(told.map((l) => [l.level, l.msg, l.job])).to.deep.equal([
        [40, 'cron jobs failed: the gateway does not answer', 'health'],
        [30, 'cron jobs: the gateway answers again', undefined],
      ]);
    });

    it('Redis down: a line when the ticks start failing and one when they run again, never one a tick', async () => {
      const prefix = `${keySpace}:sched-c`;
      const proxy = await cuttableProxy(6379);
      const redis = createRedis(
        `redis://127.0.0.1:${proxy.port}`,
        'client',
        {},
        { retryStrategy: () => 100 },
      );
      connections.push(redis);
      const { scheduler, told } = listened(redis, prefix);
      let runs = 0;
      let failNext = false;
      scheduler.start([
        {
          name: 'every-second',
          schedule: '* * * * * *',
          lockMs: 10_000,
          run: async () => {
            runs += 1;
            if (failNext) {
              failNext = false;
              throw new Error('the job itself failed');
            }
          },
        },
      ]);
      await waitFor('a first run', () => runs >= 1, 5000, { everyMs: 50 });

      await proxy.cut();
      const runsBefore = runs;
      await delay(4500); // four ticks or more, each refused its lock
      expect(runs, 'no run without the lock').to.be.at.most(runsBefore + 1);
      const down = told.filter((l) => l.msg.startsWith('cron jobs'));
      expect(down.map((l) => [l.level, l.msg, l.job])).to.deep.equal([
        [40, 'cron jobs not run: their locks are in redis, which is unavailable', 'every-second'],
      ]);
      expect(
        told.filter((l) => l.msg === 'cron job failed'),
        'a lock not taken is not a job that failed',
      ).to.deep.equal([]);

      await proxy.restore();
      await waitFor('runs again', () => runs >= runsBefore + 2, 10_000, { everyMs: 50 });
      expect(told.filter((l) => l.msg.startsWith('cron jobs')).map((l) => [l.level, l.msg])).to.deep.equal([
        [40, 'cron jobs not run: their locks are in redis, which is unavailable'],
        [30, 'cron jobs run again'],
      ]);

      // The job's own failure is still an error, each time.
      failNext = true;
      await waitFor('the failure logged', () => told.some((l) => l.msg === 'cron job failed'), 5000, {
        everyMs: 50,
      });
      await proxy.close();
    });
  });

  describe('expireHolds (the 3DS hold outlives its 15 minutes)', () => {
    const openChallenge = async () => {
      const created = await t.call('POST', '/orders', { body: { amount: '19.99', currency: 'EUR' } });
      expect(created.status, created.text).to.equal(201);
      const order = created.body.data.order as { id: string; reference: string };
      const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(CHALLENGE), mode: 'sale' },
      });
      expect(pay.status, pay.text).to.equal(200);
      expect(pay.body.data.order.status).to.equal('requires_action');
      expect(pay.body.data.next_action.type).to.equal('redirect');
      return order;
    };
    const attemptOf = async (orderId: string) => {
      const order = await getOrder(t, orderId);
      const attempt = await row(t, 'payment_attempts', { id: order.payment.attempt_id });
      expect(attempt, 'the order has an attempt').to.not.equal(null);
      return attempt!;
    };
    const charged = (reference: string) =>
      [...t.kit.sandbox!.deps.state.transactions.values()].filter((x) => x.reference === reference);

    it('fails the order whose hold expired (ERR_3DS_TIMEOUT, hold erased) and leaves a live hold alone', async () => {
      const stale = await openChallenge();
      clock.advance(2 * MINUTE);
      const live = await openChallenge();
      const liveBefore = await attemptOf(live.id);
      expect(liveBefore.hold_sealed).to.be.a('string');
      // The first hold is 16 minutes old, the second 14.
      clock.advance(14 * MINUTE);

      const expired = await expireHolds(t.kit.checkout);
      expect(expired, 'one hold expired').to.equal(1);

      const failed = await getOrder(t, stale.id);
      expect(failed).to.include({ status: 'failed', failure_code: 'ERR_3DS_TIMEOUT' });
      const staleAttempt = await attemptOf(stale.id);
      expect(staleAttempt.hold_sealed, 'the sealed hold is erased').to.equal(null);
      expect(staleAttempt.hold_expires_at).to.equal(null);
      expect(charged(stale.reference), 'nothing was charged').to.have.length(0);

      const untouched = await getOrder(t, live.id);
      expect(untouched.status).to.equal('requires_action');
      expect(untouched.failure_code ?? null).to.equal(null);
      const liveAfter = await attemptOf(live.id);
      expect(liveAfter.hold_sealed, 'the live hold is kept as it was').to.equal(liveBefore.hold_sealed);
      expect(liveAfter.hold_expires_at?.getTime()).to.equal(liveBefore.hold_expires_at?.getTime());

      // Run again at once: nothing more to expire, nothing moves.
      expect(await expireHolds(t.kit.checkout)).to.equal(0);
      expect((await getOrder(t, stale.id)).status).to.equal('failed');
      expect((await getOrder(t, live.id)).status).to.equal('requires_action');

      // Two more minutes: the second hold is 16 minutes old too.
      clock.advance(2 * MINUTE);
      expect(await expireHolds(t.kit.checkout)).to.equal(1);
      expect(await getOrder(t, live.id)).to.include({ status: 'failed', failure_code: 'ERR_3DS_TIMEOUT' });
      expect((await attemptOf(live.id)).hold_sealed).to.equal(null);
    });
  });
});
