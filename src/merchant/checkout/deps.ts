import type { Logger } from 'pino';
import type { GatewayClient } from '../../client/gateway-client.js';
import type { Gateways } from '../../client/merchant-gateways.js';
import type { Clock } from '../../shared/clock.js';
import type { SecretBox } from '../../shared/secret-box.js';
import type { CustomerTokens } from '../customers/customer-token.js';
import type { Apply, ApplyResult } from '../reconciler/apply.js';
import type { AttemptStore } from '../store/attempts.js';
import type { HoldStore } from '../store/holds.js';
import type { Store } from '../store/index.js';
import type { OperationStore } from '../store/operations.js';
import type { OrderStore } from '../store/orders.js';
import type { AttemptRecord, OrderRecord } from '../store/records.js';
import type { SavedCardStore } from '../store/saved-cards.js';

/**
 * What checkout needs of the store: starting (and withdrawing) an attempt, finding one, the 3DS hold,
 * the operators' stored operations. Everything the gateway says is written through `apply`.
 */
export interface CheckoutStore {
  orders: Pick<OrderStore, 'startAttempt' | 'withdrawAttempt' | 'find'>;
  attempts: Pick<AttemptStore, 'get' | 'by'>;
  holds: Pick<HoldStore, 'put' | 'take' | 'expired'>;
  operations: Pick<OperationStore, 'find' | 'create' | 'settle' | 'unanswered'>;
  savedCards: Pick<SavedCardStore, 'remember'>;
}

/**
 * One payment of an order at a time, across every api process (kit/adapters.ts: MySQL's named locks,
 * which a process that dies lets go at once): `work` runs once no other payment of the order is
 * running; 'busy' when one ran for the whole wait. A second click of Pay, or a charge retried while
 * the first is still at the gateway, then finds the first one's outcome instead of racing it: two
 * attempts at once made the slower one's answer land on a superseded attempt, flagged as a double
 * charge though the gateway took the money once.
 */
export interface PaymentTurns {
  one<T>(orderId: string, work: () => Promise<T>): Promise<T | 'busy'>;
}

/** What checkout asks the gateway, for one order's merchant. */
export type CheckoutGateway = Pick<
  GatewayClient,
  | 'verify3ds'
  | 'createTransaction'
  | 'transactionStatus'
  | 'createPaymentSession'
  | 'getPaymentSession'
  | 'capture'
  | 'refund'
  | 'void'
  | 'revokePaymentInstrument'
>;

/** Checkout's port: narrow, so that its branches can be driven by fakes in unit tests. */
export interface CheckoutDeps {
  store: CheckoutStore;
  turns: PaymentTurns;
  /** The one apply path: every gateway answer goes through it, as the worker's events do. */
  apply: Apply;
  /** The gateway as each order's merchant sees it (`gateways.of(order.merchant_id)`). */
  gateways: Gateways<CheckoutGateway>;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
  /** How browsers reach the kit: the 3DS return and the session landings hang off it. */
  publicBaseUrl: string;
  /** MAX_FAILED_ATTEMPTS_PER_ORDER: an order with this many failed attempts takes no more. Unset: no cap. */
  maxFailedAttempts?: number | null;
}

/** What the kit composes once (kit/adapters.ts) and hands to checkout, the routes, jobs and reports. */
export interface MerchantDeps extends CheckoutDeps {
  store: Store;
  gateways: Gateways;
  /** Signs and checks the tokens that let a customer's browser use their saved cards. */
  customerTokens: CustomerTokens;
  /** AUTH_EXPIRY_WARNING: the report's `auth_expiring` rows. */
  authExpiryWarningMs?: number;
  /** What a customer's saved cards may pay in 24 hours with the shopper there (docs/saved-cards.md). */
  savedCardBounds: { dailyPayments: number; dailyAmount: string };
}

/** An order and its current attempt, as they stand. */
export interface Standing {
  order: OrderRecord;
  attempt: AttemptRecord | null;
}

/** How a payment attempt ended, for the storefront's answer. */
export type PaymentOutcome = Standing &
  (
    | { kind: 'done' }
    | { kind: 'action'; url: string }
    | { kind: 'declined'; code: string; message: string }
    /** The gateway could not take the payment now (down, or the key's checkout share spent): nothing was charged. */
    | { kind: 'unavailable'; code: string; message: string; retryAfterSeconds?: number }
    /** The gateway refused the input before anything existed there: the order is as it was. */
    | { kind: 'invalid'; code: string; message: string; errors: Record<string, string[]> }
    /** The gateway holds a payment for the order that is still pending: the poller and the webhook settle it. */
    | { kind: 'in_progress' }
    /** The gateway may have a transaction we could not see yet: the order stays pending for the webhook. */
    | { kind: 'unknown' }
  );

/** The order and attempt an applied observation left (an observation about an attempt always matches). */
export function standing(applied: ApplyResult): Standing {
  if (!applied.order) throw new Error('an observation about an attempt matched no order');
  return { order: applied.order, attempt: applied.attempt ?? null };
}

/** The order and its current attempt, read again (the paths where nothing was applied). */
export async function reload(deps: Pick<CheckoutDeps, 'store'>, orderId: string): Promise<Standing> {
  const order = (await deps.store.orders.find(orderId))!;
  const attempt = order.current_attempt_id ? await deps.store.attempts.get(order.current_attempt_id) : null;
  return { order, attempt };
}

/**
 * A payment run in its order's turn (PaymentTurns). Another payment of the order that ran for the
 * whole wait leaves this one in progress (409 PAYMENT_IN_PROGRESS, Retry-After): nothing was started.
 */
export async function inTurn<T extends Standing>(
  deps: Pick<CheckoutDeps, 'store' | 'turns'>,
  orderId: string,
  pay: () => Promise<T>,
): Promise<T | PaymentOutcome> {
  const outcome = await deps.turns.one(orderId, pay);
  return outcome === 'busy' ? { kind: 'in_progress', ...(await reload(deps, orderId)) } : outcome;
}
