import { type CurrencyCode, currencyExponent } from '../../shared/money.js';
import { cardExpired, luhnValid } from './cards.js';

/**
 * The checks every endpoint that takes a payment makes first (3DS verify, transactions, payment
 * sessions), each answering with the refusal or null, so that the three refuse alike.
 */

/** A request the gateway turns down: the status, code and message of the error envelope. */
export interface Refusal {
  status: 400 | 409;
  code: string;
  message: string;
  /** ERR_DUPLICATE only: the transaction that holds the reference, and its session if it has one. */
  data?: { transaction_id: number; payment_session_id?: string };
}

/** Who holds a reference: a transaction, and the payment session it belongs to, if any. */
export interface ReferenceHeldBy {
  transactionId: number;
  paymentSessionId?: string;
}

/** What the card rules read of a card: never its CVV. */
export interface CardFacts {
  number: string;
  expMonth: number;
  expYear: number;
}

/** sandbox.md section 3: above 1,000,000.00 in major units is refused, per currency, same number. */
function overPlatformMaximum(minor: number, currency: CurrencyCode): boolean {
  return minor > 1_000_000 * 10 ** currencyExponent(currency);
}

/** sandbox.md section 3: a currency the merchant has not enabled, then an amount over the platform maximum. */
export function amountRefusal(
  enabled: readonly string[],
  minor: number,
  currency: CurrencyCode,
): Refusal | null {
  if (!enabled.includes(currency)) {
    return {
      status: 400,
      code: 'ERR_PAYMENT_METHOD_NOT_ENABLED',
      message: `${currency} is not enabled for this merchant.`,
    };
  }
  if (overPlatformMaximum(minor, currency)) {
    return {
      status: 400,
      code: 'ERR_ADAPTER_INVALID_AMOUNT',
      message: 'The amount is above the maximum of 1,000,000.00.',
    };
  }
  return null;
}

/**
 * sandbox.md section 6: a payment that is neither failed nor cancelled holds its reference. Section
 * 11: a session's transaction is answered with the session too, so a client whose first answer was
 * lost can resume it; a plain card transaction's answer carries no session field at all.
 */
export function duplicateRefusal(heldBy: ReferenceHeldBy | undefined): Refusal | null {
  if (heldBy === undefined) return null;
  const { transactionId, paymentSessionId } = heldBy;
  return {
    status: 409,
    code: 'ERR_DUPLICATE',
    message: 'An active transaction already uses this reference.',
    data:
      paymentSessionId === undefined
        ? { transaction_id: transactionId }
        : { transaction_id: transactionId, payment_session_id: paymentSessionId },
  };
}

/** sandbox.md section 4: a number failing Luhn, then a past expiry. */
export function cardRefusal(card: CardFacts, now: number): Refusal | null {
  if (!luhnValid(card.number))
    return { status: 400, code: 'ERR_INVALID_ACCOUNT_NUMBER', message: 'The card number is not valid.' };
  if (cardExpired(card.expMonth, card.expYear, now))
    return { status: 400, code: 'ERR_EXPIRED_CARD', message: 'The card has expired.' };
  return null;
}
