import { duplicateHolder, GatewayError, GatewayNetworkError } from '../../client/errors.js';
import type { CardInput, CustomerInput } from '../../client/gateway-client.js';
import { MerchantKeyRefused } from '../../client/merchant-gateways.js';
import {
  type GatewayTransaction,
  type GatewayVerification,
  transactionSchema,
} from '../../client/schemas.js';
import { factsOf } from '../customers/saved-card.js';
import { observeFinding, observeTransaction } from '../orders/from-gateway.js';
import type { About } from '../orders/observation.js';
import { oneMerchant } from '../orders/order-merchant.js';
import type { ApplyResult } from '../reconciler/apply.js';
import type { KnownInstrument, OrderBeforeAttempt } from '../store/index.js';
import type { AttemptRecord, OrderRecord } from '../store/records.js';
import { type CheckoutDeps, inTurn, type PaymentOutcome, reload, type Standing, standing } from './deps.js';
import { adoptDuplicate } from './duplicate.js';
import { type CardHold, HOLD_LIFETIME_MS, openHold, sealHold } from './hold.js';
import { inputRefusal } from './input-refusal.js';
import { outcomeOf, unavailability } from './outcome.js';

export interface CardPayment {
  card: CardInput;
  mode: 'sale' | 'auth';
  customer?: CustomerInput;
  browserIp?: string;
  /**
   * The customer (the order's) to save the card for when approved: only with their consent, which the
   * shop asked for. The gateway keeps the card; the kit keeps its `card_...` id, brand, last four, expiry.
   */
  saveFor?: string;
}

/** What pays: a card in hand after its 3DS check, or a saved card's vault token (no 3DS asked). */
export type PaymentSource = { card: CardInput; verificationId: string } | { vaultToken: string };

/** The transaction as the kit asks it, whichever way the order pays. */
export interface PaymentRequest {
  mode: 'sale' | 'auth';
  customer?: CustomerInput;
  browserIp?: string;
  /** The customer to save a card in hand for (CardPayment.saveFor). */
  saveFor?: string;
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
  return inTurn(deps, orderId, () => cardPayment(deps, orderId, payment));
}

async function cardPayment(
  deps: CheckoutDeps,
  orderId: string,
  payment: CardPayment,
): Promise<PaymentOutcome> {
  // Platform mode, a merchant with no key of its own: 3D Secure is merchant-only; no attempt is made.
  const keyless = deps.gateways.refusal(
    (await deps.store.orders.find(orderId))?.merchant_id ?? null,
    '3D Secure',
  );
  if (keyless) throw keyless;
  const { order, attempt, previous, replacedChallenges } = await deps.store.orders.startAttempt(orderId, {
    kind: 'card',
    mode: payment.mode,
    maxFailedAttempts: deps.maxFailedAttempts,
  });
  const about: About = { orderId: order.id, attemptId: attempt.id };
  let verification: GatewayVerification;
  try {
    verification = (
      await deps.gateways.of(order.merchant_id).verify3ds({
        amountMinor: order.amount_minor,
        currency: order.currency as never,
        card: payment.card,
        authUrl: `${deps.publicBaseUrl}/checkout/3ds-return`,
      })
    ).data;
  } catch (error) {
    // The merchant's own key refused (platform mode): nothing exists at the gateway for this attempt;
    // undone, and the answer names the key (a 409), not a declined card.
    if (error instanceof MerchantKeyRefused) {
      await withdraw(deps, order.id, attempt.id, previous, replacedChallenges);
      throw error;
    }
    const errors = error instanceof GatewayError ? inputRefusal(error, 'card') : null;
    if (errors) {
      // Nothing exists at the gateway for this attempt yet: undone, and the order is as it was.
      await withdraw(deps, order.id, attempt.id, previous, replacedChallenges);
      const { code, message } = error as GatewayError;
      return { kind: 'invalid', ...(await reload(deps, order.id)), code, message, errors };
    }
    return refuse(deps, about, error, 'verify');
  }
  // Every answer from here on carries the verification's id to the attempt, with what it says.
  const verified: About = { ...about, ids: { verificationId: verification.public_id } };
  if (verification.status === 'full_auth')
    return transact(deps, order, verified, payment, withCard(payment, verification.public_id));
  if (verification.challenge_url) {
    const hold: CardHold = {
      card: payment.card,
      mode: payment.mode,
      customer: payment.customer,
      browserIp: payment.browserIp,
      ...(payment.saveFor === undefined ? {} : { saveFor: payment.saveFor }),
    };
    await deps.store.holds.put(
      attempt.id,
      sealHold(deps.box, attempt.id, hold),
      new Date(deps.clock.now() + HOLD_LIFETIME_MS),
    );
    // The challenge page is kept with the attempt: a shopper who comes back is sent to it again.
    const challenge: About = { ...verified, ids: { ...verified.ids, actionUrl: verification.challenge_url } };
    const applied = await found(deps, challenge, `api:${attempt.id}:3ds`, 'requires_action');
    return { kind: 'action', ...standing(applied), url: verification.challenge_url };
  }
  return declined(deps, verified, `api:${attempt.id}:3ds`, 'ERR_3DS_FAILED');
}

/**
 * The 3DS return (GET /checkout/3ds-return): the one caller that takes the hold finishes the payment.
 * A reload or a second tab, whose hold another request took, only shows where the order stands; an
 * expired hold fails the attempt.
 */
export async function finishChallenge(
  deps: CheckoutDeps,
  verificationId: string,
): Promise<ChallengeOutcome | null> {
  const attempt = await deps.store.attempts.by('verification_id', verificationId);
  if (!attempt) return null;
  // In the order's turn: a press of Pay in another tab meanwhile waits, rather than superseding the
  // attempt whose transaction this return is about to make.
  return inTurn(deps, attempt.order_id, () => finishInTurn(deps, attempt, verificationId));
}

async function finishInTurn(
  deps: CheckoutDeps,
  attempt: AttemptRecord,
  verificationId: string,
): Promise<ChallengeOutcome> {
  const hold = await deps.store.holds.take(attempt.id);
  switch (hold.kind) {
    case 'taken': {
      const order = (await deps.store.orders.find(attempt.order_id))!;
      const about = { orderId: order.id, attemptId: attempt.id };
      const payment = openHold(deps.box, attempt.id, hold.sealed);
      return transact(deps, order, about, payment, withCard(payment, verificationId));
    }
    case 'expired':
    case 'gone': {
      const now = await reload(deps, attempt.order_id);
      // A newer attempt erased this one's card data: its challenge pays nothing, and says so.
      if (now.order.current_attempt_id !== attempt.id) return { kind: 'replaced', ...now };
      return hold.kind === 'expired' ? timedOut(deps, attempt.id) : { kind: 'done', ...now };
    }
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

/** What a 3DS return leads to: a payment's outcome, or a challenge a newer attempt replaced. */
export type ChallengeOutcome = PaymentOutcome | (Standing & { kind: 'replaced' });

/**
 * An attempt the gateway refused before anything existed there, undone (store withdrawAttempt). The
 * attempt it superseded is current again, but a challenge it waited on lost its card data when this
 * one started: that challenge can no longer finish, so it ends as an expired hold would, here at once
 * (and, should the process die first, at the holds job's next run: the erased hold expires now).
 */
export async function withdraw(
  deps: CheckoutDeps,
  orderId: string,
  attemptId: string,
  previous: OrderBeforeAttempt,
  replacedChallenges: readonly string[],
): Promise<void> {
  await deps.store.orders.withdrawAttempt(orderId, attemptId, previous);
  for (const id of replacedChallenges) await timedOut(deps, id);
}

async function timedOut(deps: CheckoutDeps, attemptId: string): Promise<PaymentOutcome> {
  const attempt = (await deps.store.attempts.get(attemptId))!;
  const now = await reload(deps, attempt.order_id);
  if (now.order.current_attempt_id !== attempt.id || now.order.status !== 'requires_action')
    return { kind: 'done', ...now };
  const about = { orderId: attempt.order_id, attemptId };
  return declined(deps, about, `api:${attemptId}:hold`, 'ERR_3DS_TIMEOUT');
}

const withCard = (payment: CardPayment, verificationId: string): PaymentSource => ({
  card: payment.card,
  verificationId,
});

/** The gateway's answer to the transaction, or why there was none. */
export type InitiateAnswer =
  | { record: GatewayTransaction; error: null }
  | { record: null; error: unknown }
  | { record: null; error: 'unknown' };

/**
 * The transaction, as one call: a lost answer is asked again (the reference guards against a second
 * charge); twice without an answer, the outcome is unknown.
 */
export async function initiate(
  deps: CheckoutDeps,
  order: OrderRecord,
  payment: PaymentRequest,
  source: PaymentSource,
): Promise<InitiateAnswer> {
  // Only a card in hand is saved: a saved card's payment has nothing to keep.
  const saveFor = 'card' in source ? payment.saveFor : undefined;
  const request = {
    type: payment.mode,
    amountMinor: order.amount_minor,
    currency: order.currency as never,
    reference: order.reference,
    ...('card' in source
      ? { card: source.card, verificationId: source.verificationId }
      : { vaultToken: source.vaultToken }),
    // Saving needs the customer's id at the gateway: the order's, whatever else the customer says.
    customer:
      saveFor === undefined ? payment.customer : { ...payment.customer, merchant_customer_id: saveFor },
    savePaymentInstrument: saveFor !== undefined,
    browserIp: payment.browserIp,
    description: order.description ?? undefined,
  };
  const create = (): Promise<InitiateAnswer> =>
    deps.gateways
      .of(order.merchant_id)
      .createTransaction(request)
      .then(
        (answer) => ({ record: answer.data, error: null }),
        (error: unknown) => ({ record: null, error }),
      );
  const answer = await create();
  if (!mayHaveArrived(answer.error)) return answer;
  const again = await create();
  return again.error instanceof GatewayNetworkError || serverError(again.error)
    ? { record: null, error: 'unknown' }
    : again;
}

/**
 * What the transaction's answer does to the attempt: a record is applied; ERR_DUPLICATE, on the first
 * call (the kit died before hearing an earlier one) or the second, is the gateway naming the payment
 * it holds: adopted; anything else is a refusal.
 */
export async function settle(
  deps: CheckoutDeps,
  about: About,
  answer: InitiateAnswer,
): Promise<PaymentOutcome> {
  if (answer.error === 'unknown') return outcomeUnknown(deps, about);
  if (answer.record) return observed(deps, about, answer.record, `api:${about.attemptId}:initiate`);
  const holder = duplicateHolder(answer.error);
  if (holder) return adoptDuplicate(deps, about, holder);
  return refuse(deps, about, answer.error, 'initiate');
}

/** The transaction for a card in hand; a card saved with it is kept once the gateway approved. */
async function transact(
  deps: CheckoutDeps,
  order: OrderRecord,
  about: About,
  payment: CardPayment,
  source: PaymentSource,
): Promise<PaymentOutcome> {
  const answer = await initiate(deps, order, payment, source);
  const outcome = await settle(deps, about, answer);
  const token = answer.record?.vault_token;
  if (payment.saveFor !== undefined && token)
    await keepSavedCard(deps, payment.saveFor, { vaultToken: token, ...factsOf(payment.card) }, order);
  return outcome;
}

/**
 * The kit's row for a card the gateway just saved. Should it fail, nothing is lost: the gateway holds
 * the instrument, and the customer's next list of cards (synced from the gateway) brings it in. Should
 * the customer have been erased while the payment was in flight (the order names nobody now), the
 * card is not kept and is revoked at the gateway: the consent to keep it went with them (issue 43,
 * part 4). The payment stands.
 */
async function keepSavedCard(
  deps: CheckoutDeps,
  customerId: string,
  instrument: KnownInstrument,
  order: OrderRecord,
): Promise<void> {
  const orderId = order.id;
  try {
    // The order's merchant's customer (platform mode): another merchant's customer of the same id never sees it.
    const merchant = oneMerchant(order.merchant_id, deps.gateways.merchants);
    if ((await deps.store.savedCards.remember(customerId, instrument, orderId, undefined, merchant)) !== null)
      return;
    deps.logger.info(
      { order: orderId },
      'card saved for an erased customer: not kept, revoked at the gateway',
    );
    await deps.gateways
      .of(order.merchant_id)
      .revokePaymentInstrument(instrument.vaultToken)
      .catch((error: unknown) => {
        // Unknown to the gateway: nothing there can pay with it either.
        if (!(error instanceof GatewayError && error.status === 404)) throw error;
      });
  } catch (error) {
    deps.logger.error(
      { order: orderId, err: { message: (error as Error).message } },
      "saved card not recorded or not revoked; the customer's next list of cards, or erasure, brings it in line",
    );
  }
}

/** No answer to a request that may have reached the gateway: a timeout, a reset, a garbled answer. */
const mayHaveArrived = (error: unknown) =>
  (error instanceof GatewayNetworkError && !error.sentNothing) || serverError(error);

/** A 5xx after the client's own retries: the gateway may have recorded the payment all the same. */
const serverError = (error: unknown) => error instanceof GatewayError && error.status >= 500;

/** Neither answer came: the order stays pending; the webhook (or the shopper's next try) settles it. */
async function outcomeUnknown(deps: CheckoutDeps, about: About): Promise<PaymentOutcome> {
  deps.logger.warn(
    { order: about.orderId, attempt: about.attemptId },
    'transaction outcome unknown; the webhook or the next attempt will settle it',
  );
  return { kind: 'unknown', ...(await reload(deps, about.orderId)) };
}

/** A transaction record the gateway answered with (approved or declined), applied to the attempt. */
async function observed(
  deps: CheckoutDeps,
  about: About,
  record: GatewayTransaction,
  sourceId: string,
): Promise<PaymentOutcome> {
  let applied: ApplyResult;
  try {
    applied = await deps.apply(observeTransaction(record, 'api', sourceId, deps.clock.now(), about));
  } catch (error) {
    // The gateway has decided; only our record of it failed. The shopper is told the outcome is on its
    // way (never a 500 for money that moved): the webhook, or a poll, lands it by the reference.
    deps.logger.error(
      {
        order: about.orderId,
        attempt: about.attemptId,
        transaction: record.id,
        err: { message: (error as Error).message },
      },
      'gateway answer not recorded; the webhook or a poll will land it',
    );
    return { kind: 'unknown', ...(await reload(deps, about.orderId)) };
  }
  return outcomeOf(applied);
}

/**
 * A refusal: a decline that recorded a transaction is observed like any answer; one that did not
 * fails the attempt here, with the gateway's code. An unreachable gateway (nothing sent, or a 3DS
 * step, where no money can move) fails it too: nothing was charged.
 */
async function refuse(
  deps: CheckoutDeps,
  about: About,
  error: unknown,
  step: string,
): Promise<PaymentOutcome> {
  const sourceId = `api:${about.attemptId}:${step}`;
  // A 429 is the gateway refusing to look, not the card refused: unavailable, below.
  if (error instanceof GatewayError && error.status < 500 && error.status !== 429) {
    const record = transactionSchema.safeParse(error.details.data);
    if (record.success) return observed(deps, about, record.data, sourceId);
    return declined(deps, about, sourceId, error.code);
  }
  if (error instanceof GatewayError || error instanceof GatewayNetworkError) {
    // The gateway failed, not the card: the attempt ends (nothing was charged) and the customer may retry.
    const { code, retryAfterSeconds } = unavailability(error);
    deps.logger.warn({ order: about.orderId, step, code }, 'gateway unavailable');
    const applied = await found(deps, about, sourceId, 'failed', code);
    return {
      kind: 'unavailable',
      ...standing(applied),
      code,
      message:
        code === 'GATEWAY_BUSY'
          ? 'The payment gateway is busy; nothing was charged. Please try again shortly.'
          : 'The payment gateway is not available; nothing was charged.',
      retryAfterSeconds,
    };
  }
  throw error;
}

/**
 * A refusal that recorded nothing at the gateway: the attempt fails with the gateway's code. Should a
 * transaction record have said otherwise first (decide flags the contradiction), the shopper is told
 * where the order stands, not that it failed.
 */
async function declined(
  deps: CheckoutDeps,
  about: About,
  sourceId: string,
  code: string,
): Promise<PaymentOutcome> {
  return outcomeOf(await found(deps, about, sourceId, 'failed', code));
}

/** What the kit's call found about the attempt, through the one apply path (a challenge, or a refusal). */
function found(
  deps: CheckoutDeps,
  about: About,
  sourceId: string,
  status: 'requires_action' | 'failed',
  code: string | null = null,
): Promise<ApplyResult> {
  return deps.apply(observeFinding(about, { status, code }, sourceId, deps.clock.now()));
}
