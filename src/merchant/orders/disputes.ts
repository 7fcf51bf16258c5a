import { type AttemptFacts, type Decision, interpret } from './decide.js';
import { isFinding, type Observation } from './observation.js';

/** Where a dispute stands: the bank's case is open, the merchant won it (reversed), or lost it. */
export const DISPUTE_OUTCOMES = ['open', 'won', 'lost'] as const;
export type DisputeOutcome = (typeof DISPUTE_OUTCOMES)[number];

/** The event a won dispute sends (sandbox.md section 8): the one record that says "reversed". */
export const REVERSAL_EVENT = 'transaction.chargeback_reversed';

/*
 * Dispute records keyed by what the gateway says (issue 44, part 3; docs/merchant-decisions.md,
 * Disputes). The gateway names no dispute: its records carry no chargeback id (gateway-api.md,
 * Webhook payload). What names a chargeback is the payment's transaction and the gateway's time of
 * the move into `chargeback`: the record's `updated_at`, which every later change moves on. So a
 * record is keyed by (the attempt's transaction, that time), whoever tells it (the event, its replay,
 * a poll), and a reversal is the first moment after it at which the payment is not charged back.
 *
 * What the rule keeps, per attempt: its records, and the times of the reversals the gateway announced
 * (a reversal can arrive before the chargeback it ends, or end a chargeback the kit hears of later, so
 * it is kept apart from any record). From those two sets, however they arrived, each record's ending
 * is the same: closed `won` at the earliest reversal after its chargeback.
 */

/** A dispute record as the rule sees it (the store's DisputeRecord, in plain numbers). */
export interface DisputeEntry {
  /** Null: a record the plan makes, given its id where it is written. */
  id: string | null;
  /** The gateway's time of the chargeback (ms); null where the record that told it had no time. */
  chargedBackAt: number | null;
  openedAt: number;
  amountMinor: number;
  outcome: DisputeOutcome;
  closedAt: number | null;
  closedBy: string | null;
}

/** What the rule knows of an attempt's disputes: its records and the reversals announced. */
export interface DisputeBook {
  records: readonly DisputeEntry[];
  /** The gateway's times (ms) of the reversals (`transaction.chargeback_reversed`) heard of. */
  reversals: readonly number[];
}

export const EMPTY_BOOK: DisputeBook = { records: [], reversals: [] };

/** What one observation says about disputes. */
export type DisputeNews =
  | {
      kind: 'chargeback';
      /** The record's `updated_at`; null when it has none (a session's status). */
      at: number | null;
      /** The record's `chargeback_amount`; null when it does not say (then `defaultMinor`). */
      amountMinor: number | null;
      defaultMinor: number;
    }
  | { kind: 'reversal'; at: number };

/** The payment as the kit knows it after the observation (decide's state): not charged back as of `at`. */
export interface Standing {
  disputed: boolean;
  /** The gateway's time of the latest record that moved money; null when none said. */
  at: number | null;
}

export interface DisputeInput {
  news: DisputeNews | null;
  standing: Standing;
  /** The kit's time: the opening of a record whose chargeback had no gateway time. */
  now: number;
}

/** What to write: records made or changed (whole), and reversals not kept yet. */
export interface DisputePlan {
  records: DisputeEntry[];
  reversals: number[];
}

/**
 * The dispute news in an observation of an attempt, as `decide` judged it: a chargeback (the
 * attempt's payment or its capture record in `chargeback`, old news included: an earlier chargeback
 * heard late is still a chargeback), or an announced reversal. Nothing from a record `decide` refused.
 */
export function disputeNewsOf(
  obs: Observation,
  attempt: AttemptFacts,
  decision: Decision,
): DisputeNews | null {
  if (isFinding(obs) || (decision.outcome === 'flagged' && decision.attempt === attempt.state)) return null;
  const reading = interpret(obs, attempt);
  if (!reading) return null;
  const at = typeof reading.at === 'number' ? reading.at : null;
  if (reading.status === 'disputed') {
    const after = decision.attempt;
    const current = after.status === 'disputed' && (at === null || after.moneyAt === at);
    const left = Math.max(0, (after.capturedMinor ?? 0) - after.refundedMinor);
    return {
      kind: 'chargeback',
      at,
      amountMinor: reading.disputedMinor ?? null,
      // sandbox.md section 11: by default a chargeback takes what was captured and not refunded.
      defaultMinor: current && after.disputedMinor > 0 ? after.disputedMinor : left,
    };
  }
  if (obs.eventType === REVERSAL_EVENT && reading.status === 'paid' && at !== null)
    return { kind: 'reversal', at };
  return null;
}

/** The standing `decide` left: what closes a dispute whose reversal was never announced (a poll saw it). */
export const standingOf = (decision: Decision): Standing => ({
  disputed: decision.attempt.status === 'disputed',
  at: decision.attempt.moneyAt,
});

/**
 * The plan for one observation of an attempt, as `decide` judged it: its news, and the standing it
 * left (the apply path's, reconciler/apply.ts). `now`: the kit's time.
 */
export function disputePlanOf(
  book: DisputeBook,
  obs: Observation,
  attempt: AttemptFacts,
  decision: Decision,
  now: number,
): DisputePlan {
  return planDisputes(book, {
    news: disputeNewsOf(obs, attempt, decision),
    standing: standingOf(decision),
    now,
  });
}

/**
 * What one observation does to an attempt's dispute records. Pure, and the records it leaves depend
 * only on what was heard, not on the order it arrived in (test/unit/merchant/disputes.property.test.ts):
 * - a chargeback at time t is the record keyed t: made once, its amount the one a record says (a
 *   record that does not say never replaces one that did);
 * - a chargeback without a time is the latest record not won, or a new one if the payment is
 *   disputed now and none is;
 * - a record keyed t is `won`, closed at the earliest of: the reversals announced after t, the
 *   standing when it says the payment was not charged back at a time after t, and the time it was
 *   closed at already. Each of those is a moment after t when the payment was not charged back, so
 *   the earliest is never earlier than the true reversal, and is it once the reversal is heard of;
 *   an operator's `lost` gives way to it (the gateway's word is the last);
 * - a record without a time is won when the standing says the payment is not charged back.
 */
export function planDisputes(book: DisputeBook, input: DisputeInput): DisputePlan {
  const records = book.records.map((r) => ({ ...r }));
  const reversals = new Set(book.reversals);
  const added: number[] = [];
  const { news, standing } = input;
  if (news?.kind === 'reversal' && !reversals.has(news.at)) {
    reversals.add(news.at);
    added.push(news.at);
  }
  if (news?.kind === 'chargeback') {
    if (news.at !== null) timedChargeback(records, news, news.at);
    else if (standing.disputed) untimedChargeback(records, news, input.now);
  }
  for (const r of records) closeIfOver(r, reversals, standing, input.now);
  const before = new Map(book.records.map((r) => [r.id, r]));
  return {
    records: records.filter((r) => r.id === null || !sameEntry(r, before.get(r.id)!)),
    reversals: added,
  };
}

type Chargeback = Extract<DisputeNews, { kind: 'chargeback' }>;

function timedChargeback(records: DisputeEntry[], news: Chargeback, at: number): void {
  const known = records.find((r) => r.chargedBackAt === at);
  if (known) {
    if (news.amountMinor !== null) known.amountMinor = news.amountMinor;
    return;
  }
  // A record made from a session's word (no time) is this chargeback, now that a record dates it.
  const untimed = latest(records.filter((r) => r.chargedBackAt === null && r.outcome !== 'won'));
  if (untimed) {
    Object.assign(untimed, { chargedBackAt: at, openedAt: at });
    if (news.amountMinor !== null) untimed.amountMinor = news.amountMinor;
    return;
  }
  records.push(opened(at, at, news.amountMinor ?? news.defaultMinor));
}

function untimedChargeback(records: DisputeEntry[], news: Chargeback, now: number): void {
  const current = latest(records.filter((r) => r.outcome !== 'won'));
  if (current) {
    if (news.amountMinor !== null) current.amountMinor = news.amountMinor;
    return;
  }
  records.push(opened(null, now, news.amountMinor ?? news.defaultMinor));
}

function closeIfOver(r: DisputeEntry, reversals: Set<number>, standing: Standing, now: number): void {
  const t = r.chargedBackAt;
  if (t === null) {
    if (r.outcome !== 'won' && !standing.disputed) won(r, standing.at ?? now);
    return;
  }
  const ends = [...reversals].filter((u) => u > t);
  if (!standing.disputed && standing.at !== null && standing.at > t) ends.push(standing.at);
  if (r.outcome === 'won' && r.closedAt !== null) ends.push(r.closedAt);
  if (ends.length > 0) won(r, Math.min(...ends));
}

function won(r: DisputeEntry, at: number): void {
  Object.assign(r, { outcome: 'won', closedAt: at, closedBy: 'gateway' });
}

const opened = (chargedBackAt: number | null, openedAt: number, amountMinor: number): DisputeEntry => ({
  id: null,
  chargedBackAt,
  openedAt,
  amountMinor,
  outcome: 'open',
  closedAt: null,
  closedBy: null,
});

/** The latest record by its opening (ties: the last made). */
function latest(records: DisputeEntry[]): DisputeEntry | undefined {
  return records.reduce<DisputeEntry | undefined>(
    (a, r) => (!a || r.openedAt >= a.openedAt ? r : a),
    undefined,
  );
}

const sameEntry = (a: DisputeEntry, b: DisputeEntry) =>
  a.chargedBackAt === b.chargedBackAt &&
  a.openedAt === b.openedAt &&
  a.amountMinor === b.amountMinor &&
  a.outcome === b.outcome &&
  a.closedAt === b.closedAt &&
  a.closedBy === b.closedBy;

/** The book after a plan is written; `newId` names each record it makes. */
export function bookAfter(book: DisputeBook, plan: DisputePlan, newId: () => string): DisputeBook {
  const changed = new Map(plan.records.filter((r) => r.id !== null).map((r) => [r.id, r]));
  return {
    records: [
      ...book.records.map((r) => changed.get(r.id) ?? r),
      ...plan.records.filter((r) => r.id === null).map((r) => ({ ...r, id: newId() })),
    ],
    reversals: [...book.reversals, ...plan.reversals],
  };
}
