import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * When the kit last had the gateway's list of a customer's saved cards (issue 41): within a short
 * window after it (SAVED_CARDS_SYNC_WINDOW_MS), `GET /customers/{id}/cards` answers from the kit's
 * own rows instead of asking the gateway again, and says as of when (`synced_at`).
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.createTable('saved_card_syncs', {
    /** The shop's own id for the customer, as `saved_cards.customer_id`. */
    customer_id: { type: DataTypes.STRING(255), primaryKey: true },
    /** When the kit asked the gateway for the list it last brought its rows in line with. */
    synced_at: { type: DataTypes.DATE(3), allowNull: false },
  });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.dropTable('saved_card_syncs');
}
