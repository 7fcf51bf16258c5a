import { expect } from 'chai';
import fc from 'fast-check';
import {
  type AttemptFacts,
  decide,
  INITIAL_PAYMENT,
  type PaymentState,
} from '../../../src/merchant/orders/decide.js';
import {
  bookAfter,
  type DisputeBook,
  type DisputeEntry,
  type DisputeInput,
  disputePlanOf,
  EMPTY_BOOK,
  planDisputes,
  REVERSAL_EVENT,
} from '../../../src/merchant/orders/disputes.js';
import type { Observation, TransactionFact } from '../../../src/merchant/orders/observation.js';
import type { OrderStatus } from '../../../src/merchant/orders/status.js';

/**
 * Issue 44, part 3: dispute records keyed by what the gateway says. A payment is charged back, the
 * chargeback reversed, charged back again and perhaps reversed again; whatever the order those
 * events arrive in (every permutation of them, with duplicates and replays among them), the records
 * are the same as in the order they happened, and the order's amounts are the gateway's.
 */

const AMOUNT = 10_000;
const PARENT = '100';
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1, 12);

interface Scenario {
  type: 'sale' | 'auth';
  /** Refunded before the first chargeback. */
  refunded: number;
  /** Each chargeback's share of what is left, in percent. */
  first: number;
  second: number;
  secondReversed: boolean;
  /** An auth's steps told by its capture record (true) rather than its own. */
  viaCapture: [boolean, boolean, boolean, boolean];
}

interface Story {
  scenario: Scenario;
  /** The kit's own answers, applied first, in order. */
  answers: Observation[];
  /** The gateway's events: the capture's, then chargeback, reversal, chargeback, (reversal). */
  events: Observation[];
  records: Omit<DisputeEntry, 'id'>[];
  truth: { status: OrderStatus; refunded: number; disputed: number };
}

let seq = 0;
const observe = (
  transaction: TransactionFact,
  source: Observation['source'] = 'api',
  eventType?: string,
): Observation => ({
  source,
  sourceId: `${source}:${++seq}`,
  observedAt: T0,
  transaction,
  ...(eventType ? { eventType } : {}),
});

const record = (over: Partial<TransactionFact>): TransactionFact => ({
  id: PARENT,
  relatedId: null,
  type: 'sale',
  status: 'captured',
  amountMinor: AMOUNT,
  currency: 'EUR',
  refundedMinor: 0,
  ...over,
});

function story(s: Scenario): Story {
  const t = (days: number) => T0 + days * DAY;
  const own = { type: s.type, refundedMinor: s.refunded };
  const capture = (at: number, status: string, chargebackMinor: number) =>
    record({
      id: 'c1',
      relatedId: PARENT,
      type: 'capture',
      status,
      refundedMinor: s.refunded,
      chargebackMinor,
      updatedAt: at,
    });
  const answers: Observation[] = [];
  if (s.type === 'sale') answers.push(observe(record({ updatedAt: t(0) })));
  else answers.push(observe(record({ type: 'auth', status: 'auth' })), observe(capture(t(0), 'captured', 0)));
  if (s.refunded > 0)
    answers.push(
      observe(
        record({
          id: 'r1',
          relatedId: PARENT,
          type: 'refund',
          status: 'refunded',
          amountMinor: s.refunded,
          refundedMinor: s.refunded,
          updatedAt: t(1),
        }),
      ),
    );
  const left = AMOUNT - s.refunded;
  const first = Math.max(1, Math.floor((left * s.first) / 100));
  const second = Math.max(1, Math.floor((left * s.second) / 100));
  // The gateway's steps, each days after the one before, told by the payment's own record or its capture's.
  const step = (i: number, at: number, taken: number) => {
    const status = taken > 0 ? 'chargeback' : 'captured';
    const type = taken > 0 ? 'transaction.chargeback' : REVERSAL_EVENT;
    const fact =
      s.type === 'auth' && s.viaCapture[i]
        ? capture(at, status, taken)
        : record({ ...own, status, chargebackMinor: taken, updatedAt: at });
    return observe(fact, 'webhook', type);
  };
  const captured = s.type === 'sale' ? record({ updatedAt: t(0) }) : capture(t(0), 'captured', 0);
  const events = [
    observe(captured, 'webhook', 'transaction.captured'),
    step(0, t(10), first),
    step(1, t(40), 0),
    step(2, t(50), second),
    ...(s.secondReversed ? [step(3, t(90), 0)] : []),
  ];
  const won = (at: number) => ({ outcome: 'won' as const, closedAt: at, closedBy: 'gateway' });
  const open = { outcome: 'open' as const, closedAt: null, closedBy: null };
  return {
    scenario: s,
    answers,
    events,
    records: [
      { chargedBackAt: t(10), openedAt: t(10), amountMinor: first, ...won(t(40)) },
      {
        chargedBackAt: t(50),
        openedAt: t(50),
        amountMinor: second,
        ...(s.secondReversed ? won(t(90)) : open),
      },
    ],
    truth: s.secondReversed
      ? { status: s.refunded > 0 ? 'partially_refunded' : 'paid', refunded: s.refunded, disputed: 0 }
      : { status: 'disputed', refunded: s.refunded, disputed: second },
  };
}

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  type: fc.constantFrom('sale', 'auth'),
  refunded: fc.constantFrom(0, 0, 1500),
  first: fc.integer({ min: 1, max: 100 }),
  second: fc.integer({ min: 1, max: 100 }),
  secondReversed: fc.boolean(),
  viaCapture: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean()),
});

/** Copies of some events (the same delivery again, or a replay of it) and where each goes. */
const duplicatesArb = fc.array(fc.record({ which: fc.nat(), where: fc.nat(), replay: fc.boolean() }), {
  maxLength: 4,
});

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/** The apply path, pure: decide, then the dispute rule on what it made of each observation. */
function run(s: Story, arrivals: readonly Observation[]) {
  let state: PaymentState = INITIAL_PAYMENT;
  let status: OrderStatus = 'pending';
  let book: DisputeBook = EMPTY_BOOK;
  let ids = 0;
  for (const obs of [...s.answers, ...arrivals]) {
    const attempt: AttemptFacts = {
      kind: 'card',
      sale: s.scenario.type === 'sale',
      transactionId: PARENT,
      current: true,
      state,
    };
    const decision = decide({ status, amountMinor: AMOUNT, currency: 'EUR' }, attempt, obs);
    expect(decision.review, `flagged: ${decision.note}`).to.equal(null);
    book = bookAfter(book, disputePlanOf(book, obs, attempt, decision, T0), () => `dsp_${++ids}`);
    state = decision.attempt;
    status = decision.orderStatus;
    const keys = book.records.map((r) => r.chargedBackAt);
    expect(new Set(keys).size, 'one record per chargeback').to.equal(keys.length);
  }
  return { state, status, book };
}

const recordsOf = (book: DisputeBook) =>
  book.records.map(({ id: _id, ...r }) => r).sort((a, b) => (a.chargedBackAt ?? 0) - (b.chargedBackAt ?? 0));

describe('dispute records (property): the same records whatever the order of arrival', () => {
  it('a chargeback, its reversal, a second chargeback and its reversal: every permutation, with duplicates and replays', () => {
    fc.assert(
      fc.property(scenarioArb, duplicatesArb, (scenario, duplicates) => {
        const s = story(scenario);
        const inOrder = run(s, s.events);
        expect(recordsOf(inOrder.book), 'in order: the gateway history').to.deep.equal(s.records);
        for (const arrival of permutations(s.events)) {
          for (const d of duplicates) {
            const copy = arrival[d.which % s.events.length]!;
            arrival.splice(
              d.where % (arrival.length + 1),
              0,
              d.replay ? { ...copy, source: 'replay' } : copy,
            );
          }
          const { state, status, book } = run(s, arrival);
          const order = arrival.map((o) => o.sourceId).join(' ');
          expect(recordsOf(book), order).to.deep.equal(s.records);
          expect(status, order).to.equal(s.truth.status);
          expect(state.refundedMinor, order).to.equal(s.truth.refunded);
          expect(state.disputedMinor, order).to.equal(s.truth.disputed);
          expect(state.capturedMinor, order).to.equal(AMOUNT);
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 150) },
    );
  });
});

describe('dispute records: the rule, case by case', () => {
  const day = (n: number) => T0 + n * DAY;
  const input = (over: Partial<DisputeInput>): DisputeInput => ({
    news: null,
    standing: { disputed: true, at: null },
    now: day(100),
    ...over,
  });
  const chargeback = (at: number | null, amountMinor: number | null = 500) =>
    ({ kind: 'chargeback', at, amountMinor, defaultMinor: 9000 }) as const;
  const entry = (over: Partial<DisputeEntry>): DisputeEntry => ({
    id: 'dsp_1',
    chargedBackAt: day(10),
    openedAt: day(10),
    amountMinor: 500,
    outcome: 'open',
    closedAt: null,
    closedBy: null,
    ...over,
  });

  it('a reversal heard before its chargeback is kept, and closes the chargeback when it comes', () => {
    const first = planDisputes(EMPTY_BOOK, input({ news: { kind: 'reversal', at: day(40) } }));
    expect(first).to.deep.equal({ records: [], reversals: [day(40)] });
    const book = bookAfter(EMPTY_BOOK, first, () => 'dsp_x');
    const second = planDisputes(book, input({ news: chargeback(day(10)) }));
    expect(second.records).to.deep.equal([
      entry({ id: null, outcome: 'won', closedAt: day(40), closedBy: 'gateway' }),
    ]);
    expect(second.reversals).to.deep.equal([]);
  });

  it('a poll that finds the payment captured again closes the record at its time; the reversal heard later moves it to its own', () => {
    const book = { records: [entry({})], reversals: [] };
    const polled = planDisputes(book, input({ standing: { disputed: false, at: day(60) } }));
    expect(polled.records).to.deep.equal([entry({ outcome: 'won', closedAt: day(60), closedBy: 'gateway' })]);
    const after = bookAfter(book, polled, () => 'dsp_x');
    const announced = planDisputes(
      after,
      input({ news: { kind: 'reversal', at: day(40) }, standing: { disputed: false, at: day(60) } }),
    );
    expect(announced.records).to.deep.equal([
      entry({ outcome: 'won', closedAt: day(40), closedBy: 'gateway' }),
    ]);
    // Later news never moves it later: the earliest moment known not charged back stands.
    const later = planDisputes(
      bookAfter(after, announced, () => 'dsp_y'),
      input({ news: { kind: 'reversal', at: day(90) }, standing: { disputed: false, at: day(90) } }),
    );
    expect(later.records).to.deep.equal([]);
  });

  it("an operator's lost gives way to the gateway's reversal", () => {
    const lost = entry({ outcome: 'lost', closedAt: day(20), closedBy: 'fran' });
    const plan = planDisputes(
      { records: [lost], reversals: [] },
      input({ news: { kind: 'reversal', at: day(30) } }),
    );
    expect(plan.records).to.deep.equal([entry({ outcome: 'won', closedAt: day(30), closedBy: 'gateway' })]);
  });

  it('a said amount replaces a default one, never the other way round', () => {
    const unsaid = planDisputes(EMPTY_BOOK, input({ news: chargeback(day(10), null) }));
    expect(unsaid.records[0]).to.include({ amountMinor: 9000 });
    const book = bookAfter(EMPTY_BOOK, unsaid, () => 'dsp_1');
    const said = planDisputes(book, input({ news: chargeback(day(10), 700) }));
    expect(said.records).to.deep.equal([entry({ amountMinor: 700 })]);
    const again = planDisputes(
      bookAfter(book, said, () => 'x'),
      input({ news: chargeback(day(10), null) }),
    );
    expect(again.records).to.deep.equal([]);
  });

  it("a chargeback without a time (a session's status) is the open record, dated when a record says when", () => {
    const untimed = planDisputes(EMPTY_BOOK, input({ news: chargeback(null) }));
    expect(untimed.records).to.deep.equal([entry({ id: null, chargedBackAt: null, openedAt: day(100) })]);
    const book = bookAfter(EMPTY_BOOK, untimed, () => 'dsp_1');
    // Said again without a time: the same record.
    expect(planDisputes(book, input({ news: chargeback(null) })).records).to.deep.equal([]);
    // Its event dates it.
    expect(planDisputes(book, input({ news: chargeback(day(10)) })).records).to.deep.equal([entry({})]);
    // Old news without a time, the payment no longer disputed: no record.
    expect(
      planDisputes(EMPTY_BOOK, input({ news: chargeback(null), standing: { disputed: false, at: day(5) } })),
    ).to.deep.equal({ records: [], reversals: [] });
  });
});
