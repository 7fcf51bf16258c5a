import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Kit } from '../../../src/kit.js';
import { ManualClock } from '../../../src/shared/clock.js';
import {
  deliveriesOff,
  event,
  inboxRow,
  paidOrder,
  poster,
  refundAtGateway,
  storedSecret,
  wire,
} from '../../support/events.js';
import { getOrder, startSiblingKit, startTestKit, type TestKit } from '../../support/kit.js';
import { alive, startRedis, stopRedis } from '../../support/private-redis.js';
import { delay, freePort, waitFor } from '../../support/process.js';

/**
 * Issue 44, part 4: Redis losing what it held (FLUSHALL, a restart without persistence) takes the
 * queued jobs with it; the kit finds that out by its marker (kit/queue-loss.ts) and queues the
 * inbox's unprocessed events again at once, so that every event is applied within 15 s of the
 * fault, not at the sweep a minute later. Here nothing else could queue them: the sweeper is not
 * scheduled (the test kit's default) and the kit's clock stands still, so no row is ever a minute
 * old. The kit runs as processes' worth of roles on a private Redis: the api (which receives and
 * queues), and a worker started only once the loss was answered, so that no event is applied
 * before the fault.
 */

const WITHIN_MS = 15_000;
const LOST = 'redis lost what it held (emptied, or restarted without its data)';
const LOST_ELSEWHERE = 'redis lost what it held: another process of the kit queues the inbox again';

describe('merchant: Redis losing what it held (issue 44, part 4): the inbox queued again at once', () => {
  let redis: ChildProcess | null = null;
  let port = 0;
  let t: TestKit | undefined;
  let admin: Redis;
  let post: ReturnType<typeof poster>;
  let secret: string;
  const siblings: Kit[] = [];
  const killOnExit = () => redis?.kill('SIGKILL');

  before(async () => {
    process.once('exit', killOnExit);
    port = await freePort();
    redis = await startRedis(port);
    admin = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    admin.on('error', () => {}); // down on purpose, in the restart
    const clock = new ManualClock(Date.now());
    t = await startTestKit({ env: { REDIS_URL: `redis://127.0.0.1:${port}`, ROLES: 'api' }, clock });
    await deliveriesOff(t);
    post = poster(t, clock);
    secret = await storedSecret(t);
  });
  afterEach(async () => {
    for (const kit of siblings.splice(0)) await kit.close();
  });
  after(async () => {
    try {
      if (t) {
        if (!alive(redis)) redis = await startRedis(port);
        await t.close();
      }
    } finally {
      admin?.disconnect();
      await stopRedis(redis);
      redis = null;
      process.removeListener('exit', killOnExit);
    }
  });

  const linesOf = (logs: string[], message: string) =>
    logs.filter((line) => line.includes(`"msg":"${message}`)).map((line) => JSON.parse(line));

  /** Paid orders refunded in part at the gateway: their events, received and queued, none applied. */
  async function queuedEvents(count: number) {
    const cases: { orderId: string; eventId: string; refunded: number }[] = [];
    for (let i = 0; i < count; i++) {
      const order = await paidOrder(t!);
      const refund = await refundAtGateway(t!, order.sale.id, 1 + i);
      const e = event('transaction.refunded', wire(refund));
      const answer = await post(e.body, { secret });
      expect(answer.status, answer.text).to.equal(200);
      cases.push({ orderId: order.id, eventId: e.id, refunded: refund.refundedAmount });
    }
    const counts = await t!.kit.queue.getJobCounts();
    expect(counts.waiting, 'queued, and no worker yet to take them').to.be.greaterThan(0);
    for (const c of cases) expect((await inboxRow(t!, c.eventId))!.processed_at).to.equal(null);
    return cases;
  }

  /** Starts a worker and waits until every case is applied; the milliseconds from `since` until then. */
  async function appliedSince(cases: Awaited<ReturnType<typeof queuedEvents>>, since: number) {
    siblings.push(await startSiblingKit(t!, 'worker'));
    await waitFor(
      'every event applied',
      async () => {
        for (const c of cases) if (!(await inboxRow(t!, c.eventId))!.processed_at) return false;
        return true;
      },
      WITHIN_MS,
      { everyMs: 50 },
    );
    const ms = Date.now() - since;
    for (const c of cases) {
      expect((await inboxRow(t!, c.eventId))!.outcome).to.equal('applied');
      const order = await getOrder(t!, c.orderId);
      expect(order.status).to.equal('partially_refunded');
      expect(order.refunded_amount).to.equal(c.refunded);
    }
    return ms;
  }

  /** Waits for the api's `n`th line saying it answered a loss; its `queued`. */
  const answered = async (n: number) =>
    (await waitFor(`the api's loss line number ${n}`, () => linesOf(t!.logs, LOST)[n - 1], WITHIN_MS)).queued;

  it('FLUSHALL: the api finds the marker gone, queues the inbox again, and every event is applied within 15 s', async () => {
    const cases = await queuedEvents(3);
    const before = linesOf(t!.logs, LOST).length;
    expect(await admin.flushall()).to.equal('OK');
    const flushedAt = Date.now();
    expect(await answered(before + 1), 'queued again by the watch').to.be.at.least(cases.length);
    const ms = await appliedSince(cases, flushedAt);
    expect(ms).to.be.lessThan(WITHIN_MS);
    expect(await admin.exists(`${t!.redisPrefix}:marker`), 'marked again').to.equal(1);
  });

  it('a restart without persistence: found at the reconnection, every event applied within 15 s of Redis answering', async () => {
    const cases = await queuedEvents(3);
    const before = linesOf(t!.logs, LOST).length;
    await stopRedis(redis);
    redis = null;
    await waitFor('the kit to notice Redis is gone', () => t!.kit.redis.status !== 'ready');
    redis = await startRedis(port);
    const backAt = Date.now();
    expect(await answered(before + 1), 'queued again by the watch').to.be.at.least(cases.length);
    const ms = await appliedSince(cases, backAt);
    expect(ms).to.be.lessThan(WITHIN_MS);
  });

  it('a broken connection to a Redis that kept its data: no loss found, the jobs still there', async () => {
    const cases = await queuedEvents(2);
    const before = linesOf(t!.logs, LOST).length;
    const waiting = (await t!.kit.queue.getJobCounts()).waiting;
    let readies = 0;
    const ready = () => {
      readies += 1;
    };
    t!.kit.redis.on('ready', ready);
    try {
      // Every client connection but this one cut: the kit's clients connect again, to the same data.
      expect(await admin.client('KILL', 'TYPE', 'normal')).to.be.greaterThan(0);
      await waitFor('the kit connected again', () => readies > 0 && t!.kit.redis.status === 'ready');
      await delay(2500); // the look at the reconnection, and two more of the timer's
    } finally {
      t!.kit.redis.off('ready', ready);
    }
    expect(linesOf(t!.logs, LOST), 'no loss found').to.have.length(before);
    expect((await t!.kit.queue.getJobCounts()).waiting, 'the jobs kept').to.equal(waiting);
    await appliedSince(cases, Date.now());
  });

  it('several processes: exactly one answers a loss, the others find its marker and leave it to it', async () => {
    const logs: string[][] = [[], []];
    siblings.push(
      await startSiblingKit(t!, 'worker', logs[0]),
      await startSiblingKit(t!, 'scheduler', logs[1]),
    );
    const all = () => [t!.logs, ...logs];
    const count = (message: string) => all().map((l) => linesOf(l, message).length);
    const lostBefore = count(LOST);
    const elsewhereBefore = count(LOST_ELSEWHERE);
    await delay(1200); // every process has looked once, and knows the marker
    expect(await admin.flushall()).to.equal('OK');
    const news = (message: string, before: number[]) => count(message).map((n, i) => n - before[i]!);
    await waitFor(
      'every process has seen the loss',
      () => news(LOST, lostBefore).every((n, i) => n + news(LOST_ELSEWHERE, elsewhereBefore)[i]! === 1),
      WITHIN_MS,
      { everyMs: 50 },
    );
    await delay(1500); // and nothing more comes of it
    const lost = news(LOST, lostBefore);
    expect(
      lost.reduce((a, b) => a + b, 0),
      'one process answered the loss',
    ).to.equal(1);
    expect(news(LOST_ELSEWHERE, elsewhereBefore).reduce((a, b) => a + b, 0)).to.equal(2);
  });
});
