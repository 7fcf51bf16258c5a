import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The page an attempt waits on the shopper at: the 3DS challenge page or the hosted checkout page, as
 * the gateway named it. Kept so that `GET /orders/{id}` can say where to send a shopper who comes back
 * (`next_action`), not only the payment's own answer. A gateway page, not card data.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('payment_attempts', 'action_url', { type: DataTypes.STRING(2048), allowNull: true });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeColumn('payment_attempts', 'action_url');
}
