import { CALLS } from './demo-shop-script/calls.js';
import { OPERATOR } from './demo-shop-script/operator.js';
import { ORDER } from './demo-shop-script/order.js';
import { PAYING } from './demo-shop-script/paying.js';
import { START } from './demo-shop-script/start.js';

/** What the demo shop's page hands its script: rendered as JSON in the page's `#demo-settings` element. */
export interface DemoShopScriptSettings {
  /** Statuses still being confirmed: the order is fetched again while it has one. */
  waiting: readonly string[];
  refreshMs: number;
  maxRefreshes: number;
  /** The review queue's page size. */
  queuePage: number;
  /** What a person may say of a flagged order (POST /orders/{id}/review). */
  resolutions: readonly string[];
  /** The signed-in customer the page acts for, with the token the shop's server made for it. */
  customer: { id: string; token: string; expires_at: string };
  /** The header the customer's token goes in. */
  tokenHeader: string;
  /** The header an order's client secret goes in (its reads and payments as the shopper). */
  secretHeader: string;
}

/**
 * The demo shop's script: plain browser JavaScript in a string, so there is no build step and
 * nothing to fetch from elsewhere (it works offline). It calls the kit's own storefront API, as a shop's
 * front end would, and writes what it shows with textContent only: no value from an answer becomes
 * markup. The page's markup (demo-shop.ts) names the element ids used here. A constant, served as a
 * file of the kit's (no inline script under the Content-Security-Policy) and the same for every page:
 * what differs per page, the customer's token included, it reads from the page's JSON settings.
 *
 * Written in five parts by concern (demo-shop-script/), joined here in their order: one script, one
 * scope, so a function of one part calls another's as before the split.
 */
export const DEMO_SHOP_SCRIPT = [CALLS, ORDER, PAYING, OPERATOR, START].join('');
