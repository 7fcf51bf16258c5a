import type { Context, Next } from 'koa';
import type { GatewayState } from '../state/gateway-state.js';
import { ApiError, authFailed } from './errors.js';

/** gateway-api.md, Authentication. */
export type Principal =
  | { kind: 'merchant'; key: string; scopes: readonly string[]; merchantId: number }
  | { kind: 'partner'; key: string; scopes: readonly string[]; partnerId: number };

export function principalOf(ctx: Context): Principal {
  return ctx.state.principal as Principal;
}

/** Rule 4: a missing or unknown key is 401; a known key that is inactive, or whose account is, is 403. */
export function authenticate(state: GatewayState) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('Authorization'));
    const key = match?.[1] === undefined ? undefined : state.keys.get(match[1]);
    if (!key) throw authFailed(401, 'A valid API key is required (Authorization: Bearer <API_KEY>).');
    if (!key.active) throw authFailed(403, 'This API key is inactive.');
    if (key.merchant_id !== undefined) {
      if (!state.merchants.get(key.merchant_id)?.active)
        throw authFailed(403, 'This merchant account is inactive.');
      ctx.state.principal = {
        kind: 'merchant',
        key: key.key,
        scopes: key.scopes,
        merchantId: key.merchant_id,
      } satisfies Principal;
    } else {
      ctx.state.principal = {
        kind: 'partner',
        key: key.key,
        scopes: key.scopes,
        partnerId: key.partner_id!,
      } satisfies Principal;
    }
    await next();
  };
}

/** Capture, refund and void are merchant-only (rule 2); 3DS verify too. */
export function requireMerchantKey(ctx: Context): Extract<Principal, { kind: 'merchant' }> {
  const principal = principalOf(ctx);
  if (principal.kind !== 'merchant')
    throw authFailed(403, 'This endpoint needs a merchant API key; partner keys are not allowed.');
  return principal;
}

export function requireScope(ctx: Context, scope: string): void {
  if (!principalOf(ctx).scopes.includes(scope))
    throw authFailed(403, `This API key lacks the ${scope} scope.`);
}

/**
 * The merchant a request acts for. Partners name a linked merchant; one they cannot reach is 400
 * (rule 4). A merchant key may repeat its own id, nothing else.
 */
export function resolveMerchantId(
  state: GatewayState,
  principal: Principal,
  requested: number | null | undefined,
): number {
  if (principal.kind === 'merchant') {
    if (requested !== undefined && requested !== null && requested !== principal.merchantId) {
      throw authFailed(400, 'merchant_id does not belong to this API key.');
    }
    return principal.merchantId;
  }
  if (requested === undefined || requested === null)
    throw authFailed(400, 'Partner keys must send merchant_id.');
  if (!state.partnerMerchants.get(principal.partnerId)?.has(requested)) {
    throw authFailed(400, 'merchant_id is not a merchant linked to this partner.');
  }
  if (!state.merchants.get(requested)?.active) throw authFailed(403, 'This merchant account is inactive.');
  return requested;
}

/** Whether a key may see a merchant's records: its own, or a linked one for partners (else 404). */
export function canSee(state: GatewayState, principal: Principal, merchantId: number): boolean {
  return principal.kind === 'merchant'
    ? principal.merchantId === merchantId
    : (state.partnerMerchants.get(principal.partnerId)?.has(merchantId) ?? false);
}

export function rateLimited(retryAfterSeconds: number): ApiError {
  return new ApiError(
    429,
    'ERR_RATE_LIMITED',
    'Too many requests; retry after the number of seconds in Retry-After.',
    {
      headers: { 'Retry-After': String(retryAfterSeconds) },
    },
  );
}
