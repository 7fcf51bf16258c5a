import type { Context } from 'koa';
import type { OrderRow } from '../../infra/models.js';
import { escapeHtml } from '../../shared/html.js';
import { type CurrencyCode, formatMinor } from '../../shared/money.js';

const HEADLINES: Record<string, string> = {
  paid: 'Thank you: your payment was received.',
  authorized: 'Thank you: your payment was authorised.',
  partially_refunded: 'Your payment was received and partly refunded.',
  refunded: 'Your payment was refunded.',
  pending: 'Your payment is being confirmed.',
  requires_action: 'Your payment is being confirmed.',
  failed: 'Your payment did not go through.',
  cancelled: 'Your payment was cancelled.',
  expired: 'Your payment session expired.',
  voided: 'Your payment was cancelled.',
  disputed: 'Your payment is under dispute.',
};

/** The browser landings show the order as the backend knows it; they decide nothing (merchant.md). */
export function landingPage(ctx: Context, order: OrderRow | null): void {
  ctx.type = 'html';
  if (!order) {
    ctx.status = 404;
    ctx.body = page('Payment not found', '<h1>We could not find this payment.</h1>');
    return;
  }
  const amount = `${formatMinor(order.amount_minor, order.currency as CurrencyCode)} ${order.currency}`;
  ctx.body = page(
    'Your payment',
    `<h1>${escapeHtml(HEADLINES[order.status] ?? 'Your payment status')}</h1>
<p>Order <strong>${escapeHtml(order.reference)}</strong> · ${escapeHtml(amount)}</p>
<p id="status" data-status="${escapeHtml(order.status)}">Status: ${escapeHtml(order.status)}</p>`,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}</style></head>
<body>${body}</body></html>`;
}
