import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The reconciliation report shows, beside each order, what the gateway last said about its payment:
 * status and amounts of the attempt's transaction, with when and from which source it was observed.
 * Orders are read by the day they were created (`orders.created_at`, indexed).
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  const column = (type: DataTypes.DataType) => ({ type, allowNull: true });
  await q.addColumn('payment_attempts', 'gateway_status', column(DataTypes.STRING(32)));
  await q.addColumn('payment_attempts', 'gateway_amount_minor', column(DataTypes.BIGINT));
  await q.addColumn('payment_attempts', 'gateway_currency', column(DataTypes.CHAR(3)));
  await q.addColumn('payment_attempts', 'gateway_captured_minor', column(DataTypes.BIGINT));
  await q.addColumn('payment_attempts', 'gateway_refunded_minor', column(DataTypes.BIGINT));
  await q.addColumn('payment_attempts', 'observed_at', column(DataTypes.DATE(3)));
  await q.addColumn('payment_attempts', 'observed_source', column(DataTypes.STRING(16)));
  await q.addIndex('orders', ['created_at'], { name: 'orders_created' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeIndex('orders', 'orders_created');
  for (const name of [
    'observed_source',
    'observed_at',
    'gateway_refunded_minor',
    'gateway_captured_minor',
    'gateway_currency',
    'gateway_amount_minor',
    'gateway_status',
  ])
    await q.removeColumn('payment_attempts', name);
}
