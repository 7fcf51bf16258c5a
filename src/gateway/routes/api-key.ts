import type Router from '@koa/router';
import type { GatewayDeps } from '../deps.js';
import { type Principal, principalOf } from '../http/auth.js';
import { respond } from '../http/envelope.js';
import type { GatewayState } from '../state/gateway-state.js';

/**
 * sandbox.md section 11, Key information: what the calling key is and may do. Never the key's text
 * nor any secret: a key read back from a log or a proxy must not be usable to learn more.
 */
export function keyInformation(principal: Principal, state: GatewayState) {
  const { limit, windowMs } = state.apiRate.policy;
  const rest = { scopes: [...principal.scopes], rate_limit: { limit, window_s: windowMs / 1000 } };
  if (principal.kind === 'merchant')
    return { key_type: 'merchant' as const, merchant_id: principal.merchantId, ...rest };
  // Every linked merchant, inactive ones too: the link exists; acting for those is 403 (Authentication rule 4).
  const linked = [...(state.partnerMerchants.get(principal.partnerId) ?? [])].sort((a, b) => a - b);
  return { key_type: 'partner' as const, linked_merchant_ids: linked, ...rest };
}

export function apiKeyRoutes(router: Router, deps: GatewayDeps): void {
  router.get('/api/v1/api-key', (ctx) => {
    respond(ctx, keyInformation(principalOf(ctx), deps.state), 'API key information.');
  });
}
