import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import {
  type BudgetOptions,
  type Caller,
  DEFAULT_BUDGET,
  MemoryBudget,
  WINDOW_MS,
} from '../../../src/client/budget.js';
import { GatewayBudgetExceeded } from '../../../src/client/errors.js';
import { GatewayClient } from '../../../src/client/gateway-client.js';
import { RedisBudget } from '../../../src/infra/gateway-budget.js';
import { createRedis } from '../../../src/infra/redis.js';
import { manualNow } from '../../support/budget.js';

/**
 * The burst measurement of the merchants' parts of a partner key's budget (gateway-api.md,
 * Authentication: every merchant behind one partner key shares its limit): two kit processes on one
 * Redis budget, merchant A's pollers always busy and A's checkout asking far past what the key allows,
 * while merchant B's shoppers come at an ordinary pace, on a manual clock. Admissions are counted per
 * merchant and caller in every minute, so the figures are exact and the same on every run; the same
 * load with no merchant parts (one merchant configured: the calls' merchants change nothing) is
 * measured beside it. Every wait Redis hands out is also checked against the in-memory budget fed the
 * same calls: the Lua script and `decide` agree step by step.
 */

const REDIS_URL = 'redis://127.0.0.1:6379';
const A = '1001';
const B = '1002';
const SHARES: BudgetOptions = { ...DEFAULT_BUDGET, merchants: [A, B] };
/** The budget before merchant parts: with one merchant configured, none is kept for anyone. */
const NO_PARTS: BudgetOptions = { ...DEFAULT_BUDGET, merchants: [A] };

interface Load {
  /** A's checkout asks this often from the start (two api processes, taking turns). */
  aCheckoutEveryMs: number;
  /** B's shoppers and B's one poller (always busy) start then. */
  bFrom: number;
  bCheckoutEveryMs: number;
  minutes: number;
}

interface Window {
  aCheckout: number;
  aBackground: number;
  bCheckout: number;
  /** B's checkout calls the budget held back (a shopper would wait, then be answered 503). */
  bHeld: number;
  bBackground: number;
  total: number;
}

interface Actor {
  budget: RedisBudget;
  merchant: string;
  caller: Caller;
  /** Next ask. */
  at: number;
  /** 0: a poller, always busy (asks again 30 ms after an admitted call, or when its wait is over). */
  every: number;
}

describe('the budget of a partner key under one merchant’s burst (merchant parts measured; real Redis)', function () {
  this.timeout(120_000);
  const connections: Redis[] = [];
  let prefix: string;

  beforeEach(() => {
    prefix = `test:merchant-burst:${process.pid}:${randomBytes(4).toString('hex')}`;
  });
  afterEach(async () => {
    const cleaner = createRedis(REDIS_URL);
    const keys = await cleaner.keys(`${prefix}:*`);
    if (keys.length > 0) await cleaner.del(...keys);
    await cleaner.quit();
    for (const c of connections.splice(0)) c.disconnect();
  });

  function budgets(clock: { now: () => number }, options: BudgetOptions, count: number): RedisBudget[] {
    return Array.from({ length: count }, () => {
      const redis = createRedis(REDIS_URL);
      connections.push(redis);
      return new RedisBudget({
        redis,
        prefix,
        apiKey: `k-${options.merchants?.length}`,
        now: clock.now,
        options,
      });
    });
  }

  async function measure(options: BudgetOptions, load: Load): Promise<Window[]> {
    const clock = manualNow();
    const [one, two] = budgets(clock, options, 2) as [RedisBudget, RedisBudget];
    const memory = new MemoryBudget(clock.now, options);
    const start = clock.now();
    const end = start + load.minutes * WINDOW_MS;
    const actors: Actor[] = [
      ...[one, two, one, two, one, two].map((budget) => ({
        budget,
        merchant: A,
        caller: 'poller' as const,
        at: start,
        every: 0,
      })),
      { budget: one, merchant: A, caller: 'checkout', at: start, every: load.aCheckoutEveryMs },
      { budget: two, merchant: B, caller: 'checkout', at: start + load.bFrom, every: load.bCheckoutEveryMs },
      { budget: one, merchant: B, caller: 'recovery', at: start + load.bFrom, every: 0 },
    ];
    const admitted: { at: number; merchant: string; caller: Caller }[] = [];
    const bHeld: number[] = [];
    let turn = 0;
    for (;;) {
      const actor = actors.reduce((x, y) => (y.at < x.at ? y : x));
      if (actor.at >= end) break;
      const at = actor.at;
      clock.set(at);
      // The api processes take turns with checkout calls; pollers keep to their process.
      const budget = actor.every > 0 ? [one, two][turn++ % 2]! : actor.budget;
      const wait = await budget.reserve(actor.caller, actor.merchant);
      expect(wait, 'the same wait as the in-memory budget').to.equal(
        await memory.reserve(actor.caller, actor.merchant),
      );
      if (wait === 0) admitted.push({ at, merchant: actor.merchant, caller: actor.caller });
      if (actor.every > 0) {
        // A shopper's call that is held is not made here (measured as held).
        if (wait > 0 && actor.merchant === B) bHeld.push(at);
        actor.at += actor.every;
      } else actor.at = wait === 0 ? at + 30 : at + wait;
    }
    // Every sliding window, not only the minutes: the key's ceiling holds in all of them.
    for (let lo = 0, hi = 0; hi < admitted.length; hi++) {
      while (admitted[lo]!.at <= admitted[hi]!.at - WINDOW_MS) lo++;
      expect(hi - lo + 1).to.be.at.most(options.keyPerMinute);
    }
    const windows: Window[] = [];
    for (let from = start; from + WINDOW_MS <= end; from += WINDOW_MS) {
      const inside = admitted.filter((a) => a.at >= from && a.at < from + WINDOW_MS);
      const count = (merchant: string, checkout: boolean) =>
        inside.filter((a) => a.merchant === merchant && (a.caller === 'checkout') === checkout).length;
      windows.push({
        aCheckout: count(A, true),
        aBackground: count(A, false),
        bCheckout: count(B, true),
        bHeld: bHeld.filter((at) => at >= from && at < from + WINDOW_MS).length,
        bBackground: count(B, false),
        total: inside.length,
      });
    }
    return windows;
  }

  const table = (rows: [string, Window[]][]) => {
    console.log(
      '      policy              | minute | A checkout | A background | B checkout | B held | B background | total',
    );
    for (const [name, windows] of rows)
      for (const [i, w] of windows.entries())
        console.log(
          `      ${name.padEnd(19)} | ${String(i + 1).padStart(6)} | ${String(w.aCheckout).padStart(10)} | ${String(w.aBackground).padStart(12)} | ${String(w.bCheckout).padStart(10)} | ${String(w.bHeld).padStart(6)} | ${String(w.bBackground).padStart(12)} | ${String(w.total).padStart(5)}`,
        );
  };

  it('merchant A’s polls and a checkout burst of 3,000 a minute exhaust the key; merchant B’s checkout still goes with zero wait', async () => {
    // A has the key to itself for 30 s, then B's shoppers come (120 a minute, within B's 125) and
    // B's poller, always busy.
    const load: Load = { aCheckoutEveryMs: 20, bFrom: 30_000, bCheckoutEveryMs: 500, minutes: 3 };
    const parts = await measure(SHARES, load);
    const before = await measure(NO_PARTS, load);
    table([
      ['with merchant parts', parts],
      ['without (before)', before],
    ]);
    for (const w of parts) {
      expect(w.bHeld, 'B’s shoppers never wait').to.equal(0);
      expect(w.total).to.be.at.most(900);
    }
    expect(parts[0]!.bCheckout).to.equal(60);
    for (const w of parts.slice(1)) {
      expect(w.bCheckout).to.equal(120);
      expect(w.bBackground, 'B’s poller keeps at least its 25').to.be.at.least(25);
      // A still has the rest: the key is kept busy, not held back for B's sake beyond B's parts.
      expect(w.aCheckout + w.aBackground + w.bCheckout + w.bBackground).to.equal(w.total);
      expect(w.aCheckout, 'A takes what B leaves of checkout’s room').to.be.at.least(500);
    }
    // A's burst alone, before B came, already spent everything but B's parts.
    expect(parts[0]!.aCheckout + parts[0]!.aBackground).to.be.at.most(900 - 125 - 25);
    for (const w of before.slice(1)) {
      expect(w.bHeld, 'without the parts A’s burst held B’s shoppers back').to.be.above(60);
      expect(w.total).to.be.at.most(900);
    }
  });

  it('through the client: a client made for merchant B sends B’s checkout at once after A’s client spent the key; one for nobody is held', async () => {
    const clock = manualNow();
    const [budget] = budgets(clock, SHARES, 1) as [RedisBudget];
    const sent: string[] = [];
    const fetch: typeof globalThis.fetch = async (url) => {
      sent.push(String(url));
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
    const client = (merchantId?: number) =>
      new GatewayClient({
        baseUrl: 'https://gateway.test',
        apiKey: 'pk_partner',
        budget,
        deps,
        ...(merchantId === undefined ? {} : { merchantId, budgetTenant: String(merchantId) }),
      });
    const a = client(1001);
    const b = client(1002);
    // A's poller, sleeping what it is told: 375 go at their pacing (the key quiet below 400, less
    // B's unused background part); the next would be held until the first leaves the window.
    const polls = 375;
    for (let i = 0; i < polls; i++) await a.transactionStatus(`p${i}`, 'poller');
    expect(Math.max(...sleeps), 'only the pacing').to.equal(150);
    expect(await budget.reserve('poller', A), 'A’s background is held').to.be.above(150);
    // A's checkout until the budget gives up on it (a shopper would be answered 503).
    let checkouts = 0;
    const busy = async (call: Promise<unknown>) => {
      try {
        await call;
        return false;
      } catch (error) {
        if (error instanceof GatewayBudgetExceeded) return true;
        throw error;
      }
    };
    while (!(await busy(a.transactionStatus(`c${checkouts}`, 'checkout')))) checkouts++;
    expect(polls + checkouts, 'A spent all but B’s parts').to.equal(900 - 125 - 25);
    const sleptBefore = sleeps.length;
    for (let i = 0; i < 125; i++) await b.transactionStatus(`b${i}`, 'checkout');
    expect(sleeps.length, 'B’s checkout never waited').to.equal(sleptBefore);
    expect(await busy(b.transactionStatus('b-over', 'checkout')), 'past its part B is like anyone').to.equal(
      true,
    );
    expect(await busy(client().transactionStatus('nobody', 'checkout')), 'nobody’s call: held').to.equal(
      true,
    );
    const [row] = await budget.spending(1);
    expect(row!.byMerchant).to.deep.equal({ [A]: polls + checkouts, [B]: 125 });
    expect(sent, 'a call held back is not sent').to.have.length(polls + checkouts + 125);
  });
});

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
