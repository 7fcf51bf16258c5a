import type { Context } from 'koa';
import { escapeHtml } from '../../shared/html.js';
import { type CurrencyCode, formatMoney } from '../../shared/money.js';
import type { OrderStatus } from '../orders/status.js';
import type { OrderRecord } from '../store/records.js';
import { page } from './page-shell.js';

/** Seconds between two reloads of a landing whose payment is still being confirmed. */
export const REFRESH_SECONDS = 3;
/** Reloads before the page stops and says it takes longer than usual: about 30 s in all. */
export const MAX_REFRESHES = 10;

type Tone = 'good' | 'wait' | 'bad' | 'info';

/**
 * What the shopper reads for each status: a headline and what happens next. Never the internal word
 * (the issue 8 landing showed "Status: requires_action"); `data-status` keeps it for machines.
 */
const WORDS: Record<OrderStatus, { headline: string; next: string; tone: Tone }> = {
  pending: {
    headline: 'We are confirming your payment',
    next: 'This usually takes a few seconds and this page updates by itself. Please do not pay again.',
    tone: 'wait',
  },
  requires_action: {
    headline: 'Waiting for your payment to be confirmed',
    next: 'If you completed the payment, its confirmation is on its way and this page updates by itself. Please do not pay again.',
    tone: 'wait',
  },
  authorized: {
    headline: 'Thank you: your payment is approved',
    next: 'The amount is reserved on your card and will be charged when the shop processes your order.',
    tone: 'good',
  },
  paid: {
    headline: 'Thank you: your payment was received',
    next: 'Your order is confirmed. You can close this page or go back to the shop.',
    tone: 'good',
  },
  partially_refunded: {
    headline: 'Part of your payment was refunded',
    next: 'The refunded amount goes back to the account you paid from; banks usually take a few days to show it.',
    tone: 'info',
  },
  refunded: {
    headline: 'Your payment was refunded',
    next: 'The money goes back to the account you paid from; banks usually take a few days to show it.',
    tone: 'info',
  },
  voided: {
    headline: 'The reservation on your card was released',
    next: 'The shop called the payment off before charging it: no money was taken.',
    tone: 'info',
  },
  failed: {
    headline: 'Your payment did not go through',
    next: 'No money was taken. You can go back to the shop and try again, with the same or another payment method.',
    tone: 'bad',
  },
  cancelled: {
    headline: 'Your payment was cancelled',
    next: 'No money was taken. You can go back to the shop and pay whenever you are ready.',
    tone: 'bad',
  },
  expired: {
    headline: 'Your payment was not completed in time',
    next: 'The payment page timed out and no money was taken. You can go back to the shop and try again.',
    tone: 'bad',
  },
  disputed: {
    headline: 'This payment is being disputed',
    next: 'A chargeback was opened with the bank. The shop will be in touch; there is nothing to do on this page.',
    tone: 'info',
  },
  closed: {
    headline: 'This order is closed',
    next: 'It was cancelled, or not paid in time, and takes no more payments: no money was taken. To buy, place a new order at the shop.',
    tone: 'bad',
  },
};

const SLOW = {
  headline: 'Your payment is taking longer than usual to confirm',
  next: 'You do not need to wait here: we will tell you by email as soon as it is confirmed, and you can close this page now. Please do not pay again.',
  tone: 'wait' as Tone,
};

/** A challenge whose attempt a newer one replaced: it pays nothing, whatever the order does now. */
const REPLACED = {
  headline: 'This payment was replaced by a newer one',
  next: 'You started another payment for this order, so this one was not used and no money was taken for it. Please follow the payment you started last.',
  tone: 'info' as Tone,
};

const UNKNOWN = {
  headline: 'Your payment',
  next: 'The shop will confirm the outcome of your payment to you.',
  tone: 'info' as Tone,
};

/** Statuses the shopper waits on: the page reloads itself until they change (or it gives up). */
export function isWaiting(status: OrderStatus): boolean {
  return status === 'pending' || status === 'requires_action';
}

export interface LandingView {
  /** "Back to the shop" (config SHOP_URL). */
  shopUrl: string;
  /** What identifies the payment in the landing's query; the reload keeps it and nothing else. */
  identity: Record<string, string>;
  /** How many times the page has reloaded itself already (its `n` query parameter). */
  refreshes: number;
  /** The payment this landing returns from was replaced by a newer attempt (a 3DS return). */
  replaced?: boolean;
  /**
   * With `replaced`: the page of the attempt that replaced it, while that one waits on the shopper
   * (a challenge, a checkout page). A shopper who pressed Pay twice is sent on to the one that counts.
   */
  continueUrl?: string | null;
}

/** The `n` of a landing's query: a count of reloads, 0 when missing or not a small number. */
export function refreshCount(value: unknown): number {
  if (typeof value !== 'string' || !/^\d{1,3}$/.test(value)) return 0;
  return Math.min(Number(value), MAX_REFRESHES);
}

/**
 * The browser landings show the order as the backend knows it; they decide nothing (merchant.md).
 * Pure: the status code and the page, for the route and for tests.
 */
export function renderLanding(
  order: OrderRecord | null,
  view: LandingView,
): { status: number; html: string } {
  const back = `<p class="back"><a href="${escapeHtml(view.shopUrl)}">Back to the shop</a></p>`;
  if (!order) {
    return {
      status: 404,
      html: page(
        'Payment not found',
        null,
        `<main class="card tone-info">
<h1>We could not find this payment</h1>
<p class="next">The link may be incomplete or out of date. If you completed a payment, the shop will confirm it to you.</p>
</main>
${back}`,
      ),
    };
  }
  // A replaced attempt's page does not wait on the order: the payment it watches is another one.
  const waiting = !view.replaced && isWaiting(order.status);
  const slow = waiting && view.refreshes >= MAX_REFRESHES;
  // A status this code does not know is never stored (DESIGN.md); still, a page rather than a crash.
  const words = view.replaced ? REPLACED : slow ? SLOW : (WORDS[order.status] ?? UNKNOWN);
  const reload = (n: number) => `?${new URLSearchParams({ ...view.identity, n: String(n) })}`;
  const refresh = waiting && !slow ? `${REFRESH_SECONDS};url=${reload(view.refreshes + 1)}` : null;
  const amount = formatMoney(order.amount_minor, order.currency as CurrencyCode);
  const footer = refresh
    ? '<p class="hint">This page checks again every few seconds.</p>'
    : slow
      ? `<p class="hint"><a href="${escapeHtml(reload(MAX_REFRESHES))}">Check again</a></p>`
      : view.replaced && view.continueUrl
        ? `<p class="continue"><a id="continue" href="${escapeHtml(view.continueUrl)}">Continue with the payment you started last</a></p>`
        : '';
  return {
    status: 200,
    html: page(
      words.headline,
      refresh,
      `<main class="card tone-${words.tone}" id="status" data-status="${escapeHtml(order.status)}"${view.replaced ? ' data-replaced="true"' : ''}>
<h1>${escapeHtml(words.headline)}</h1>
<p class="next">${escapeHtml(words.next)}</p>
<dl>
<dt>Reference</dt><dd>${escapeHtml(order.reference)}</dd>
<dt>Amount</dt><dd>${escapeHtml(amount)}</dd>
</dl>
${footer}
</main>
${back}`,
    ),
  };
}

/** Answers the landing: the page, never cached (a reload must ask again). */
export function landingPage(ctx: Context, order: OrderRecord | null, view: LandingView): void {
  const { status, html } = renderLanding(order, view);
  ctx.status = status;
  ctx.type = 'html';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = html;
}

/**
 * The kit's own `/`, where "Back to the shop" leads while SHOP_URL is not set: a shopper who follows
 * it reads a page, not an API's 404.
 */
export function homePage(ctx: Context): void {
  ctx.type = 'html';
  ctx.body = page(
    'Payments',
    null,
    `<main class="card tone-info"><h1>Thank you for shopping with us</h1>
<p class="next">This address handles the shop's payments; it has no storefront of its own.</p>
<p class="hint">For the shop's developers: set <code>SHOP_URL</code> so that the payment pages link back to your storefront.</p></main>`,
  );
}
