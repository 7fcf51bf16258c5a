import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { type BudgetOptions, type Caller, DEFAULT_BUDGET, WINDOW_MS } from '../../../src/client/budget.js';
import { RedisBudget } from '../../../src/infra/gateway-budget.js';
import { createRedis } from '../../../src/infra/redis.js';
import { manualNow } from '../../support/budget.js';

/**
 * The burst measurement of the budget's shares (docs/orders.md, One budget for the API key): two kit
 * processes on one Redis budget, a checkout burst far past what the key allows beside background
 * work that always has more to do, on a manual clock. Admissions are counted per caller in every 60 s
 * window, so the figures are exact and the same on every run. The same load under the policy without
 * shares (checkout never held, background only while the key is quiet) is measured beside it.
 */

const REDIS_URL = 'redis://127.0.0.1:6379';
/** The old policy, as options: no ceiling for checkout traffic, nothing kept for background. */
const NO_SHARES: BudgetOptions = { ...DEFAULT_BUDGET, keyPerMinute: 1_000_000, backgroundReserved: 0 };

interface Load {
  /** Checkout asks every this many ms, from `checkoutFrom` on (two api processes, taking turns). */
  checkoutEveryMs: number;
  checkoutFrom: number;
  /** Pollers (three per process) start at `backgroundFrom` and always have more to ask about. */
  backgroundFrom: number;
  minutes: number;
}

interface Window {
  checkout: number;
  background: number;
  total: number;
  /** Checkout calls the budget held back (a shopper would be answered 503 GATEWAY_BUSY). */
  checkoutHeld: number;
}

describe('the gateway budget under a checkout burst (shares measured; real Redis)', function () {
  // Thousands of budget decisions through Redis's script: seconds, not the default 20.
  this.timeout(120_000);
  const connections: Redis[] = [];
  let prefix: string;

  beforeEach(() => {
    prefix = `test:burst:${process.pid}:${randomBytes(4).toString('hex')}`;
  });
  afterEach(async () => {
    const cleaner = createRedis(REDIS_URL);
    const keys = await cleaner.keys(`${prefix}:*`);
    if (keys.length > 0) await cleaner.del(...keys);
    await cleaner.quit();
    for (const c of connections.splice(0)) c.disconnect();
  });

  /** Runs `load` against two processes' RedisBudgets; the admissions of each minute. */
  async function measure(options: BudgetOptions, load: Load): Promise<Window[]> {
    const clock = manualNow();
    const budgets = [0, 1].map(() => {
      const redis = createRedis(REDIS_URL);
      connections.push(redis);
      return new RedisBudget({
        redis,
        prefix: `${prefix}:${options.keyPerMinute}`,
        apiKey: 'k',
        now: clock.now,
        options,
      });
    });
    const start = clock.now();
    const end = start + load.minutes * WINDOW_MS;
    const pollers = [0, 1, 0, 1, 0, 1].map((p) => ({ budget: budgets[p]!, at: start + load.backgroundFrom }));
    const admitted: { at: number; caller: Caller }[] = [];
    const held: number[] = [];
    let nextCheckout = start + load.checkoutFrom;
    let turn = 0;
    for (;;) {
      const poller = pollers.reduce((x, y) => (y.at < x.at ? y : x));
      const at = Math.min(poller.at, nextCheckout);
      if (at >= end) break;
      clock.set(at);
      if (nextCheckout <= poller.at) {
        // A shopper's call: held past 5 s it is not made (the client gives up, nothing sent).
        const wait = await budgets[turn++ % 2]!.reserve('checkout');
        if (wait === 0) admitted.push({ at, caller: 'checkout' });
        else held.push(at);
        nextCheckout += load.checkoutEveryMs;
        continue;
      }
      const wait = await poller.budget.reserve('poller');
      if (wait === 0) {
        admitted.push({ at, caller: 'poller' });
        poller.at = at + 30; // the call's own time
      } else poller.at = at + wait;
    }
    const windows: Window[] = [];
    for (let from = start; from + WINDOW_MS <= end; from += WINDOW_MS) {
      const inside = admitted.filter((a) => a.at >= from && a.at < from + WINDOW_MS);
      const checkout = inside.filter((a) => a.caller === 'checkout').length;
      windows.push({
        checkout,
        background: inside.length - checkout,
        total: inside.length,
        checkoutHeld: held.filter((at) => at >= from && at < from + WINDOW_MS).length,
      });
    }
    // Every sliding window, not only the minutes: the ceiling holds in all of them.
    for (let lo = 0, hi = 0; hi < admitted.length; hi++) {
      while (admitted[lo]!.at <= admitted[hi]!.at - WINDOW_MS) lo++;
      expect(hi - lo + 1).to.be.at.most(options.keyPerMinute);
    }
    return windows;
  }

  const table = (rows: [string, Window[]][]) => {
    console.log('      policy               | minute | checkout | background | total | checkout held');
    for (const [name, windows] of rows)
      for (const [i, w] of windows.entries())
        console.log(
          `      ${name.padEnd(20)} | ${String(i + 1).padStart(6)} | ${String(w.checkout).padStart(8)} | ${String(w.background).padStart(10)} | ${String(w.total).padStart(5)} | ${String(w.checkoutHeld).padStart(13)}`,
        );
  };

  it('a checkout burst of 3,000 calls a minute cannot starve background work: it keeps its 100, checkout takes 800', async () => {
    const load: Load = { checkoutEveryMs: 20, checkoutFrom: 0, backgroundFrom: 0, minutes: 3 };
    const shares = await measure(DEFAULT_BUDGET, load);
    const before = await measure(NO_SHARES, load);
    table([
      ['with shares', shares],
      ['without (before)', before],
    ]);
    // The first minute starts both at once (background's first burst goes before checkout's share
    // is spent); from then on each has exactly its share.
    for (const w of shares) {
      expect(w.background, 'background keeps at least its reserved share').to.be.at.least(100);
      expect(w.total).to.be.at.most(900);
    }
    for (const w of shares.slice(1)) {
      expect(w.background).to.equal(100);
      expect(w.checkout, "checkout takes its share, never the key's 1000").to.equal(800);
    }
    for (const w of before.slice(1)) {
      expect(w.background, 'without shares the burst starved background work').to.equal(0);
      expect(
        w.checkout,
        'and spent the key past the gateway’s 1000 (it would have answered 429)',
      ).to.be.above(1000);
    }
  });

  it('background work flooding the key cannot starve checkout: checkout arriving later still has its 500 a minute', async () => {
    // Background has the key to itself for half a minute, then checkout asks hard.
    const load: Load = { checkoutEveryMs: 50, checkoutFrom: 30_000, backgroundFrom: 0, minutes: 3 };
    const shares = await measure(DEFAULT_BUDGET, load);
    table([['with shares', shares]]);
    // Checkout came to a key background had had to itself for half a minute: not one call held.
    expect(shares[0]!.checkoutHeld).to.equal(0);
    for (const w of shares) {
      expect(w.checkout, 'checkout gets at least keyPerMinute - backgroundPerMinute').to.be.at.least(500);
      expect(w.background, 'background never above its 400, at least its 100').to.be.within(100, 400);
      expect(w.total).to.be.at.most(900);
    }
  });

  it('a moderate checkout (100 calls a minute) is never held, and background fills the rest up to 400', async () => {
    const load: Load = { checkoutEveryMs: 600, checkoutFrom: 0, backgroundFrom: 0, minutes: 3 };
    const shares = await measure(DEFAULT_BUDGET, load);
    table([['with shares', shares]]);
    for (const w of shares) {
      expect(w.checkoutHeld).to.equal(0);
      expect(w.checkout).to.equal(100);
    }
    // Background fills what checkout leaves of its 400 (in the first minute its opening burst went
    // before some of checkout's calls, which may then go past the 400: checkout is never held for it).
    for (const w of shares.slice(1)) expect(w.total).to.equal(400);
  });
});
