import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { expect } from 'chai';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import {
  type BudgetOptions,
  type Caller,
  DEFAULT_BUDGET,
  decide,
  EMPTY_BUDGET,
  MemoryBudget,
  priorityOf,
} from '../../../src/client/budget.js';
import { GatewayClient } from '../../../src/client/gateway-client.js';
import { RedisBudget } from '../../../src/infra/gateway-budget.js';
import { createRedis } from '../../../src/infra/redis.js';
import { type Admission, manualNow, worstWindow } from '../../support/budget.js';

/**
 * The budget shared through Redis (gateway-api.md, Limits; merchant.md, Background work), against a
 * real Redis. Two RedisBudget instances on separate connections stand for two processes; time is a
 * manual clock that the tests move by the waits the budget hands out.
 */

const REDIS_URL = 'redis://127.0.0.1:6379';
const API_KEY = 'sk_test_merchant_1001';

describe('RedisBudget: one budget of the key for every process (real Redis)', () => {
  const connections: Redis[] = [];
  let cleaner: Redis;
  let prefix: string;

  const connect = () => {
    const redis = createRedis(REDIS_URL);
    connections.push(redis);
    return redis;
  };

  async function keysOf(): Promise<string[]> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await cleaner.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    return keys;
  }

  before(() => {
    cleaner = createRedis(REDIS_URL);
  });

  after(async () => {
    await cleaner.quit();
  });

  beforeEach(() => {
    prefix = `test:budget:${process.pid}:${randomBytes(4).toString('hex')}`;
  });

  afterEach(async () => {
    const keys = await keysOf();
    if (keys.length > 0) await cleaner.del(...keys);
    // disconnect, not quit: one of them never reached a Redis.
    for (const connection of connections.splice(0)) connection.disconnect();
  });

  function pair(clock: { now: () => number }, options?: BudgetOptions) {
    const a = new RedisBudget({ redis: connect(), prefix, apiKey: API_KEY, now: clock.now, options });
    const b = new RedisBudget({ redis: connect(), prefix, apiKey: API_KEY, now: clock.now, options });
    return [a, b] as const;
  }

  it('runs the same policy as the in-memory budget: the same waits for the same events, merchants behind a partner key included', async () => {
    const eventArb = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record({
          kind: fc.constant('reserve' as const),
          caller: fc.constantFrom<Caller>('checkout', 'poller', 'recovery', 'health'),
          // Configured merchants, one that is not, and nobody.
          merchant: fc.constantFrom<string | undefined>(undefined, '1001', '1002', '1003', '7'),
          // Now and then exactly a window or an interval: the boundaries where two versions would differ.
          gap: fc.oneof(
            fc.integer({ min: 0, max: 400 }),
            fc.integer({ min: 0, max: 70_000 }),
            fc.constantFrom(1, 60_000, 59_999, 2000, 10_000),
          ),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant('observe' as const),
          remaining: fc.option(fc.integer({ min: 0, max: 1000 })),
          retryAfter: fc.option(fc.integer({ min: 0, max: 90 }), { freq: 3 }),
          gap: fc.integer({ min: 0, max: 5000 }),
        }),
      },
    );
    // Small counts, so that every limit is reached within a run; as config.ts allows them:
    // backgroundReserved <= backgroundPerMinute < keyPerMinute.
    const options = fc
      .record({
        backgroundPerMinute: fc.integer({ min: 1, max: 30 }),
        reserve: fc.integer({ min: 0, max: 1000 }),
        above: fc.integer({ min: 1, max: 30 }),
        reserved: fc.integer({ min: 0, max: 30 }),
        // None, one (no shares), two or three merchants behind the key.
        merchants: fc.constantFrom<readonly string[]>(
          [],
          ['1001'],
          ['1001', '1002'],
          ['1001', '1002', '1003'],
        ),
      })
      .map(
        ({ backgroundPerMinute, reserve, above, reserved, merchants }): BudgetOptions => ({
          backgroundPerMinute,
          reserve,
          keyPerMinute: backgroundPerMinute + above,
          backgroundReserved: Math.min(reserved, backgroundPerMinute),
          merchants,
        }),
      );
    const redis = connect();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(eventArb, { maxLength: 120 }), options, async (events, budgetOptions) => {
        const clock = manualNow();
        const memory = new MemoryBudget(clock.now, budgetOptions);
        // A key of its own per run: no state carried over from the last one.
        const shared = new RedisBudget({
          redis,
          prefix,
          apiKey: `${API_KEY}-${run++}`,
          now: clock.now,
          options: budgetOptions,
        });
        for (const [i, event] of events.entries()) {
          clock.advance(event.gap);
          if (event.kind === 'observe') {
            await memory.observe(event.remaining, event.retryAfter);
            await shared.observe(event.remaining, event.retryAfter);
            continue;
          }
          const expected = await memory.reserve(event.caller, event.merchant);
          expect(await shared.reserve(event.caller, event.merchant), `event ${i}`).to.equal(expected);
        }
        expect(await shared.lastRemaining()).to.equal(await memory.lastRemaining());
        expect(await shared.spending(3)).to.deep.equal(await memory.spending(3));
      }),
      { numRuns: 80 },
    );
  });

  it('runs the same merchant shares as the in-memory budget under bursts, where they hold calls back', async () => {
    // Bursts of one caller for one merchant (or nobody), close together and with no Retry-After, so
    // that the windows fill up and the merchants' parts decide many of the waits: counted, so that
    // this test cannot pass without them.
    const burstArb = fc.record({
      caller: fc.constantFrom<Caller>('checkout', 'operator', 'poller', 'recovery'),
      merchant: fc.constantFrom<string | undefined>(undefined, '1001', '1002', '1003', '7'),
      calls: fc.integer({ min: 1, max: 40 }),
      /** Between the burst's calls. */
      every: fc.integer({ min: 0, max: 300 }),
      /** Before the burst. */
      gap: fc.oneof(
        { weight: 6, arbitrary: fc.integer({ min: 0, max: 3_000 }) },
        { weight: 1, arbitrary: fc.constantFrom(1, 59_999, 60_000, 20_000) },
      ),
    });
    const optionsArb = fc
      .record({
        backgroundPerMinute: fc.integer({ min: 6, max: 60 }),
        reserve: fc.integer({ min: 0, max: 1000 }),
        above: fc.integer({ min: 4, max: 40 }),
        reservedPart: fc.double({ min: 0.2, max: 1, noNaN: true }),
        merchants: fc.constantFrom<readonly string[]>(['1001', '1002'], ['1001', '1002', '1003']),
      })
      .map(
        ({ backgroundPerMinute, reserve, above, reservedPart, merchants }): BudgetOptions => ({
          backgroundPerMinute,
          reserve,
          keyPerMinute: backgroundPerMinute + above,
          backgroundReserved: Math.floor(backgroundPerMinute * reservedPart),
          merchants,
        }),
      );
    const redis = connect();
    let run = 0;
    let heldByShares = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(burstArb, { minLength: 3, maxLength: 12 }), optionsArb, async (bursts, o) => {
        const clock = manualNow();
        let state = EMPTY_BUDGET;
        const shared = new RedisBudget({
          redis,
          prefix,
          apiKey: `${API_KEY}-bursts-${run++}`,
          now: clock.now,
          options: o,
        });
        for (const [b, burst] of bursts.entries()) {
          clock.advance(burst.gap);
          for (let i = 0; i < burst.calls; i++) {
            if (i > 0) clock.advance(burst.every);
            const priority = priorityOf(burst.caller);
            const step = decide(state, priority, clock.now(), o, burst.merchant);
            const alone = decide(state, priority, clock.now(), { ...o, merchants: [] });
            if (step.wait > alone.wait) heldByShares++;
            state = step.state;
            const wait = await shared.reserve(burst.caller, burst.merchant);
            expect(wait, `burst ${b}, call ${i}`).to.equal(step.wait);
          }
        }
      }),
      { numRuns: 60 },
    );
    expect(heldByShares, 'calls the merchants’ parts held back').to.be.greaterThan(500);
  });

  it('two processes flooding it with background calls share one count: no minute admits more than 400, both progress', async () => {
    const clock = manualNow();
    const [a, b] = pair(clock);
    // Three pollers in each process and a checkout call every 700 ms, over four minutes. A poller's
    // call takes 20 to 80 ms before it asks again; who asks first at one instant takes turns.
    const workers = [a, b, a, b, a, b].map((budget) => ({ budget, at: clock.now() }));
    const jitter = seeded(7);
    let turn = 0;
    const start = clock.now();
    const end = start + 4 * 60_000;
    const admissions: Admission[] = [];
    const admittedBy = [0, 0];
    let nextCheckout = start;
    let asks = 0;
    for (;;) {
      turn = (turn + 1) % workers.length;
      const order = [...workers.slice(turn), ...workers.slice(0, turn)];
      const worker = order.reduce((x, y) => (y.at < x.at ? y : x));
      const at = Math.min(worker.at, nextCheckout);
      if (at >= end) break;
      clock.set(at);
      if (nextCheckout <= worker.at) {
        const through = admissions.length % 2 === 0 ? a : b;
        expect(await through.reserve('checkout'), 'checkout never waits').to.equal(0);
        admissions.push({ at, priority: 'foreground' });
        nextCheckout += 700;
        continue;
      }
      asks++;
      const wait = await worker.budget.reserve('poller');
      if (wait === 0) {
        admissions.push({ at, priority: 'background' });
        admittedBy[worker.budget === a ? 0 : 1]! += 1;
        worker.at = at + 20 + Math.floor(jitter() * 60);
      } else {
        expect(wait).to.be.greaterThan(0);
        worker.at = at + wait;
      }
    }
    expect(worstWindow(admissions), 'calls up to the last background one, in any minute').to.equal(400);
    const background = admittedBy[0]! + admittedBy[1]!;
    // 400 a minute, less the checkout calls (about 86 a minute) that took their room.
    expect(background).to.be.within(4 * (400 - 86) - 66, 4 * 400);
    expect(admittedBy[0], `a: ${admittedBy}`).to.be.greaterThan(background / 4);
    expect(admittedBy[1], `b: ${admittedBy}`).to.be.greaterThan(background / 4);
    // Waits are exact: each slot is asked for about once by each of the six pollers waiting for it
    // (and checkout calls take some of those slots), not by a loop of short sleeps.
    expect(asks).to.be.below(background * 8);
  });

  it('a Retry-After seen by one process blocks every caller of the other; a shorter one never shortens it', async () => {
    const clock = manualNow();
    const [a, b] = pair(clock);
    await a.observe(null, 30);
    expect(await b.reserve('checkout')).to.equal(30_000);
    expect(await b.reserve('poller')).to.equal(30_000);
    await b.observe(null, 5);
    expect(await a.reserve('checkout')).to.equal(30_000);
    clock.advance(30_000);
    expect(await b.reserve('checkout')).to.equal(0);
    expect(await a.reserve('poller')).to.equal(0);
  });

  it("the gateway's count seen by one process holds back the other's background calls (beyond their reserved share)", async () => {
    const clock = manualNow();
    const [a, b] = pair(clock, { ...DEFAULT_BUDGET, backgroundReserved: 0 });
    await a.observe(450, null);
    expect(await b.lastRemaining()).to.equal(450);
    expect(await b.reserve('recovery')).to.equal(60_000);
    expect(await b.reserve('landing')).to.equal(0);
    clock.advance(59_999);
    expect(await a.reserve('recovery')).to.equal(1);
    clock.advance(1);
    expect(await a.lastRemaining(), 'a minute later it says nothing').to.equal(null);
    expect(await a.reserve('recovery')).to.equal(0);
    await a.observe(420, null);
    expect(await b.reserve('recovery')).to.equal(60_000);
    clock.advance(10_000);
    await b.observe(980, null); // the gateway's window turned over
    expect(await a.reserve('recovery')).to.equal(0);
  });

  it('spending: admitted calls per caller and minute from every process; the API key itself is never in Redis', async () => {
    const clock = manualNow(Date.UTC(2026, 10, 1, 12, 0, 30));
    const [a, b] = pair(clock);
    await a.reserve('checkout');
    await b.reserve('checkout');
    await b.reserve('poller');
    clock.advance(60_000);
    await a.reserve('cli');
    await a.reserve('recovery');
    await b.observe(null, 10);
    expect(await a.reserve('health'), 'blocked: not counted').to.equal(10_000);
    const rows = await b.spending(3);
    expect(rows).to.deep.equal([
      { minute: '2026-11-01T11:59:00.000Z', byCaller: {}, total: 0, waited: {} },
      { minute: '2026-11-01T12:00:00.000Z', byCaller: { checkout: 2, poller: 1 }, total: 3, waited: {} },
      {
        minute: '2026-11-01T12:01:00.000Z',
        byCaller: { cli: 1, recovery: 1 },
        total: 2,
        waited: { health: 1 },
      },
    ]);
    expect(await a.spending(3)).to.deep.equal(rows);

    const keys = await keysOf();
    expect(keys.length).to.be.greaterThan(0);
    for (const key of keys) {
      expect(key).to.match(new RegExp(`^${prefix}:budget:[0-9a-f]{16}:`));
      expect(key).to.not.include(API_KEY);
      expect((await cleaner.dumpBuffer(key))?.toString('latin1'), key).to.not.include(API_KEY);
      // Nothing grows without bound: every key expires.
      expect(await cleaner.pttl(key), key).to.be.greaterThan(0);
    }
  });

  it('the log keeps only the last minute', async () => {
    const clock = manualNow();
    const [a] = pair(clock);
    for (let i = 0; i < 50; i++) {
      await a.reserve('checkout');
      clock.advance(5_000);
    }
    expect(await cleaner.zcard(a.key('log'))).to.equal(12);
  });

  it('Redis unreachable: foreground goes at once; background falls back to the process’s own budget', async () => {
    const closed = await closedPort();
    const clock = manualNow();
    const redis = createRedis(`redis://127.0.0.1:${closed}`);
    connections.push(redis);
    const budget = new RedisBudget({ redis, prefix, apiKey: API_KEY, now: clock.now });
    const started = performance.now();
    expect(await budget.reserve('checkout')).to.equal(0);
    expect(performance.now() - started, 'no longer than the Redis deadline').to.be.below(400);
    // The same pacing as on its own: 66 at once, then one per 150 ms.
    for (let i = 0; i < 66; i++) expect(await budget.reserve('poller')).to.equal(0);
    expect(await budget.reserve('poller')).to.equal(150);
    await budget.observe(null, 20);
    expect(await budget.reserve('poller'), 'a Retry-After still holds background back').to.equal(20_000);
    expect(await budget.reserve('checkout'), 'foreground goes whatever').to.equal(0);
    expect(performance.now() - started, 'Redis was asked once, then left alone').to.be.below(600);
  });

  it('a client with the Redis budget: background calls of two processes are paced by the one budget', async () => {
    const clock = manualNow();
    const sent: number[] = [];
    const fetch: typeof globalThis.fetch = async () => {
      sent.push(clock.now());
      return new Response(JSON.stringify({ success: true, message: 'OK', code: '', data: transaction() }), {
        status: 200,
        headers: { 'Content-Type': 'application/json', 'X-RateLimit-Remaining': '900' },
      });
    };
    const sleeps: number[] = [];
    const deps = {
      fetch,
      now: clock.now,
      random: () => 0.5,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        clock.advance(ms);
      },
    };
    const [a, b] = pair(clock);
    const one = new GatewayClient({ baseUrl: 'https://gateway.test', apiKey: API_KEY, budget: a, deps });
    const two = new GatewayClient({ baseUrl: 'https://gateway.test', apiKey: API_KEY, budget: b, deps });
    const start = clock.now();
    for (let i = 0; i < 100; i++) await (i % 2 === 0 ? one : two).transactionStatus(String(i), 'poller');
    // 66 at once between them, then one every 150 ms, whichever process asks.
    expect(sent.slice(0, 66).every((at) => at === start)).to.equal(true);
    expect(sent[66]).to.equal(start + 150);
    expect(sleeps).to.deep.equal(Array(34).fill(150));
    expect(clock.now() - start).to.equal(34 * 150);
    // A checkout call meanwhile does not wait.
    await two.transactionStatus('x', 'checkout');
    expect(sleeps).to.have.length(34);
    const rows = await a.spending(1);
    expect(rows[0]!.byCaller).to.deep.equal({ poller: 100, checkout: 1 });
  });
});

/** A deterministic source in [0, 1) (mulberry32). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A port nothing listens on: bound, then closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function transaction() {
  return {
    id: 100123,
    related_trans_id: null,
    merchant_id: 1001,
    amount: 1234,
    currency: 'EUR',
    status: 'captured',
    transaction_type: 'sale',
    merchant_trans_id: 'order-1',
    refunded_amount: 0,
    created_at: '2026-11-01T12:00:00.000000Z',
    updated_at: '2026-11-01T12:00:00.000000Z',
  };
}
