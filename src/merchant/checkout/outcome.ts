import { GatewayBudgetExceeded, GatewayError, type GatewayNetworkError } from '../../client/errors.js';
import type { ApplyResult } from '../reconciler/apply.js';
import { type PaymentOutcome, standing } from './deps.js';

/**
 * What an applied gateway answer means for the shopper: a payment the gateway failed or cancelled is
 * a decline with its code; anything else is done (the order shows where it stands).
 */
export function outcomeOf(applied: ApplyResult): PaymentOutcome {
  const now = standing(applied);
  if (now.order.status === 'failed' || now.order.status === 'cancelled') {
    const code = now.order.failure_code ?? 'ERR_TXN_FAILED';
    return { kind: 'declined', ...now, code, message: declineMessage(code) };
  }
  return { kind: 'done', ...now };
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
  PAYMENT_CUT_OFF:
    'The payment was cut off before it reached the bank; nothing was charged. Please pay again.',
};

export function declineMessage(code: string): string {
  return MESSAGES[code] ?? 'The payment was declined.';
}

/**
 * The code and wait of a gateway that could not take a payment now: its own code; `GATEWAY_BUSY` when
 * the key's shared budget held the call past what a shopper may wait (nothing was sent);
 * `GATEWAY_UNAVAILABLE` when it did not answer.
 */
export function unavailability(error: GatewayError | GatewayNetworkError): {
  code: string;
  retryAfterSeconds?: number;
} {
  if (error instanceof GatewayError) return { code: error.code };
  if (error instanceof GatewayBudgetExceeded)
    return { code: 'GATEWAY_BUSY', retryAfterSeconds: error.retryAfterSeconds };
  return { code: 'GATEWAY_UNAVAILABLE' };
}
