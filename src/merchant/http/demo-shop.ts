import type { Context } from 'koa';
import type { Config } from '../../config.js';
import { escapeHtml, HEAD_START, jsonForScript } from '../../shared/html.js';
import type { MerchantDeps } from '../checkout/deps.js';
import { ORDER_SECRET_HEADER } from '../orders/client-secret.js';
import { signedMerchant } from '../orders/order-merchant.js';
import { REVIEW_RESOLUTIONS } from '../orders/review.js';
import { ORDER_STATUSES } from '../orders/status.js';
import { CUSTOMER_TOKEN_HEADER } from './customer-auth.js';
import { type DemoShopScript, type DemoShopScriptSettings, demoShopScript } from './demo-shop-script.js';
import { groupDigits, TEST_CARDS, type TestCard } from './demo-test-cards.js';
import { isWaiting } from './landing.js';

/** What the demo shop offers: the orders the kit takes (config ORDER_CURRENCIES, ORDER_MAX_AMOUNT). */
export interface DemoShopSettings {
  currencies: readonly string[];
  maxAmount: string;
  /**
   * Platform mode (issue 45): the merchants the kit acts for (GATEWAY_MERCHANTS), offered in a
   * picker; the order placed is for the one picked. Absent when the kit acts for one merchant: the
   * page is as it always was.
   */
  merchants?: readonly number[];
}

/**
 * The demo shop at `/` outside production; null in production, where `/` stays the small page: a live
 * shop must not offer a form that creates orders and takes test cards.
 */
export function demoShopFor(config: Pick<Config, 'env' | 'orders' | 'gateway'>): DemoShopSettings | null {
  if (config.env === 'production') return null;
  const { merchants } = config.gateway;
  return {
    currencies: config.orders.currencies,
    maxAmount: config.orders.maxAmount,
    ...(merchants.length > 1 ? { merchants: [...merchants] } : {}),
  };
}

/** The demo shop as the kit serves it: what it offers, and its script. */
export interface DemoShop extends DemoShopSettings {
  script: DemoShopScript;
}

/**
 * demoShopFor's, with its script (bundled as the kit starts, or read from the build: demo-shop-script.ts);
 * null in production, where no script is loaded either.
 */
export async function demoShopOf(
  config: Pick<Config, 'env' | 'orders' | 'gateway'>,
): Promise<DemoShop | null> {
  const settings = demoShopFor(config);
  return settings && { ...settings, script: await demoShopScript() };
}

/** The one customer the demo shop acts for, as if signed in: whose cards it saves, lists and pays with. */
export const DEMO_CUSTOMER_ID = 'demo-customer';

/** The signed-in demo customer, as the shop's server hands it to the page: its id and a token for it. */
export interface DemoCustomer {
  id: string;
  token: string;
  expiresAt: Date;
  /**
   * Platform mode: the same customer id is a customer of each merchant (issue 45), so a token for
   * each, by merchant id; `token` is the first merchant's. Empty in a kit of one merchant.
   */
  tokens: Record<string, string>;
}

/**
 * What a shop's server does for the customer it has signed in (issue 21): a customer token, good for an
 * hour, that the page sends with the customer's saved-card calls. Each rendering of the page makes a
 * new one, for this fixed customer only: no route hands out tokens for a customer a caller names.
 */
export function demoCustomer(
  deps: Pick<MerchantDeps, 'customerTokens' | 'clock' | 'gateways'>,
): DemoCustomer {
  const now = deps.clock.now();
  const { token, expiresAt } = deps.customerTokens.issue(DEMO_CUSTOMER_ID, now);
  const served = deps.gateways.merchants;
  const tokens: Record<string, string> = {};
  if (served.length > 1)
    for (const id of served)
      tokens[id] = deps.customerTokens.issue(
        DEMO_CUSTOMER_ID,
        now,
        undefined,
        signedMerchant(id, served),
      ).token;
  return { id: DEMO_CUSTOMER_ID, token, expiresAt, tokens };
}

/** Where the page asks for a token that pays one of its orders with a saved card (outside production only). */
export const DEMO_ORDER_TOKEN_PATH = '/demo-shop/orders/:id/customer-token';

/**
 * What a shop's server does when its signed-in customer pays an order with a saved card (issue 41): a
 * token for that order alone, vouched for by the shop (here the kit's own bootstrap credential).
 * Null for an order that is not the demo customer's: the page pays its own customer's orders only.
 */
export function demoOrderToken(
  deps: Pick<MerchantDeps, 'customerTokens' | 'clock' | 'gateways'>,
  order: { id: string; merchant_id: number | null; customer: Record<string, unknown> | null } | null,
): { token: string; expiresAt: Date } | null {
  if (!order || order.customer?.merchant_customer_id !== DEMO_CUSTOMER_ID) return null;
  // The order's merchant's customer (platform mode): the token pays at that merchant alone.
  return deps.customerTokens.issue(
    DEMO_CUSTOMER_ID,
    deps.clock.now(),
    { orderId: order.id, credential: 'bootstrap' },
    signedMerchant(order.merchant_id, deps.gateways.merchants),
  );
}

/** How often the page asks for an order still being confirmed, and for how long (about two minutes). */
const REFRESH_MS = 2000;
const MAX_REFRESHES = 60;
/** Flagged orders shown at a time in the review queue; "More" asks for the next page. */
const QUEUE_PAGE = 5;

/**
 * The demo shop: a page that creates and pays orders through the kit's own API, as a shop's front end
 * would, and shows each order as the backend knows it; acting for `customer`, it saves, lists, pays with
 * and removes that customer's cards. Pure: the customer and the test cards are parameters, so a test
 * can check that everything shown or embedded is escaped.
 */
export function renderDemoShop(
  settings: DemoShop,
  customer: DemoCustomer,
  cards: readonly TestCard[] = TEST_CARDS,
): string {
  const e = escapeHtml;
  const currencies = settings.currencies
    .map((c, i) => `<option value="${e(c)}"${i === 0 ? ' selected' : ''}>${e(c)}</option>`)
    .join('');
  const cardOptions = cards
    .map((c) => `<option value="${e(c.number)}">${e(groupDigits(c.number))}: ${e(c.outcome)}</option>`)
    .join('\n');
  const cardRows = cards
    .map(
      (c) =>
        `<tr data-card="${e(c.number)}" title="Use this card"><td class="number">${e(groupDigits(c.number))}</td><td>${e(c.threeDs)}</td><td>${e(c.transaction)}</td></tr>`,
    )
    .join('\n');
  const merchants = settings.merchants ?? [];
  // Platform mode: whose order it is, first in the form; the first merchant picked until another is.
  const merchantPicker =
    merchants.length > 1
      ? `<div class="row" id="merchant-row">
<label>Merchant <select id="merchant" name="merchant">${merchants
          .map(
            (m, i) =>
              `<option value="${e(String(m))}"${i === 0 ? ' selected' : ''}>Merchant ${e(String(m))}</option>`,
          )
          .join('')}</select></label>
</div>
<p class="hint">The kit acts for several merchants (<code>GATEWAY_MERCHANTS</code>): the order is for the one picked (<code>merchant_id</code>), and the payment methods are its own.</p>
`
      : '';
  const scriptSettings: DemoShopScriptSettings = {
    merchants: merchants.length > 1 ? merchants : [],
    waiting: ORDER_STATUSES.filter(isWaiting),
    refreshMs: REFRESH_MS,
    maxRefreshes: MAX_REFRESHES,
    queuePage: QUEUE_PAGE,
    resolutions: REVIEW_RESOLUTIONS,
    customer: {
      id: customer.id,
      token: customer.token,
      tokens: customer.tokens,
      expires_at: customer.expiresAt.toISOString(),
    },
    tokenHeader: CUSTOMER_TOKEN_HEADER,
    secretHeader: ORDER_SECRET_HEADER,
  };
  const cardsPath = `/customers/${encodeURIComponent(customer.id)}/cards`;
  return `<!doctype html><html lang="en"><head>${HEAD_START}<title>Demo shop</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<style>${STYLE}</style></head>
<body>
<header>
<h1>Demo shop</h1>
<p class="lede">Place an order, pay it with a sandbox test card, a redirect method or a card saved earlier, and follow
the order as the backend knows it. Every step is a call to this kit's own API, listed under Requests.
The payment pages' "Back to the shop" leads here while <code>SHOP_URL</code> is unset.
<strong>Development only:</strong> with <code>NODE_ENV=production</code> this address shows a plain page instead.</p>
</header>
<div class="columns main">
<div class="stack">
<section class="card" id="checkout">
<h2>Order and pay</h2>
<form id="pay-form">
${merchantPicker}<div class="row">
<label>Amount <input id="amount" name="amount" inputmode="decimal" value="49.90" required size="10"></label>
<label>Currency <select id="currency" name="currency">${currencies}</select></label>
</div>
<p class="hint">At most ${e(settings.maxAmount)} in any currency.</p>
<fieldset class="row"><legend>Pay by</legend>
<label><input type="radio" name="kind" value="card" checked> Card</label>
<label><input type="radio" name="kind" value="redirect"> Redirect</label>
</fieldset>
<div id="card-fields">
<label>Test card <select id="card" name="card">${cardOptions}</select></label>
<label>Mode <select id="mode" name="mode"><option value="sale">sale: charge now</option><option value="auth">auth: reserve now, capture later</option></select></label>
<p class="hint">Expiry 12 of a future year, CVV 123 and a name are filled in.</p>
<label class="check"><input type="checkbox" id="save-card"> Save this card for next time</label>
<p class="hint">The customer's consent: the payment then sends <code>save_card</code> with their token, and the kit keeps the card for ${e(customer.id)} once the gateway approves it.</p>
</div>
<div id="redirect-fields" hidden>
<label>Method <select id="method" name="method"><option value="">loading…</option></select></label>
<label>Country <input id="country" name="country" value="NL" maxlength="2" size="3"></label>
<p class="hint">The browser goes to the sandbox's hosted checkout page. iDEAL takes EUR, from NL.</p>
</div>
<p><button type="submit" id="pay">Place the order and pay</button></p>
<p id="form-message" class="message" role="status"></p>
</form>
</section>
<section class="card" id="saved-panel">
<h2>Saved cards</h2>
<p class="hint">Signed in as <code id="customer-id">${e(customer.id)}</code>: the shop's server gave this page the customer's token (<code>${e(CUSTOMER_TOKEN_HEADER)}</code>, good until <span id="customer-until">${e(customer.expiresAt.toISOString())}</span>; a reload makes a new one). From <code>GET ${e(cardsPath)}</code>.</p>
<div id="saved"><p class="hint">Loading…</p></div>
<p id="saved-message" class="message" role="status"></p>
<p class="hint">A saved card pays without 3D Secure, with the amount, currency and mode above: the order shown if it is this customer's and unpaid, else a new one.</p>
</section>
</div>
<section class="card" id="order-panel">
<h2>The order</h2>
<div id="order"><p class="hint">No order yet. The last order placed here is shown again when you come back.</p></div>
<details id="ops" hidden><summary>Operator actions</summary><form id="ops-form">
<p class="hint">A shopper sees the order's status and amounts. An operator's token that may read shows it whole: who pays, the payment and its history. Capture, void and refund need the role operator or <code>OPS_API_TOKEN</code> (<code>npm start</code> prints a generated one). The token stays in this field only.</p>
<label>Token <input id="ops-token" type="password" autocomplete="off" size="28"></label>
<p class="row"><button type="button" id="capture">Capture</button> <button type="button" id="void">Void</button>
<span id="refund-fields"><input id="refund-amount" inputmode="decimal" size="8" aria-label="Refund amount"> <button type="button" id="refund">Refund</button></span></p>
<p id="ops-message" class="message" role="status"></p>
</form></details>
</section>
</div>
<section class="card">
<h2>Test cards</h2>
<p class="hint">The sandbox gateway's cards (any other Luhn-valid number is approved without 3D Secure). Click a row to use it.
The kit does not pay without 3D Secure: a 3DS error fails the order with its code.</p>
<div class="scroll"><table class="cards"><thead><tr><th>Number</th><th>3D Secure</th><th>Transaction</th></tr></thead>
<tbody>
${cardRows}
</tbody></table></div>
</section>
<section class="card" id="review-panel">
<h2>Operator panel: the review queue</h2>
<p class="hint">Orders flagged for review (money that does not add up: another amount, a second capture, money no attempt holds), newest first, from <code>GET /orders?needs_review=true</code>.
Any operator's token reads the queue; resolving an order needs the role finance (or <code>OPS_API_TOKEN</code>), and its history then says who and why. The token stays in this field only.</p>
<form id="queue-form" class="row">
<label>Token <input id="queue-token" type="password" autocomplete="off" size="28"></label>
<button type="submit" id="queue-load">Show the queue</button>
</form>
<p id="queue-message" class="message" role="status"></p>
<div id="queue"></div>
</section>
<div class="columns">
<section class="card">
<h2>Payment methods</h2>
<div id="methods"><p class="hint">Loading <code>GET /payment-methods</code>…</p></div>
</section>
<section class="card">
<h2>Requests</h2>
<p class="hint">What this page asked the kit, newest first.</p>
<ul id="log" class="log"></ul>
</section>
</div>
<script type="application/json" id="demo-settings">${jsonForScript(scriptSettings)}</script>
<script src="${DEMO_SHOP_SCRIPT_PATH}?v=${settings.script.version}"></script>
</body></html>`;
}

/**
 * `GET /` outside production: the demo shop, never cached (it shows the kit's current settings, and
 * carries a customer token of its own).
 */
export function demoShopPage(ctx: Context, settings: DemoShop, customer: DemoCustomer): void {
  ctx.type = 'html';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = renderDemoShop(settings, customer);
}

/**
 * Where the kit serves the demo shop's script (outside production only, as the shop). The page asks
 * for it by its content's hash (`?v=`, DemoShopScript's version): a kit with another script is another
 * URL, so a browser may keep the file a day without ever running an older script against a newer page.
 */
export const DEMO_SHOP_SCRIPT_PATH = '/assets/demo-shop.js';

/** `GET /assets/demo-shop.js`: the same for every page and every customer, so it may be cached. */
export function demoShopScriptFile(ctx: Context, script: DemoShopScript): void {
  ctx.type = 'js';
  ctx.set('Cache-Control', 'public, max-age=86400');
  ctx.body = script.source;
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:68rem;margin:2rem auto;padding:0 1rem;color:#1f2933;line-height:1.45}
h1{font-size:1.75rem;margin:0 0 .25rem}h2{font-size:1.15rem;margin:0 0 .75rem}h3{font-size:1rem;margin:1rem 0 .5rem}
.lede{margin:0 0 1.25rem;color:#3e4c59}
.columns{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(22rem,100%),1fr));gap:1rem;margin-bottom:1rem}
.card{border:1px solid #d9dee3;border-radius:8px;padding:1rem 1.25rem;margin:0 0 1rem;min-width:0}
.columns>.card,.stack>.card{margin:0}
.stack{display:flex;flex-direction:column;gap:1rem;min-width:0}
@media (min-width:60rem){.columns.main{grid-template-columns:minmax(0,5fr) minmax(0,6fr)}}
label{display:block;margin:.25rem 0 .5rem}.row{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center}
.row label{display:inline-block}
label.check{margin:.75rem 0 0}
fieldset{border:0;padding:0;margin:.25rem 0 .5rem}legend{padding:0;margin-right:.5rem;float:left}
input,select,button{font:inherit}select{max-width:100%}#card{width:100%;font-size:.9rem}
button{background:#1c7ed6;color:#fff;border:0;border-radius:6px;padding:.45rem 1rem;cursor:pointer}
button:disabled{opacity:.6;cursor:wait}
.hint{color:#616e7c;font-size:.9rem;margin:.25rem 0 .5rem}
.message{min-height:1.2em;margin:.5rem 0 0}.message.err,.err{color:#c92a2a}.message.ok,.ok{color:#2b8a3e}.message.wait{color:#b35c00}
.badge{display:inline-block;padding:.1rem .6rem;border-radius:999px;font-weight:600;color:#fff;background:#1c7ed6}
.tone-good{background:#2f9e44}.tone-wait{background:#f08c00}.tone-bad{background:#e03131}
.status{margin:0 0 .75rem}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.15rem 1rem;margin:0}
dt{color:#616e7c}dd{margin:0;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eef0f2;vertical-align:top;overflow-wrap:break-word}
.history td:nth-child(1),.history td:nth-child(2),.history td:nth-child(4){white-space:nowrap}.history td:nth-child(5){overflow-wrap:anywhere;min-width:10rem}
th{color:#616e7c;font-weight:600}
.cards tbody tr{cursor:pointer}.cards tbody tr:hover{background:#f1f5f9}
.number{font-family:ui-monospace,monospace;white-space:nowrap}
.methods{margin:0;padding-left:1.1rem}.methods li{margin:.25rem 0}
.log{margin:0;padding:0;list-style:none;font-size:.85rem;max-height:16rem;overflow:auto}.log li{margin:.15rem 0;overflow-wrap:anywhere}
.scroll{overflow-x:auto}
.queue td:nth-child(1),.queue td:nth-child(3),.queue td:nth-child(4){white-space:nowrap}
.queue .resolve-row td{background:#f8fafc}.queue .resolve-row form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.queue .note{flex:1 1 14rem}button.secondary{background:#e9ecef;color:#1f2933}
.saved td{vertical-align:middle}.saved td:first-child{white-space:nowrap}.saved .actions{display:flex;flex-wrap:wrap;gap:.4rem;justify-content:flex-end}
.saved button{padding:.3rem .75rem;font-size:.9rem}.badge.small{font-size:.75rem;padding:.05rem .5rem}
details{margin-top:1rem;border-top:1px solid #eef0f2;padding-top:.75rem}summary{cursor:pointer;font-weight:600}`;
