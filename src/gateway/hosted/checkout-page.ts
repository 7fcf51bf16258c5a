import type Router from '@koa/router';
import { formatMinor } from '../../shared/money.js';
import type { GatewayDeps } from '../deps.js';
import type { PaymentSession, SessionTrigger } from '../domain/sessions.js';
import { readForm } from '../http/body.js';
import { ApiError, notFound } from '../http/errors.js';
import { applySessionTrigger } from '../lifecycle/session-moves.js';
import { escapeHtml, page } from './html.js';

export const ACTIONS: Record<string, SessionTrigger> = {
  pay: 'paid',
  pending: 'pending',
  fail: 'failed',
  cancel: 'cancelled',
};

/** gateway-api.md, Payment sessions rule 5: back to the shop with the session id, reference and status. */
function returnUrl(s: PaymentSession, cancelled: boolean): string {
  const target = new URL(cancelled ? s.cancelUrl : s.returnUrl);
  target.searchParams.set('payment_session_id', s.id);
  target.searchParams.set('reference', s.reference);
  target.searchParams.set('status', s.status);
  return target.toString();
}

/** sandbox.md section 7: the hosted checkout page with Pay, Pending, Fail and Cancel. */
export function checkoutPageRoutes(router: Router, deps: GatewayDeps): void {
  const sessionOf = (id: string | undefined): PaymentSession => {
    const s = deps.state.sessions.get(id ?? '');
    if (!s) throw notFound('Payment session');
    return s;
  };

  router.get('/hosted/checkout/:sessionId', (ctx) => {
    const s = sessionOf(ctx.params.sessionId);
    const id = escapeHtml(s.id);
    const open = s.status === 'pending_redirect';
    ctx.type = 'html';
    ctx.body = page(
      'Checkout',
      `<h1>Pay with ${escapeHtml(s.methodLabel)}</h1>
<p>Amount: <strong>${escapeHtml(formatMinor(s.amount, s.currency))} ${s.currency}</strong></p>
<p class="muted">Reference ${escapeHtml(s.reference)} · sandbox provider ${escapeHtml(s.provider)}</p>
${
  open
    ? `<form method="post" action="/hosted/checkout/${id}">
<button type="submit" name="action" value="pay">Pay</button>
<button type="submit" name="action" value="pending">Pending</button>
<button type="submit" name="action" value="fail">Fail</button>
<button type="submit" name="action" value="cancel">Cancel</button></form>`
    : `<p>This checkout is no longer open (${escapeHtml(s.status)}).</p>
<p><a href="${escapeHtml(returnUrl(s, s.status === 'cancelled'))}">Return to the shop</a></p>`
}`,
    );
  });

  router.post('/hosted/checkout/:sessionId', async (ctx) => {
    const s = sessionOf(ctx.params.sessionId);
    const form = await readForm(ctx);
    const trigger = ACTIONS[form.get('action') ?? ''];
    if (!trigger) {
      throw new ApiError(422, 'ERR_VALIDATION_FAILED', 'Unknown checkout action.', {
        errors: { action: ['must be pay, pending, fail or cancel'] },
      });
    }
    // Only the page's own state moves: a second click, or one after expiry, returns what was decided.
    if (s.status === 'pending_redirect') applySessionTrigger(deps, s, trigger);
    ctx.status = 303;
    ctx.redirect(returnUrl(s, s.status === 'cancelled'));
  });
}
