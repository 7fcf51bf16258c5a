import { GatewayError, GatewayNetworkError } from '../../client/errors.js';
import type { CardInput, CustomerInput } from '../../client/gateway-client.js';
import {
  type GatewayTransaction,
  type GatewayVerification,
  transactionSchema,
} from '../../client/schemas.js';
import { observeFinding, observeTransaction } from '../orders/from-gateway.js';
import type { AttemptRecord, OrderRecord } from '../store/records.js';
import { type CheckoutDeps, type PaymentOutcome, reload } from './deps.js';
import { type CardHold, HOLD_LIFETIME_MS, openHold, sealHold } from './hold.js';
import { inputRefusal } from './input-refusal.js';

export interface CardPayment {
  card: CardInput;
  mode: 'sale' | 'auth';
  customer?: CustomerInput;
  browserIp?: string;
}

/**
 * merchant.md, POST /orders/{id}/pay/card: 3D Secure first, then the transaction with the
 * verification's id. A challenge holds what the payment still needs, sealed, for 15 minutes.
 */
export async function payByCard(
  deps: CheckoutDeps,
  orderId: string,
  payment: CardPayment,
): Promise<PaymentOutcome> {
  const { order, attempt, previous } = await deps.store.orders.startAttempt(orderId, {
    kind: 'card',
    mode: payment.mode,
  });
  let verification: GatewayVerification;
  try {
    verification = (
      await deps.gateway.verify3ds({
        amountMinor: order.amount_minor,
        currency: order.currency as never,
        card: payment.card,
        authUrl: `${deps.publicBaseUrl}/checkout/3ds-return`,
      })
    ).data;
  } catch (error) {
    const errors = error instanceof GatewayError ? inputRefusal(error, 'card') : null;
    if (errors) {
      // Nothing exists at the gateway for this attempt yet: undone, and the order is as it was.
      await deps.store.orders.withdrawAttempt(order.id, attempt.id, previous);
      const { code, message } = error as GatewayError;
      return { kind: 'invalid', order: await reload(deps, order.id), code, message, errors };
    }
    return refuse(deps, order, attempt, error, 'verify');
  }
  await deps.store.attempts.setIds(attempt.id, { verification_id: verification.public_id });

  if (verification.status === 'full_auth')
    return transact(deps, order, attempt, payment, verification.public_id);
  if (verification.challenge_url) {
    const hold: CardHold = {
      card: payment.card,
      mode: payment.mode,
      customer: payment.customer,
      browserIp: payment.browserIp,
    };
    await deps.store.holds.put(
      attempt.id,
      sealHold(deps.box, attempt.id, hold),
      new Date(deps.clock.now() + HOLD_LIFETIME_MS),
    );
    await found(deps, attempt.id, `api:${attempt.id}:3ds`, 'requires_action');
    return { kind: 'action', order: await reload(deps, order.id), url: verification.challenge_url };
  }
  await found(deps, attempt.id, `api:${attempt.id}:3ds`, 'failed', 'ERR_3DS_FAILED');
  return {
    kind: 'declined',
    order: await reload(deps, order.id),
    code: 'ERR_3DS_FAILED',
    message: '3D Secure authentication failed.',
  };
}

/**
 * The 3DS return (GET /checkout/3ds-return): the one caller that takes the hold finishes the payment.
 * A reload or a second tab, whose hold another request took, only shows where the order stands; an
 * expired hold fails the attempt.
 */
export async function finishChallenge(
  deps: CheckoutDeps,
  verificationId: string,
): Promise<PaymentOutcome | null> {
  const attempt = await deps.store.attempts.by('verification_id', verificationId);
  if (!attempt) return null;
  const hold = await deps.store.holds.take(attempt.id);
  const order = await reload(deps, attempt.order_id);
  switch (hold.kind) {
    case 'taken':
      return transact(deps, order, attempt, openHold(deps.box, attempt.id, hold.sealed), verificationId);
    case 'expired':
      return timedOut(deps, attempt.id);
    case 'gone':
      return { kind: 'done', order };
    default:
      return hold satisfies never;
  }
}

/**
 * Holds nobody came back for within 15 minutes: erased, and their orders failed with
 * ERR_3DS_TIMEOUT (the scheduler runs this every minute).
 */
export async function expireHolds(deps: CheckoutDeps): Promise<number> {
  let expired = 0;
  for (const id of await deps.store.holds.expired()) {
    if ((await deps.store.holds.take(id)).kind !== 'expired') continue;
    await timedOut(deps, id);
    expired++;
  }
  return expired;
}

async function timedOut(deps: CheckoutDeps, attemptId: string): Promise<PaymentOutcome> {
  const attempt = (await deps.store.attempts.get(attemptId))!;
  const order = await reload(deps, attempt.order_id);
  if (order.current_attempt_id !== attempt.id || order.status !== 'requires_action')
    return { kind: 'done', order };
  await found(deps, attempt.id, `api:${attempt.id}:hold`, 'failed', 'ERR_3DS_TIMEOUT');
  return {
    kind: 'declined',
    order: await reload(deps, order.id),
    code: 'ERR_3DS_TIMEOUT',
    message: declineMessage('ERR_3DS_TIMEOUT'),
  };
}

async function transact(
  deps: CheckoutDeps,
  order: OrderRecord,
  attempt: AttemptRecord,
  payment: CardPayment,
  verificationId: string,
): Promise<PaymentOutcome> {
  const request = {
    type: payment.mode,
    amountMinor: order.amount_minor,
    currency: order.currency as never,
    reference: order.reference,
    card: payment.card,
    verificationId,
    customer: payment.customer,
    browserIp: payment.browserIp,
    description: order.description ?? undefined,
  };
  let record: GatewayTransaction;
  try {
    record = (await deps.gateway.createTransaction(request)).data;
  } catch (error) {
    if (!(error instanceof GatewayNetworkError) || error.sentNothing)
      return refuse(deps, order, attempt, error, 'initiate');
    // No answer: it may have gone through. Asking again is safe, since the reference guards against a
    // second charge: an answer, or ERR_DUPLICATE naming the transaction the first request made.
    try {
      record = (await deps.gateway.createTransaction(request)).data;
    } catch (again) {
      const id = again instanceof GatewayError && again.code === 'ERR_DUPLICATE' ? duplicateOf(again) : null;
      if (id === null) {
        if (again instanceof GatewayError) return refuse(deps, order, attempt, again, 'initiate');
        deps.logger.warn(
          { order: order.id, attempt: attempt.id },
          'transaction outcome unknown; the poller will settle it',
        );
        return { kind: 'unknown', order: await reload(deps, order.id) };
      }
      record = (await deps.gateway.transactionStatus(id)).data;
    }
  }
  return observeAnswer(deps, order, attempt, record);
}

async function observeAnswer(
  deps: CheckoutDeps,
  order: OrderRecord,
  attempt: AttemptRecord,
  record: ReturnType<typeof transactionSchema.parse>,
) {
  try {
    await deps.store.attempts.setIds(attempt.id, { gateway_transaction_id: record.id });
    await deps.apply(observeTransaction(record, 'api', `api:${attempt.id}:initiate`, deps.clock.now()));
  } catch (error) {
    // The gateway has decided; only our record of it failed. The shopper is told the outcome is on its
    // way (never a 500 for money that moved): the webhook, or a poll, lands it by the reference.
    deps.logger.error(
      {
        order: order.id,
        attempt: attempt.id,
        transaction: record.id,
        err: { message: (error as Error).message },
      },
      'gateway answer not recorded; the webhook or a poll will land it',
    );
    return { kind: 'unknown', order: await reload(deps, order.id) } satisfies PaymentOutcome;
  }
  const after = await reload(deps, order.id);
  if (after.status === 'failed' || after.status === 'cancelled') {
    const code = after.failure_code ?? 'ERR_TXN_FAILED';
    return { kind: 'declined', order: after, code, message: declineMessage(code) } satisfies PaymentOutcome;
  }
  return { kind: 'done', order: after } satisfies PaymentOutcome;
}

function duplicateOf(error: GatewayError): string | null {
  const id = (error.details.data as { transaction_id?: unknown } | null)?.transaction_id;
  return typeof id === 'number' || typeof id === 'string' ? String(id) : null;
}

/**
 * A refusal: a decline that recorded a transaction is observed like any answer; one that did not
 * fails the attempt here, with the gateway's code. An unreachable gateway fails it too: at this
 * point nothing was charged.
 */
async function refuse(
  deps: CheckoutDeps,
  order: OrderRecord,
  attempt: AttemptRecord,
  error: unknown,
  step: string,
): Promise<PaymentOutcome> {
  if (error instanceof GatewayError && error.status < 500) {
    const record = transactionSchema.safeParse(error.details.data);
    if (record.success) return observeAnswer(deps, order, attempt, record.data);
    await found(deps, attempt.id, `api:${attempt.id}:${step}`, 'failed', error.code);
    return {
      kind: 'declined',
      order: await reload(deps, order.id),
      code: error.code,
      message: declineMessage(error.code),
    };
  }
  if (error instanceof GatewayError || error instanceof GatewayNetworkError) {
    // The gateway failed, not the card: the attempt ends (nothing was charged) and the customer may retry.
    const code = error instanceof GatewayError ? error.code : 'GATEWAY_UNAVAILABLE';
    deps.logger.warn({ order: order.id, step, code }, 'gateway unavailable');
    await found(deps, attempt.id, `api:${attempt.id}:${step}`, 'failed', code);
    return {
      kind: 'unavailable',
      order: await reload(deps, order.id),
      code,
      message: 'The payment gateway is not available; nothing was charged.',
    };
  }
  throw error;
}

/** What the kit's call found about the attempt, through the one apply path (a challenge, or a refusal). */
async function found(
  deps: CheckoutDeps,
  attemptId: string,
  sourceId: string,
  status: 'requires_action' | 'failed',
  code: string | null = null,
): Promise<void> {
  await deps.apply(observeFinding(attemptId, { status, code }, sourceId, deps.clock.now()));
}

/** What the storefront tells the customer, per gateway code (gateway-api.md, Errors). */
const MESSAGES: Record<string, string> = {
  ERR_CARD_DO_NOT_HONOR: 'The card was declined. Try another card.',
  ERR_CARD_INSUFFICIENT_FUNDS: 'The card has insufficient funds.',
  ERR_EXPIRED_CARD: 'The card has expired.',
  ERR_CARD_EXPIRATION_INVALID: 'The card expiry date is not valid.',
  ERR_INVALID_ACCOUNT_NUMBER: 'The card number is not valid.',
  ERR_CARD_SECURITY_VIOLATION: 'The card was declined for security reasons.',
  ERR_CARD_SYSTEM_ERROR: 'The card network had a temporary problem. Please try again.',
  ERR_CARD_ISSUER_UNAVAILABLE: 'The card issuer is unavailable. Please try again in a moment.',
  ERR_CARD_FRAUD_SUSPECTED: 'The card was declined. Please use another card.',
  ERR_CARD_LOST_OR_STOLEN: 'The card was declined. Please use another card.',
  ERR_DO_NOT_RETRY: 'The card was declined. Please use another card.',
  ERR_RISK_REJECTED: 'The payment was blocked by risk checks.',
  ERR_3DS_REQUIRED: 'The card requires 3D Secure authentication.',
  ERR_3DS_FAILED: '3D Secure authentication failed.',
  ERR_3DS_NOT_ENROLLED: 'The card is not enrolled in 3D Secure.',
  ERR_3DS_TIMEOUT: 'The authentication was not completed in time.',
  ERR_3DS_NOT_SUPPORTED: 'The card does not support 3D Secure.',
  ERR_3DS_TECHNICAL_ERROR: '3D Secure had a technical problem. Please try again.',
  ERR_PAYMENT_METHOD_NOT_ENABLED: 'This payment method or currency is not available.',
  ERR_DUPLICATE: 'A payment for this order is already in progress.',
};

export function declineMessage(code: string): string {
  return MESSAGES[code] ?? 'The payment was declined.';
}
