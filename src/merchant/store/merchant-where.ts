import { Op, type WhereOptions } from 'sequelize';
import type { MerchantFilter } from '../orders/order-merchant.js';

/**
 * A merchant filter (orders/order-merchant.ts) as a Sequelize condition on a `merchant_id` column:
 * its ids, and the rows that name no merchant (the kit's first merchant's) when `unnamed`. A filter
 * of nothing matches nothing.
 */
export function merchantWhere(filter: MerchantFilter): WhereOptions {
  const any: WhereOptions[] = [];
  if (filter.ids.length > 0) any.push({ merchant_id: { [Op.in]: [...filter.ids] } });
  if (filter.unnamed) any.push({ merchant_id: null });
  return any.length === 0 ? { merchant_id: { [Op.in]: [] } } : { [Op.or]: any };
}

/**
 * The same as SQL text for a raw query (`column`: a qualified column name). The ids are whole
 * numbers, checked here, so they stand in the text as they are.
 */
export function merchantSql(filter: MerchantFilter, column: string): string {
  if (!filter.ids.every((id) => Number.isSafeInteger(id))) throw new Error('a merchant id is a whole number');
  const any: string[] = [];
  if (filter.ids.length > 0) any.push(`${column} IN (${filter.ids.join(', ')})`);
  if (filter.unnamed) any.push(`${column} IS NULL`);
  return any.length === 0 ? 'FALSE' : `(${any.join(' OR ')})`;
}
