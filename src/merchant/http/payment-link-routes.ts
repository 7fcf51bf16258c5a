import type Router from '@koa/router';
import type { Context } from 'koa';
import { createPaymentLink, type LinkMade, visitPaymentLink } from '../checkout/payment-link.js';
import { HttpError, invalid } from '../errors/http-error.js';
import { LINK_PATH, type LinkRefusal } from '../orders/payment-links.js';
import { RETRYABLE } from '../orders/status.js';
import type { PaymentLinkRecord } from '../store/records.js';
import { jsonBody, ok, parse } from './errors.js';
import type { LandingDeps } from './landing-routes.js';
import { allows, clientAddress, clientKey } from './limits.js';
import { linkAnswer } from './link-page.js';
import { actorOf, type OpsAuth } from './ops-auth.js';
import { checkOrderScope } from './order-access.js';
import { paymentLinkSchema } from './schemas.js';
import { orderView } from './views.js';

/**
 * Payment links (issue 43, part 3): the shop's server or an operator makes one for an order
 * (`POST /orders/{id}/payment-link`, the roles that name orders: `orders.reference`), and the
 * shopper's browser visits it (`GET /pay/{token}`, no credential: the token in the URL is the link).
 */
export function paymentLinkRoutes(router: Router, deps: LandingDeps & { ops: OpsAuth }): void {
  router.post('/orders/:id/payment-link', async (ctx) => {
    const who = await deps.ops.require(ctx, 'orders.reference');
    const body = parse(paymentLinkSchema, await jsonBody(ctx));
    const actor = actorOf(ctx, who, body.by);
    // An unknown order is the store's OrderNotFound: a 404, as every order route answers; so is
    // another merchant's, to a credential scoped to others.
    await checkOrderScope(deps, who, ctx.params.id!);
    const made = await createPaymentLink(deps, ctx.params.id!, {
      paymentMethod: body.payment_method,
      expiresInSeconds: body.expires_in,
      actor,
    });
    const attempt = made.order.current_attempt_id
      ? await deps.store.attempts.get(made.order.current_attempt_id)
      : null;
    answer(ctx, made, orderView(made.order, attempt));
  });

  router.get(`${LINK_PATH}/:token`, async (ctx) => {
    // Each visit counts toward the landings' limits, by address and by order, once it would ask the
    // gateway: past them the page still answers, from the database.
    const visit = await visitPaymentLink(deps, ctx.params.token ?? '', {
      ip: clientAddress(ctx) ?? undefined,
      mayAsk: (orderId) =>
        allows(deps.limits, [
          ['landing_per_address', clientKey(ctx)],
          ['landing_per_order', orderId],
        ]),
    });
    linkAnswer(ctx, visit, deps.shopUrl);
  });
}

/** A link as its maker reads it: the URL (with its token) only in the answer that made it. */
export function linkView(link: PaymentLinkRecord, url: string) {
  return {
    id: link.id,
    url,
    order_id: link.order_id,
    payment_method: link.payment_method,
    expires_at: link.expires_at.toISOString(),
    created_at: link.created_at.toISOString(),
    created_by: link.created_by,
  };
}

function answer(ctx: Context, made: LinkMade, order: ReturnType<typeof orderView>): void {
  switch (made.kind) {
    case 'created':
      ok(
        ctx,
        { payment_link: linkView(made.link, made.url) },
        201,
        'The link is made: send its url to the shopper. It is shown this once.',
      );
      return;
    case 'invalid':
      throw invalid(made.errors);
    case 'busy':
      throw new HttpError(
        409,
        'PAYMENT_IN_PROGRESS',
        'A payment of this order was under way for the whole wait; try again. Nothing was made.',
        { data: { order }, headers: { 'Retry-After': '5' } },
      );
    case 'refused':
      throw refused(made.refusal, order);
    default:
      made satisfies never;
  }
}

/** Why the order takes no link, as its 409. */
function refused(refusal: LinkRefusal, order: ReturnType<typeof orderView>): HttpError {
  switch (refusal.kind) {
    case 'closed':
      return new HttpError(
        409,
        'ORDER_CLOSED',
        'The order is closed: it takes no more payments, so no link was made. A new order pays.',
        { data: { status: 'closed', closed_reason: refusal.reason, order } },
      );
    case 'paid':
      return new HttpError(
        409,
        'ORDER_PAID',
        `The order holds money (${refusal.status}): there is nothing to pay, so no link was made.`,
        { data: { order } },
      );
    case 'state':
      return new HttpError(
        409,
        'INVALID_STATE',
        `The order is ${refusal.status}: it takes no more payments, so no link was made.`,
        { data: { status: refusal.status, allowed: RETRYABLE, order } },
      );
    default:
      return refusal satisfies never;
  }
}
