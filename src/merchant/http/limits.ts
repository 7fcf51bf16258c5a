import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { LimitName, Limits } from '../../infra/rate-limits.js';
import { addressKey, normalizeAddress } from '../../shared/ip-address.js';
import { HttpError } from '../errors/http-error.js';

/**
 * The client's address: koa's `ctx.ip`, which with TRUST_PROXY is the address the outermost trusted
 * proxy saw (the rightmost TRUST_PROXY entries of PROXY_IP_HEADER, the first of them), and without it
 * the connection's own. A value that is not an address (a proxy's garbage) gives way to the
 * connection's; null when neither is one. What the limits count under and what the gateway is told
 * as the shopper's device address.
 */
export function clientAddress(ctx: Context): string | null {
  const known = ctx.state.clientAddress as string | null | undefined;
  if (known !== undefined) return known;
  const address = normalizeAddress(ctx.ip) ?? normalizeAddress(ctx.socket?.remoteAddress);
  ctx.state.clientAddress = address;
  return address;
}

/** What a per-address limit counts under: the address (an IPv6 one's /64), or one key for no address. */
export function clientKey(ctx: Context): string {
  const address = clientAddress(ctx);
  return address === null ? 'unknown' : addressKey(address);
}

/**
 * A customer id as a per-customer limit's key: its SHA-256, not the id (the shop's own id for a
 * customer may be an e-mail address, and Redis keeps no customer data).
 */
export function customerKey(id: string): string {
  return createHash('sha256').update(id).digest('hex').slice(0, 32);
}

/**
 * An order id as a per-order limit's key: only the shape of an id the kit makes (`ord_` and 24
 * letters or digits). Anything else names no order (the route answers 404) and is not counted, so
 * that random paths neither fill Redis nor put what a client wrote there (a card number, say).
 */
export function orderKey(id: string | undefined): string | null {
  return typeof id === 'string' && /^ord_[A-Za-z0-9]{24}$/.test(id) ? id : null;
}

const REFUSALS: Record<LimitName, string> = {
  orders_per_address: 'Too many orders from this address',
  pay_per_address: 'Too many payment requests from this address',
  pay_per_order: 'Too many payment requests for this order',
  landing_per_address: 'Too many status checks from this address',
  landing_per_order: 'Too many status checks for this order',
  payment_methods_per_address: 'Too many requests from this address',
  login_failures_per_address: 'Too many failed sign-ins from this address',
  customer_tokens_per_credential: 'Too many customer tokens minted with this credential',
  token_failures_per_address: 'Too many wrong tokens from this address',
  card_lists_per_customer: "Too many lists of this customer's saved cards",
  card_lists_per_address: 'Too many lists of saved cards from this address',
};

/**
 * Takes one request from each limit, in order, for its key (a null key is not counted); the first
 * limit spent answers 429 `RATE_LIMITED`, naming it in `data.limit`, with `Retry-After` in seconds.
 */
export async function enforce(
  limits: Limits,
  checks: readonly (readonly [LimitName, string | null])[],
): Promise<void> {
  for (const [name, key] of checks) {
    if (key === null) continue;
    const answer = await limits.take(name, key);
    if (answer.allowed) continue;
    const seconds = answer.retryAfterSeconds;
    throw new HttpError(
      429,
      'RATE_LIMITED',
      `${REFUSALS[name]}; try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
      { data: { limit: name, retry_after: seconds }, headers: { 'Retry-After': String(seconds) } },
    );
  }
}

/** Whether every limit still allows a request (each one counted), without refusing anyone. */
export async function allows(
  limits: Limits,
  checks: readonly (readonly [LimitName, string | null])[],
): Promise<boolean> {
  try {
    await enforce(limits, checks);
    return true;
  } catch (error) {
    if (error instanceof HttpError && error.status === 429) return false;
    throw error;
  }
}
