import { isoMicros, isoMicrosOrNull } from '../../shared/clock.js';
import {
  type CardBrand,
  cardBrand,
  cardExpired,
  type TokenIssuerOutcome,
  tokenIssuerOutcome,
} from './cards.js';

/**
 * Payment instruments, card on file (sandbox.md section 11): a card an approved payment saved for a
 * merchant's customer, paid with later by its vault token. Pure. The card number is read here once, to
 * take what the record keeps, and never kept: neither is the CVV.
 */

export type InstrumentStatus = 'active' | 'revoked';

export interface PaymentInstrument {
  /** `vt_` and 24 characters of [A-Za-z0-9]. */
  vaultToken: string;
  merchantId: number;
  merchantCustomerId: string;
  brand: CardBrand;
  last4: string;
  expMonth: number;
  expYear: number;
  name: string | null;
  status: InstrumentStatus;
  /** The card's HMAC (never shown): the same card saved again, its cardholder id and do-not-retry bar. */
  fingerprint: string;
  /** How the issuer answers payments with the token: the test-card table read at save time. */
  issuerOnReuse: TokenIssuerOutcome;
  createdAt: number;
  revokedAt: number | null;
}

/** What saving reads of the approved payment's card. */
export interface SavedCard {
  number: string;
  expMonth: number;
  expYear: number;
  name: string | null;
}

export interface SaveFacts {
  merchantId: number;
  merchantCustomerId: string;
  card: SavedCard;
  /** The card's fingerprint (an HMAC of its number, made at the edge where the key is). */
  fingerprint: string;
  /** The instrument kept for this merchant, customer and card, if any, active or revoked. */
  existing: PaymentInstrument | undefined;
  /** The token a new instrument gets; unused when the existing one is kept. */
  newToken: string;
  now: number;
}

/**
 * The instrument an approved payment with `save_payment_instrument` keeps. The same card for the same
 * customer is the same instrument, so its token is the same (section 11); its expiry and name become
 * this payment's, the card's latest details. A revoked one stays revoked (its token may still be
 * revoked again and answer the same): the card gets a new active instrument with a new token, since
 * the merchant asked to keep the card again and a revoked token must never pay.
 */
export function instrumentToKeep(f: SaveFacts): PaymentInstrument {
  const details = {
    brand: cardBrand(f.card.number),
    last4: f.card.number.slice(-4),
    expMonth: f.card.expMonth,
    expYear: f.card.expYear,
    name: f.card.name,
    issuerOnReuse: tokenIssuerOutcome(f.card.number),
  };
  if (f.existing?.status === 'active') return { ...f.existing, ...details };
  return {
    vaultToken: f.newToken,
    merchantId: f.merchantId,
    merchantCustomerId: f.merchantCustomerId,
    ...details,
    status: 'active',
    fingerprint: f.fingerprint,
    createdAt: f.now,
    revokedAt: null,
  };
}

/** DELETE: revoked from now on; an instrument revoked already is answered as it is (same `revoked_at`). */
export function revoked(i: PaymentInstrument, now: number): PaymentInstrument {
  return i.status === 'revoked' ? i : { ...i, status: 'revoked', revokedAt: now };
}

/**
 * The instrument a payment's `vault_token` may use: the merchant's own, and active. An unknown,
 * revoked or other merchant's token is refused alike, as unrecognised (ERR_INVALID_CARD_TOKEN).
 */
export function usableInstrument(
  i: PaymentInstrument | undefined,
  merchantId: number,
): PaymentInstrument | undefined {
  return i?.merchantId === merchantId && i.status === 'active' ? i : undefined;
}

/** A saved card is valid through the last moment of its expiry month, by the sandbox clock. */
export function instrumentExpired(i: Pick<PaymentInstrument, 'expMonth' | 'expYear'>, now: number): boolean {
  return cardExpired(i.expMonth, i.expYear, now);
}

/** The wire record (sandbox.md section 11): never the fingerprint nor the issuer's answer. */
export function instrumentView(i: PaymentInstrument) {
  return {
    vault_token: i.vaultToken,
    merchant_id: i.merchantId,
    merchant_customer_id: i.merchantCustomerId,
    brand: i.brand,
    last4: i.last4,
    exp_month: i.expMonth,
    exp_year: i.expYear,
    name: i.name,
    status: i.status,
    created_at: isoMicros(i.createdAt),
    revoked_at: isoMicrosOrNull(i.revokedAt),
  };
}

export type InstrumentView = ReturnType<typeof instrumentView>;
