import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Orders that end (issue 43, part 2): why (`cancelled`, `expired`) and when. The ORDER_TTL job reads
 * the unpaid orders by status and age: (status, created_at) lets it skip the paid ones, which are
 * most, without reading them.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('orders', 'closed_reason', { type: DataTypes.STRING(16), allowNull: true });
  await q.addColumn('orders', 'closed_at', { type: DataTypes.DATE(3), allowNull: true });
  await q.addIndex('orders', ['status', 'created_at'], { name: 'orders_status_created' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeIndex('orders', 'orders_status_created');
  await q.removeColumn('orders', 'closed_at');
  await q.removeColumn('orders', 'closed_reason');
}
