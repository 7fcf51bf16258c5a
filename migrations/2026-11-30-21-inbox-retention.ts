import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Ageing out (issue 43, part 5): `webhook_inbox.payload_cleared` says the retention job cleared the
 * event's body (its id is kept, for deduplication, as long as the gateway may deliver it again).
 * Indexed with `received_at`, so that each batch of the job finds the next bodies to clear, and the
 * ids to delete, without reading again those it cleared already.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('webhook_inbox', 'payload_cleared', {
    type: DataTypes.BOOLEAN,
    allowNull: false,
    defaultValue: false,
  });
  await q.addIndex('webhook_inbox', ['payload_cleared', 'received_at'], { name: 'webhook_inbox_retention' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeIndex('webhook_inbox', 'webhook_inbox_retention');
  await q.removeColumn('webhook_inbox', 'payload_cleared');
}
