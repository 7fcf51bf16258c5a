import { type AttemptFacts, type Decision, decide } from '../orders/decide.js';
import { type DisputeBook, disputePlanOf } from '../orders/disputes.js';
import { maskNote } from '../orders/event-masking.js';
import { type GatewayView, viewAfter } from '../orders/gateway-view.js';
import {
  type About,
  ACTION_URL_MAX,
  isFinding,
  isReview,
  type Observation,
  type TransactionFact,
  type TransactionObservation,
} from '../orders/observation.js';
import type { SameMerchant } from '../orders/order-merchant.js';
import { nextPollAt, pollable } from '../orders/poll-schedule.js';
import { withReason } from '../orders/review.js';
import type { AttemptStore } from '../store/attempts.js';
import type { Change, Store, TransitionTarget } from '../store/index.js';
import type { LockTurn, OrderStore, Plan } from '../store/orders.js';
import type { AttemptRecord, OrderRecord } from '../store/records.js';

export interface ApplyResult {
  /** False: no attempt of ours made that transaction (yet), or a superseded attempt was asked to adopt it. */
  matched: boolean;
  /**
   * Not matched because the order that holds the transaction (or carries its reference) is another
   * merchant's than the one whose endpoint the event came to (issue 45): it was left as it was.
   */
  foreign?: { orderId: string; orderMerchant: number | null; eventMerchant: number | null };
  orderId?: string;
  decision?: Decision;
  /** The order and the attempt as they stand after the change (when matched). */
  order?: OrderRecord;
  attempt?: AttemptRecord;
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

/** One observation of a batch, with its options. */
export interface ApplyItem {
  obs: Observation;
  options?: ApplyOptions;
}

/**
 * The same path for many observations at once (the worker's batches): one read to find who holds
 * them, one transaction to apply them all, in their order. Answers each: its result, or its own Error.
 */
export type ApplyMany = (items: readonly ApplyItem[], turn?: LockTurn) => Promise<(ApplyResult | Error)[]>;

/** What applying needs of the store: the one transition, and finding who holds a transaction. */
export interface ApplyStore {
  orders: Pick<OrderStore, 'transitionMany'>;
  attempts: Pick<AttemptStore, 'holdingMany'>;
}

/**
 * `sameMerchant`: whose orders an event may change (orders/order-merchant.ts sameMerchantRule); by
 * default any (a kit of one merchant).
 */
export function applier(
  store: ApplyStore | Pick<Store, 'orders' | 'attempts'>,
  sameMerchant: SameMerchant = ANY_MERCHANT,
): Apply {
  return (obs, options) => applyObservation(store, obs, options, sameMerchant);
}

export function batchApplier(
  store: ApplyStore | Pick<Store, 'orders' | 'attempts'>,
  sameMerchant: SameMerchant = ANY_MERCHANT,
): ApplyMany {
  return (items, turn) => applyObservations(store, items, turn, sameMerchant);
}

const ANY_MERCHANT: SameMerchant = () => true;

/** One observation: a batch of one. */
export async function applyObservation(
  store: ApplyStore,
  obs: Observation,
  options: ApplyOptions = {},
  sameMerchant: SameMerchant = ANY_MERCHANT,
): Promise<ApplyResult> {
  const [result] = await applyObservations(store, [{ obs, options }], undefined, sameMerchant);
  if (result instanceof Error) throw result;
  return result!;
}

/**
 * Applies observations, whatever their source (DESIGN.md section 2): finds the attempt each is
 * about, then, under the orders' row locks, lets `decide` judge each in turn and writes everything
 * they mean (the attempts' gateway ids, their money and status, the orders', the review flags, the
 * history lines, the inbox marks) in one transaction. The only writer of what the gateway says.
 */
export async function applyObservations(
  store: ApplyStore,
  items: readonly ApplyItem[],
  turn?: LockTurn,
  sameMerchant: SameMerchant = ANY_MERCHANT,
): Promise<(ApplyResult | Error)[]> {
  // An event may change only its own merchant's orders (issue 45): judged on the locked order.
  const foreign = (obs: Observation, order: OrderRecord): boolean =>
    !isFinding(obs) && obs.merchant !== undefined && !sameMerchant(order.merchant_id, obs.merchant);
  let targets: (TransitionTarget | null)[];
  try {
    targets = await findTargets(store, items);
  } catch (error) {
    turn?.locked(); // nothing to lock: the batches after it go on
    throw error;
  }
  const steps = items.flatMap(({ obs, options }, i) => {
    const target = targets[i];
    return target ? [{ target, plan: planOf(obs, target, options ?? {}, foreign) }] : [];
  });
  if (steps.length === 0) turn?.locked();
  const done = steps.length > 0 ? await store.orders.transitionMany(steps, turn) : [];
  let step = 0;
  return items.map(({ obs }, i): ApplyResult | Error => {
    if (!targets[i]) return { matched: false };
    const d = done[step++];
    if (d instanceof Error) return d;
    if (d && !d.result && foreign(obs, d.order))
      return {
        matched: false,
        foreign: {
          orderId: d.order.id,
          orderMerchant: d.order.merchant_id,
          eventMerchant: (obs as TransactionObservation).merchant ?? null,
        },
      };
    if (!d?.result) return { matched: false };
    return { matched: true, orderId: d.order.id, decision: d.result, order: d.order, attempt: d.attempt };
  });
}

/** What `decide` makes of one observation to the locked order and attempt: the change and the decision. */
function planOf(
  obs: Observation,
  target: TransitionTarget,
  options: ApplyOptions,
  foreign: (obs: Observation, order: OrderRecord) => boolean,
): Plan<Decision | null> {
  const about = obs.about;
  return (order, attempt, now, disputes) => {
    // Another merchant's order: left as it is, and the caller told (ApplyResult.foreign).
    if (foreign(obs, order)) return { change: null, result: null };
    // A payment found by its reference is taken by the order's current attempt only if that has none.
    if ('reference' in target && attempt.gateway_transaction_id !== null)
      return { change: null, result: null };
    if (about?.adopt && order.current_attempt_id !== attempt.id) return { change: null, result: null };
    const learned = learnedOf(attempt, obs, about);
    const shaped = { ...attempt, ...learned };
    const facts = attemptFacts(order, shaped);
    const decision = decide(
      {
        status: order.status,
        amountMinor: order.amount_minor,
        currency: order.currency,
        reviewReason: order.needs_review ? order.review_reason : null,
        resolvedReasons: order.resolved_reasons,
        closedReason: order.closed_reason,
      },
      facts,
      obs,
    );
    const learnedIds = !!(learned?.gateway_transaction_id || learned?.payment_session_id);
    const change = changeOf(order, shaped, facts, obs, decision, now, learnedIds);
    change.dispute = disputeOf(disputes, order, shaped, facts, obs, decision, now);
    change.attempt = { ...learned, ...change.attempt };
    if (about?.adopt) change.release = releasedBy(learned);
    if (options.routine && decision.outcome === 'duplicate') change.history = null;
    if (options.inboxEventId) change.processed = { eventId: options.inboxEventId, outcome: decision.outcome };
    return { change, result: decision };
  };
}

const targetOf = (about: About): TransitionTarget => ({ orderId: about.orderId, attemptId: about.attemptId });

/**
 * The attempt that made each transaction (or its parent), all found in one read. A transaction id
 * alone is not enough: a gateway that numbers again (a sandbox started afresh) can give a new payment
 * the id an old attempt holds, so the transaction's reference must be its order's. Without a
 * reference (a record that does not carry one), only a single holder of the id is trusted. Failing
 * that, a sale's or auth's own record is a payment the gateway made whose id the kit never stored (it
 * died, or a write failed, between the gateway's answer and storing it): the order that carries its
 * reference is locked, and its current attempt takes it if it has none. An observation `about` an
 * attempt names its target itself.
 */
async function findTargets(
  store: ApplyStore,
  items: readonly ApplyItem[],
): Promise<(TransitionTarget | null)[]> {
  const asks = items.flatMap(({ obs }) => {
    if (obs.about) return [];
    const t = (obs as { transaction: TransactionFact }).transaction;
    return [
      { transactionIds: [t.id, ...(t.relatedId ? [t.relatedId] : [])], reference: t.reference ?? null },
    ];
  });
  const found = asks.length > 0 ? await store.attempts.holdingMany(asks) : [];
  let ask = 0;
  return items.map(({ obs }) => {
    if (obs.about) return targetOf(obs.about);
    const t = (obs as { transaction: TransactionFact }).transaction;
    const holders = found[ask++]!;
    const holder = !t.reference ? (holders.length === 1 ? holders[0] : undefined) : holders[0];
    if (holder) return { orderId: holder.order_id, attemptId: holder.id };
    if (!t.reference || t.relatedId !== null || (t.type !== 'sale' && t.type !== 'auth')) return null;
    return { reference: t.reference };
  });
}

/**
 * What the observation tells of the attempt itself: the gateway ids it does not hold yet, its auth's
 * deadline (`capture_before`) as its own record says, and, when it takes a payment it did not start
 * (a duplicate adopted), that payment's kind: a session makes it a redirect attempt, a card record its
 * mode. An id it already holds is never replaced: a different one is for `decide` to judge.
 */
function learnedOf(attempt: AttemptRecord, obs: Observation, about: About | undefined): Change['attempt'] {
  const ids = about?.ids ?? {};
  const transactionId =
    ids.transactionId ??
    (!isFinding(obs) && !about && obs.transaction.relatedId === null ? obs.transaction.id : undefined);
  const learned: NonNullable<Change['attempt']> = {};
  if (transactionId !== undefined && attempt.gateway_transaction_id === null)
    learned.gateway_transaction_id = transactionId;
  if (ids.verificationId !== undefined && attempt.verification_id === null)
    learned.verification_id = ids.verificationId;
  if (ids.paymentSessionId !== undefined && attempt.payment_session_id === null) {
    learned.payment_session_id = ids.paymentSessionId;
    if (attempt.kind !== 'redirect') Object.assign(learned, { kind: 'redirect', mode: null });
  }
  if (ids.sessionExpiresAt !== undefined && attempt.session_expires_at === null)
    learned.session_expires_at = new Date(ids.sessionExpiresAt);
  // Too long for its column: left out rather than failing the change; the payment's answer still names it.
  if (ids.actionUrl !== undefined && attempt.action_url === null && ids.actionUrl.length <= ACTION_URL_MAX)
    learned.action_url = ids.actionUrl;
  const deadline = isFinding(obs) ? null : (obs.transaction.captureBefore ?? null);
  const holds = learned.gateway_transaction_id ?? attempt.gateway_transaction_id;
  if (
    deadline !== null &&
    !isFinding(obs) &&
    obs.transaction.id === holds &&
    attempt.capture_before?.getTime() !== deadline
  )
    learned.capture_before = new Date(deadline);
  const own = !isFinding(obs) && obs.transaction.id === (learned.gateway_transaction_id ?? null);
  const type = own ? obs.transaction.type : null;
  if (
    (type === 'sale' || type === 'auth') &&
    attempt.kind === 'card' &&
    !learned.kind &&
    attempt.mode !== type
  )
    learned.mode = type;
  return learned;
}

/** The payment ids an adopting attempt takes over from the order's other attempts. */
function releasedBy(learned: Change['attempt']): Change['release'] {
  const { gateway_transaction_id, payment_session_id } = learned ?? {};
  return {
    ...(gateway_transaction_id ? { gateway_transaction_id } : {}),
    ...(payment_session_id ? { payment_session_id } : {}),
  };
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
      moneyAt: attempt.money_at?.getTime() ?? null,
      disputedMinor: attempt.disputed_minor,
    },
  };
}

/**
 * What the decision writes: the attempt's money, the order's if it follows this attempt, the review,
 * and when to poll next (the schedule starts again from a change, or from the attempt's first id at
 * the gateway; a final order is not polled).
 */
function changeOf(
  order: OrderRecord,
  attempt: AttemptRecord,
  facts: AttemptFacts,
  obs: Observation,
  decision: Decision,
  now: Date,
  learnedIds: boolean,
): Change {
  const next = decision.attempt;
  const ended = next.status === 'failed' || next.status === 'cancelled';
  const code = isFinding(obs)
    ? isReview(obs.finding)
      ? null
      : obs.finding.code
    : (obs.transaction.statusReason ?? null);
  const stopPolling = isFinding(obs) && isReview(obs.finding) && obs.finding.stopPolling === true;
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
            money_at: next.moneyAt === null ? null : new Date(next.moneyAt),
            disputed_minor: next.disputedMinor,
            failure_code: failureCode,
          }),
      ...(view ? viewColumns(view) : {}),
    },
    order: {
      status: decision.orderStatus,
      ...(facts.current
        ? {
            captured_minor: next.capturedMinor,
            refunded_minor: next.refundedMinor,
            disputed_minor: next.disputedMinor,
          }
        : {}),
      ...(facts.current && ended ? { failure_code: failureCode } : {}),
      ...(decision.review
        ? { needs_review: true, review_reason: withReason(order.review_reason, decision.review) }
        : {}),
      ...(facts.current && (decision.outcome === 'applied' || decision.outcome === 'flagged' || learnedIds)
        ? { next_poll_at: pollAfterChange(decision, attempt, now) }
        : {}),
      ...(stopPolling ? { next_poll_at: null } : {}),
    },
    history: {
      source: obs.source,
      sourceId: obs.sourceId,
      outcome: decision.outcome,
      detail: detailOf(decision, obs),
    },
  };
}

/** The history line's detail: decide's note, and where the event's card numbers were truncated before it was kept. */
function detailOf(decision: Decision, obs: Observation): string | null {
  const masked = isFinding(obs) ? undefined : obs.masked;
  if (!masked || masked.length === 0) return decision.note;
  return decision.note ? `${decision.note}; ${maskNote(masked)}` : maskNote(masked);
}

/**
 * What the observation does to the attempt's dispute records, as the dispute rule plans it from
 * the records and what `decide` made of it (orders/disputes.ts); null when nothing changes.
 */
function disputeOf(
  book: DisputeBook,
  order: OrderRecord,
  attempt: AttemptRecord,
  facts: AttemptFacts,
  obs: Observation,
  decision: Decision,
  now: Date,
): Change['dispute'] {
  const plan = disputePlanOf(book, obs, facts, decision, now.getTime());
  if (plan.records.length === 0 && plan.reversals.length === 0) return null;
  return {
    kind: 'gateway',
    plan,
    transactionId: attempt.gateway_transaction_id,
    // A finding only closes records (a record is made by a transaction's word): the order's currency.
    currency: isFinding(obs) ? order.currency : obs.transaction.currency,
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
