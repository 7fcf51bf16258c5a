import { expect } from 'chai';
import fc from 'fast-check';
import {
  type BudgetOptions,
  type BudgetState,
  DEFAULT_BUDGET,
  decide,
  EMPTY_BUDGET,
  MemoryBudget,
  merchantSharesOf,
  minuteStarts,
  observed,
  type Priority,
  pacingOf,
  SPEND_RETENTION_MINUTES,
  WINDOW_MS,
} from '../../../src/client/budget.js';
import { type Admission, manualNow, worstWindow } from '../../support/budget.js';

/** Pure tests of the rate budget: the policy `decide` and the in-memory budget over it. Time injected. */

const perCall = 60_000 / DEFAULT_BUDGET.backgroundPerMinute; // 150 ms at 400 a minute
const burst = Math.floor(DEFAULT_BUDGET.backgroundPerMinute / 6); // 66 at once

/** What happens to a budget, at a gap after the previous event. */
type Event =
  | { kind: 'reserve'; priority: Priority; gap: number }
  | { kind: 'observe'; remaining: number | null; retryAfter: number | null; gap: number };

const gapArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 300 }) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 5_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 90_000 }) },
);
const reserveArb = fc.record({
  kind: fc.constant('reserve' as const),
  priority: fc.constantFrom<Priority>('foreground', 'background', 'background'),
  gap: gapArb,
});
const observeArb = (blocks: boolean) =>
  fc.record({
    kind: fc.constant('observe' as const),
    remaining: fc.option(fc.integer({ min: 0, max: 1000 })),
    retryAfter: blocks ? fc.option(fc.integer({ min: 0, max: 120 }), { freq: 3 }) : fc.constant(null),
    gap: gapArb,
  });
const eventsArb = (blocks: boolean) =>
  fc.array(fc.oneof({ weight: 8, arbitrary: reserveArb }, { weight: 1, arbitrary: observeArb(blocks) }), {
    maxLength: 400,
  });
/** Options config.ts accepts: backgroundReserved <= backgroundPerMinute < keyPerMinute. */
const optionsArb: fc.Arbitrary<BudgetOptions> = fc
  .record({
    backgroundPerMinute: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.constant(400)),
    reserve: fc.integer({ min: 0, max: 1000 }),
    above: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.constant(500)),
    reservedPart: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map(({ backgroundPerMinute, reserve, above, reservedPart }) => ({
    backgroundPerMinute,
    reserve,
    keyPerMinute: backgroundPerMinute + above,
    backgroundReserved: Math.floor(backgroundPerMinute * reservedPart),
  }));

/** Admissions of `priority` (or every one) in the window ending at `at`, that one included. */
const inWindow = (admissions: readonly Admission[], at: number, priority?: Priority) =>
  admissions.filter(
    (b) => b.at > at - WINDOW_MS && b.at <= at && (priority === undefined || b.priority === priority),
  ).length;

interface Run {
  state: BudgetState;
  now: number;
  admissions: Admission[];
  /** Every reserve: when, which priority, the wait, and the block in force by the observations so far. */
  asks: { at: number; priority: Priority; wait: number; blockedUntil: number }[];
}

/** Feeds events to the pure policy, keeping an outside record to check it against. */
function run(events: readonly Event[], options: BudgetOptions, start = 1_700_000_000_000): Run {
  let state = EMPTY_BUDGET;
  let now = start;
  let blockedUntil = 0;
  const admissions: Admission[] = [];
  const asks: Run['asks'] = [];
  for (const event of events) {
    now += event.gap;
    if (event.kind === 'observe') {
      state = observed(state, event.remaining, event.retryAfter, now);
      if (event.retryAfter !== null) blockedUntil = Math.max(blockedUntil, now + event.retryAfter * 1000);
      continue;
    }
    const step = decide(state, event.priority, now, options);
    state = step.state;
    asks.push({ at: now, priority: event.priority, wait: step.wait, blockedUntil });
    if (step.wait === 0) admissions.push({ at: now, priority: event.priority });
  }
  return { state, now, admissions, asks };
}

describe('client/budget: decide (the policy), properties', () => {
  it('in any 60 s window: at most keyPerMinute calls, background at most backgroundPerMinute, checkout traffic at most keyPerMinute - backgroundReserved', () => {
    fc.assert(
      fc.property(eventsArb(true), optionsArb, (events, options) => {
        const { admissions } = run(events, options);
        for (const a of admissions) {
          expect(inWindow(admissions, a.at)).to.be.at.most(options.keyPerMinute);
          expect(inWindow(admissions, a.at, 'background')).to.be.at.most(options.backgroundPerMinute);
          expect(inWindow(admissions, a.at, 'foreground')).to.be.at.most(
            options.keyPerMinute - options.backgroundReserved,
          );
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a background call goes within its reserved share, or while the window holds fewer than backgroundPerMinute calls of any caller', () => {
    fc.assert(
      fc.property(eventsArb(true), optionsArb, (events, options) => {
        const { admissions } = run(events, options);
        for (const [i, a] of admissions.entries()) {
          if (a.priority !== 'background') continue;
          // Counted up to and including this admission: later ones at the same instant came after it.
          const before = admissions.slice(0, i + 1);
          const share = inWindow(before, a.at, 'background') <= options.backgroundReserved;
          const quiet = inWindow(before, a.at) <= options.backgroundPerMinute;
          expect(share || quiet, `background admission ${i}`).to.equal(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('background calls are spaced: any n of them span at least (n - burst) emission intervals', () => {
    fc.assert(
      fc.property(eventsArb(true), optionsArb, (events, options) => {
        const { intervalMs, toleranceMs } = pacingOf(options);
        const times = run(events, options)
          .admissions.filter((a) => a.priority === 'background')
          .map((a) => a.at);
        for (let i = 0; i < times.length; i++) {
          for (let j = i; j < times.length; j++) {
            const n = j - i + 1;
            expect(n * intervalMs, `${n} calls in ${times[j]! - times[i]!} ms`).to.be.at.most(
              times[j]! - times[i]! + toleranceMs,
            );
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('beyond its reserved share, background never goes while the last X-RateLimit-Remaining, seen within a minute, is at or below reserve', () => {
    fc.assert(
      fc.property(eventsArb(true), optionsArb, (events, options) => {
        let now = 0;
        let seen: { value: number; at: number } | null = null;
        let state = EMPTY_BUDGET;
        for (const event of events) {
          now += event.gap;
          if (event.kind === 'observe') {
            state = observed(state, event.remaining, event.retryAfter, now);
            if (event.remaining !== null) seen = { value: event.remaining, at: now };
            continue;
          }
          const step = decide(state, event.priority, now, options);
          const low = seen !== null && now - seen.at < WINDOW_MS && seen.value <= options.reserve;
          const shareLeft =
            state.background.filter((at) => at > now - WINDOW_MS).length < options.backgroundReserved;
          if (event.priority === 'background' && low && step.wait === 0)
            expect(shareLeft, 'only within the reserved share').to.equal(true);
          state = step.state;
        }
      }),
      { numRuns: 200 },
    );
  });

  it('checkout traffic waits exactly until a block ends and both its counts have room: at once while within its share', () => {
    fc.assert(
      fc.property(eventsArb(true), optionsArb, (events, options) => {
        const { admissions, asks } = run(events, options);
        let admitted = 0;
        for (const ask of asks) {
          const before = admissions.slice(0, admitted);
          if (ask.wait === 0) admitted++;
          if (ask.priority !== 'foreground') continue;
          // The wait until fewer than `limit` of these admissions remain in the window.
          const room = (limit: number, priority?: Priority) => {
            const times = before
              .filter((b) => b.at > ask.at - WINDOW_MS && (priority === undefined || b.priority === priority))
              .map((b) => b.at);
            return times.length < limit ? 0 : times[times.length - limit]! + WINDOW_MS - ask.at;
          };
          const expected = Math.max(
            0,
            ask.blockedUntil - ask.at,
            room(options.keyPerMinute),
            room(options.keyPerMinute - options.backgroundReserved, 'foreground'),
          );
          expect(ask.wait).to.equal(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('background never starves checkout: with no block, checkout always has keyPerMinute - backgroundPerMinute a minute', () => {
    fc.assert(
      fc.property(eventsArb(false), optionsArb, (events, options) => {
        const { admissions, asks } = run(events, options);
        let admitted = 0;
        for (const ask of asks) {
          const before = admissions.slice(0, admitted);
          if (ask.wait === 0) admitted++;
          if (ask.priority !== 'foreground') continue;
          if (inWindow(before, ask.at, 'foreground') < options.keyPerMinute - options.backgroundPerMinute)
            expect(ask.wait).to.equal(0);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('no busy spinning: a background caller that sleeps the wait it was given is admitted when it asks again', () => {
    fc.assert(
      fc.property(eventsArb(true), optionsArb, (events, options) => {
        const { state, now } = run(events, options);
        const first = decide(state, 'background', now, options);
        if (first.wait === 0) return;
        expect(Number.isInteger(first.wait), `${first.wait}`).to.equal(true);
        expect(decide(first.state, 'background', now + first.wait, options).wait).to.equal(0);
        // Nor a moment earlier: the wait is not longer than it has to be.
        expect(decide(first.state, 'background', now + first.wait - 1, options).wait).to.be.greaterThan(0);
      }),
      { numRuns: 500 },
    );
  });

  it('a background caller that keeps asking is eventually admitted, even with foreground calls arriving meanwhile', () => {
    fc.assert(
      fc.property(
        eventsArb(true),
        optionsArb,
        fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 50 }),
        (events, options, foregroundGaps) => {
          let { state, now } = run(events, options);
          // Foreground at up to half the limit a minute, each gap at least two emission intervals.
          const spacing = 2 * Math.ceil(WINDOW_MS / options.backgroundPerMinute);
          let nextForeground = now + spacing + foregroundGaps[0]!;
          let asks = 0;
          for (;;) {
            const step = decide(state, 'background', now, options);
            state = step.state;
            asks++;
            if (step.wait === 0) break;
            expect(asks, 'admitted within a bounded number of asks').to.be.below(200);
            const wakeAt = now + step.wait;
            while (nextForeground < wakeAt) {
              state = decide(state, 'foreground', nextForeground, options).state;
              nextForeground += spacing + foregroundGaps[asks % foregroundGaps.length]!;
            }
            now = wakeAt;
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps no call older than the window in its log', () => {
    fc.assert(
      fc.property(eventsArb(true), optionsArb, (events, options) => {
        const { state, now } = run(events, options);
        const after = decide(state, 'foreground', now, options).state;
        for (const at of [...after.log, ...after.foreground, ...after.background])
          expect(at).to.be.greaterThan(now - WINDOW_MS);
        expect(after.log.length).to.equal(after.foreground.length + after.background.length);
      }),
    );
  });
});

describe('client/budget: MemoryBudget', () => {
  it('has the documented defaults: 400 background requests a minute, reserve 500, 900 in all, 100 kept for background, a sixth of a minute at once', () => {
    expect(DEFAULT_BUDGET).to.deep.equal({
      backgroundPerMinute: 400,
      reserve: 500,
      keyPerMinute: 900,
      backgroundReserved: 100,
    });
    expect(pacingOf(DEFAULT_BUDGET)).to.deep.equal({ intervalMs: 150, toleranceMs: 66 * 150 });
  });

  it('checkout traffic goes at once up to its share (800 a minute), whatever the gateway says remains; the next waits for the first to leave', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now);
    await budget.observe(3, null);
    for (let i = 0; i < 800; i++) {
      const caller = (['checkout', 'landing', 'operator'] as const)[i % 3]!;
      expect(await budget.reserve(caller), `call ${i + 1}`).to.equal(0);
      clock.advance(10);
    }
    // The first went 8 s ago: it leaves the window in 52 s.
    expect(await budget.reserve('checkout')).to.equal(52_000);
    clock.advance(52_000);
    expect(await budget.reserve('checkout')).to.equal(0);
  });

  it('background: a burst of a sixth of a minute goes at once, then one call per 150 ms', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now);
    for (let i = 0; i < burst; i++) expect(await budget.reserve('poller'), `call ${i + 1}`).to.equal(0);
    expect(await budget.reserve('poller')).to.equal(perCall);
    clock.advance(perCall);
    expect(await budget.reserve('recovery'), 'after the wait it was given').to.equal(0);
    expect(await budget.reserve('recovery')).to.equal(perCall);
  });

  it('background: the burst never piles up past a sixth of a minute, however long the idle time', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now);
    for (let i = 0; i < burst; i++) await budget.reserve('poller');
    clock.advance(10 * 60_000);
    let goes = 0;
    while ((await budget.reserve('poller')) === 0) goes++;
    expect(goes).to.equal(burst);
  });

  it('background: a wait is not a slot; callers at one instant are told the same wait and one of them goes', async () => {
    // Nothing is counted until a call is admitted: the first to ask again after the wait takes the slot.
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now);
    for (let i = 0; i < burst; i++) await budget.reserve('poller');
    const waits = await Promise.all(Array.from({ length: 5 }, () => budget.reserve('poller')));
    expect(waits).to.deep.equal([perCall, perCall, perCall, perCall, perCall]);
    clock.advance(perCall);
    expect(await budget.reserve('poller')).to.equal(0);
    expect(await budget.reserve('health')).to.equal(perCall);
  });

  it('background: callers that keep asking and sleep what they are told send at most 400 in any minute, and not much less', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now);
    const start = clock.now();
    const admissions: Admission[] = [];
    while (clock.now() - start < 5 * 60_000) {
      const wait = await budget.reserve('poller');
      if (wait === 0) admissions.push({ at: clock.now(), priority: 'background' });
      else clock.advance(wait);
    }
    expect(worstWindow(admissions)).to.equal(400);
    expect(admissions.length).to.be.within(5 * 400 - burst, 5 * 400);
    // Never a minute's worth in one second.
    for (const a of admissions) {
      const inSecond = admissions.filter((b) => b.at >= a.at && b.at < a.at + 1000).length;
      expect(inSecond).to.be.at.most(burst + 7);
    }
  });

  it('checkout calls take room from background beyond its reserved share: after 400 checkout calls, 100 polls go, then none until room comes', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now);
    for (let i = 0; i < 400; i++) {
      expect(await budget.reserve('checkout')).to.equal(0);
      clock.advance(100);
    }
    // Within its reserved share the poller goes at its burst, then at its pace.
    let polls = 0;
    const start = clock.now();
    while (polls < 100) {
      const wait = await budget.reserve('poller');
      if (wait === 0) polls++;
      else clock.advance(wait);
    }
    expect(clock.now() - start, 'the 100 at its pace: a burst of 66, then 150 ms apart').to.equal(34 * 150);
    // The share spent, the poller waits until the window holds fewer than 400 calls in all: 500 are
    // in it, so until the 101st checkout call (made at 10 s) leaves it, at 70 s.
    expect(await budget.reserve('poller')).to.equal(70_000 - 40_000 - 34 * 150);
  });

  it("a checkout burst cannot starve background: past checkout traffic's 800, the poller still gets its 100 a minute", async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now);
    const admitted: Record<string, number> = { checkout: 0, poller: 0 };
    // Checkout asks every 10 ms, the poller whenever its wait is over, for one minute.
    let nextCheckout = clock.now();
    let nextPoll = clock.now();
    const end = clock.now() + WINDOW_MS;
    while (Math.min(nextCheckout, nextPoll) < end) {
      if (nextCheckout <= nextPoll) {
        clock.set(nextCheckout);
        if ((await budget.reserve('checkout')) === 0) admitted.checkout! += 1;
        nextCheckout += 10;
      } else {
        clock.set(nextPoll);
        const wait = await budget.reserve('poller');
        if (wait === 0) admitted.poller! += 1;
        nextPoll += Math.max(wait, 1);
      }
    }
    expect(admitted).to.deep.equal({ checkout: 800, poller: 100 });
  });

  it('background cannot starve checkout: with 400 background calls in the minute, checkout still has 500', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now);
    let polls = 0;
    while (polls < 400) {
      const wait = await budget.reserve('recovery');
      if (wait === 0) polls++;
      else clock.advance(wait);
    }
    let checkouts = 0;
    while ((await budget.reserve('checkout')) === 0) checkouts++;
    expect(checkouts).to.equal(500);
  });

  const noShare = { ...DEFAULT_BUDGET, backgroundReserved: 0 };

  it('reserve rule (no reserved share): background holds back while the last X-RateLimit-Remaining was at or below 500 within a minute', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now, noShare);
    await budget.observe(500, null);
    expect(await budget.reserve('poller'), 'at 500').to.equal(60_000);
    expect(await budget.reserve('checkout'), 'foreground unaffected').to.equal(0);
    clock.advance(20_000);
    expect(await budget.reserve('poller'), 'waits out the rest of the minute').to.equal(40_000);
    clock.advance(39_900);
    expect(await budget.reserve('poller'), 'exactly').to.equal(100);
    clock.advance(100);
    expect(await budget.reserve('poller'), 'a minute-old count says nothing').to.equal(0);
  });

  it('reserve rule (no reserved share): above 500 remaining background goes; a newer answer replaces an older one', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now, noShare);
    await budget.observe(501, null);
    expect(await budget.reserve('poller')).to.equal(0);
    await budget.observe(120, null);
    expect(await budget.reserve('poller')).to.equal(60_000);
    clock.advance(1000);
    await budget.observe(999, null); // a new window at the gateway
    expect(await budget.reserve('poller')).to.equal(0);
    await budget.observe(null, null); // an answer without the header changes nothing
    expect(await budget.reserve('poller')).to.equal(0);
    expect(await budget.lastRemaining()).to.equal(999);
    clock.advance(60_000);
    expect(await budget.lastRemaining(), 'a minute later it says nothing').to.equal(null);
  });

  it('reserve rule: honours a custom reserve', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now, { ...noShare, reserve: 100 });
    await budget.observe(101, null);
    expect(await budget.reserve('poller')).to.equal(0);
    await budget.observe(100, null);
    expect(await budget.reserve('poller')).to.equal(60_000);
  });

  it('reserve rule: within its reserved share background goes whatever the gateway says remains', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now);
    await budget.observe(120, null);
    for (let i = 0; i < 66; i++) expect(await budget.reserve('poller'), `poll ${i + 1}`).to.equal(0);
    clock.advance(34 * 150);
    for (let i = 0; i < 34; i++) expect(await budget.reserve('poller'), `poll ${67 + i}`).to.equal(0);
    expect(await budget.reserve('poller'), 'the share spent: the count holds it back').to.be.greaterThan(0);
  });

  it('a Retry-After blocks both priorities until it has passed', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now);
    await budget.observe(null, 3); // a 429 without X-RateLimit-Remaining (with 0, the reserve rule holds background a minute)
    expect(await budget.reserve('checkout')).to.equal(3000);
    expect(await budget.reserve('poller')).to.equal(3000);
    clock.advance(1000);
    expect(await budget.reserve('checkout')).to.equal(2000);
    expect(await budget.reserve('poller')).to.equal(2000);
    clock.advance(2000);
    expect(await budget.reserve('checkout')).to.equal(0);
    expect(await budget.reserve('poller')).to.equal(0);
  });

  it('a shorter Retry-After never shortens a block already in force; a longer one extends it', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now);
    await budget.observe(null, 10);
    await budget.observe(null, 2);
    expect(await budget.reserve('checkout')).to.equal(10_000);
    await budget.observe(null, 30);
    expect(await budget.reserve('checkout')).to.equal(30_000);
  });

  it('spending: admitted calls per caller and minute, oldest first; waits are counted apart', async () => {
    const clock = manualNow(Date.UTC(2026, 10, 1, 12, 0, 30));
    const budget = new MemoryBudget(clock.now);
    await budget.reserve('checkout');
    await budget.reserve('checkout');
    await budget.reserve('poller');
    clock.advance(60_000);
    await budget.reserve('recovery');
    await budget.observe(null, 5);
    expect(await budget.reserve('poller'), 'blocked: not counted').to.equal(5000);
    expect(await budget.spending(3)).to.deep.equal([
      { minute: '2026-11-01T11:59:00.000Z', byCaller: {}, total: 0, waited: {} },
      { minute: '2026-11-01T12:00:00.000Z', byCaller: { checkout: 2, poller: 1 }, total: 3, waited: {} },
      { minute: '2026-11-01T12:01:00.000Z', byCaller: { recovery: 1 }, total: 1, waited: { poller: 1 } },
    ]);
    expect(await budget.spending(0)).to.deep.equal([]);
  });

  it('spending: kept for three hours, and never asked for further back', async () => {
    const clock = manualNow(Date.UTC(2026, 10, 1, 12));
    const budget = new MemoryBudget(clock.now);
    await budget.reserve('cli');
    clock.advance((SPEND_RETENTION_MINUTES - 1) * 60_000);
    const rows = await budget.spending(10_000);
    expect(rows).to.have.length(SPEND_RETENTION_MINUTES);
    expect(rows[0]).to.deep.equal({
      minute: '2026-11-01T12:00:00.000Z',
      byCaller: { cli: 1 },
      total: 1,
      waited: {},
    });
    expect(minuteStarts(clock.now(), 2.7)).to.have.length(2);
  });
});

describe('client/budget: merchants behind one partner key (decide)', () => {
  /** A call's merchant: configured ones, one that is not, and none. */
  const merchantArb = fc.constantFrom<string | undefined>(undefined, '1', '2', '3', '4', '9');
  const merchantsArb = fc.constantFrom<readonly string[]>(['1', '2'], ['1', '2', '3'], ['1', '2', '3', '4']);
  type MerchantEvent =
    | { kind: 'reserve'; priority: Priority; merchant: string | undefined; gap: number }
    | { kind: 'observe'; remaining: number | null; retryAfter: number | null; gap: number };
  const merchantReserveArb = fc.record({
    kind: fc.constant('reserve' as const),
    priority: fc.constantFrom<Priority>('foreground', 'foreground', 'background'),
    merchant: merchantArb,
    gap: gapArb,
  });
  const merchantEventsArb = (blocks: boolean): fc.Arbitrary<MerchantEvent[]> =>
    fc.array(
      fc.oneof({ weight: 8, arbitrary: merchantReserveArb }, { weight: 1, arbitrary: observeArb(blocks) }),
      { maxLength: 400 },
    );
  const withMerchantsArb = fc
    .tuple(optionsArb, merchantsArb)
    .map(([options, merchants]): BudgetOptions => ({ ...options, merchants }));

  interface MerchantAdmission {
    at: number;
    priority: Priority;
    merchant: string | undefined;
  }
  interface MerchantAsk extends MerchantAdmission {
    wait: number;
    /** The state the ask was decided on. */
    before: BudgetState;
    blockedUntil: number;
  }

  function runMerchants(events: readonly MerchantEvent[], options: BudgetOptions, start = 1_700_000_000_000) {
    let state = EMPTY_BUDGET;
    let now = start;
    let blockedUntil = 0;
    const admissions: MerchantAdmission[] = [];
    const asks: MerchantAsk[] = [];
    for (const event of events) {
      now += event.gap;
      if (event.kind === 'observe') {
        state = observed(state, event.remaining, event.retryAfter, now);
        if (event.retryAfter !== null) blockedUntil = Math.max(blockedUntil, now + event.retryAfter * 1000);
        continue;
      }
      const step = decide(state, event.priority, now, options, event.merchant);
      const call = { at: now, priority: event.priority, merchant: event.merchant };
      asks.push({ ...call, wait: step.wait, before: state, blockedUntil });
      state = step.state;
      if (step.wait === 0) admissions.push(call);
    }
    return { state, now, admissions, asks };
  }

  /** Admissions matching `match` in the window ending at `at`, that instant included. */
  const within = (admissions: readonly MerchantAdmission[], at: number, match: Partial<MerchantAdmission>) =>
    admissions.filter(
      (a) =>
        a.at > at - WINDOW_MS &&
        a.at <= at &&
        (match.priority === undefined || a.priority === match.priority) &&
        (!('merchant' in match) || a.merchant === match.merchant),
    ).length;

  it('has each merchant keep half of what each share always has, split evenly: none with fewer than two', () => {
    const two = { ...DEFAULT_BUDGET, merchants: ['1001', '1002'] };
    expect(merchantSharesOf(two)).to.deep.equal({
      merchants: ['1001', '1002'],
      foreground: 125,
      background: 25,
    });
    expect(merchantSharesOf({ ...two, merchants: ['a', 'b', 'c', 'a'] })).to.deep.include({
      foreground: 83,
      background: 16,
    });
    expect(merchantSharesOf({ ...two, merchants: ['1001'] })).to.deep.equal({
      merchants: [],
      foreground: 0,
      background: 0,
    });
    expect(merchantSharesOf(DEFAULT_BUDGET).merchants).to.deep.equal([]);
  });

  it('in any 60 s window, whoever the calls are for: at most keyPerMinute calls, background at most backgroundPerMinute, checkout traffic at most keyPerMinute - backgroundReserved', () => {
    fc.assert(
      fc.property(merchantEventsArb(true), withMerchantsArb, (events, options) => {
        const { admissions } = runMerchants(events, options);
        for (const a of admissions) {
          expect(within(admissions, a.at, {})).to.be.at.most(options.keyPerMinute);
          expect(within(admissions, a.at, { priority: 'background' })).to.be.at.most(
            options.backgroundPerMinute,
          );
          expect(within(admissions, a.at, { priority: 'foreground' })).to.be.at.most(
            options.keyPerMinute - options.backgroundReserved,
          );
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a merchant within its share is never held by the others: its checkout goes at once, its background call at its pacing slot, whatever the other merchants and nobody’s calls sent', () => {
    let tried = 0;
    fc.assert(
      fc.property(merchantEventsArb(false), withMerchantsArb, (events, options) => {
        const shares = merchantSharesOf(options);
        const { admissions, asks } = runMerchants(events, options);
        let admitted = 0;
        for (const ask of asks) {
          const before = admissions.slice(0, admitted);
          if (ask.wait === 0) admitted++;
          if (ask.merchant === undefined || !shares.merchants.includes(ask.merchant)) continue;
          const own = within(before, ask.at, { priority: ask.priority, merchant: ask.merchant });
          if (own >= shares[ask.priority]) continue;
          tried++;
          if (ask.priority === 'foreground') {
            expect(ask.wait, `merchant ${ask.merchant}, ${own} of its ${shares.foreground}`).to.equal(0);
          } else {
            const { intervalMs, toleranceMs } = pacingOf(options);
            const from = Math.max(ask.before.paceAt, ask.at);
            expect(ask.wait, 'only the pacing').to.equal(
              Math.max(0, from + intervalMs - toleranceMs - ask.at),
            );
          }
        }
      }),
      { numRuns: 300 },
    );
    expect(tried, 'asks within a share were made').to.be.greaterThan(200);
  });

  it('no busy spinning with merchants either: a caller that sleeps its wait is admitted then, and not a moment earlier', () => {
    fc.assert(
      fc.property(
        merchantEventsArb(true),
        withMerchantsArb,
        fc.constantFrom<Priority>('foreground', 'background'),
        merchantArb,
        (events, options, priority, merchant) => {
          const { state, now } = runMerchants(events, options);
          const first = decide(state, priority, now, options, merchant);
          if (first.wait === 0) return;
          expect(Number.isInteger(first.wait), `${first.wait}`).to.equal(true);
          expect(decide(first.state, priority, now + first.wait, options, merchant).wait).to.equal(0);
          expect(
            decide(first.state, priority, now + first.wait - 1, options, merchant).wait,
          ).to.be.greaterThan(0);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('with fewer than two merchants configured, a call’s merchant changes nothing', () => {
    fc.assert(
      fc.property(
        merchantEventsArb(true),
        optionsArb,
        fc.constantFrom<readonly string[] | undefined>(undefined, [], ['1'], ['1', '1']),
        (events, options, merchants) => {
          const labelled = runMerchants(events, { ...options, merchants });
          const plain = runMerchants(
            events.map((e) => (e.kind === 'reserve' ? { ...e, merchant: undefined } : e)),
            options,
          );
          expect(labelled.asks.map((a) => a.wait)).to.deep.equal(plain.asks.map((a) => a.wait));
          expect(labelled.state).to.deep.equal(plain.state);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('keeps, per merchant, only its own admitted calls of the window', () => {
    fc.assert(
      fc.property(merchantEventsArb(true), withMerchantsArb, (events, options) => {
        const run = runMerchants(events, options);
        const { now, admissions } = run;
        // One more ask, for nobody, at the end: what it sees is the state of that instant.
        const { state } = decide(run.state, 'foreground', now, options);
        expect(Object.keys(state.byMerchant ?? {})).to.have.members([...merchantSharesOf(options).merchants]);
        for (const [merchant, logs] of Object.entries(state.byMerchant ?? {}))
          for (const priority of ['foreground', 'background'] as const)
            expect(logs[priority]).to.deep.equal(
              admissions
                .filter((a) => a.merchant === merchant && a.priority === priority && a.at > now - WINDOW_MS)
                .map((a) => a.at),
            );
      }),
    );
  });

  const two: BudgetOptions = { ...DEFAULT_BUDGET, merchants: ['1001', '1002'] };

  it('merchant A’s checkout burst to the limit leaves B its 125 at once; then the share is spent: 800 checkout calls in all', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now, two);
    let a = 0;
    while ((await budget.reserve('checkout', '1001')) === 0) {
      a++;
      clock.advance(10);
    }
    // Checkout traffic's 800, less B's 125 that A can never take.
    expect(a).to.equal(675);
    expect(await budget.reserve('checkout'), 'nobody’s call: only the shared room, spent').to.be.greaterThan(
      0,
    );
    expect(await budget.reserve('landing', '9999'), 'a merchant not configured: nobody’s').to.be.greaterThan(
      0,
    );
    for (let i = 0; i < 125; i++)
      expect(
        await budget.reserve((['checkout', 'landing', 'operator'] as const)[i % 3]!, '1002'),
        `B's call ${i + 1}`,
      ).to.equal(0);
    // B past its share is like anyone: checkout traffic's 800 are spent until A's first call leaves.
    expect(await budget.reserve('checkout', '1002')).to.equal(WINDOW_MS - 675 * 10);
    const [row] = await budget.spending(1);
    expect(row!.byMerchant).to.deep.equal({ '1001': 675, '1002': 125 });
    expect(row!.byCaller.checkout! + row!.byCaller.landing! + row!.byCaller.operator!).to.equal(800);
  });

  it('merchant A’s polls and checkouts together cannot starve B’s checkout: B still has its 125 at once', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now, two);
    // A's pollers take all the background they are given (until held for more than their pacing);
    // then A's checkout asks hard.
    let polls = 0;
    for (;;) {
      const wait = await budget.reserve('poller', '1001');
      if (wait === 0) polls++;
      else if (wait <= 150) clock.advance(wait);
      else break;
    }
    let checkouts = 0;
    while ((await budget.reserve('checkout', '1001')) === 0) checkouts++;
    // Background: 375 (the key quiet below 400, less B's unused 25); checkout: the key's 900 less
    // B's unused 125 and 25, and A's 375 polls.
    expect([polls, checkouts]).to.deep.equal([375, 900 - 150 - 375]);
    expect(await budget.reserve('poller', '1001'), 'A is held in both shares').to.be.greaterThan(0);
    for (let i = 0; i < 125; i++)
      expect(await budget.reserve('checkout', '1002'), `B's checkout ${i + 1}`).to.equal(0);
    expect(await budget.reserve('checkout', '1002')).to.be.greaterThan(0);
    // B's background part too: its 25 go at their pacing slots (A's burst used the pacing credit).
    let bPolls = 0;
    const bStart = clock.now();
    while (bPolls < 25) {
      const wait = await budget.reserve('recovery', '1002');
      expect(wait, 'never more than the pacing').to.be.at.most(150);
      if (wait === 0) bPolls++;
      else clock.advance(wait);
    }
    expect(clock.now() - bStart).to.be.at.most(25 * 150);
  });

  it('the same burst without merchant shares: B’s checkout waits for the whole key', async () => {
    // What the shares are for: with one merchant configured, A's burst takes the key and B waits.
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now, { ...DEFAULT_BUDGET, merchants: ['1001'] });
    for (;;) {
      const wait = await budget.reserve('poller', '1001');
      if (wait > 150) break;
      clock.advance(wait);
    }
    while ((await budget.reserve('checkout', '1001')) === 0);
    expect(await budget.reserve('checkout', '1002')).to.be.greaterThan(0);
  });

  it('calls for nobody have only the shared room: 550 checkout calls, and every merchant its share after them', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now, two);
    let nobody = 0;
    while ((await budget.reserve('operator')) === 0) nobody++;
    expect(nobody, '800 less the two shares of 125').to.equal(550);
    for (const merchant of ['1001', '1002'])
      for (let i = 0; i < 125; i++) expect(await budget.reserve('checkout', merchant)).to.equal(0);
    expect(await budget.reserve('checkout', '1001')).to.be.greaterThan(0);
    const [row] = await budget.spending(1);
    expect(row!.byMerchant).to.deep.equal({ '1001': 125, '1002': 125 });
    expect(row!.total).to.equal(800);
  });

  it('with one merchant configured, a call’s merchant changes nothing: checkout’s 800, as without', async () => {
    const clock = manualNow();
    const budget = new MemoryBudget(clock.now, { ...DEFAULT_BUDGET, merchants: ['1001'] });
    for (let i = 0; i < 800; i++) {
      expect(await budget.reserve('checkout', i % 2 === 0 ? '1001' : '1002'), `call ${i + 1}`).to.equal(0);
      clock.advance(10);
    }
    expect(await budget.reserve('checkout', '1002')).to.equal(52_000);
    const [row] = await budget.spending(1);
    expect(row).to.not.have.property('byMerchant');
  });
});
