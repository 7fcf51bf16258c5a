import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Saved cards (issue 21): the kit's own id for each payment instrument the gateway keeps for one of
 * the shop's customers. The storefront only ever sees `card_...`: the vault token stays here, sealed
 * (AES-256-GCM, bound to the row's id), found again by its SHA-256. No card number: brand, last four
 * and expiry, as the gateway's instrument record says them.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  const when = (allowNull = false) => ({ type: DataTypes.DATE(3), allowNull });
  await q.createTable('saved_cards', {
    id: { type: DataTypes.STRING(32), primaryKey: true },
    /** The shop's own id for the customer (`merchant_customer_id` at the gateway). */
    customer_id: { type: DataTypes.STRING(255), allowNull: false },
    token_hash: { type: DataTypes.CHAR(64), allowNull: false, unique: true },
    token_sealed: { type: DataTypes.STRING(512), allowNull: false },
    brand: { type: DataTypes.STRING(16), allowNull: false },
    last4: { type: DataTypes.CHAR(4), allowNull: false },
    exp_month: { type: DataTypes.TINYINT, allowNull: false },
    exp_year: { type: DataTypes.SMALLINT, allowNull: false },
    /** `active` or `revoked`. */
    status: { type: DataTypes.STRING(16), allowNull: false },
    /** The order whose payment saved it; null when the kit first heard of it from the gateway's list. */
    saved_by_order_id: { type: DataTypes.STRING(32), allowNull: true },
    created_at: when(),
    updated_at: when(),
    revoked_at: when(true),
    /** Who revoked it: the customer, an operator's name, or `gateway` (revoked there, seen in a list). */
    revoked_by: { type: DataTypes.STRING(64), allowNull: true },
  });
  await q.addIndex('saved_cards', ['customer_id', 'status', 'created_at'], { name: 'saved_cards_customer' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.dropTable('saved_cards');
}
