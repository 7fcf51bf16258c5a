import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Gateway money with no order per merchant (issue 45, platform mode): each row keeps the merchant
 * whose webhook endpoint the event that found it came to (the inbox row's `merchant_id`; recovery's,
 * the merchant whose events were listed), so a merchant's report, its credentials and the metrics
 * can tell whose money it is. NULL for rows kept before, and for a kit of one merchant: the first
 * merchant's (GATEWAY_MERCHANTS' first), as an order's and an inbox row's NULL is. Indexed with the
 * first sight: a merchant's report reads the money first seen in its range.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('unmatched_money', 'merchant_id', { type: DataTypes.INTEGER, allowNull: true });
  await q.addIndex('unmatched_money', ['merchant_id', 'first_seen_at'], { name: 'unmatched_money_merchant' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeIndex('unmatched_money', 'unmatched_money_merchant');
  await q.removeColumn('unmatched_money', 'merchant_id');
}
