import type { Logger } from 'pino';
import type { Caller } from '../../client/budget.js';
import { GatewayError, gatewayNotAnswering } from '../../client/errors.js';
import type { GatewayClient } from '../../client/gateway-client.js';
import type { Gateways } from '../../client/merchant-gateways.js';
import type { OutageLog } from '../../infra/outage-log.js';
import type { Clock } from '../../shared/clock.js';
import { askGateway } from '../checkout/ask.js';
import { observeFinding } from '../orders/from-gateway.js';
import { nextPollAt, pollable, unsettledWhenSilent } from '../orders/poll-schedule.js';
import { OPEN } from '../orders/status.js';
import type { Apply } from '../reconciler/apply.js';
import type { PollTarget, Store } from '../store/index.js';

export interface PollerDeps {
  store: Pick<Store, 'orders' | 'polls'>;
  gateways: Gateways<Pick<GatewayClient, 'transactionStatus' | 'getPaymentSession'>>;
  apply: Apply;
  clock: Clock;
  logger: Logger;
  /**
   * The ticks the gateway did not answer (down, overloaded, the budget spent): a line when it starts,
   * one a minute, one when it answers again. Without it each tick logs its pause.
   */
  gatewayOutage?: Pick<OutageLog, 'failed' | 'available'>;
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
  /** The tick stopped at a gateway that did not answer; the orders it had not asked about are due again. */
  paused?: boolean;
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
 * through is left due, for the next tick. A gateway that does not answer at all pauses the tick: the
 * orders after the one it did not answer are left due too, instead of each failing the same way (a
 * call, its retries and a warning each: thousands in an outage), and the next tick asks again.
 */
export async function pollDue(deps: PollerDeps, options: TickOptions = {}): Promise<PollSummary> {
  const { batch = 50, maxMs = 45_000, leaseMs = 5 * 60_000 } = options;
  const summary = emptySummary();
  const deadline = deps.clock.now() + maxMs;
  claiming: while (deps.clock.now() < deadline) {
    const now = deps.clock.now();
    const targets = await deps.store.polls.claimDue(new Date(now), batch, new Date(now + leaseMs));
    if (targets.length === 0) break;
    for (const [i, target] of targets.entries()) {
      if (deps.clock.now() >= deadline) {
        // Out of time: what was claimed and not asked about is due again at once.
        for (const left of targets.slice(i)) await deps.store.polls.reschedule(left.order.id, new Date(now));
        break;
      }
      const polled = await pollOrder(deps, target, 'poller');
      add(summary, polled.summary);
      if (polled.gatewayDown) {
        const rest = targets.slice(i + 1);
        for (const left of rest) await deps.store.polls.reschedule(left.order.id, new Date(now));
        summary.paused = true;
        const fields = { order: target.order.id, left_due: rest.length };
        if (deps.gatewayOutage) deps.gatewayOutage.failed(polled.gatewayDown, fields);
        else
          deps.logger.warn(
            { ...fields, err: { message: polled.gatewayDown.message } },
            'poller paused: the gateway does not answer',
          );
        break claiming;
      }
      if (polled.summary.gatewayCalls > 0) deps.gatewayOutage?.available(); // it answered
    }
  }
  return summary;
}

/** What `cli poll` did: the orders it had to ask about, and why it stopped short if it did. */
export type PollAllSummary = PollSummary & { total: number; stopped?: string };

/**
 * `npm run cli -- poll`: every open order with an attempt at the gateway, now, whatever its schedule,
 * within the budget (caller `cli`). `onOrder` is told after each one (the progress bar). A gateway
 * that does not answer at all stops it there (`stopped`), rather than failing every order in turn.
 */
export async function pollAll(
  deps: PollerDeps,
  onOrder: (done: number, total: number) => void = () => {},
): Promise<PollAllSummary> {
  const summary = emptySummary();
  const total = await deps.store.polls.countOpen();
  let after = '';
  for (;;) {
    const targets = await deps.store.polls.open(after, 100);
    if (targets.length === 0) break;
    for (const target of targets) {
      const polled = await pollOrder(deps, target, 'cli');
      add(summary, polled.summary);
      onOrder(summary.orders, Math.max(total, summary.orders));
      if (polled.gatewayDown) return { ...summary, total, stopped: polled.gatewayDown.message };
    }
    after = targets.at(-1)!.order.id;
  }
  return { ...summary, total };
}

/**
 * Asks about one order's current attempt (askGateway: its payment session while the order is open,
 * else its transaction), which applies the answer as a `poll` observation, then schedules the next
 * poll from the order's last change, or flags the order once the schedule is over. A gateway that
 * does not answer at all is told (`gatewayDown`), not logged: every caller has more orders to ask
 * about, stops there, and says so once.
 */
export async function pollOrder(
  deps: PollerDeps,
  target: PollTarget,
  caller: Caller,
): Promise<{ summary: PollSummary; gatewayDown: Error | null }> {
  const { order, attempt } = target;
  let down: Error | null = null;
  const result: PollSummary = { ...emptySummary(), orders: 1 };
  const sourceId = `poll:${attempt.id}:${deps.clock.now()}`;
  const asked = await askGateway(
    deps,
    {
      orderId: order.id,
      merchantId: order.merchant_id,
      attemptId: attempt.id,
      transactionId: attempt.gateway_transaction_id,
      paymentSessionId: attempt.payment_session_id,
      open: OPEN.includes(order.status),
    },
    { source: 'poll', sourceId, caller, routine: true },
  );
  if (asked.kind !== 'nothing') result.gatewayCalls = 1;
  if (asked.kind === 'answered' || asked.kind === 'unknown') {
    const outcome = asked.applied.decision?.outcome;
    if (outcome === 'applied' || outcome === 'flagged') result.changed = 1;
  }
  if (asked.kind === 'unreachable' && gatewayNotAnswering(asked.error)) down = asked.error;
  if (asked.kind === 'unknown' || asked.kind === 'unreachable') {
    result.failed = 1;
    const why =
      asked.kind === 'unknown'
        ? { code: 'ERR_NOT_FOUND', err: { message: `the gateway does not know ${asked.what}` } }
        : {
            code: asked.error instanceof GatewayError ? asked.error.code : asked.error.kind,
            err: { message: asked.error.message },
          };
    if (!down)
      deps.logger.warn(
        { order: order.id, attempt: attempt.id, ...why },
        'status poll failed; asked again at the next point of the schedule',
      );
  }
  result.exhausted = (await scheduleNext(deps, target, sourceId)) ? 0 : 1;
  return { summary: result, gatewayDown: down };
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
  const review = `still ${order.status} at the gateway 30 days after its last change: no longer polled`;
  const about = { orderId: order.id, attemptId: target.attempt.id };
  await deps.apply(observeFinding(about, { review, stopPolling: true }, sourceId, now, 'poll'), {
    routine: true,
  });
  deps.logger.warn({ order: order.id, status: order.status }, 'order needs review: open for 30 days');
  return false;
}

const COUNTS = ['orders', 'changed', 'exhausted', 'failed', 'gatewayCalls'] as const;

function add(total: PollSummary, one: PollSummary): void {
  for (const key of COUNTS) total[key] += one[key];
}
