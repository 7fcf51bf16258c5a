/**
 * Whose an order is (issue 45, platform mode), as POST /orders asks for it: the merchant the body
 * names, among those the kit acts for. Required when it acts for several; the one it acts for
 * otherwise. Pure: the merchants served and the body's field in, the merchant or the field's problem out.
 */
export function orderMerchant(
  served: readonly number[],
  named: number | undefined,
): { merchantId: number | null } | { problem: string } {
  if (named === undefined) {
    if (served.length > 1)
      return { problem: `is required: this kit acts for merchants ${served.join(', ')}` };
    return { merchantId: served[0] ?? null };
  }
  if (served.includes(named)) return { merchantId: named };
  if (served.length === 0)
    return { problem: "must be left out: this kit acts for its gateway key's own account only" };
  return { problem: `must be one of the merchants this kit acts for: ${served.join(', ')}` };
}

/**
 * Whose an order is, as finance and operators count it (the report, the metrics, the audit): the
 * merchant it names, or, for one made before platform mode (null), the kit's first merchant, as every
 * gateway call of it goes (client/merchant-gateways.ts). Null only for a kit that does not know the id
 * of its key's own account.
 */
export function merchantOf(orderMerchant: number | null, served: readonly number[]): number | null {
  return orderMerchant ?? served[0] ?? null;
}

/**
 * The orders of one merchant, as a store reads them: `merchantId`, and (`withUnnamed`) the orders that
 * name none, when it is the kit's first merchant: they are its (merchantOf).
 */
export interface MerchantFilter {
  merchantId: number;
  withUnnamed: boolean;
}

/** The filter for `merchantId`'s orders in a kit that acts for `served`. */
export function merchantFilter(merchantId: number, served: readonly number[]): MerchantFilter {
  return { merchantId, withUnnamed: served[0] === merchantId };
}

/**
 * Whether an order of merchant `orderMerchant` is the business of an event that came to merchant
 * `eventMerchant`'s webhook endpoint (issue 45): in a kit of several merchants (`served`), the same
 * merchant, a null on either side being the first one's (an order or an event kept before platform
 * mode); in a kit of one, always. Pure.
 */
export type SameMerchant = (orderMerchant: number | null, eventMerchant: number | null) => boolean;

export function sameMerchantRule(served: readonly number[]): SameMerchant {
  if (served.length <= 1) return () => true;
  const first = served[0]!;
  return (order, event) => (order ?? first) === (event ?? first);
}
