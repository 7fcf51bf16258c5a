import type Router from '@koa/router';
import { z } from 'zod';
import type { GatewayDeps } from '../deps.js';
import { principalOf, resolveMerchantId } from '../http/auth.js';
import { respond } from '../http/envelope.js';
import { authFailed } from '../http/errors.js';
import { currencyField } from '../http/schemas.js';
import { parseOr422 } from '../http/validate.js';

export const query = z.object({
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be a 2-letter uppercase country code')
    .optional(),
  currency: currencyField.optional(),
  merchant_id: z.string().optional(),
});

/**
 * gateway-api.md, Payment sessions rule 6: configuration only, redirect methods enabled for the
 * account, advisory; `available` and its reasons are computed only when a filter is given.
 */
export function paymentMethodRoutes(router: Router, deps: GatewayDeps): void {
  const { state } = deps;
  router.get('/api/v1/payment-methods', (ctx) => {
    const q = parseOr422(query, ctx.query);
    if (q.merchant_id !== undefined && !/^\d{1,15}$/.test(q.merchant_id)) {
      throw authFailed(400, 'merchant_id is not a merchant linked to this partner.');
    }
    const merchantId = resolveMerchantId(
      state,
      principalOf(ctx),
      q.merchant_id === undefined ? undefined : Number(q.merchant_id),
    );
    const merchant = state.merchants.get(merchantId)!;
    const filtered = q.country !== undefined || q.currency !== undefined;
    const methods = merchant.payment_methods
      .filter((m) => m.enabled)
      .map((m) => {
        const reasons: string[] = [];
        if (q.country !== undefined && m.countries.length > 0 && !m.countries.includes(q.country))
          reasons.push('country_not_supported');
        if (
          q.currency !== undefined &&
          ((m.currencies.length > 0 && !m.currencies.includes(q.currency as never)) ||
            !merchant.currencies.includes(q.currency as never))
        ) {
          reasons.push('currency_not_supported');
        }
        return {
          payment_method: m.payment_method,
          label: m.label,
          provider: m.provider,
          available: filtered ? reasons.length === 0 : true,
          unavailable_reasons: filtered ? reasons : [],
          supported_countries: m.countries,
          supported_currencies: m.currencies,
        };
      });
    respond(
      ctx,
      {
        merchant_id: merchantId,
        country: q.country ?? null,
        currency: q.currency ?? null,
        payment_methods: methods,
      },
      'Payment methods.',
    );
  });
}
