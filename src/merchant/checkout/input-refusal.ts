import type { GatewayError } from '../../client/errors.js';
import { transactionSchema } from '../../client/schemas.js';

/** Field errors, by the name of the merchant API's field. */
export type FieldErrors = Record<string, string[]>;

/**
 * Whether the gateway refused the request's input before creating anything (a method it does not
 * offer, a country or currency it does not serve, a field it rejects), and which field: the kit's
 * caller fixes such input and tries again, and the order must not be failed for it. Declines, which
 * are about the card or the customer's money, are not input refusals. Pure.
 */
export function inputRefusal(error: GatewayError, flow: 'card' | 'redirect'): FieldErrors | null {
  if (error.status === 422 && error.details.errors && Object.keys(error.details.errors).length > 0)
    return error.details.errors;
  switch (error.code) {
    case 'ERR_PAYMENT_METHOD_NOT_ENABLED':
      // Sessions name the method (or the currency) not enabled; a card payment can only mean the currency.
      return { [flow === 'redirect' ? 'payment_method' : 'currency']: [error.message] };
    case 'ERR_PAYMENT_METHOD_NOT_AVAILABLE_IN_COUNTRY':
      return { 'customer.country_code': [error.message] };
    case 'ERR_INVALID_CURRENCY':
      return { currency: [error.message] };
    case 'ERR_ADAPTER_INVALID_AMOUNT':
      return { amount: [error.message] };
    // The gateway's own checks of what was typed (sandbox.md section 4), when they recorded nothing: an
    // issuer's decline of the same code comes with its failed transaction, and is a decline.
    case 'ERR_INVALID_ACCOUNT_NUMBER':
      return recorded(error)
        ? null
        : { 'card.number': ['is not a valid card number (its check digit is wrong)'] };
    case 'ERR_EXPIRED_CARD':
    case 'ERR_CARD_EXPIRATION_INVALID': {
      if (recorded(error)) return null;
      const why =
        error.code === 'ERR_EXPIRED_CARD' ? 'is in the past: the card has expired' : 'is not a valid expiry';
      return { 'card.exp_month': [`with exp_year, ${why}`], 'card.exp_year': [`with exp_month, ${why}`] };
    }
    default:
      return null;
  }
}

/** Whether the refusal came with the transaction it recorded (an issuer's decline does). */
const recorded = (error: GatewayError) => transactionSchema.safeParse(error.details.data).success;
