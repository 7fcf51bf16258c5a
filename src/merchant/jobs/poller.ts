import type { Logger } from 'pino';
import type { Caller } from '../../client/budget.js';
import { GatewayError, GatewayNetworkError } from '../../client/errors.js';
import type { GatewayClient } from '../../client/gateway-client.js';
import type { Clock } from '../../shared/clock.js';
import { observeSession, observeTransaction } from '../orders/from-gateway.js';
import type { Observation } from '../orders/observation.js';
import { nextPollAt, pollable, unsettledWhenSilent } from '../orders/poll-schedule.js';
import { withReason } from '../orders/review.js';
import { OPEN } from '../orders/status.js';
import type { Apply } from '../reconciler/apply.js';
import type { PollTarget, Store } from '../store/index.js';

export interface PollerDeps {
  store: Pick<Store, 'orders' | 'polls'>;
  gateway: Pick<GatewayClient, 'transactionStatus' | 'getPaymentSession'>;
  apply: Apply;
  clock: Clock;
  logger: Logger;
}

/** What a poll run did, for the log, the CLI's summary and the tests. */
export interface PollSummary {
  /** Orders looked at. */
  orders: number;
  /** Orders a poll changed (or flagged). */
  changed: number;
  /** Orders still open 30 days after their last change: flagged for a person, no longer polled. */
  exhausted: number;
  /** Orders whose poll failed (the gateway did not answer): asked again at the next point of the schedule. */
  failed: number;
  gatewayCalls: number;
}

const emptySummary = (): PollSummary => ({ orders: 0, changed: 0, exhausted: 0, failed: 0, gatewayCalls: 0 });

export interface TickOptions {
  /** Orders claimed at a time. Default 50. */
  batch?: number;
  /** A tick stops claiming after this long, so it ends well inside its lock. Default 45 s. */
  maxMs?: number;
  /** How long a claimed order stays out of other instances' reach. Default 5 min. */
  leaseMs?: number;
}

/**
 * The poller's tick (merchant.md, Background work): claims the orders whose `next_poll_at` is due,
 * asks the gateway about each (at the budget's pace: caller `poller`), applies what it says through
 * the one apply path, and sets the next poll. What the gateway took longer than `maxMs` to get
 * through is left due, for the next tick.
 */
export async function pollDue(deps: PollerDeps, options: TickOptions = {}): Promise<PollSummary> {
  const { batch = 50, maxMs = 45_000, leaseMs = 5 * 60_000 } = options;
  const summary = emptySummary();
  const deadline = deps.clock.now() + maxMs;
  while (deps.clock.now() < deadline) {
    const now = deps.clock.now();
    const targets = await deps.store.polls.claimDue(new Date(now), batch, new Date(now + leaseMs));
    if (targets.length === 0) break;
    for (const [i, target] of targets.entries()) {
      if (deps.clock.now() >= deadline) {
        // Out of time: what was claimed and not asked about is due again at once.
        for (const left of targets.slice(i)) await deps.store.polls.reschedule(left.order.id, new Date(now));
        break;
      }
      add(summary, await pollOrder(deps, target, 'poller'));
    }
  }
  return summary;
}

/**
 * `npm run cli -- poll`: every open order with an attempt at the gateway, now, whatever its schedule,
 * within the budget (caller `cli`). `onOrder` is told after each one (the progress bar).
 */
export async function pollAll(
  deps: PollerDeps,
  onOrder: (done: number, total: number) => void = () => {},
): Promise<PollSummary> {
  const summary = emptySummary();
  const total = await deps.store.polls.countOpen();
  let after = '';
  for (;;) {
    const targets = await deps.store.polls.open(after, 100);
    if (targets.length === 0) break;
    for (const target of targets) {
      add(summary, await pollOrder(deps, target, 'cli'));
      onOrder(summary.orders, Math.max(total, summary.orders));
    }
    after = targets.at(-1)!.order.id;
  }
  return summary;
}

/**
 * Asks about one order's current attempt: its payment session and its transaction when it has both
 * (the session tells expired from cancelled; the transaction carries the refunded total), applies
 * each answer as a `poll` observation, then schedules the next poll from the order's last change, or
 * flags the order once the schedule is over.
 */
export async function pollOrder(deps: PollerDeps, target: PollTarget, caller: Caller): Promise<PollSummary> {
  const { attempt } = target;
  const result: PollSummary = { ...emptySummary(), orders: 1 };
  const sourceId = `poll:${attempt.id}:${deps.clock.now()}`;
  // Each question names what it asks about, for the review reason should the gateway not know it.
  const ask: [what: string, question: () => Promise<Observation>][] = [];
  // The session matters while the payment is open (it tells expired from cancelled); then only the
  // transaction can still move (refunds, chargebacks).
  if (attempt.payment_session_id && OPEN.includes(target.order.status)) {
    const id = attempt.payment_session_id;
    ask.push([
      `payment session ${id}`,
      async () =>
        observeSession(
          (await deps.gateway.getPaymentSession(id, caller)).data,
          'poll',
          `${sourceId}:session`,
          deps.clock.now(),
        ),
    ]);
  }
  if (attempt.gateway_transaction_id) {
    const id = attempt.gateway_transaction_id;
    ask.push([
      `transaction ${id}`,
      async () =>
        observeTransaction(
          (await deps.gateway.transactionStatus(id, caller)).data,
          'poll',
          sourceId,
          deps.clock.now(),
        ),
    ]);
  }
  for (const [what, question] of ask) {
    let observation: Observation;
    try {
      result.gatewayCalls += 1;
      observation = await question();
    } catch (error) {
      if (!(error instanceof GatewayError || error instanceof GatewayNetworkError)) throw error;
      if (error instanceof GatewayError && error.status === 404) {
        // The kit holds an id the gateway does not know (another account's key, a gateway that lost
        // it): not timing but integrity, for a person and the report; the schedule still goes on.
        if (await flag(deps, target, `${sourceId}:unknown`, `the gateway does not know ${what}`))
          result.changed = 1;
      }
      result.failed = 1;
      deps.logger.warn(
        {
          order: target.order.id,
          attempt: attempt.id,
          code: (error as GatewayError).code,
          err: { message: error.message },
        },
        'status poll failed; asked again at the next point of the schedule',
      );
      break;
    }
    const applied = await deps.apply(observation, { routine: true });
    const outcome = applied.decision?.outcome;
    if (outcome === 'applied' || outcome === 'flagged') result.changed = 1;
  }
  result.exhausted = (await scheduleNext(deps, target, sourceId)) ? 0 : 1;
  return result;
}

/** Sets the order's next poll; false when the schedule is over and the order was flagged instead. */
async function scheduleNext(deps: PollerDeps, target: PollTarget, sourceId: string): Promise<boolean> {
  const order = await deps.store.orders.find(target.order.id);
  if (!order || order.current_attempt_id !== target.attempt.id || !pollable(order.status, target.attempt)) {
    // Final, or another attempt took over (its own answers schedule it): nothing more to ask here.
    if (order && order.current_attempt_id === target.attempt.id)
      await deps.store.polls.reschedule(order.id, null);
    return true;
  }
  const now = deps.clock.now();
  const expiresAt = target.attempt.session_expires_at?.getTime() ?? null;
  const next = nextPollAt(order.updated_at.getTime(), now, expiresAt);
  if (next !== null || !unsettledWhenSilent(order.status)) {
    await deps.store.polls.reschedule(order.id, next === null ? null : new Date(next));
    return true;
  }
  const reason = `still ${order.status} at the gateway 30 days after its last change: no longer polled`;
  await flag(deps, target, sourceId, reason, { next_poll_at: null });
  deps.logger.warn({ order: order.id, status: order.status }, 'order needs review: open for 30 days');
  return false;
}

/** Flags the order for a person, once per reason (a reason already noted writes nothing); true when it did. */
async function flag(
  deps: PollerDeps,
  target: PollTarget,
  sourceId: string,
  reason: string,
  also: { next_poll_at?: null } = {},
): Promise<boolean> {
  return deps.store.orders.transition(target.order.id, target.attempt.id, (locked) => {
    const known = locked.needs_review && withReason(locked.review_reason, reason) === locked.review_reason;
    if (known) return { change: { attempt: null, order: also, history: null }, result: false };
    return {
      change: {
        attempt: null,
        order: { needs_review: true, review_reason: withReason(locked.review_reason, reason), ...also },
        history: { source: 'poll', sourceId, outcome: 'flagged', detail: reason },
      },
      result: true,
    };
  });
}

function add(total: PollSummary, one: PollSummary): void {
  for (const key of Object.keys(total) as (keyof PollSummary)[]) total[key] += one[key];
}
