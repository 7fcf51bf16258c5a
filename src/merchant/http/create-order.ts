import type Router from '@koa/router';
import type { Context } from 'koa';
import { HttpError, invalid } from '../errors/http-error.js';
import { may } from '../operators/roles.js';
import {
  keyDigest,
  keyProblem,
  keyScope,
  type OrderRequestBody,
  requestDigest,
} from '../orders/order-requests.js';
import { orderRuleErrors } from '../orders/order-rules.js';
import { DuplicateReference, type NewOrder, type OrderOnce, type OrderRecord } from '../store/index.js';
import { jsonBody, ok, parse } from './errors.js';
import { clientKey, enforce } from './limits.js';
import { bearerOf, forbidden, type OpsAuth, type Principal } from './ops-auth.js';
import { requestMerchant } from './order-access.js';
import { operatorKey, type RouteDeps } from './routes.js';
import { createOrderSchema } from './schemas.js';
import { orderView } from './views.js';

/** The header that marks an answer given again for an Idempotency-Key: the gateway's (gateway-api.md, rule 2). */
export const REPLAYED_HEADER = 'Idempotency-Replayed';

/**
 * POST /orders (merchant.md): anyone may make an order; only the shop names one (`reference`). With an
 * `Idempotency-Key` (issue 43, part 1) the order is made once: the same key and body again, within
 * 24 hours, answer the order it made (200, `Idempotency-Replayed: true`) with its client secret; the
 * key with another body is a 409. Keys are the credential's own (an operator's id, OPS_API_TOKEN), or
 * shared by every caller without one (orders/order-requests.ts).
 */
export function createOrderRoute(router: Router, deps: RouteDeps & { ops: OpsAuth }): void {
  router.post('/orders', async (ctx) => {
    await enforce(deps.limits, [['orders_per_address', clientKey(ctx)]]);
    const key = operatorKey(ctx);
    const body = parse(createOrderSchema, await jsonBody(ctx));
    // Who sends it matters for a reference of its own and for whose keys a key is among: a token
    // that is sent then must be good. Otherwise a token is read only for its merchants (a credential
    // scoped to some makes orders for them alone); one nobody holds is as none (anyone may make an order).
    const who =
      body.reference !== undefined || key !== undefined
        ? await deps.ops.optional(ctx)
        : await deps.ops.identify(bearerOf(ctx));
    // Anyone may make an order; only the shop names one, or a stranger could take the shop's next
    // reference first (the shop's own order would then be a 409). Without one, the kit makes one.
    if (body.reference !== undefined) {
      if (who === null)
        throw new HttpError(
          401,
          'UNAUTHORIZED',
          "A reference of your own needs the storefront's or an operator's token (Authorization: Bearer); leave reference out and the kit makes one.",
        );
      if (!may(who.role, 'orders.reference')) throw forbidden(who, 'orders.reference');
    }
    // Whose order: 422 naming merchant_id when it is required or not served, 403 when it is outside
    // the credential's scope (a scope of one merchant is its default).
    const merchantId = requestMerchant(deps, who, body.merchant_id);
    const input: NewOrder & OrderRequestBody = {
      merchantId,
      ...(body.merchant_id === undefined ? {} : { namedMerchant: body.merchant_id }),
      amountMinor: body.minor,
      currency: body.currency,
      reference: body.reference,
      description: body.description,
      customer: body.customer,
    };
    const scope = keyScope(who?.credential ?? null);
    const problem = key === undefined ? null : keyProblem(scope, key);
    if (problem) throw invalid({ 'Idempotency-Key': [problem] });
    const request =
      key === undefined
        ? null
        : { scope, keyDigest: keyDigest(scope, key), requestDigest: requestDigest(input) };
    // An order made under the key is answered before the shop's rules are read again: they may
    // have changed since, and the order exists.
    const earlier = request && (await deps.store.orderRequests.earlier(request));
    if (earlier) return answer(ctx, earlier, who);
    const refused = orderRuleErrors(deps.orderRules, body.currency, body.minor);
    if (refused) throw invalid(refused);
    try {
      const outcome: OrderOnce = request
        ? await deps.store.orderRequests.create(request, input)
        : { kind: 'created', ...(await deps.store.orders.create(input)) };
      await answer(ctx, outcome, who);
    } catch (error) {
      if (error instanceof DuplicateReference) throw referenceTaken(error, body.reference, who);
      throw error;
    }
  });

  async function answer(ctx: Context, outcome: OrderOnce, who: Principal | null): Promise<void> {
    switch (outcome.kind) {
      case 'created':
        // The client secret: the shopper's routes of this order need it (order-access.ts). No read of
        // the order shows it again; the kit keeps its hash, and with a key, for 24 hours, it sealed.
        return ok(ctx, { order: created(outcome.order, outcome.clientSecret) }, 201, 'Order created.');
      case 'replayed': {
        const { order, clientSecret } = outcome;
        const attempt = order.current_attempt_id
          ? await deps.store.attempts.get(order.current_attempt_id)
          : null;
        ctx.set(REPLAYED_HEADER, 'true');
        return ok(
          ctx,
          { order: { ...orderView(order, attempt), client_secret: clientSecret } },
          200,
          'The order this Idempotency-Key made, as it now stands.',
        );
      }
      case 'reused':
        throw new HttpError(
          409,
          'IDEMPOTENCY_KEY_REUSED',
          'This Idempotency-Key made another order (another amount, currency, reference, description or customer) within the last 24 hours; nothing was made. Use a new key for a new order.',
          // The order is named to the credential whose key it is; among anonymous callers, to nobody.
          { data: who ? { order_id: outcome.orderId } : null },
        );
      default:
        return outcome satisfies never;
    }
  }
}

const created = (order: OrderRecord, clientSecret: string) => ({
  ...orderView(order),
  client_secret: clientSecret,
});

/**
 * A reference another order holds: 409 naming that order to the shop (a reference of its own needs
 * a storefront's or an operator's token, so the caller is one), and `GET /orders?reference=` finds it.
 */
function referenceTaken(error: DuplicateReference, reference: string | undefined, who: Principal | null) {
  const holder = who ? error.orderId : null;
  return new HttpError(
    409,
    'DUPLICATE_REFERENCE',
    holder
      ? `The reference ${reference} is taken by order ${holder}; nothing was made.`
      : 'An order with this reference exists.',
    {
      errors: { reference: [holder ? `is already used by order ${holder}` : 'is already used'] },
      data: holder ? { order_id: holder } : null,
    },
  );
}
