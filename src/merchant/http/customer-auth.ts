import type { Context } from 'koa';
import type { Gateways } from '../../client/merchant-gateways.js';
import type { Clock } from '../../shared/clock.js';
import type { CustomerGrant, CustomerTokens } from '../customers/customer-token.js';
import { HttpError } from '../errors/http-error.js';
import type { Actor, Permission } from '../operators/roles.js';
import { signedMerchant } from '../orders/order-merchant.js';
import { actorOf, bearerOf, type OpsAuth, type Principal } from './ops-auth.js';
import { requestMerchant } from './order-access.js';

/** The header a customer's browser sends its token in (POST /customers/{id}/tokens hands it out). */
export const CUSTOMER_TOKEN_HEADER = 'Customer-Token';

/** Who asked about a customer's cards: the customer (their token), or an operator (their bearer). */
export type CustomerCaller = { kind: 'customer'; customerId: string } | { kind: 'operator'; actor: Actor };

export interface CustomerAuthDeps {
  customerTokens: CustomerTokens;
  clock: Clock;
  ops: OpsAuth;
  /** The merchants the kit serves: a token names the merchant whose customer it is (platform mode). */
  gateways: Pick<Gateways<unknown>, 'merchants'>;
}

const needsToken = () =>
  new HttpError(
    401,
    'CUSTOMER_TOKEN_REQUIRED',
    `A customer's saved cards need ${CUSTOMER_TOKEN_HEADER}: the customer's token, which the shop's server gets from POST /customers/{id}/tokens.`,
  );

const badToken = () =>
  new HttpError(
    401,
    'CUSTOMER_TOKEN_INVALID',
    `${CUSTOMER_TOKEN_HEADER} is not this customer's, or has expired: get a new one from the shop.`,
  );

/**
 * The customer's own request: their token must be good for this customer id, of this merchant (null:
 * the kit's first). Another customer's token, another merchant's customer's, an expired one and a
 * forged one are refused alike (401): which of them it was helps nobody but someone trying tokens.
 */
export function requireCustomer(
  ctx: Context,
  deps: CustomerAuthDeps,
  customerId: string,
  merchantId: number | null,
): CustomerGrant {
  const token = ctx.get(CUSTOMER_TOKEN_HEADER);
  if (token === '') throw needsToken();
  const merchant = signedMerchant(merchantId, deps.gateways.merchants);
  const grant = deps.customerTokens.grant(customerId, token, deps.clock.now(), merchant);
  if (!grant) throw badToken();
  return grant;
}

/**
 * The customer's token for paying this order (issue 41): minted for it by a credential still live.
 * A token made without an order lists and removes cards and pays nothing; one made for another order
 * pays that one alone (403 `CUSTOMER_TOKEN_NOT_FOR_ORDER`); one whose credential was revoked since is
 * no token (401). Answers the credential that vouched, for the payment's audit line.
 */
export async function requireOrderToken(
  ctx: Context,
  deps: CustomerAuthDeps,
  customerId: string,
  order: { id: string; merchant_id: number | null },
): Promise<Principal> {
  const orderId = order.id;
  const grant = requireCustomer(ctx, deps, customerId, order.merchant_id);
  if (grant.orderId !== orderId)
    throw new HttpError(
      403,
      'CUSTOMER_TOKEN_NOT_FOR_ORDER',
      grant.orderId === null
        ? `This ${CUSTOMER_TOKEN_HEADER} lists and removes the customer's cards; it pays nothing. The shop's server gets one for this order from POST /customers/{id}/tokens with {"order_id": "..."}.`
        : `This ${CUSTOMER_TOKEN_HEADER} pays another order only. The shop's server gets one for this order from POST /customers/{id}/tokens with {"order_id": "..."}.`,
    );
  const vouched = await deps.ops.live(grant.credential);
  if (!vouched) throw badToken();
  return vouched;
}

/**
 * The customer (with their token) or an operator whose role holds `permission` (with their bearer):
 * a customer token is checked when one is sent; otherwise the operator's bearer; neither, 401. And
 * whose customer (platform mode): the merchant `named` (a query's `merchant_id`), required when the
 * kit serves several unless the operator's scope holds one, and within that scope (403 otherwise).
 */
export async function customerOrOperator(
  ctx: Context,
  deps: CustomerAuthDeps,
  customerId: string,
  permission: Permission,
  named?: number,
): Promise<{ caller: CustomerCaller; merchantId: number | null }> {
  if (ctx.get(CUSTOMER_TOKEN_HEADER) !== '' || bearerOf(ctx) === '') {
    const merchantId = requestMerchant(deps, null, named);
    requireCustomer(ctx, deps, customerId, merchantId);
    return { caller: { kind: 'customer', customerId }, merchantId };
  }
  const who = await deps.ops.require(ctx, permission);
  const merchantId = requestMerchant(deps, who, named);
  return { caller: { kind: 'operator', actor: actorOf(ctx, who) }, merchantId };
}
