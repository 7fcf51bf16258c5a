import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Payment links (issue 43, part 3): a link the shop sends a shopper pays its order through a hosted
 * checkout session of the link's method, opened on a visit. Only the SHA-256 of the link's token is
 * kept: a copy of the database opens no link. ORDER_TTL reads the latest expiry of an order's links
 * (`order_id, expires_at`): a live link keeps its order open.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.createTable('payment_links', {
    /** `plk_` and 24 letters and digits: what the history and the audit name, never the token. */
    id: { type: DataTypes.STRING(32), primaryKey: true },
    order_id: { type: DataTypes.STRING(32), allowNull: false },
    /** SHA-256 (base64url) of the link's token (`plt_...`), which is in the link's URL alone. */
    token_hash: { type: DataTypes.CHAR(43), allowNull: false, unique: true },
    payment_method: { type: DataTypes.STRING(64), allowNull: false },
    expires_at: { type: DataTypes.DATE(3), allowNull: false },
    created_at: { type: DataTypes.DATE(3), allowNull: false },
    /** Who made it, as the history names them: `name (role)`. */
    created_by: { type: DataTypes.STRING(96), allowNull: false },
  });
  await q.addIndex('payment_links', ['order_id', 'expires_at'], { name: 'payment_links_order_expiry' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.dropTable('payment_links');
}
