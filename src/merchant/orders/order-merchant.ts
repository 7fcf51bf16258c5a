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
