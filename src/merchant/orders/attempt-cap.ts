/**
 * The cap on an order's failed payment attempts (docs/api.md, Limits): card testing tries card after card
 * on one order, and each try is a decline. Only failures that say something about the payer count:
 * a gateway that was down, busy or slow failed the attempt, not the shopper, who may simply try again.
 */
export const NOT_THE_PAYERS_FAILURE: readonly string[] = [
  // The kit's own words for a gateway it could not use (src/merchant/checkout/outcome.ts).
  'GATEWAY_UNAVAILABLE',
  'GATEWAY_BUSY',
  // The kit died before the gateway heard of the payment (src/merchant/jobs/cut-off.ts).
  'PAYMENT_CUT_OFF',
  // gateway-api.md, Errors: the gateway's, the provider's and the network's trouble, not the card's.
  'ERR_RATE_LIMITED',
  'ERR_GATEWAY_ERROR',
  'ERR_UNEXPECTED',
  'ERR_ADAPTER_EXCEPTION',
  'ERR_CARD_ISSUER_UNAVAILABLE',
  'ERR_CARD_SYSTEM_ERROR',
  'ERR_3DS_TECHNICAL_ERROR',
];

/** Whether a failed attempt with this code counts toward the cap. Pure. */
export function countsTowardCap(failureCode: string | null): boolean {
  if (failureCode === null) return true;
  // A 5xx without the gateway's envelope code (the client names it HTTP_<status>).
  if (/^HTTP_5\d\d$/.test(failureCode)) return false;
  return !NOT_THE_PAYERS_FAILURE.includes(failureCode);
}

/** An order that had `failed` attempts, at or over the cap of `limit`, takes no more. */
export class TooManyAttempts extends Error {
  override name = 'TooManyAttempts';
  constructor(
    readonly orderId: string,
    readonly failed: number,
    readonly limit: number,
  ) {
    super(`order ${orderId} had ${failed} failed payment attempts (the cap is ${limit})`);
  }
}
