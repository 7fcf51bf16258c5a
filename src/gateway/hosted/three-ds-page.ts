import type Router from '@koa/router';
import { randomHex } from '../../shared/ids.js';
import { formatMinor } from '../../shared/money.js';
import type { GatewayDeps } from '../deps.js';
import { effectiveStatus, type Verification } from '../domain/three-ds.js';
import { readForm } from '../http/body.js';
import { ApiError, notFound } from '../http/errors.js';
import { escapeHtml, page } from './html.js';

/** gateway-api.md, 3D Secure flow step 2: back to `auth_url` with the verification id and its status. */
function returnUrl(v: Verification, now: number): string {
  const target = new URL(v.authUrl);
  target.searchParams.set('card_verification_id', v.publicId);
  target.searchParams.set('status', effectiveStatus(v, now));
  return target.toString();
}

/** sandbox.md section 5: the challenge page, with Authenticate and Fail, each a 303 to `auth_url`. */
export function threeDsPageRoutes(router: Router, deps: GatewayDeps): void {
  const { state, clock } = deps;
  const challengeOf = (publicId: string | undefined): Verification => {
    const v = state.verifications.get(publicId ?? '');
    if (v?.authType !== 'challenge') throw notFound('Challenge');
    return v;
  };

  router.get('/hosted/3ds/:publicId', (ctx) => {
    const v = challengeOf(ctx.params.publicId);
    const now = clock.now();
    const status = effectiveStatus(v, now);
    const id = escapeHtml(v.publicId);
    ctx.type = 'html';
    ctx.body = page(
      '3D Secure challenge',
      `<h1>Confirm your payment</h1>
<p>Amount: <strong>${escapeHtml(formatMinor(v.amount, v.currency))} ${v.currency}</strong></p>
<p class="muted">Sandbox issuer challenge ${id}</p>
${
  status === 'pending'
    ? `<form method="post" action="/hosted/3ds/${id}">
<button type="submit" name="action" value="authenticate">Authenticate</button>
<button type="submit" name="action" value="fail">Fail</button></form>`
    : `<p>This challenge is no longer open (${escapeHtml(status)}).</p>
<p><a href="${escapeHtml(returnUrl(v, now))}">Return to the shop</a></p>`
}`,
    );
  });

  router.post('/hosted/3ds/:publicId', async (ctx) => {
    const v = challengeOf(ctx.params.publicId);
    const form = await readForm(ctx);
    const action = form.get('action');
    if (action !== 'authenticate' && action !== 'fail') {
      throw new ApiError(422, 'ERR_VALIDATION_FAILED', 'Unknown challenge action.', {
        errors: { action: ['must be authenticate or fail'] },
      });
    }
    const now = clock.now();
    // Only an open challenge changes; a late or repeated click returns the outcome already decided.
    if (effectiveStatus(v, now) === 'pending') {
      v.status = action === 'authenticate' ? 'full_auth' : 'failed';
      if (v.status === 'full_auth') {
        v.eci = '05';
        v.cavv = randomHex(deps.random, 20);
      }
      v.updatedAt = now;
    }
    ctx.status = 303;
    ctx.redirect(returnUrl(v, now));
  });
}
