import type { Context } from 'koa';
import { ORDER_SECRET_HEADER } from '../orders/client-secret.js';
import { OrderNotFound, type Store } from '../store/index.js';
import type { OrderRecord } from '../store/records.js';
import type { OpsAuth, Principal } from './ops-auth.js';

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
  deps: { store: Pick<Store, 'orders'>; ops: OpsAuth },
  bodySecret?: unknown,
): Promise<OrderAccess> {
  const id = ctx.params.id ?? '';
  if (ctx.get('Authorization') !== '') {
    const who = await deps.ops.known(ctx);
    const order = await deps.store.orders.find(id);
    if (!order) throw new OrderNotFound(id);
    return { order, who };
  }
  const header = ctx.get(ORDER_SECRET_HEADER);
  const secret = header !== '' ? header : typeof bodySecret === 'string' ? bodySecret : undefined;
  const order = await deps.store.orders.findWithSecret(id, secret);
  if (!order) throw new OrderNotFound(id);
  return { order, who: null };
}
