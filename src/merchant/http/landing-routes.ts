import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Limits } from '../../infra/rate-limits.js';
import { finishChallenge } from '../checkout/card.js';
import type { MerchantDeps } from '../checkout/deps.js';
import { orderOfSession } from '../checkout/redirect.js';
import { refreshOrder } from '../checkout/refresh.js';
import { HttpError } from '../errors/http-error.js';
import { nextAction } from '../orders/order-view.js';
import type { OrderRecord } from '../store/records.js';
import {
  DEMO_ORDER_TOKEN_PATH,
  DEMO_SHOP_SCRIPT_PATH,
  type DemoShop,
  demoCustomer,
  demoOrderToken,
  demoShopPage,
  demoShopScriptFile,
} from './demo-shop.js';
import { ok } from './errors.js';
import { homePage, isWaiting, landingPage, refreshCount } from './landing.js';
import { allows, clientKey } from './limits.js';

export interface LandingDeps extends MerchantDeps {
  /** Where the landing pages link back to. */
  shopUrl: string;
  /** The demo shop at `/`, with its script (demoShopOf); null or unset (production): the small page. */
  demoShop?: DemoShop | null;
  /** The public routes' limits (docs/api.md, Limits), counted per client address and per order. */
  limits: Limits;
}

/** How long a landing waits for the gateway before it shows what the database has. */
const POLL_DEADLINE_MS = 3000;

/**
 * merchant.md, HTTP interface: the browser's landings. The query only identifies the payment; what
 * the page shows is the order, after asking the gateway once while it is still being confirmed.
 */
export function landingRoutes(router: Router, deps: LandingDeps): void {
  const show = async (ctx: Context, order: OrderRecord | null, identity: Record<string, string>) => {
    let now = order;
    // Past its limits a landing still answers the shopper: with the order as stored (which webhooks
    // and the poller keep moving), without asking the gateway. Never a bare 429 for a shopper.
    if (order && isWaiting(order.status) && (await mayAsk(ctx, order.id)))
      now = (await refreshOrder(deps, order.id, { signal: AbortSignal.timeout(POLL_DEADLINE_MS) })) ?? order;
    landingPage(ctx, now, { shopUrl: deps.shopUrl, identity, refreshes: refreshCount(ctx.query.n) });
  };
  const mayAsk = (ctx: Context, orderId: string) =>
    allows(deps.limits, [
      ['landing_per_address', clientKey(ctx)],
      ['landing_per_order', orderId],
    ]);

  // The demo shop acts for its one signed-in customer: the page carries a token for it, made here as a
  // shop's server makes one for the customer it signed in. Never in production (demoShop is null).
  router.get('/', (ctx) =>
    deps.demoShop ? demoShopPage(ctx, deps.demoShop, demoCustomer(deps)) : homePage(ctx),
  );
  // The page's script, a file (the Content-Security-Policy allows no inline script): only with the shop.
  const shop = deps.demoShop;
  if (shop) router.get(DEMO_SHOP_SCRIPT_PATH, (ctx) => demoShopScriptFile(ctx, shop.script));
  // A token that pays one of the page's orders with a saved card, as a shop's server mints one.
  if (deps.demoShop)
    router.post(DEMO_ORDER_TOKEN_PATH, async (ctx) => {
      const minted = demoOrderToken(deps, await deps.store.orders.find(ctx.params.id!));
      if (!minted)
        throw new HttpError(404, 'ORDER_NOT_FOUND', "No order of the demo shop's customer has this id.");
      ok(ctx, { customer_token: minted.token, expires_at: minted.expiresAt.toISOString() }, 201);
    });

  router.get('/checkout/3ds-return', async (ctx) => {
    const id = typeof ctx.query.card_verification_id === 'string' ? ctx.query.card_verification_id : '';
    // Only the request that takes the hold pays; a reload (the page's own refresh included) finds it
    // gone and shows the order as it stands. What the payment's answer did to the order went through
    // decide, which refuses by flagging, never by throwing: the browser always gets a page.
    const outcome = id ? await finishChallenge(deps, id) : null;
    if (outcome?.kind === 'replaced') {
      const current = outcome.order.current_attempt_id
        ? await deps.store.attempts.get(outcome.order.current_attempt_id)
        : null;
      return landingPage(ctx, outcome.order, {
        shopUrl: deps.shopUrl,
        identity: { card_verification_id: id },
        refreshes: 0,
        replaced: true,
        continueUrl: nextAction(outcome.order, current)?.url ?? null,
      });
    }
    await show(ctx, outcome?.order ?? null, { card_verification_id: id });
  });

  for (const landing of ['return', 'cancel'] as const) {
    router.get(`/checkout/${landing}`, async (ctx) => {
      const id = typeof ctx.query.payment_session_id === 'string' ? ctx.query.payment_session_id : '';
      await show(ctx, id ? await orderOfSession(deps, id) : null, { payment_session_id: id });
    });
  }
}
