import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Orders belong to a merchant (issue 45, platform mode): the gateway merchant a partner key acts for
 * when it asks about the order. NULL for an order made before, or by a merchant key whose id the
 * gateway did not say: such an order is the kit's first merchant's (GATEWAY_MERCHANTS). Indexed with
 * the creation time: the report, the lists and the review queue read one merchant's orders.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('orders', 'merchant_id', { type: DataTypes.INTEGER, allowNull: true });
  await q.addIndex('orders', ['merchant_id', 'created_at'], { name: 'orders_merchant' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeIndex('orders', 'orders_merchant');
  await q.removeColumn('orders', 'merchant_id');
}
