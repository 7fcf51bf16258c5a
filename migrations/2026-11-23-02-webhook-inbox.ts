import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The durable inbox (merchant.md, The receiver): one row per gateway event id, stored before the
 * receiver answers 200. The payload carries no card data (gateway-api.md, Webhook event record).
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.createTable('webhook_inbox', {
    event_id: { type: DataTypes.STRING(64), primaryKey: true },
    event_type: { type: DataTypes.STRING(64), allowNull: false },
    transaction_id: { type: DataTypes.STRING(64), allowNull: true },
    source: { type: DataTypes.STRING(16), allowNull: false },
    payload: { type: DataTypes.TEXT('medium'), allowNull: false },
    received_at: { type: DataTypes.DATE(3), allowNull: false },
    queued_at: { type: DataTypes.DATE(3), allowNull: true },
    processed_at: { type: DataTypes.DATE(3), allowNull: true },
    outcome: { type: DataTypes.STRING(16), allowNull: true },
    attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    last_error: { type: DataTypes.STRING(512), allowNull: true },
  });
  await q.addIndex('webhook_inbox', ['processed_at', 'received_at'], { name: 'webhook_inbox_pending' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.dropTable('webhook_inbox');
}
