import { expect } from 'chai';
import fc from 'fast-check';
import {
  type BudgetOptions,
  type BudgetState,
  DEFAULT_BUDGET,
  decide,
  EMPTY_BUDGET,
  MemoryBudget,
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
