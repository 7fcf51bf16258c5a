import { createHash } from 'node:crypto';
import { GatewayError } from '../../client/errors.js';
import type { CustomerInput } from '../../client/gateway-client.js';
import { transactionSchema } from '../../client/schemas.js';
import { CARD_REFUSALS, type CardRefusalCode, cardLabel, cardRefusal } from '../customers/saved-card.js';
import { type Actor, actorLabel } from '../operators/roles.js';
import { countsTowardCap } from '../orders/attempt-cap.js';
import type { About } from '../orders/observation.js';
import { InvalidTransition } from '../orders/status.js';
import type { AuditStore } from '../store/audit.js';
import { DuplicateReference, type OrderStore } from '../store/orders.js';
import type { AttemptRecord, OrderRecord, SavedCardRecord } from '../store/records.js';
import { initiate, settle, withdraw } from './card.js';
import { type CheckoutDeps, inTurn, type PaymentOutcome, reload, type Standing } from './deps.js';
import { declineMessage } from './outcome.js';

/**
 * What a saved card needs of the store beyond checkout's: its vault token, marking it revoked, and
 * (a charge) a new order, found again by its reference.
 */
export interface SavedCardDeps extends CheckoutDeps {
  store: CheckoutDeps['store'] & {
    orders: Pick<OrderStore, 'create' | 'byReference'>;
    audit: Pick<AuditStore, 'record'>;
    savedCards: CheckoutDeps['store']['savedCards'] & {
      vaultToken(id: string): Promise<string | null>;
      markRevokedAtGateway(id: string): Promise<void>;
    };
  };
}

export interface SavedCardPayment {
  /** The customer's card, found by the caller among the order's customer's own (never another's). */
  card: SavedCardRecord;
  mode: 'sale' | 'auth';
  customer?: CustomerInput;
  browserIp?: string;
  /** A merchant-initiated charge: who made it, named in the attempt's history line. */
  initiatedBy?: Actor;
}

/** Gateway refusals of a token that record nothing: the card, not the payment, is what is wrong. */
const TOKEN_REFUSALS: Record<string, CardRefusalCode> = {
  ERR_INVALID_CARD_TOKEN: 'CARD_REVOKED',
  ERR_EXPIRED_CARD: 'CARD_EXPIRED',
};

/**
 * POST /orders/{id}/pay/saved (issue 21): the transaction with the card's vault token, no 3DS asked
 * (the payment that saved it was authenticated). Everything after the call is a card payment's: a
 * lost answer asked again, ERR_DUPLICATE adopted, the answer applied through the one apply path. The
 * attempt's history line names the card that pays.
 */
export async function payBySavedCard(
  deps: SavedCardDeps,
  orderId: string,
  payment: SavedCardPayment,
): Promise<PaymentOutcome> {
  return inTurn(deps, orderId, () => savedCardPayment(deps, orderId, payment));
}

async function savedCardPayment(
  deps: SavedCardDeps,
  orderId: string,
  payment: SavedCardPayment,
): Promise<PaymentOutcome> {
  const { card } = payment;
  const vaultToken = await deps.store.savedCards.vaultToken(card.id);
  if (vaultToken === null) throw new Error(`saved card ${card.id} has no row`);
  const { order, attempt, previous, replacedChallenges } = await deps.store.orders.startAttempt(orderId, {
    kind: 'card',
    mode: payment.mode,
    savedCardId: card.id,
    maxFailedAttempts: deps.maxFailedAttempts,
    detail: `saved card attempt started: ${cardLabel(card)} (${card.id})${
      payment.initiatedBy ? `, charged by ${actorLabel(payment.initiatedBy)}` : ''
    }`,
  });
  const about: About = { orderId: order.id, attemptId: attempt.id };
  const answer = await initiate(deps, order, payment, { vaultToken });
  const refusal = tokenRefusal(answer.error);
  if (refusal) {
    // Nothing exists at the gateway for this attempt: undone, and the card shown for what it is.
    await withdraw(deps, order.id, attempt.id, previous, replacedChallenges);
    if (refusal.code === 'CARD_REVOKED') await deps.store.savedCards.markRevokedAtGateway(card.id);
    return {
      kind: 'invalid',
      ...(await reload(deps, order.id)),
      ...refusal,
      errors: { card: [refusal.message] },
    };
  }
  return settle(deps, about, answer);
}

/** A refusal of the token itself that recorded no transaction (a decline that did is the payment's). */
function tokenRefusal(error: unknown) {
  if (!(error instanceof GatewayError)) return null;
  const code = TOKEN_REFUSALS[error.code];
  if (!code || transactionSchema.safeParse(error.details.data).success) return null;
  return { code, message: CARD_REFUSALS[code] };
}

export interface SavedCardCharge {
  /** The merchant whose customer it is: the new order's. */
  merchantId?: number | null;
  customerId: string;
  card: SavedCardRecord;
  amountMinor: number;
  currency: string;
  mode: 'sale' | 'auth';
  description?: string | null;
  /** The caller's key: the same key is the same charge, whenever and however often it is sent. */
  idempotencyKey: string;
  /** Who charged: an operator (the audit log keeps each request), or the fork's own job. */
  initiatedBy: Actor;
}

/**
 * How a charge ended: a payment's outcome, a key already used for another charge, or a card that can
 * no longer pay (removed, expired) asked for a charge its key never made: nothing was stored.
 */
export type ChargeOutcome =
  | (PaymentOutcome & { created: boolean })
  | KeyReused
  | ({ kind: 'card_refused' } & NonNullable<ReturnType<typeof cardRefusal>>);

/**
 * A merchant-initiated charge (issue 21, part 4): a subscription's renewal, a top-up. A new order for
 * the customer, paid with their saved card. The key is stored before the gateway hears of the charge,
 * as the order's reference (`mit_` and a digest of customer and key), which the gateway refuses to
 * take twice: a retry after any crash finds the order, and a payment the gateway made whose answer
 * was lost is adopted (ERR_DUPLICATE), never made again. A charge that ended is answered as it ended.
 */
export async function chargeSavedCard(deps: SavedCardDeps, charge: SavedCardCharge): Promise<ChargeOutcome> {
  const reference = chargeReference(charge.customerId, charge.idempotencyKey);
  // A card removed or expired makes no new charge, but the same key again is answered as its charge
  // stands: the money may have moved before the card went (a renewal retried after a lost answer).
  const refusal = cardRefusal(charge.card, deps.clock.now());
  if (refusal && !(await deps.store.orders.byReference(reference)))
    return { kind: 'card_refused', ...refusal };
  let order: OrderRecord;
  let created = true;
  try {
    // An operator's charge: its client secret is nobody's to use (operators need none), so not kept.
    ({ order } = await deps.store.orders.create({
      merchantId: charge.merchantId ?? null,
      amountMinor: charge.amountMinor,
      currency: charge.currency,
      reference,
      description: charge.description ?? null,
      customer: { merchant_customer_id: charge.customerId },
    }));
  } catch (error) {
    if (!(error instanceof DuplicateReference)) throw error;
    order = (await deps.store.orders.byReference(reference))!;
    created = false;
    const standing = await reload(deps, order.id);
    if (
      order.amount_minor !== charge.amountMinor ||
      order.currency !== charge.currency ||
      otherTerms(standing.attempt, charge)
    )
      return { kind: 'key_reused', ...standing };
  }
  await deps.store.audit.record({
    actor: charge.initiatedBy,
    action: 'card.charge',
    orderId: order.id,
    subjectId: charge.card.id,
    amountMinor: charge.amountMinor,
    currency: charge.currency,
    detail: created ? `customer ${charge.customerId}` : `customer ${charge.customerId}, the same key again`,
  });
  // In the order's turn: the same key sent again while the first is at the gateway waits for it, and
  // then finds it ended (a decline too is answered as it ended, not charged again). The request that
  // made the order asks too: another with the same key may have had the order's turn first.
  const outcome = await inTurn(deps, order.id, async (): Promise<PaymentOutcome | KeyReused> => {
    // Asked again in the turn: a request with the same key and another card may have had it first.
    const standing = await reload(deps, order.id);
    if (otherTerms(standing.attempt, charge)) return { kind: 'key_reused', ...standing };
    const ended = endedAs(standing);
    if (ended) return ended;
    if (refusal)
      return {
        kind: 'invalid',
        ...standing,
        code: refusal.code,
        message: refusal.message,
        errors: { card: [refusal.field] },
      };
    try {
      return await savedCardPayment(deps, order.id, {
        card: charge.card,
        mode: charge.mode,
        customer: { merchant_customer_id: charge.customerId },
        initiatedBy: charge.initiatedBy,
      });
    } catch (error) {
      // The charge ended meanwhile (the gateway's webhook for the first try landed): answered as it ended.
      const ended = error instanceof InvalidTransition && endedAs(await reload(deps, order.id));
      if (ended) return ended;
      throw error;
    }
  });
  return outcome.kind === 'key_reused' ? outcome : { ...outcome, created };
}

type KeyReused = Standing & { kind: 'key_reused' };

/**
 * Whether the charge's order was paid for, or tried, with another saved card or mode than this
 * request names: the key's first request fixed them, so this is another charge. A row from before
 * attempts kept their card (saved_card_id null) is compared on the mode alone.
 */
function otherTerms(attempt: AttemptRecord | null, charge: SavedCardCharge): boolean {
  if (attempt === null) return false;
  return (
    attempt.mode !== charge.mode ||
    (attempt.saved_card_id !== null && attempt.saved_card_id !== charge.card.id)
  );
}

/**
 * A charge's order that ended (paid, authorised, declined, ...): answered as it ended, never made
 * again. Null while it is pending (the charge goes on: a payment the gateway holds is adopted), or
 * failed for the gateway's reasons alone.
 */
function endedAs(standing: Standing): PaymentOutcome | null {
  const { status, failure_code: code } = standing.order;
  if (status === 'pending') return null;
  // The gateway was down or busy, not the card declined: nothing was charged, so the same key tries again.
  if (status === 'failed' && !countsTowardCap(code)) return null;
  if (status === 'failed' || status === 'cancelled') {
    const failed = code ?? 'ERR_TXN_FAILED';
    return { kind: 'declined', ...standing, code: failed, message: declineMessage(failed) };
  }
  return { kind: 'done', ...standing };
}

/** The order reference a charge's key becomes: the same customer and key, the same reference. */
export function chargeReference(customerId: string, idempotencyKey: string): string {
  return `mit_${createHash('sha256').update(`${customerId}\n${idempotencyKey}`).digest('hex').slice(0, 40)}`;
}
