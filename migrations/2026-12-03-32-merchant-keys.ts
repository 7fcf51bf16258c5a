import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * A linked merchant's own gateway key (issue 45, platform mode), stored by `merchant-key set` beside
 * GATEWAY_MERCHANT_KEYS: sealed under APP_ENCRYPTION_KEY, bound to its merchant (AAD
 * `merchant-key:<id>`), so the column never holds a key in clear and a sealed key moved to another
 * merchant's row does not open. One a merchant: a new one replaces the row.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.createTable('merchant_keys', {
    merchant_id: { type: DataTypes.INTEGER, primaryKey: true },
    key_sealed: { type: DataTypes.STRING(512), allowNull: false },
    created_at: { type: DataTypes.DATE(3), allowNull: false },
    updated_at: { type: DataTypes.DATE(3), allowNull: false },
  });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.dropTable('merchant_keys');
}
