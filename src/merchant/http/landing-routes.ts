import type Router from '@koa/router';
import type { Context } from 'koa';
import type { OrderRow } from '../../infra/models.js';
import { finishChallenge } from '../checkout/card.js';
import { orderOfSession } from '../checkout/redirect.js';
import { refreshOrder } from '../checkout/refresh.js';
import { InvalidTransition } from '../orders/status.js';
import { homePage, isWaiting, landingPage, refreshCount } from './landing.js';
import type { RouteDeps } from './routes.js';

/** How long a landing waits for the gateway before it shows what the database has. */
const POLL_DEADLINE_MS = 3000;

/**
 * merchant.md, HTTP interface: the browser's landings. The query only identifies the payment; what
 * the page shows is the order, after asking the gateway once while it is still being confirmed.
 */
export function landingRoutes(router: Router, deps: RouteDeps): void {
  const { orders } = deps;

  const show = async (ctx: Context, order: OrderRow | null, identity: Record<string, string>) => {
    const now =
      order && isWaiting(order.status)
        ? ((await refreshOrder(deps, order.id, { signal: AbortSignal.timeout(POLL_DEADLINE_MS) })) ?? order)
        : order;
    landingPage(ctx, now, { shopUrl: deps.shopUrl, identity, refreshes: refreshCount(ctx.query.n) });
  };

  router.get('/', (ctx) => homePage(ctx));

  router.get('/checkout/3ds-return', async (ctx) => {
    const id = typeof ctx.query.card_verification_id === 'string' ? ctx.query.card_verification_id : '';
    let order: OrderRow | null = null;
    try {
      // Only the request that takes the hold pays; a reload (the page's own refresh included) finds it
      // gone and shows the order as it stands.
      order = id ? ((await finishChallenge(deps, id))?.order ?? null) : null;
    } catch (error) {
      // A browser gets a page, whatever happened: the order as it stands now.
      if (!(error instanceof InvalidTransition)) throw error;
      const attempt = await orders.attemptBy('verification_id', id);
      order = attempt ? await orders.find(attempt.order_id) : null;
    }
    await show(ctx, order, { card_verification_id: id });
  });

  for (const landing of ['return', 'cancel'] as const) {
    router.get(`/checkout/${landing}`, async (ctx) => {
      const id = typeof ctx.query.payment_session_id === 'string' ? ctx.query.payment_session_id : '';
      await show(ctx, id ? await orderOfSession(deps, id) : null, { payment_session_id: id });
    });
  }
}
