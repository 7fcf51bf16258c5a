import { expect } from 'chai';
import { type Look, QueueLossWatch, verdict } from '../../../src/merchant/jobs/queue-loss.js';

/**
 * Issue 44, part 4: the queue-loss watch over a Redis of its own (one key, in memory), for one
 * process or several: who queues the inbox again after a loss, and when.
 */

/** The marker's Redis: one key, set if absent in one step; `down` makes it fail; `cut` loses the answer. */
class MarkerRedis {
  marker: string | null = null;
  down = false;
  /** The next write goes through and its answer is lost (the connection broke). */
  cut = false;

  async claim(token: string): Promise<string | null> {
    if (this.down) throw new Error('Connection is closed.');
    const held = this.marker;
    if (held === null) this.marker = token;
    if (this.cut) {
      this.cut = false;
      throw new Error('Connection is closed.');
    }
    return held;
  }
}

function kitProcess(redis: MarkerRedis, name: string) {
  const lines: { level: string; message: string; fields: object }[] = [];
  const requeues = { count: 0, failWith: null as Error | null };
  const line = (level: string) => (fields: object, message: string) => lines.push({ level, message, fields });
  const watch = new QueueLossWatch({
    claim: (token) => redis.claim(token),
    token: name,
    requeue: async () => {
      if (requeues.failWith) throw requeues.failWith;
      requeues.count += 1;
      return 7;
    },
    now: () => 0,
    logger: { debug: line('debug'), info: line('info'), warn: line('warn') },
  });
  return { watch, lines, requeues };
}

describe('merchant: the queue-loss watch (issue 44, part 4)', () => {
  it('verdict: the marker known and found, and whether the one found is this process own', () => {
    const cases: [string | null, string | null, boolean, Look][] = [
      [null, null, false, 'first'],
      [null, 'b/1', false, 'held'],
      ['a/1', null, false, 'lost'],
      ['a/1', 'a/1', true, 'held'],
      ['b/1', 'b/1', false, 'held'],
      ['b/1', 'c/4', false, 'lost-elsewhere'],
      // Its own write whose answer was lost: the loss is its own to answer.
      ['b/1', 'a/2', true, 'lost'],
      [null, 'a/1', true, 'first'],
    ];
    for (const [known, found, ours, want] of cases)
      expect(verdict(known, found, ours), `${known} then ${found}`).to.equal(want);
  });

  it('one process: its first look marks Redis and queues the inbox; looks after it find the marker and do nothing', async () => {
    const redis = new MarkerRedis();
    const p = kitProcess(redis, 'a');
    expect(await p.watch.look()).to.equal('first');
    expect(redis.marker).to.equal('a/1');
    expect(p.requeues.count, 'what Redis did not hold when the kit started').to.equal(1);
    expect(await p.watch.look()).to.equal('held');
    expect(await p.watch.look()).to.equal('held');
    expect(p.requeues.count).to.equal(1);
  });

  it('the marker gone (FLUSHALL, a restart without data): found at the next look, marked again, the inbox queued again, with a warning', async () => {
    const redis = new MarkerRedis();
    const p = kitProcess(redis, 'a');
    await p.watch.look();
    redis.marker = null;
    expect(await p.watch.look()).to.equal('lost');
    expect(redis.marker).to.equal('a/2');
    expect(p.requeues.count).to.equal(2);
    const warning = p.lines.find((l) => l.level === 'warn');
    expect(warning?.message).to.match(/^redis lost what it held/);
    expect(warning?.fields).to.deep.include({ queued: 7 });
    expect(await p.watch.look()).to.equal('held');
    expect(p.requeues.count).to.equal(2);
  });

  it('Redis not answering (a broken connection): no verdict, nothing queued; back with its data, nothing either', async () => {
    const redis = new MarkerRedis();
    const p = kitProcess(redis, 'a');
    await p.watch.look();
    redis.down = true;
    expect(await p.watch.look()).to.equal('unanswered');
    redis.down = false;
    expect(await p.watch.look()).to.equal('held');
    expect(p.requeues.count).to.equal(1);
  });

  it('several processes: exactly one answers a loss, the others find its new marker and leave it to it', async () => {
    const redis = new MarkerRedis();
    const ps = ['a', 'b', 'c'].map((name) => kitProcess(redis, name));
    for (const p of ps) await p.watch.look();
    expect(
      ps.map((p) => p.requeues.count),
      'the first to look marks Redis',
    ).to.deep.equal([1, 0, 0]);
    redis.marker = null;
    const looks = [];
    for (const p of [ps[1]!, ps[2]!, ps[0]!]) looks.push(await p.watch.look());
    expect(looks).to.deep.equal(['lost', 'lost-elsewhere', 'lost-elsewhere']);
    expect(ps.map((p) => p.requeues.count)).to.deep.equal([1, 1, 0]);
    expect(ps[0]!.lines.map((l) => l.message)).to.include(
      'redis lost what it held: another process of the kit queues the inbox again',
    );
  });

  it('a requeue that fails (the database down) is tried again at every look until it is done', async () => {
    const redis = new MarkerRedis();
    const p = kitProcess(redis, 'a');
    await p.watch.look();
    redis.marker = null;
    p.requeues.failWith = new Error('connect ECONNREFUSED');
    expect(await p.watch.look()).to.equal('lost');
    expect(await p.watch.look(), 'its own marker now').to.equal('held');
    expect(p.requeues.count).to.equal(1);
    expect(p.lines.filter((l) => l.level === 'warn').map((l) => l.message)).to.have.length(2);
    p.requeues.failWith = null;
    await p.watch.look();
    expect(p.requeues.count, 'done at last').to.equal(2);
    await p.watch.look();
    expect(p.requeues.count, 'and once only').to.equal(2);
  });

  it('its marker written but the answer lost: the next look knows the marker for its own and answers the loss', async () => {
    const redis = new MarkerRedis();
    const [a, b] = [kitProcess(redis, 'a'), kitProcess(redis, 'b')];
    await a.watch.look();
    await b.watch.look();
    redis.marker = null;
    redis.cut = true;
    expect(await a.watch.look()).to.equal('unanswered');
    expect(redis.marker).to.equal('a/2');
    expect(await a.watch.look()).to.equal('lost');
    expect(await b.watch.look()).to.equal('lost-elsewhere');
    expect([a.requeues.count, b.requeues.count]).to.deep.equal([2, 0]);
  });

  it('looks asked for while one runs: one more runs after it, not one each', async () => {
    const redis = new MarkerRedis();
    let claims = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const watch = new QueueLossWatch({
      claim: async (token) => {
        claims += 1;
        if (claims === 1) await held;
        return redis.claim(token);
      },
      token: 'a',
      requeue: async () => 0,
      now: () => 0,
      logger: { debug: () => {}, info: () => {}, warn: () => {} },
    });
    const first = watch.look();
    const more = [watch.look(), watch.look(), watch.look()];
    release();
    expect(await first).to.equal('first');
    expect(await Promise.all(more)).to.deep.equal(['held', 'held', 'held']);
    await watch.idle();
    expect(claims).to.equal(2);
  });
});
