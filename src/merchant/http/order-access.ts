import type { Context } from 'koa';
import type { Gateways } from '../../client/merchant-gateways.js';
import { HttpError, invalid } from '../errors/http-error.js';
import { ORDER_SECRET_HEADER } from '../orders/client-secret.js';
import {
  type ChosenMerchant,
  chooseMerchant,
  listFilter,
  type MerchantFilter,
  withinScope,
} from '../orders/order-merchant.js';
import { OrderNotFound, type Store } from '../store/index.js';
import type { OrderRecord } from '../store/records.js';
import type { OpsAuth, Principal } from './ops-auth.js';

/**
 * Credentials scoped to merchants (issue 45, part 2), checked here and nowhere else: every route
 * that takes an order id with a credential reads the order through `orderFor` (or `checkOrderScope`
 * before a store call that reads it itself), every list filters by `listMerchants`, and every
 * request that names a merchant (`merchant_id`) is resolved by `requestMerchant`. An order of a
 * merchant outside the credential's scope is the same 404 as an unknown order's: the answer tells
 * the credential nothing of other merchants' orders, not even that one exists. Gateway money with no
 * order is its merchant's alike (`seesMerchant` on its `merchant_id`: unmatched-routes.ts).
 */
export interface ScopeDeps {
  store: Pick<Store, 'orders'>;
  /** The merchants the kit serves: an order naming none is the first's. */
  gateways: Pick<Gateways<unknown>, 'merchants'>;
}

/** Whether `who` (null: no credential, the order's secret shown) may see an order of this merchant. */
export function seesMerchant(
  deps: Pick<ScopeDeps, 'gateways'>,
  who: Principal | null,
  merchantId: number | null,
): boolean {
  return withinScope(who?.merchants ?? null, merchantId, deps.gateways.merchants);
}

/** The order of `id` as `who` may see it: OrderNotFound (404) for none, and for one outside its scope. */
export async function orderFor(deps: ScopeDeps, who: Principal | null, id: string): Promise<OrderRecord> {
  const order = await deps.store.orders.find(id);
  if (!order || !seesMerchant(deps, who, order.merchant_id)) throw new OrderNotFound(id);
  return order;
}

/**
 * Before a store call that reads the order itself (a cancel, a review resolved, a payment link): the
 * same 404 for an order outside `who`'s scope. An unscoped credential costs no read.
 */
export async function checkOrderScope(deps: ScopeDeps, who: Principal, id: string): Promise<void> {
  if (who.merchants) await orderFor(deps, who, id);
}

/** A chosen merchant as the answer: 422 naming the field, or 403 for one outside the scope. */
function answered<T>(
  chosen: T | { problem: string } | { outOfScope: string },
  field: string,
  who: Principal | null,
): T {
  if (chosen !== null && typeof chosen === 'object' && 'problem' in chosen)
    throw invalid({ [field]: [chosen.problem] });
  if (chosen !== null && typeof chosen === 'object' && 'outOfScope' in chosen)
    throw new HttpError(
      403,
      'FORBIDDEN',
      `This token may not act for this merchant: ${field} ${chosen.outOfScope}.`,
      {
        errors: { [field]: [chosen.outOfScope] },
        data: who ? { role: who.role, merchant_ids: [...(who.merchants ?? [])] } : null,
      },
    );
  return chosen as T;
}

/**
 * The merchant a request is for (`merchant_id` of POST /orders, of the customer routes, of a charge):
 * the one named, among those the kit serves and within `who`'s scope; left out, the kit's one
 * merchant, or the scope's one. 422 naming the field when it is required or not served; 403 naming
 * it when it is outside the scope. Null: the key's own account, its id unknown.
 */
export function requestMerchant(
  deps: Pick<ScopeDeps, 'gateways'>,
  who: Principal | null,
  named: number | undefined,
  field = 'merchant_id',
): number | null {
  const chosen: ChosenMerchant = chooseMerchant(deps.gateways.merchants, named, who?.merchants ?? null);
  return answered(chosen, field, who).merchantId;
}

/**
 * What a list shows `who` (GET /orders, the review queue, GET /disputes): the merchant the query
 * names, or every merchant of its scope; null: every order (an unscoped credential naming none).
 */
export function listMerchants(
  deps: Pick<ScopeDeps, 'gateways'>,
  who: Principal,
  named: number | undefined,
): MerchantFilter | null {
  return answered(listFilter(deps.gateways.merchants, named, who.merchants ?? null), 'merchant_id', who);
}

/**
 * Who may use an order's shopper-facing routes (its pay routes, its public view): issue 41, part 2.
 * The order id alone is no key: it is in URLs, logs, screenshots and the gateway's records. The
 * caller shows the order's client secret (the `Order-Secret` header, or `client_secret` in a pay
 * route's body), or a credential the kit knows (an operator's token of any role, the storefront's,
 * OPS_API_TOKEN), which stands in for it.
 *
 * An id no order has, no secret, a wrong one and an order made before secrets are one 404, the same
 * as an unknown order's: the answer tells a caller without the secret nothing, not even that the
 * order exists. A bearer token that is sent must be good: a wrong one is a 401, never a try without it.
 */
export interface OrderAccess {
  order: OrderRecord;
  /** The credential that stood in for the secret; null: the secret was shown. */
  who: Principal | null;
}

export async function shopperOrder(
  ctx: Context,
  deps: ScopeDeps & { ops: OpsAuth },
  bodySecret?: unknown,
): Promise<OrderAccess> {
  const id = ctx.params.id ?? '';
  if (ctx.get('Authorization') !== '') {
    const who = await deps.ops.known(ctx);
    // A credential scoped to other merchants stands in for no secret of this order: the same 404.
    return { order: await orderFor(deps, who, id), who };
  }
  const header = ctx.get(ORDER_SECRET_HEADER);
  const secret = header !== '' ? header : typeof bodySecret === 'string' ? bodySecret : undefined;
  const order = await deps.store.orders.findWithSecret(id, secret);
  if (!order) throw new OrderNotFound(id);
  return { order, who: null };
}
