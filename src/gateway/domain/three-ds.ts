import { sqlDateTime } from '../../shared/clock.js';
import type { CurrencyCode } from '../../shared/money.js';

export type VerificationStatus = 'pending' | 'full_auth' | 'failed';

/** sandbox.md section 5. */
export const CHALLENGE_LIFETIME_MS = 10 * 60 * 1000;
export const VERIFICATION_VALIDITY_MS = 30 * 60 * 1000;

export interface Verification {
  id: number; // deprecated numeric id, still accepted on input
  publicId: string;
  merchantId: number;
  /** HMAC of the card number: matching a transaction's card without keeping the number. */
  cardFingerprint: string;
  amount: number;
  currency: CurrencyCode;
  status: VerificationStatus;
  authType: 'frictionless' | 'challenge';
  eci: string;
  cavv: string;
  dsTransId: string;
  authUrl: string;
  createdAt: number;
  updatedAt: number;
}

/** A challenge nobody finished within 10 minutes counts as failed, whether or not a tick has run. */
export function effectiveStatus(v: Verification, now: number): VerificationStatus {
  if (v.status === 'pending' && now - v.createdAt >= CHALLENGE_LIFETIME_MS) return 'failed';
  return v.status;
}

export function verificationView(v: Verification, now: number, challengeUrl: string | null) {
  return {
    id: v.id,
    public_id: v.publicId,
    amount: v.amount,
    currency: v.currency,
    version: '2.2.0',
    eci: v.eci,
    cavv: v.cavv,
    xid: null,
    ds_trans_id: v.dsTransId,
    status: effectiveStatus(v, now),
    auth_type: v.authType,
    challenge_url: challengeUrl,
    post_url: null,
    html: null,
    created_at: sqlDateTime(v.createdAt),
    updated_at: sqlDateTime(v.updatedAt),
  };
}

export interface PaymentFacts {
  merchantId: number;
  cardFingerprint: string;
  amount: number;
  currency: CurrencyCode;
}

export type VerificationCheck =
  | { ok: true }
  | { ok: false; code: 'ERR_3DS_FAILED' | 'ERR_3DS_TIMEOUT'; message: string };

/**
 * sandbox.md section 5: valid for a transaction when it is the same merchant, card, amount and
 * currency, `full_auth`, and at most 30 minutes old. Another merchant's record is as missing as none.
 */
export function checkVerification(
  v: Verification | undefined,
  payment: PaymentFacts,
  now: number,
): VerificationCheck {
  if (!v || v.merchantId !== payment.merchantId)
    return { ok: false, code: 'ERR_3DS_FAILED', message: 'The card verification does not exist.' };
  if (now - v.createdAt > VERIFICATION_VALIDITY_MS) {
    return {
      ok: false,
      code: 'ERR_3DS_TIMEOUT',
      message: 'The card verification is older than 30 minutes; verify the card again.',
    };
  }
  if (effectiveStatus(v, now) !== 'full_auth') {
    return {
      ok: false,
      code: 'ERR_3DS_FAILED',
      message: 'The card verification did not authenticate the cardholder.',
    };
  }
  if (
    v.cardFingerprint !== payment.cardFingerprint ||
    v.amount !== payment.amount ||
    v.currency !== payment.currency
  ) {
    return {
      ok: false,
      code: 'ERR_3DS_FAILED',
      message: 'The card verification was made for another card, amount or currency.',
    };
  }
  return { ok: true };
}
