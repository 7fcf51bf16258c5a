import { expect } from 'chai';
import fc from 'fast-check';
import {
  type AttemptFacts,
  decide,
  INITIAL_PAYMENT,
  type PaymentState,
} from '../../../src/merchant/orders/decide.js';
import type { Observation, TransactionFact } from '../../../src/merchant/orders/observation.js';
import type { OrderStatus } from '../../../src/merchant/orders/status.js';

/**
 * For random event streams of a transaction's life, shuffled, duplicated and partly dropped but for
 * the last event (the kit's own API answers are never lost: it made those calls), plus polls at
 * random points, the final order state equals what the gateway says, and no refund ever exceeds the
 * capture.
 */

const AMOUNT = 10_000;
const PARENT = '100';

interface Story {
  kind: 'card' | 'redirect';
  sale: boolean;
  /** Every observation the world produces, in the order the gateway made them. */
  events: Observation[];
  /** The kit's own answers: never dropped. */
  answers: Observation[];
  /** What the gateway says at the end. */
  truth: { status: OrderStatus; refunded: number; captured: number | null; disputed?: number };
  /** Parent records as they were after each step, for polls. */
  snapshots: TransactionFact[];
}

let seq = 0;
const obs = (source: Observation['source'], t: TransactionFact, sessionStatus?: string): Observation => ({
  source,
  sourceId: `${source}:${++seq}`,
  observedAt: seq,
  transaction: t,
  ...(sessionStatus ? { sessionStatus } : {}),
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

/**
 * Refund amounts that sum to at most `captured`, an optional chargeback after them (of `part` percent
 * of what is left: a partial one too, sandbox.md section 11), and its reversal.
 */
const afterCapture = fc.record({
  refunds: fc.array(fc.integer({ min: 1, max: 4000 }), { maxLength: 4 }),
  chargeback: fc.option(fc.integer({ min: 1, max: 100 }), { nil: null }),
  reversed: fc.boolean(),
  /** After a reversal, charged back again (of this percent): the latest chargeback's amount stands. */
  again: fc.option(fc.integer({ min: 1, max: 100 }), { nil: null }),
});

const storyArb: fc.Arbitrary<Story> = fc.oneof(
  // A card sale, then refunds and perhaps a chargeback.
  afterCapture.map(({ refunds, chargeback, reversed, again }) =>
    build('card', 'sale', AMOUNT, refunds, chargeback, reversed, again),
  ),
  // A card auth, then a (partial) capture with refunds, or a void, or nothing more, or its lapse.
  fc
    .record({
      next: fc.constantFrom('capture', 'void', 'none', 'lapse'),
      captured: fc.integer({ min: 1, max: AMOUNT }),
      rest: afterCapture,
    })
    .map(({ next, captured, rest }) => {
      if (next === 'capture')
        return build('card', 'auth', captured, rest.refunds, rest.chargeback, rest.reversed, rest.again);
      const s = start('card', false);
      // An approved auth carries its deadline for its whole life.
      const auth = record({ type: 'auth', status: 'auth', captureBefore: 7 * 86_400_000 });
      s.answers.push(obs('api', auth));
      s.snapshots.push(auth);
      if (next === 'none')
        return { ...s, truth: { status: 'authorized', refunded: 0, captured: null } } as Story;
      if (next === 'lapse') {
        // sandbox.md section 11: neither captured nor voided in time, the auth is cancelled.
        const lapsed = { ...auth, status: 'cancelled' };
        s.events.push(obs('webhook', lapsed));
        s.snapshots.push(lapsed);
        return { ...s, truth: { status: 'expired', refunded: 0, captured: null } } as Story;
      }
      const voided = record({ type: 'auth', status: 'voided' });
      s.answers.push(obs('api', record({ id: 'v1', relatedId: PARENT, type: 'void', status: 'voided' })));
      s.events.push(obs('webhook', record({ id: 'v1', relatedId: PARENT, type: 'void', status: 'voided' })));
      s.snapshots.push(voided);
      return { ...s, truth: { status: 'voided', refunded: 0, captured: null } } as Story;
    }),
  // A redirect session: paid (then refunds), failed, cancelled or expired.
  fc
    .record({ end: fc.constantFrom('paid', 'failed', 'cancelled', 'expired'), rest: afterCapture })
    .map(({ end, rest }) => {
      if (end === 'paid')
        return build('redirect', 'sale', AMOUNT, rest.refunds, rest.chargeback, rest.reversed, rest.again);
      const s = start('redirect');
      const pending = record({ status: 'pending' });
      s.answers.push(obs('api', pending, 'pending_redirect'));
      s.snapshots.push(pending);
      const final = record({ status: end === 'failed' ? 'failed' : 'cancelled' });
      s.events.push(obs('webhook', final));
      s.snapshots.push(final);
      // A poll of the session after it ended tells expired from cancelled; the transaction alone cannot.
      s.events.push(obs('poll', final, end === 'expired' ? 'expired' : end));
      return { ...s, truth: { status: end, refunded: 0, captured: null } } as Story;
    }),
);

function start(kind: 'card' | 'redirect', sale = true): Story {
  return {
    kind,
    sale,
    events: [],
    answers: [],
    snapshots: [],
    truth: { status: 'pending', refunded: 0, captured: null },
  };
}

function build(
  kind: 'card' | 'redirect',
  type: 'sale' | 'auth',
  captured: number,
  refunds: number[],
  chargeback: number | null,
  reversed = false,
  again: number | null = null,
): Story {
  const s = start(kind, type === 'sale');
  // The gateway's clock: every record a step makes carries the time of that step (its updated_at).
  let at = 1;
  let parent: TransactionFact;
  if (type === 'sale') {
    if (kind === 'redirect') {
      const pending = record({ status: 'pending' });
      s.answers.push(obs('api', pending, 'pending_redirect'));
      s.snapshots.push(pending);
    }
    parent = record({ updatedAt: at });
    (kind === 'card' ? s.answers : s.events).push(obs(kind === 'card' ? 'api' : 'webhook', parent));
    if (kind === 'card') s.events.push(obs('webhook', parent));
  } else {
    const auth = record({ type: 'auth', status: 'auth' });
    s.answers.push(obs('api', auth));
    s.snapshots.push(auth);
    const capture = record({
      id: 'c1',
      relatedId: PARENT,
      type: 'capture',
      status: 'captured',
      amountMinor: captured,
      updatedAt: at,
    });
    s.answers.push(obs('api', capture)); // the operator's capture: the kit's own call
    s.events.push(obs('webhook', capture));
    parent = record({ type: 'auth', status: 'captured', updatedAt: at });
  }
  s.snapshots.push(parent);
  let total = 0;
  refunds.forEach((amount, i) => {
    if (total + amount > captured) return;
    total += amount;
    const status = total === captured ? 'refunded' : 'captured';
    at += 1;
    parent = { ...parent, status, refundedMinor: total, updatedAt: at };
    s.events.push(
      obs(
        'webhook',
        record({
          id: `r${i}`,
          relatedId: PARENT,
          type: 'refund',
          status: 'refunded',
          amountMinor: amount,
          refundedMinor: total,
          updatedAt: at,
        }),
      ),
    );
    s.snapshots.push(parent);
  });
  let status: OrderStatus = total === 0 ? 'paid' : total === captured ? 'refunded' : 'partially_refunded';
  let disputed = 0;
  const chargebacks =
    chargeback === null ? [] : reversed && again !== null ? [chargeback, again] : [chargeback];
  for (const [i, part] of chargebacks.entries()) {
    if (total >= captured) break;
    const before = parent;
    const taken = Math.max(1, Math.floor(((captured - total) * part) / 100));
    at += 1;
    parent = { ...parent, status: 'chargeback', chargebackMinor: taken, updatedAt: at };
    s.events.push(obs('webhook', parent));
    // An auth's capture record is charged back with it, and says so too.
    if (type === 'auth')
      s.events.push(
        obs(
          'webhook',
          record({
            id: 'c1',
            relatedId: PARENT,
            type: 'capture',
            status: 'chargeback',
            amountMinor: captured,
            refundedMinor: total,
            chargebackMinor: taken,
            updatedAt: at,
          }),
        ),
      );
    s.snapshots.push(parent);
    status = 'disputed';
    disputed = taken;
    if (reversed && i === 0) {
      // The dispute is won (sandbox.md section 11): the record is captured again, later, with nothing taken.
      at += 1;
      parent = { ...before, chargebackMinor: 0, updatedAt: at };
      s.events.push(obs('webhook', parent));
      s.snapshots.push(parent);
      status = total === 0 ? 'paid' : 'partially_refunded';
      disputed = 0;
    }
  }
  return { ...s, truth: { status, refunded: total, captured, disputed } };
}

/** Shuffled, duplicated, partly dropped but for the last event; the answers kept; polls sprinkled in. */
const deliveryArb = (story: Story) =>
  fc
    .record({
      keep: fc.array(fc.boolean(), { minLength: story.events.length, maxLength: story.events.length }),
      dupes: fc.array(fc.nat({ max: 20 }), { maxLength: 4 }),
      polls: fc.array(fc.nat({ max: story.snapshots.length - 1 }), { maxLength: 3 }),
      order: fc.array(fc.integer(), { minLength: 64, maxLength: 64 }),
    })
    .map(({ keep, dupes, polls, order }) => {
      const kept = story.events.filter((_, i) => keep[i] || i === story.events.length - 1);
      const all = [...kept, ...story.answers, ...polls.map((i) => obs('poll', story.snapshots[i]!))];
      for (const d of dupes) if (all.length > 0) all.push(all[d % all.length]!);
      return all
        .map((o, i) => ({ o, k: order[i % order.length]! + i / 1000 }))
        .sort((a, b) => a.k - b.k)
        .map(({ o }) => o);
    });

describe('decide (property): the final state is the gateway truth, whatever the arrival', () => {
  it('converges for card sales, card auths and redirect sessions', () => {
    fc.assert(
      fc.property(
        storyArb.chain((story) => deliveryArb(story).map((arrivals) => ({ story, arrivals }))),
        ({ story, arrivals }) => {
          let state: PaymentState = INITIAL_PAYMENT;
          let orderStatus: OrderStatus = story.kind === 'redirect' ? 'requires_action' : 'pending';
          for (const o of arrivals) {
            const attempt: AttemptFacts = {
              kind: story.kind,
              sale: story.sale,
              transactionId: PARENT,
              current: true,
              state,
            };
            const d = decide({ status: orderStatus, amountMinor: AMOUNT, currency: 'EUR' }, attempt, o);
            expect(d.review, `flagged: ${d.note}`).to.equal(null);
            state = d.attempt;
            orderStatus = d.orderStatus;
            if (state.capturedMinor !== null) expect(state.refundedMinor).to.be.at.most(state.capturedMinor);
          }
          expect(orderStatus).to.equal(story.truth.status);
          expect(state.refundedMinor).to.equal(story.truth.refunded);
          expect(state.disputedMinor, 'what the chargeback took').to.equal(story.truth.disputed ?? 0);
          if (story.truth.captured !== null) expect(state.capturedMinor).to.equal(story.truth.captured);
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 2000) },
    );
  });

  it('applying the same observation twice changes nothing the second time', () => {
    fc.assert(
      fc.property(storyArb, (story) => {
        let state: PaymentState = INITIAL_PAYMENT;
        let status: OrderStatus = 'pending';
        for (const o of [...story.answers, ...story.events]) {
          const facts = { status, amountMinor: AMOUNT, currency: 'EUR' };
          const first = decide(
            facts,
            { kind: story.kind, sale: story.sale, transactionId: PARENT, current: true, state },
            o,
          );
          const again = decide(
            { ...facts, status: first.orderStatus },
            {
              kind: story.kind,
              sale: story.sale,
              transactionId: PARENT,
              current: true,
              state: first.attempt,
            },
            o,
          );
          expect(again.outcome).to.be.oneOf(['duplicate', 'stale']);
          expect(again.attempt).to.deep.equal(first.attempt);
          state = first.attempt;
          status = first.orderStatus;
        }
      }),
    );
  });
});
