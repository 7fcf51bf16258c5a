import { afterClose } from './closure.js';
import {
  isFinding,
  isReview,
  type Observation,
  type TransactionFact,
  type TransactionObservation,
} from './observation.js';
import { wasResolved, withReason } from './review.js';
import type { CloseReason, OrderStatus } from './status.js';

/** What the gateway has told us about one attempt's money: facts that only grow. */
export interface PaymentState {
  status: OrderStatus;
  /** Null until a record says how much was captured (a captured auth's own record does not). */
  capturedMinor: number | null;
  refundedMinor: number;
  /** The capture record's id, once seen: a second, different one is a double capture. */
  captureId: string | null;
  /**
   * The gateway's time (`updated_at`) of the latest record seen once money moved: whether the
   * payment is charged back now is what the latest record says (a reversal follows a chargeback).
   */
  moneyAt: number | null;
  /** What a chargeback took back (sandbox.md section 11): 0 unless the payment is disputed now. */
  disputedMinor: number;
}

export const INITIAL_PAYMENT: PaymentState = {
  status: 'pending',
  capturedMinor: null,
  refundedMinor: 0,
  captureId: null,
  moneyAt: null,
  disputedMinor: 0,
};

export interface AttemptFacts {
  kind: 'card' | 'redirect';
  /** A sale (a card sale or a session) captures its whole amount: any sign of capture says how much. */
  sale: boolean;
  /** The sale, auth or session transaction this attempt made; null until the gateway has one. */
  transactionId: string | null;
  /** Whether the order follows this attempt; a superseded one only records what it hears. */
  current: boolean;
  state: PaymentState;
}

export interface OrderFacts {
  status: OrderStatus;
  amountMinor: number;
  currency: string;
  /** What a person was already asked to look at (null when the order is not flagged). */
  reviewReason?: string | null;
  /** The review reasons a person resolved (`; `-joined): not asked again. */
  resolvedReasons?: string | null;
  /** Why the order ended, once it did (closure.ts afterClose); null or absent while it is open. */
  closedReason?: CloseReason | null;
}

export type Outcome = 'applied' | 'duplicate' | 'stale' | 'flagged';

export interface Decision {
  outcome: Outcome;
  /** The attempt's next state. */
  attempt: PaymentState;
  /** The order's next status: the current attempt's. */
  orderStatus: OrderStatus;
  /** Set when the money needs a person: never silently accepted or dropped (merchant.md, Orders). */
  review: string | null;
  /** Why it was not applied, or what was flagged; for the history. */
  note: string | null;
}

/** What one record says: a status and whatever amounts it carries. */
interface Reading {
  status: OrderStatus;
  capturedMinor?: number;
  refundedMinor?: number;
  captureId?: string;
  /** A chargeback's amount, when the record says it (a gateway without `chargeback_amount` does not). */
  disputedMinor?: number;
  /** The record's gateway time, when it says one. */
  at?: number | null;
}

/** Where a status sits on the way a payment goes; failed, cancelled, expired and voided are dead ends. */
type Line = 'live' | 'dead' | 'void';
const PLACE: Record<OrderStatus, { line: Line; rank: number }> = {
  pending: { line: 'live', rank: 0 },
  requires_action: { line: 'live', rank: 1 },
  authorized: { line: 'live', rank: 2 },
  paid: { line: 'live', rank: 3 },
  partially_refunded: { line: 'live', rank: 3 },
  refunded: { line: 'live', rank: 3 },
  disputed: { line: 'live', rank: 4 },
  failed: { line: 'dead', rank: 3 },
  cancelled: { line: 'dead', rank: 3 },
  expired: { line: 'dead', rank: 3 },
  voided: { line: 'void', rank: 3 },
  // An order's status, never a payment's: here only because attempts share the type.
  closed: { line: 'dead', rank: 3 },
};

/**
 * What an observation says about the attempt. A transaction record is the attempt's own (sale, auth,
 * session sale) or a child pointing at it (capture, refund, void); a finding is read as it is said.
 * Null: a status we do not know.
 */
export function interpret(obs: Observation, attempt: AttemptFacts): Reading | null {
  if (isFinding(obs)) return isReview(obs.finding) ? null : { status: obs.finding.status };
  const reading = readRecord(obs, attempt);
  return reading && { ...reading, at: obs.transaction.updatedAt ?? null };
}

/** What a transaction record says about the attempt (interpret's reading, before its time). */
function readRecord(obs: TransactionObservation, attempt: AttemptFacts): Reading | null {
  const t = obs.transaction;
  const refunds = t.refundedMinor > 0 ? { refundedMinor: t.refundedMinor } : {};
  const charged =
    t.status === 'chargeback' && typeof t.chargebackMinor === 'number' && t.chargebackMinor > 0
      ? { disputedMinor: t.chargebackMinor }
      : {};
  if (t.id !== attempt.transactionId) {
    if (
      t.type === 'capture' &&
      (t.status === 'captured' || t.status === 'refunded' || t.status === 'chargeback')
    ) {
      return {
        status: t.status === 'chargeback' ? 'disputed' : 'paid',
        capturedMinor: t.amountMinor,
        captureId: t.id,
        ...refunds,
        ...charged,
      };
    }
    if (t.type === 'refund' && t.status === 'refunded') return { status: 'paid', ...refunds };
    if (t.type === 'void' && t.status === 'voided') return { status: 'voided' };
    return null;
  }
  // A sale captures its whole amount; a captured auth's own record does not say how much.
  const sale = t.type === 'sale' ? { capturedMinor: t.amountMinor } : {};
  switch (t.status) {
    case 'pending':
      return { status: attempt.kind === 'redirect' ? 'requires_action' : 'pending' };
    case 'auth':
      return { status: 'authorized' };
    case 'captured':
      return { status: 'paid', ...sale, ...refunds };
    case 'refunded': // fully refunded: what was captured is what was refunded
      return { status: 'paid', ...sale, capturedMinor: t.refundedMinor, ...refunds };
    case 'chargeback':
      return { status: 'disputed', ...sale, ...refunds, ...charged };
    case 'voided':
      return { status: 'voided' };
    case 'failed':
      return { status: 'failed' };
    case 'cancelled':
      // An approved auth, the only kind with a deadline, is cancelled only by lapsing (sandbox.md
      // section 11); a risk-blocked one has none. A session's own status tells expired the same way.
      if (lapsedAuth(t) || obs.sessionStatus === 'expired') return { status: 'expired' };
      return { status: 'cancelled' };
  }
  return null;
}

const lapsedAuth = (t: TransactionFact) =>
  t.type === 'auth' && t.status === 'cancelled' && t.captureBefore !== undefined && t.captureBefore !== null;

/** Whether `reading` can be true of a payment already known as `current`. */
function conflict(current: OrderStatus, reading: OrderStatus): boolean {
  // An authorisation lapses: expired follows authorized, and authorized after expired is old news.
  if (
    (current === 'authorized' && reading === 'expired') ||
    (current === 'expired' && reading === 'authorized')
  )
    return false;
  const a = PLACE[current];
  const b = PLACE[reading];
  if (b.line === 'dead') return a.line === 'void' || (a.line === 'live' && a.rank >= 2);
  if (b.line === 'void') return a.line === 'dead' || (a.line === 'live' && a.rank >= 3);
  // Money cannot move on a payment that ended; earlier news about it is merely old.
  return a.line !== 'live' && (b.rank >= 3 || (a.line === 'dead' && b.rank === 2));
}

/** Joins what we knew with what the record says: amounts only grow, the first ending stands. */
function merge(current: PaymentState, r: Reading): PaymentState {
  const refundedMinor = Math.max(current.refundedMinor, r.refundedMinor ?? 0);
  const known = [current.capturedMinor, r.capturedMinor].filter(
    (n): n is number => n !== undefined && n !== null,
  );
  const capturedMinor = known.length > 0 ? Math.max(...known) : null;
  const captureId = current.captureId ?? r.captureId ?? null;
  const a = PLACE[current.status];
  const b = PLACE[r.status];
  const moneyAt =
    movedMoney(r.status) && typeof r.at === 'number'
      ? Math.max(current.moneyAt ?? r.at, r.at)
      : current.moneyAt;
  let status: OrderStatus;
  // Once money moved, the latest record by the gateway's time says whether it is charged back: a
  // captured record after a chargeback is its reversal; one before it is old news.
  const timed = typeof r.at === 'number' && current.moneyAt !== null;
  if (movedMoney(current.status) && movedMoney(r.status) && timed && r.at !== current.moneyAt)
    status = r.at! > current.moneyAt! ? r.status : current.status;
  else if (a.line === 'live' && b.line === 'live') status = b.rank > a.rank ? r.status : current.status;
  else if (a.line === 'live') status = r.status;
  // A session's own status can say expired where its transaction only says cancelled: the finer word wins.
  else status = current.status === 'cancelled' && r.status === 'expired' ? 'expired' : current.status;
  if (status === 'paid' || status === 'partially_refunded' || status === 'refunded') {
    status =
      refundedMinor === 0
        ? 'paid'
        : capturedMinor !== null && refundedMinor >= capturedMinor
          ? 'refunded'
          : 'partially_refunded';
  }
  const disputedMinor = status === 'disputed' ? disputedAmount(current, r, capturedMinor, refundedMinor) : 0;
  return { status, capturedMinor, refundedMinor, captureId, moneyAt, disputedMinor };
}

/**
 * What a disputed payment's chargeback took: the amount of the record that says so, unless an
 * earlier one (by the gateway's time) than what we know; else what we knew; else, from a record
 * that does not say (a session, a gateway without `chargeback_amount`), all that was not refunded.
 */
function disputedAmount(
  current: PaymentState,
  r: Reading,
  capturedMinor: number | null,
  refundedMinor: number,
): number {
  const older = typeof r.at === 'number' && current.moneyAt !== null && r.at < current.moneyAt;
  const known = current.status === 'disputed' && current.disputedMinor > 0;
  if (r.status === 'disputed' && r.disputedMinor !== undefined && !(older && known)) return r.disputedMinor;
  if (known) return current.disputedMinor;
  return Math.max(0, (capturedMinor ?? 0) - refundedMinor);
}

/** Statuses after money moved: paid, refunded in part or in full, or charged back. */
const movedMoney = (s: OrderStatus) => PLACE[s].line === 'live' && PLACE[s].rank >= 3;

/**
 * A reading that adds nothing is old news when it is from an earlier stage, a smaller refund total,
 * or, once money moved, an earlier gateway time than the latest record's: a chargeback that arrives
 * after its own reversal is older news, not the same news again.
 */
function behind(current: PaymentState, r: Reading): boolean {
  const a = PLACE[current.status];
  const b = PLACE[r.status];
  if (a.line !== b.line) return true;
  const earlier =
    movedMoney(r.status) && typeof r.at === 'number' && current.moneyAt !== null && r.at < current.moneyAt;
  return b.rank < a.rank || (r.refundedMinor ?? 0) < current.refundedMinor || earlier;
}

const same = (a: PaymentState, b: PaymentState) =>
  a.status === b.status &&
  a.capturedMinor === b.capturedMinor &&
  a.refundedMinor === b.refundedMinor &&
  a.captureId === b.captureId &&
  a.moneyAt === b.moneyAt &&
  a.disputedMinor === b.disputedMinor;

/** Money checks: what does not match the order is flagged, whatever else happens. */
function moneyProblem(
  order: OrderFacts,
  attempt: AttemptFacts,
  obs: Observation,
  next: PaymentState,
): string | null {
  if (isFinding(obs)) return null; // no money was involved: nothing existed at the gateway
  const t = obs.transaction;
  if (t.currency !== order.currency)
    return `currency ${t.currency} differs from the order's ${order.currency}`;
  if (t.id === attempt.transactionId && t.amountMinor !== order.amountMinor) {
    return `amount ${t.amountMinor} differs from the order's ${order.amountMinor}`;
  }
  if (next.capturedMinor !== null && next.capturedMinor > order.amountMinor) {
    return `captured ${next.capturedMinor} exceeds the order's ${order.amountMinor}`;
  }
  if (next.capturedMinor !== null && next.refundedMinor > next.capturedMinor) {
    return `refunded ${next.refundedMinor} exceeds captured ${next.capturedMinor}`;
  }
  if (t.type === 'capture' && attempt.state.captureId !== null && attempt.state.captureId !== t.id) {
    return `a second capture ${t.id} after ${attempt.state.captureId}`;
  }
  if (!attempt.current && PLACE[next.status].line === 'live' && PLACE[next.status].rank >= 2) {
    return `money moved on a superseded attempt (${next.status}): a double charge`;
  }
  return null;
}

/**
 * What one observation does to a payment's state, before any check against an order: the core of
 * decide, which gateway money with no order goes through as well (unmatched-money.ts), so both read
 * the gateway's records by one rule.
 */
export type PaymentStep =
  /** A status we do not know: nothing changes (decide flags it). */
  | { kind: 'unknown' }
  /** What the record says (`reading`) cannot be true of the payment as known: nothing changes (decide flags it). */
  | { kind: 'conflict'; reading: OrderStatus }
  | {
      kind: 'next';
      next: PaymentState;
      reading: OrderStatus;
      /** It adds nothing to what was known. */
      same: boolean;
      /** It adds nothing and is older news: an earlier stage, a smaller refund total, an earlier gateway time. */
      stale: boolean;
    };

/**
 * The payment after one observation. `saleMinor`: what a sale captures when its record does not say
 * (a session's sale, a finding): the order's amount.
 */
export function paymentStep(attempt: AttemptFacts, obs: Observation, saleMinor: number): PaymentStep {
  const reading = interpret(obs, attempt);
  if (!reading) return { kind: 'unknown' };
  if (conflict(attempt.state.status, reading.status)) return { kind: 'conflict', reading: reading.status };
  if (attempt.sale && movedMoney(reading.status) && reading.capturedMinor === undefined)
    reading.capturedMinor = saleMinor;
  const next = merge(attempt.state, reading);
  const unchanged = same(next, attempt.state);
  return {
    kind: 'next',
    next,
    reading: reading.status,
    same: unchanged,
    stale: unchanged && behind(attempt.state, reading),
  };
}

/**
 * One payment from what several of its records came to, each on its own (gateway money with no order
 * keeps a row per transaction: a sale, its refunds; an auth, its capture): each state is read as a
 * record and merged, as an attempt merges its records, so the latest by the gateway's time says
 * whether the payment is charged back, and amounts only grow. Whatever the order of `states`.
 */
export function joinPayment(states: readonly PaymentState[]): PaymentState {
  return states.reduce<PaymentState>((joined, s) => merge(joined, readingOf(s)), INITIAL_PAYMENT);
}

/** A payment's state as a record that says all of it. */
function readingOf(s: PaymentState): Reading {
  return {
    status: s.status,
    ...(s.capturedMinor === null ? {} : { capturedMinor: s.capturedMinor }),
    refundedMinor: s.refundedMinor,
    ...(s.captureId === null ? {} : { captureId: s.captureId }),
    ...(s.status === 'disputed' && s.disputedMinor > 0 ? { disputedMinor: s.disputedMinor } : {}),
    at: s.moneyAt,
  };
}

/**
 * The one state machine every observation goes through (DESIGN.md section 2). Pure. The same
 * observation twice changes nothing; one older than what the order reflects changes nothing; the
 * result does not depend on the order observations arrive in; what does not add up is flagged.
 * Findings (the checkout's own readings of an attempt the gateway has no transaction for yet) follow
 * the same rules: a challenge moves pending to requires_action, a refusal ends the attempt, and
 * neither undoes what a transaction record already said (that is flagged, never applied).
 */
export function decide(order: OrderFacts, attempt: AttemptFacts, obs: Observation): Decision {
  // A closed order stays closed unless money reaches it, which is applied and flagged (closure.ts).
  const decision = afterClose(order, judge(order, attempt, obs));
  if (!decision.review || !wasResolved(order.resolvedReasons, decision.review)) return decision;
  // A person resolved this very finding (POST /orders/{id}/review): it is recorded again, and the
  // gateway's truth still applied, but nobody is asked again. A new finding still flags.
  return {
    ...decision,
    outcome:
      decision.outcome !== 'flagged'
        ? decision.outcome
        : same(decision.attempt, attempt.state)
          ? 'duplicate'
          : 'applied',
    review: null,
    note: `${decision.note ?? decision.review} (resolved by a person before)`,
  };
}

function judge(order: OrderFacts, attempt: AttemptFacts, obs: Observation): Decision {
  const keep = (outcome: Outcome, note: string | null, review: string | null = null): Decision => ({
    outcome,
    attempt: attempt.state,
    orderStatus: order.status,
    review,
    note,
  });
  if (isFinding(obs) && isReview(obs.finding)) {
    // A person is asked once per reason: the same reason again (the next poll) is nothing new.
    const reason = obs.finding.review;
    const known = !!order.reviewReason && withReason(order.reviewReason, reason) === order.reviewReason;
    return known ? keep('duplicate', null) : keep('flagged', reason, reason);
  }
  const step = paymentStep(attempt, obs, order.amountMinor);
  if (step.kind === 'unknown') {
    const t = (obs as TransactionObservation).transaction; // findings always have a reading
    const note = `unknown ${t.type} status ${t.status}`;
    return keep('flagged', note, note); // never persisted, only recorded and flagged
  }
  if (step.kind === 'conflict') {
    const note = `${step.reading} cannot follow ${attempt.state.status}`;
    return keep('flagged', note, note);
  }
  const { next } = step;
  const orderStatus = attempt.current ? next.status : order.status;
  // Checked before anything is called a duplicate: a capture of another amount adds nothing, and is
  // still money that does not match.
  const problem = moneyProblem(order, attempt, obs, next);
  if (step.same) {
    if (problem) return keep('flagged', problem, problem);
    return step.stale
      ? keep('stale', `${step.reading} is older than ${attempt.state.status}`)
      : keep('duplicate', null);
  }
  // The gateway's truth is applied even when it is wrong for us: the money moved, and a person must look.
  if (problem) return { outcome: 'flagged', attempt: next, orderStatus, review: problem, note: problem };
  // A finding's history says what was found: the gateway's code, or the challenge.
  const note = isFinding(obs) && !isReview(obs.finding) ? (obs.finding.code ?? 'action_required') : null;
  return { outcome: 'applied', attempt: next, orderStatus, review: null, note };
}
