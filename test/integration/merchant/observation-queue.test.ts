import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import {
  closeQueue,
  createObservationQueue,
  enqueueEvents,
  eventIdsOf,
  requeueAlone,
} from '../../../src/merchant/reconciler/queue.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The reconciler's queue on the real Redis, under a prefix of this test's own. */
describe('reconciler queue: what a job carries (real Redis)', () => {
  const prefix = `test-queue-${randomBytes(4).toString('hex')}`;
  const queue = createObservationQueue(REDIS_URL, prefix, { attempts: 8, delayMs: 1500 });

  afterEach(async () => {
    await queue.obliterate({ force: true });
  });

  after(async () => {
    await closeQueue(queue);
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  const jobs = () => queue.getJobs(['waiting', 'delayed', 'active']);

  it('one event alone is a job of its own, its id the event id: queued twice, it is one job', async () => {
    expect(await enqueueEvents(queue, ['evt_1'])).to.deep.equal([undefined]);
    await enqueueEvents(queue, ['evt_1']);
    const held = await jobs();
    expect(held.map((j) => [String(j.id), j.data])).to.deep.equal([['evt_1', { eventId: 'evt_1' }]]);
  });

  it('several stored together are one job carrying them all, in order, each answered', async () => {
    expect(await enqueueEvents(queue, ['evt_1', 'evt_2', 'evt_3'])).to.deep.equal([
      undefined,
      undefined,
      undefined,
    ]);
    const held = await jobs();
    expect(held).to.have.length(1);
    expect(held[0]!.data).to.deep.equal({ eventIds: ['evt_1', 'evt_2', 'evt_3'] });
    expect(eventIdsOf(held[0]!.data)).to.deep.equal(['evt_1', 'evt_2', 'evt_3']);
    expect(await enqueueEvents(queue, [])).to.deep.equal([]);
    expect(await jobs()).to.have.length(1);
  });

  it("events of a batch retried alone: a job each, id = event id, after the queue's first backoff, one attempt fewer", async () => {
    const before = Date.now();
    await requeueAlone(queue, ['evt_a', 'evt_b']);
    await requeueAlone(queue, ['evt_a']);
    const delayed = await queue.getDelayed();
    expect(delayed.map((j) => [String(j.id), j.data]).sort()).to.deep.equal([
      ['evt_a', { eventId: 'evt_a' }],
      ['evt_b', { eventId: 'evt_b' }],
    ]);
    for (const job of delayed) {
      expect(job.opts.delay).to.equal(1500);
      expect(job.opts.attempts, "an event alone's attempts, less the batch's run").to.equal(7);
      expect(job.timestamp + (job.opts.delay ?? 0)).to.be.at.least(before + 1500);
    }
  });
});
