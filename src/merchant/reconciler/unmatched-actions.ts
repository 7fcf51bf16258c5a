import type { GatewayClient } from '../../client/gateway-client.js';
import type { Gateways } from '../../client/merchant-gateways.js';
import type { Clock } from '../../shared/clock.js';
import type { Actor } from '../operators/roles.js';
import { observeTransaction } from '../orders/from-gateway.js';
import type { About, ObservationSource, TransactionObservation } from '../orders/observation.js';
import { merchantOf, sameMerchantRule } from '../orders/order-merchant.js';
import { type AttachPlan, attachPlan } from '../orders/unmatched-money.js';
import type { Store } from '../store/index.js';
import type { AttemptRecord, OrderRecord, UnmatchedMoneyRecord } from '../store/records.js';
import type { Apply } from './apply.js';

/**
 * What an operator does with gateway money no attempt holds (issue 19, part 1): attach it to an order,
 * where it goes through the one apply path as the payment's news, or resolve it with a note (a test
 * payment, money refunded at the gateway, a payment for another shop: whatever a person found).
 */
export interface UnmatchedActionDeps {
  store: {
    unmatched: Pick<Store['unmatched'], 'get' | 'claim' | 'reopen' | 'resolve'>;
    audit: Pick<Store['audit'], 'record'>;
    orders: Pick<Store['orders'], 'find' | 'startAttempt'>;
    attempts: Pick<Store['attempts'], 'get'>;
  };
  apply: Apply;
  clock: Clock;
  gateways: Gateways<Pick<GatewayClient, 'transactionStatus'>>;
}

export type AttachOutcome =
  | { kind: 'attached'; money: UnmatchedMoneyRecord; order: OrderRecord; attempt: AttemptRecord | null }
  | { kind: 'not_found' }
  /** Attached or resolved already. */
  | { kind: 'not_open'; money: UnmatchedMoneyRecord }
  | { kind: 'no_order' }
  | (Extract<AttachPlan, { kind: 'refused' }> & { money: UnmatchedMoneyRecord })
  /** The order changed between the check and the apply (another attempt took a payment): nothing was done. */
  | { kind: 'order_changed'; money: UnmatchedMoneyRecord };

/**
 * Whose money and orders the caller may see (a credential scoped to some merchants, issue 45): what
 * it may not see is, to it, money or an order that does not exist. Left out: every merchant's.
 */
export type SeesMerchant = (merchantId: number | null) => boolean;

const everyMerchant: SeesMerchant = () => true;

export type ResolveOutcome =
  | { kind: 'resolved'; money: UnmatchedMoneyRecord }
  | { kind: 'not_found' }
  | { kind: 'not_open'; money: UnmatchedMoneyRecord };

/**
 * Attaches open money to an order (attachPlan says whether and how). The row is claimed first, so two
 * operators never attach the same money twice; the payment is then applied to the order's current
 * attempt (or to a new one, started as a shopper's new try would) as an observation `about` it that
 * names the transaction, as checkout adopts a payment it meets as ERR_DUPLICATE (About.adopt): decide
 * judges it like any news, flagging an amount that is not the order's. If that cannot happen, the
 * claim is undone and the money is open again.
 *
 * Platform mode (issue 45): money outside what `sees` lets the caller see is `not_found`, an order
 * outside it `no_order`, as unknown ones; and money stays with its merchant (the one whose endpoint
 * its event came to): an order of another merchant is refused, naming both.
 */
export async function attachMoney(
  deps: UnmatchedActionDeps,
  id: string,
  orderId: string,
  actor: Actor,
  sees: SeesMerchant = everyMerchant,
): Promise<AttachOutcome> {
  const money = await deps.store.unmatched.get(id);
  if (!money || !sees(money.merchant_id)) return { kind: 'not_found' };
  if (money.resolution !== 'open') return { kind: 'not_open', money };
  const order = await deps.store.orders.find(orderId);
  if (!order || !sees(order.merchant_id)) return { kind: 'no_order' };
  const served = deps.gateways.merchants;
  if (!sameMerchantRule(served)(order.merchant_id, money.merchant_id)) {
    const message = `is an order of merchant ${merchantOf(order.merchant_id, served)}; this money is merchant ${merchantOf(money.merchant_id, served)}'s (its event came to that merchant's endpoint), and stays with it`;
    return { kind: 'refused', status: 422, code: 'VALIDATION_FAILED', message, money };
  }
  const current = order.current_attempt_id ? await deps.store.attempts.get(order.current_attempt_id) : null;
  const plan = attachPlan(
    {
      transactionId: money.transaction_id,
      relatedId: money.related_transaction_id,
      type: money.transaction_type,
      currency: money.currency,
    },
    {
      order,
      attempt: current && { status: current.status, transactionId: current.gateway_transaction_id },
    },
  );
  if (plan.kind === 'refused') return { ...plan, money };
  if (!(await deps.store.unmatched.claim(id, order.id, { actor }))) {
    const now = await deps.store.unmatched.get(id);
    return { kind: 'not_open', money: now ?? money };
  }
  try {
    let attemptId = current?.id;
    if (plan.kind === 'adopt' && plan.newAttempt) {
      const mode =
        money.transaction_type === 'auth' || money.transaction_type === 'sale'
          ? money.transaction_type
          : undefined;
      attemptId = (
        await deps.store.orders.startAttempt(order.id, {
          kind: 'card',
          ...(mode ? { mode } : {}),
          // Money that exists: a closed order takes it too (applied, and flagged: closure.ts).
          adopting: true,
        })
      ).attempt.id;
    }
    const about: About = {
      orderId: order.id,
      attemptId: attemptId!,
      ...(plan.kind === 'adopt' ? { ids: { transactionId: money.transaction_id }, adopt: true } : {}),
    };
    const applied = await deps.apply(observationOf(money, about, deps.clock.now()));
    if (!applied.matched || !applied.order) {
      await deps.store.unmatched.reopen(id, money.order_id);
      return { kind: 'order_changed', money };
    }
    const now = (await askedAfterAttach(deps, money, about)) ?? applied;
    const attached = (await deps.store.unmatched.get(id))!;
    // After the apply, which has its own transaction: an attach undone (reopened) leaves no audit line.
    await deps.store.audit.record({
      actor,
      action: 'unmatched.attach',
      orderId: order.id,
      subjectId: id,
      amountMinor: money.amount_minor,
      currency: money.currency,
      detail: `transaction ${money.transaction_id} (${money.transaction_type} ${money.status}) to ${order.id}`,
    });
    return {
      kind: 'attached',
      money: attached,
      order: now.order ?? applied.order,
      attempt: now.attempt ?? applied.attempt ?? null,
    };
  } catch (error) {
    await deps.store.unmatched.reopen(id, money.order_id).catch(() => {});
    throw error;
  }
}

/**
 * The payment as the gateway has it now, once attached: the kept record is what the gateway said when
 * the money was first seen, and a refund or capture made since (kept apart, as money of its own) is
 * in its running totals. Asked of a sale or auth only (a child's parent carries the totals); a gateway
 * that does not answer leaves it to the poller, which asks about the order within minutes.
 */
async function askedAfterAttach(deps: UnmatchedActionDeps, money: UnmatchedMoneyRecord, about: About) {
  if (money.transaction_type !== 'sale' && money.transaction_type !== 'auth') return null;
  // Asked through the money's merchant (platform mode: the order's, as attachMoney's rule makes it);
  // one the kit no longer acts for (of() throws) is left to the poller as a gateway that does not answer.
  const answer = await Promise.resolve()
    .then(() => deps.gateways.of(money.merchant_id).transactionStatus(money.transaction_id, 'operator'))
    .catch(() => null);
  if (!answer) return null;
  const observed = observeTransaction(answer.data, 'api', `attach:${money.id}:status`, deps.clock.now(), {
    orderId: about.orderId,
    attemptId: about.attemptId,
  });
  const applied = await deps.apply(observed);
  return applied.matched ? applied : null;
}

/**
 * Resolves open money with an operator's note: it leaves the open list, and stays in the report.
 * Money outside what `sees` lets the caller see is `not_found`, as unknown money.
 */
export async function resolveMoney(
  deps: { store: Pick<UnmatchedActionDeps['store'], 'unmatched'> },
  id: string,
  note: string,
  actor: Actor,
  sees: SeesMerchant = everyMerchant,
): Promise<ResolveOutcome> {
  const money = await deps.store.unmatched.get(id);
  if (!money || !sees(money.merchant_id)) return { kind: 'not_found' };
  if (!(await deps.store.unmatched.resolve(id, { actor, note }))) {
    return { kind: 'not_open', money: (await deps.store.unmatched.get(id)) ?? money };
  }
  return { kind: 'resolved', money: (await deps.store.unmatched.get(id))! };
}

/**
 * The kept transaction as the observation an attach applies: what the gateway last said of it, from
 * the operator's call (source `api`, as an operation's answer is; the id names the row).
 */
function observationOf(m: UnmatchedMoneyRecord, about: About, now: number): TransactionObservation {
  return {
    source: 'api' satisfies ObservationSource,
    sourceId: `attach:${m.id}`,
    observedAt: now,
    about,
    transaction: {
      id: m.transaction_id,
      relatedId: m.related_transaction_id,
      type: m.transaction_type,
      status: m.status,
      amountMinor: m.amount_minor,
      currency: m.currency,
      refundedMinor: m.refunded_minor,
      statusReason: m.status_reason,
      reference: m.reference,
      captureBefore: m.capture_before?.getTime() ?? null,
      // What the payment's chargeback took, and the gateway's time of its latest money record: an
      // attached payment charged back comes to the order disputed by its amount (issue 44).
      chargebackMinor: m.payment_status === 'disputed' ? m.disputed_minor : null,
      updatedAt: m.money_at?.getTime() ?? null,
    },
  };
}
