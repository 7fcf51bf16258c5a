import type { Context } from 'koa';
import type { Clock } from '../../shared/clock.js';
import type { CustomerTokens } from '../customers/customer-token.js';
import { HttpError } from '../errors/http-error.js';
import type { Actor, Permission } from '../operators/roles.js';
import { actorOf, bearerOf, type OpsAuth } from './ops-auth.js';

/** The header a customer's browser sends its token in (POST /customers/{id}/tokens hands it out). */
export const CUSTOMER_TOKEN_HEADER = 'Customer-Token';

/** Who asked about a customer's cards: the customer (their token), or an operator (their bearer). */
export type CustomerCaller = { kind: 'customer'; customerId: string } | { kind: 'operator'; actor: Actor };

export interface CustomerAuthDeps {
  customerTokens: CustomerTokens;
  clock: Clock;
  ops: OpsAuth;
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
 * The customer's own request: their token must be good for this customer id. Another customer's
 * token, an expired one and a forged one are refused alike (401): which of them it was helps nobody
 * but someone trying tokens.
 */
export function requireCustomer(ctx: Context, deps: CustomerAuthDeps, customerId: string): void {
  const token = ctx.get(CUSTOMER_TOKEN_HEADER);
  if (token === '') throw needsToken();
  if (!deps.customerTokens.verify(customerId, token, deps.clock.now())) throw badToken();
}

/**
 * The customer (with their token) or an operator whose role holds `permission` (with their bearer):
 * a customer token is checked when one is sent; otherwise the operator's bearer; neither, 401.
 */
export async function customerOrOperator(
  ctx: Context,
  deps: CustomerAuthDeps,
  customerId: string,
  permission: Permission,
): Promise<CustomerCaller> {
  if (ctx.get(CUSTOMER_TOKEN_HEADER) !== '' || bearerOf(ctx) === '') {
    requireCustomer(ctx, deps, customerId);
    return { kind: 'customer', customerId };
  }
  const who = await deps.ops.require(ctx, permission);
  return { kind: 'operator', actor: actorOf(ctx, who) };
}
