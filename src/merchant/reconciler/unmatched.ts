import type { Logger } from 'pino';
import type { Clock } from '../../shared/clock.js';
import { observeFinding } from '../orders/from-gateway.js';
import type { TransactionObservation } from '../orders/observation.js';
import type { SameMerchant } from '../orders/order-merchant.js';
import { noAttemptReason } from '../orders/unmatched-money.js';
import type { Store } from '../store/index.js';
import type { OrderRecord } from '../store/records.js';
import type { Kept } from '../store/unmatched.js';
import type { Apply } from './apply.js';

export interface KeepDeps {
  store: {
    orders: Pick<Store['orders'], 'byReference' | 'flagWithoutAttempt'>;
    unmatched: Pick<Store['unmatched'], 'keep'>;
  };
  /** The one apply path: the order's flag goes through it. */
  apply: Apply;
  clock: Clock;
  logger: Logger;
  /** Whose orders an event may name (orders/order-merchant.ts sameMerchantRule); default any. */
  sameMerchant?: SameMerchant;
}

/**
 * Keeps gateway money no attempt holds (issue 19, part 1): an observation of a gateway transaction
 * that matched no attempt of the kit is money the gateway took or holds with no order to show it. It
 * is kept in `unmatched_money` (one row per transaction: first and last seen, how often), and the
 * order that carries its reference, if any, is flagged with the reason, so the report shows that
 * order `mismatched` instead of "not paid for yet". Keeping or flagging that fails throws: the
 * caller (the worker) fails its job, so the money is never only in a log line.
 *
 * The flag goes through the apply path as a review finding on the order's current attempt (decide
 * flags once per reason). An order without an attempt has nothing the apply path can lock; the
 * store flags it under the order's lock by the same rule (OrderStore.flagWithoutAttempt).
 */
export async function keepUnmatched(deps: KeepDeps, obs: TransactionObservation): Promise<Kept> {
  const t = obs.transaction;
  const carrier = t.reference ? await deps.store.orders.byReference(t.reference) : null;
  // Another merchant's order that carries the same reference is not this money's (issue 45).
  const order =
    carrier &&
    (obs.merchant === undefined || (deps.sameMerchant ?? anyMerchant)(carrier.merchant_id, obs.merchant))
      ? carrier
      : null;
  // Kept first: the money is the thing not to lose; a flag that fails is tried again with the job.
  const kept = await deps.store.unmatched.keep({
    transaction: t,
    source: obs.source,
    sourceId: obs.sourceId,
    orderId: order?.id ?? null,
    // Whose endpoint the event came to (the inbox row's merchant; null: the first): its money, even
    // when it names another merchant's order, which is not this money's (issue 45).
    merchantId: obs.merchant ?? null,
  });
  if (order) await flagOrder(deps, order, obs);
  // One warning per transaction, when it is first kept; its later news is the same money seen again.
  deps.logger[kept.first ? 'warn' : 'info'](
    {
      unmatched: kept.money.id,
      transaction: t.id,
      status: t.status,
      amount: t.amountMinor,
      currency: t.currency,
      order: order?.id ?? null,
      source: obs.source,
      source_id: obs.sourceId,
      ...(obs.merchant === undefined ? {} : { merchant: obs.merchant }),
    },
    kept.first
      ? 'gateway money with no attempt: kept for an operator'
      : 'gateway money with no attempt: seen again, already kept for an operator',
  );
  return kept;
}

const anyMerchant: SameMerchant = () => true;

/** The reason on the order, through the apply path when it has an attempt, as history either way. */
async function flagOrder(deps: KeepDeps, order: OrderRecord, obs: TransactionObservation) {
  const reason = noAttemptReason(obs.transaction);
  const finding = { reason, source: obs.source, sourceId: obs.sourceId };
  if (order.current_attempt_id === null) {
    if (await deps.store.orders.flagWithoutAttempt(order.id, finding)) return;
    // An attempt started meanwhile: flag it as any order with one.
    const now = await deps.store.orders.byReference(order.reference);
    if (!now?.current_attempt_id) return;
    order = now;
  }
  const about = { orderId: order.id, attemptId: order.current_attempt_id! };
  await deps.apply(observeFinding(about, { review: reason }, obs.sourceId, deps.clock.now(), obs.source));
}
