import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Webhooks per merchant (issue 45, platform mode): each merchant the kit acts for has its own endpoint
 * at the gateway, so its own signing secrets, and each event the receiver keeps is the merchant's whose
 * endpoint it came to. `webhook_secrets.merchant_id` and `webhook_inbox.merchant_id` say whose; NULL
 * for the rows stored before: a kit of one merchant's, which are the first merchant's (as an order's
 * NULL is: GATEWAY_MERCHANTS' first) should the kit act for several later.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('webhook_secrets', 'merchant_id', { type: DataTypes.INTEGER, allowNull: true });
  await q.addColumn('webhook_inbox', 'merchant_id', { type: DataTypes.INTEGER, allowNull: true });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeColumn('webhook_inbox', 'merchant_id');
  await q.removeColumn('webhook_secrets', 'merchant_id');
}
