import type Router from '@koa/router';
import type { Context } from 'koa';
import { type CancelOutcome, cancelOrder } from '../checkout/cancel.js';
import type { MerchantDeps } from '../checkout/deps.js';
import { HttpError } from '../errors/http-error.js';
import { jsonBody, ok, parse } from './errors.js';
import { actorOf, type OpsAuth } from './ops-auth.js';
import { checkOrderScope } from './order-access.js';
import { cancelSchema } from './schemas.js';
import { orderView } from './views.js';

/**
 * POST /orders/{id}/cancel (issue 43, part 2): the shop's server or an operator ends an unpaid order.
 * The roles that name orders (`orders.reference`: storefront, operator, admin) may: the shop that
 * made an order may call it off; a shopper's client secret may not.
 */
export function cancelRoutes(router: Router, deps: MerchantDeps & { ops: OpsAuth }): void {
  router.post('/orders/:id/cancel', async (ctx) => {
    const who = await deps.ops.require(ctx, 'orders.reference');
    const body = parse(cancelSchema, await jsonBody(ctx));
    const actor = actorOf(ctx, who, body.by);
    // An unknown order is the store's OrderNotFound: a 404, as every order route answers; so is
    // another merchant's, to a credential scoped to others.
    await checkOrderScope(deps, who, ctx.params.id!);
    const outcome = await cancelOrder(deps, ctx.params.id!, { actor, note: body.reason ?? null });
    answer(ctx, outcome);
  });
}

function answer(ctx: Context, outcome: CancelOutcome): void {
  const order = orderView(outcome.order, outcome.attempt);
  const id = outcome.order.id;
  switch (outcome.kind) {
    case 'closed':
      ok(
        ctx,
        { order },
        200,
        outcome.already
          ? 'The order was closed already.'
          : 'The order is cancelled: it takes no more payments.',
      );
      return;
    case 'paid':
      throw new HttpError(
        409,
        'ORDER_PAID',
        `The order holds money (${outcome.order.status}): it is not cancelled but refunded, POST /orders/${id}/refund (an operator's). Nothing was done.`,
        { data: { order, refund: { method: 'POST', path: `/orders/${id}/refund` } } },
      );
    case 'in_progress':
      throw new HttpError(
        409,
        'PAYMENT_IN_PROGRESS',
        'A payment of this order is under way; cancel again once it has ended. Nothing was done.',
        { data: { order }, headers: { 'Retry-After': '5' } },
      );
    case 'unreachable':
      throw new HttpError(
        503,
        'GATEWAY_UNAVAILABLE',
        'The payment gateway did not say whether the payment under way was paid; try again. Nothing was done.',
        { data: { order }, headers: { 'Retry-After': '5' } },
      );
    case 'void_refused':
      throw new HttpError(
        409,
        'VOID_REFUSED',
        `The gateway refused to void the authorisation (${outcome.code}): the order is not cancelled.`,
        { data: { order, gateway_code: outcome.code } },
      );
    case 'void_unknown':
      throw new HttpError(
        503,
        'OUTCOME_UNKNOWN',
        'The gateway did not answer the void of the authorisation; send the same cancel again.',
        { data: { order }, headers: { 'Retry-After': '5' } },
      );
    default:
      outcome satisfies never;
  }
}
