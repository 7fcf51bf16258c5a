import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { GatewayDeps } from '../deps.js';
import { instrumentView, type PaymentInstrument, revoked } from '../domain/instruments.js';
import { canSee, principalOf, resolveMerchantId } from '../http/auth.js';
import { respond } from '../http/envelope.js';
import { authFailed, notFound } from '../http/errors.js';
import { pageOf, pageQuery } from '../http/pagination.js';
import { parseOr422 } from '../http/validate.js';

export const listQuery = z.object({
  merchant_customer_id: z
    .string({ message: 'is required' })
    .min(1, 'is required')
    .max(255)
    .meta({ description: "The merchant's id for the customer, as sent when the card was saved." }),
  merchant_id: z.string().optional().meta({ description: 'Partner keys: the linked merchant.' }),
  ...pageQuery,
});

/**
 * sandbox.md section 11, Payment instruments: gateway-api.md names the list and revoke operations;
 * cards are saved by POST /api/v1/transactions and paid with by their vault token there.
 */
export function paymentInstrumentRoutes(router: Router, deps: GatewayDeps): void {
  const { state, clock } = deps;

  /**
   * The instrument the path names, if the key may see its merchant (a partner its linked merchants',
   * as for transactions); anything else is 404, the same as a token never issued.
   */
  const visibleInstrument = (ctx: Context): PaymentInstrument => {
    const instrument = state.instruments.get(ctx.params.vaultToken ?? '');
    if (!instrument || !canSee(state, principalOf(ctx), instrument.merchantId))
      throw notFound('Payment instrument');
    return instrument;
  };

  router.get('/api/v1/payment-instruments', (ctx) => {
    const query = parseOr422(listQuery, ctx.query);
    // As GET /api/v1/payment-methods: a merchant_id that is no number is no merchant the partner has.
    if (query.merchant_id !== undefined && !/^\d{1,15}$/.test(query.merchant_id))
      throw authFailed(400, 'merchant_id is not a merchant linked to this partner.');
    const merchantId = resolveMerchantId(
      state,
      principalOf(ctx),
      query.merchant_id === undefined ? undefined : Number(query.merchant_id),
    );
    const { items, pagination } = pageOf(
      state.instruments.activeOf(merchantId, query.merchant_customer_id),
      query,
    );
    respond(ctx, { payment_instruments: items.map(instrumentView), pagination }, 'Payment instruments.');
  });

  // Revoking twice answers the same record: a client whose first answer was lost may simply retry.
  router.delete('/api/v1/payment-instruments/:vaultToken', (ctx) => {
    const instrument = revoked(visibleInstrument(ctx), clock.now());
    state.instruments.save(instrument);
    respond(ctx, instrumentView(instrument), 'Payment instrument revoked.');
  });
}
