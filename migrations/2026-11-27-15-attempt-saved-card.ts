import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The saved card an attempt pays with (`card_...`, the kit's own id, never card data). A charge's
 * Idempotency-Key holds the card and mode its first request named: the same key with another card
 * or mode is another charge, refused, not answered as this one.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('payment_attempts', 'saved_card_id', { type: DataTypes.STRING(32), allowNull: true });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeColumn('payment_attempts', 'saved_card_id');
}
