import { type AttemptFacts, type Decision, decide } from '../orders/decide.js';
import { type GatewayView, viewAfter } from '../orders/gateway-view.js';
import { isFinding, type Observation, type TransactionFact } from '../orders/observation.js';
import { nextPollAt, pollable } from '../orders/poll-schedule.js';
import { withReason } from '../orders/review.js';
import type { Change, Store } from '../store/index.js';
import type { AttemptRecord, OrderRecord } from '../store/records.js';

export interface ApplyResult {
  /** False: no attempt of ours made that transaction (yet). */
  matched: boolean;
  orderId?: string;
  decision?: Decision;
}

export interface ApplyOptions {
  /**
   * A scheduled check (the poller): when it finds nothing new it leaves no history line, so an order
   * polled for a month does not carry 57 lines saying nothing. Default false: every observation is
   * history (merchant.md, Orders).
   */
  routine?: boolean;
  /** The inbox event the observation was read from: marked processed in the same transaction as its change. */
  inboxEventId?: string;
}

/** The one apply path, as every source receives it: the worker, checkout, landings, poller, recovery. */
export type Apply = (obs: Observation, options?: ApplyOptions) => Promise<ApplyResult>;

export function applier(store: Pick<Store, 'orders' | 'attempts'>): Apply {
  return (obs, options) => applyObservation(store, obs, options);
}

/**
 * Applies one observation, whatever its source (DESIGN.md section 2): finds the attempt it is about,
 * then, under the order's row lock, lets `decide` judge it and writes what it decided with its
 * history line, in one transaction.
 */
export async function applyObservation(
  store: Pick<Store, 'orders' | 'attempts'>,
  obs: Observation,
  options: ApplyOptions = {},
): Promise<ApplyResult> {
  const found = isFinding(obs)
    ? await store.attempts.get(obs.attemptId)
    : ((await holderOf(store, obs.transaction)) ?? (await adopt(store, obs.transaction)));
  if (!found) return { matched: false };
  return store.orders.transition(found.order_id, found.id, (order, attempt, now) => {
    const facts = attemptFacts(order, attempt);
    const decision = decide(
      { status: order.status, amountMinor: order.amount_minor, currency: order.currency },
      facts,
      obs,
    );
    const change = changeOf(order, attempt, facts, obs, decision, now);
    if (options.routine && decision.outcome === 'duplicate') change.history = null;
    if (options.inboxEventId) change.processed = { eventId: options.inboxEventId, outcome: decision.outcome };
    return { change, result: { matched: true, orderId: order.id, decision } };
  });
}

/**
 * The attempt that made this transaction (or its parent). A transaction id alone is not enough: a
 * gateway that numbers again (a sandbox started afresh) can give a new payment the id an old attempt
 * holds, so the transaction's reference must be its order's. Without a reference (a record that
 * does not carry one), only a single holder of the id is trusted.
 */
async function holderOf(store: Pick<Store, 'attempts'>, t: TransactionFact): Promise<AttemptRecord | null> {
  const ids = [t.id, ...(t.relatedId ? [t.relatedId] : [])];
  const holders = await store.attempts.holding(ids, t.reference ?? null);
  if (!t.reference) return holders.length === 1 ? holders[0]! : null;
  return holders[0] ?? null;
}

/**
 * A payment the gateway made whose id the kit never stored (it crashed, or a write failed, between
 * the gateway's answer and storing the id): the order's reference finds it, and the order's current
 * attempt, if it has no transaction yet, takes this one. Only a sale's or auth's own record adopts.
 */
async function adopt(store: Pick<Store, 'attempts'>, t: TransactionFact): Promise<AttemptRecord | null> {
  if (!t.reference || t.relatedId !== null || (t.type !== 'sale' && t.type !== 'auth')) return null;
  return store.attempts.adopt(t.reference, t.id);
}

function attemptFacts(order: OrderRecord, attempt: AttemptRecord): AttemptFacts {
  return {
    kind: attempt.kind,
    sale: attempt.kind === 'redirect' || attempt.mode === 'sale',
    transactionId: attempt.gateway_transaction_id,
    current: order.current_attempt_id === attempt.id,
    state: {
      status: attempt.status,
      capturedMinor: attempt.captured_minor,
      refundedMinor: attempt.refunded_minor,
      captureId: attempt.capture_id,
    },
  };
}

/**
 * What the decision writes: the attempt's money, the order's if it follows this attempt, the review,
 * and when to poll next (the schedule starts again from a change; a final order is not polled).
 */
function changeOf(
  order: OrderRecord,
  attempt: AttemptRecord,
  facts: AttemptFacts,
  obs: Observation,
  decision: Decision,
  now: Date,
): Change {
  const next = decision.attempt;
  const ended = next.status === 'failed' || next.status === 'cancelled';
  const code = isFinding(obs) ? obs.finding.code : (obs.transaction.statusReason ?? null);
  const failureCode = ended ? (code ?? attempt.failure_code) : attempt.failure_code;
  // What the gateway said, kept beside the order for the report; older news does not replace newer.
  const view = isFinding(obs) || decision.outcome === 'stale' ? null : viewAfter(viewOf(attempt), obs, facts);
  return {
    // decide returns the very same state object when nothing changed
    attempt: {
      ...(next === facts.state
        ? {}
        : {
            status: next.status,
            captured_minor: next.capturedMinor,
            refunded_minor: next.refundedMinor,
            capture_id: next.captureId,
            failure_code: failureCode,
          }),
      ...(view ? viewColumns(view) : {}),
    },
    order: {
      status: decision.orderStatus,
      ...(facts.current ? { captured_minor: next.capturedMinor, refunded_minor: next.refundedMinor } : {}),
      ...(facts.current && ended ? { failure_code: failureCode } : {}),
      ...(decision.review
        ? { needs_review: true, review_reason: withReason(order.review_reason, decision.review) }
        : {}),
      ...(facts.current && (decision.outcome === 'applied' || decision.outcome === 'flagged')
        ? { next_poll_at: pollAfterChange(decision, attempt, now) }
        : {}),
    },
    history: { source: obs.source, sourceId: obs.sourceId, outcome: decision.outcome, detail: decision.note },
  };
}

function viewOf(a: AttemptRecord): GatewayView | null {
  if (a.gateway_status === null || a.observed_at === null) return null;
  return {
    status: a.gateway_status,
    amountMinor: a.gateway_amount_minor ?? 0,
    currency: a.gateway_currency ?? '',
    capturedMinor: a.gateway_captured_minor,
    refundedMinor: a.gateway_refunded_minor ?? 0,
    observedAt: a.observed_at.getTime(),
    source: a.observed_source as GatewayView['source'],
  };
}

function viewColumns(v: GatewayView) {
  return {
    gateway_status: v.status,
    gateway_amount_minor: v.amountMinor,
    gateway_currency: v.currency,
    gateway_captured_minor: v.capturedMinor,
    gateway_refunded_minor: v.refundedMinor,
    observed_at: new Date(v.observedAt),
    observed_source: v.source,
  };
}

function pollAfterChange(decision: Decision, attempt: AttemptRecord, now: Date): Date | null {
  if (!pollable(decision.orderStatus, attempt)) return null;
  const at = nextPollAt(now.getTime(), now.getTime(), attempt.session_expires_at?.getTime() ?? null);
  return at === null ? null : new Date(at);
}
