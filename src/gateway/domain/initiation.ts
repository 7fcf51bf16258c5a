import type { CurrencyCode } from '../../shared/money.js';
import { DECLINE_MESSAGES, type IssuerOutcome, testCard } from './cards.js';
import { instrumentExpired, type PaymentInstrument } from './instruments.js';
import {
  amountRefusal,
  type CardFacts,
  cardRefusal,
  duplicateRefusal,
  type ReferenceHeldBy,
  type Refusal,
} from './payment-checks.js';
import type { VerificationCheck } from './three-ds.js';

/** sandbox.md section 4: a decline that says so bars the same card details for 24 hours. */
export const DO_NOT_RETRY_MS = 24 * 60 * 60 * 1000;

/** What the rules of POST /api/v1/transactions look at: the request, and what the state knows of it. */
export interface InitiationFacts {
  type: 'sale' | 'auth';
  /** Minor units. */
  amount: number;
  currency: CurrencyCode;
  /** The currencies the merchant has enabled. */
  merchantCurrencies: readonly string[];
  /** The transaction (and its session, if any) that holds the request's reference now, if any. */
  referenceHeldBy?: ReferenceHeldBy;
  /** Exactly one of `card` and `vaultToken` is sent (the request schema sees to that). */
  card?: CardFacts;
  vaultToken?: string;
  /**
   * With `vaultToken`: the instrument it names, when the merchant may pay with it (its own, active;
   * `usableInstrument`). Absent: the token is unknown, revoked or another merchant's.
   */
  instrument?: InstrumentFacts;
  customerEmail?: string;
  /** The check of the 3DS record named by `card_verification_data`; absent when none is named. */
  verification?: VerificationCheck;
  /** Until when an earlier decline bars these card details (or the instrument's card), if one did. */
  doNotRetryUntil?: number;
  now: number;
}

/** What the rules read of a saved card: its expiry, and how its issuer answers token payments. */
export type InstrumentFacts = Pick<PaymentInstrument, 'expMonth' | 'expYear' | 'issuerOnReuse'>;

/** What a refusal still records: a transaction in this status, announced by this event. */
export interface RefusedRecord {
  status: 'failed' | 'cancelled';
  event: 'transaction.failed' | 'transaction.cancelled';
}

export interface InitiationRefusal extends Refusal {
  ok: false;
  /** Absent: nothing is recorded and the reference stays free. */
  record?: RefusedRecord;
  /** Present: these card details are barred until then. */
  doNotRetryUntil?: number;
}

/** sandbox.md section 6: a sale is recorded captured, an auth authorised. */
export interface InitiationApproval {
  ok: true;
  status: 'captured' | 'auth';
  event: 'transaction.captured' | 'transaction.pending';
  message: string;
}

export type InitiationPlan = InitiationApproval | InitiationRefusal;

const FAILED: RefusedRecord = { status: 'failed', event: 'transaction.failed' };
const CANCELLED: RefusedRecord = { status: 'cancelled', event: 'transaction.cancelled' };

function refuse(refusal: Refusal, record?: RefusedRecord): InitiationRefusal {
  return record ? { ok: false, ...refusal, record } : { ok: false, ...refusal };
}

const decline = (code: string, message: string, record?: RefusedRecord) =>
  refuse({ status: 400, code, message }, record);

/**
 * Decides a new sale or auth (sandbox.md sections 3 to 6 and 11), in this order: currency, platform
 * maximum, duplicate reference, vault token, Luhn, expiry (the card's, or the saved card's), risk
 * rule, 3DS (cards only), do-not-retry, issuer decline. The risk rule (cancelled), the do-not-retry
 * bar and issuer declines (failed) record the transaction; every other refusal records nothing.
 */
export function planInitiation(f: InitiationFacts): InitiationPlan {
  const early =
    amountRefusal(f.merchantCurrencies, f.amount, f.currency) ?? duplicateRefusal(f.referenceHeldBy);
  if (early) return refuse(early);
  const source = paymentSource(f);
  if ('code' in source) return refuse(source);

  // sandbox.md section 4: the risk rule blocks, records the transaction cancelled and releases the reference.
  if (f.customerEmail?.toLowerCase().endsWith('@risk.test'))
    return decline('ERR_RISK_REJECTED', 'The payment was blocked by risk rules.', CANCELLED);
  const { issuer } = source;
  // Section 11: a vault token asks no 3DS (the saving payment was authenticated); its
  // card_verification_data is ignored, so only a card payment reads the verification.
  if (f.card !== undefined && f.verification !== undefined) {
    if (!f.verification.ok) return decline(f.verification.code, f.verification.message);
  } else if (issuer.kind === 'requires_3ds') {
    return decline(
      'ERR_3DS_REQUIRED',
      'This card requires 3D Secure: verify it first and send card_verification_data.id.',
    );
  }
  if ((f.doNotRetryUntil ?? 0) > f.now)
    return decline('ERR_DO_NOT_RETRY', DECLINE_MESSAGES.ERR_DO_NOT_RETRY!, FAILED);
  if (issuer.kind === 'decline') {
    const plan = decline(issuer.code, DECLINE_MESSAGES[issuer.code] ?? 'The card was declined.', FAILED);
    return issuer.doNotRetryAfter ? { ...plan, doNotRetryUntil: f.now + DO_NOT_RETRY_MS } : plan;
  }
  return f.type === 'sale'
    ? { ok: true, status: 'captured', event: 'transaction.captured', message: 'Payment captured.' }
    : { ok: true, status: 'auth', event: 'transaction.pending', message: 'Payment authorised.' };
}

/**
 * What pays: a card that passes Luhn and is not expired, or a vault token naming a usable instrument
 * that is not expired by the sandbox clock. With it, how the issuer will answer.
 */
function paymentSource(f: InitiationFacts): Refusal | { issuer: IssuerOutcome } {
  if (f.vaultToken !== undefined || f.card === undefined) {
    if (f.instrument === undefined)
      return { status: 400, code: 'ERR_INVALID_CARD_TOKEN', message: 'The vault token is not recognised.' };
    if (instrumentExpired(f.instrument, f.now))
      return { status: 400, code: 'ERR_EXPIRED_CARD', message: 'The saved card has expired.' };
    return { issuer: f.instrument.issuerOnReuse };
  }
  return cardRefusal(f.card, f.now) ?? { issuer: testCard(f.card.number).issuer };
}
