import { type CurrencyCode, formatMoney, isCurrencyCode, parseMajor } from '../../shared/money.js';

/** What this merchant takes orders in (configuration; the defaults match the sandbox's seed). */
export interface OrderRules {
  currencies: readonly CurrencyCode[];
  /** The largest amount, in major units, the same number in every currency (sandbox.md section 3). */
  maxAmount: string;
}

/**
 * Field errors for an order the gateway would refuse at payment time: a currency the merchant does not
 * take, an amount above the gateway's maximum. Refused when the order is created, so nothing is
 * "declined" later for what the shop could have known. Pure.
 */
export function orderRuleErrors(
  rules: OrderRules,
  currency: string,
  amountMinor: number,
): Record<string, string[]> | null {
  if (!isCurrencyCode(currency) || !rules.currencies.includes(currency))
    return { currency: [`is not a currency this shop takes (${rules.currencies.join(', ')})`] };
  const max = parseMajor(rules.maxAmount, currency);
  // Config has checked that the maximum is valid in every currency taken.
  if (max.ok && amountMinor > max.minor)
    return { amount: [`must be at most ${formatMoney(max.minor, currency)}`] };
  return null;
}
