import { Op, type WhereOptions } from 'sequelize';
import type { MerchantFilter } from '../orders/order-merchant.js';

/**
 * One merchant's orders as a condition on `orders` (issue 45): its id, or also no id at all when it is
 * the kit's first merchant (orders made before platform mode). MariaDB reads either through the
 * index on (merchant_id, created_at).
 */
export function merchantWhere(filter: MerchantFilter): WhereOptions {
  return filter.withUnnamed
    ? { [Op.or]: [{ merchant_id: filter.merchantId }, { merchant_id: null }] }
    : { merchant_id: filter.merchantId };
}

/** The same as SQL, for a subquery over `orders` (the audit's lines about one merchant's orders). */
export function merchantSql(filter: MerchantFilter): string {
  // An integer checked by the route's schema: written as a number, never as text from a request.
  const id = Number(filter.merchantId);
  if (!Number.isSafeInteger(id)) throw new Error(`not a merchant id: ${filter.merchantId}`);
  return filter.withUnnamed ? `(merchant_id = ${id} OR merchant_id IS NULL)` : `merchant_id = ${id}`;
}
