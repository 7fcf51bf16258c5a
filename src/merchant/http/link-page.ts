import type { Context } from 'koa';
import { escapeHtml } from '../../shared/html.js';
import { type CurrencyCode, formatMoney } from '../../shared/money.js';
import type { Visit } from '../checkout/payment-link.js';
import { page } from './page-shell.js';

/** What a visit that sends nowhere shows: the answer's status, and the words. */
type Shown = Exclude<Visit['kind'], 'send'>;

const WORDS: Record<Shown, { status: number; headline: string; next: string; tone: string }> = {
  unknown: {
    status: 404,
    headline: 'We could not find this payment link',
    next: 'The link may be incomplete. Please check the message it came in, or ask the shop for a new one.',
    tone: 'info',
  },
  expired: {
    status: 410,
    headline: 'This payment link has expired',
    next: 'It can no longer be used to pay, and no money was taken through it. Please ask the shop for a new link.',
    tone: 'bad',
  },
  paid: {
    status: 200,
    headline: 'This order is already paid',
    next: 'There is nothing more to pay. You can close this page.',
    tone: 'good',
  },
  ended: {
    status: 200,
    headline: 'This order is closed',
    next: 'It takes no more payments, and no money was taken through this link. To buy, place a new order at the shop.',
    tone: 'bad',
  },
  wait: {
    status: 200,
    headline: 'A payment for this order is under way',
    next: 'It is still being confirmed. Please do not pay again: open this link again in a few minutes to see where it stands.',
    tone: 'wait',
  },
  limited: {
    status: 429,
    headline: 'Too many tries in a short time',
    next: 'Nothing was charged. Please wait a minute, then open this link again.',
    tone: 'wait',
  },
  unavailable: {
    status: 503,
    headline: 'The payment page cannot be opened right now',
    next: 'Nothing was charged. Please open this link again in a few minutes.',
    tone: 'wait',
  },
  refused: {
    status: 200,
    headline: 'This order cannot be paid through this link right now',
    next: 'No money was taken. Please contact the shop.',
    tone: 'bad',
  },
};

/** Visits worth trying again soon: the page links to itself. */
const AGAIN: readonly Shown[] = ['wait', 'limited', 'unavailable'];

/**
 * A payment link's own page, when the visit sends the shopper nowhere (issue 43, part 3): what became
 * of the order or the link, in words, with the order's reference and amount (no more than a landing
 * shows). `data-link` keeps the outcome for machines. `again` is the link's own path. Pure.
 */
export function renderLinkPage(
  visit: Exclude<Visit, { kind: 'send' }>,
  view: { shopUrl: string; again: string },
): { status: number; html: string } {
  const words = WORDS[visit.kind];
  const why = visit.kind === 'refused' ? `<p class="next">${escapeHtml(visit.message)}</p>\n` : '';
  const facts =
    'order' in visit
      ? `<dl>
<dt>Reference</dt><dd>${escapeHtml(visit.order.reference)}</dd>
<dt>Amount</dt><dd>${escapeHtml(formatMoney(visit.order.amount_minor, visit.order.currency as CurrencyCode))}</dd>
</dl>
`
      : '';
  const again = AGAIN.includes(visit.kind)
    ? `<p class="hint"><a id="again" href="${escapeHtml(view.again)}">Open the link again</a></p>\n`
    : '';
  return {
    status: words.status,
    html: page(
      words.headline,
      null,
      `<main class="card tone-${words.tone}" id="status" data-link="${visit.kind}">
<h1>${escapeHtml(words.headline)}</h1>
${why}<p class="next">${escapeHtml(words.next)}</p>
${facts}${again}</main>
<p class="back"><a href="${escapeHtml(view.shopUrl)}">Back to the shop</a></p>`,
    ),
  };
}

/** Answers a visit: a 303 to the hosted checkout, or the link's page; never cached (each visit asks again). */
export function linkAnswer(ctx: Context, visit: Visit, shopUrl: string): void {
  ctx.set('Cache-Control', 'no-store');
  if (visit.kind === 'send') {
    ctx.status = 303;
    ctx.redirect(visit.url);
    // As documented: the Location alone (koa's redirect would add a "Redirecting to" text).
    ctx.body = '';
    return;
  }
  const { status, html } = renderLinkPage(visit, { shopUrl, again: ctx.path });
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = html;
  if (visit.kind === 'limited' || visit.kind === 'unavailable') ctx.set('Retry-After', '60');
}
