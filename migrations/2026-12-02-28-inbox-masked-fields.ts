import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * A gateway event is never refused for what its numbers look like (issue 44, part 1): what reads as a
 * card number outside the gateway's ids is truncated before the event is kept, and
 * `webhook_inbox.masked_fields` says where (null: nowhere, most events), for the order's history.
 * Rows stored before held no card number: the receiver refused such events.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('webhook_inbox', 'masked_fields', { type: DataTypes.STRING(512), allowNull: true });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeColumn('webhook_inbox', 'masked_fields');
}
