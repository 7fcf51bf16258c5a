import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The receiver stores events in batches (one multi-row INSERT for the requests of a few
 * milliseconds): `receipt` names the batch that stored a row, so a batch tells the events it stored
 * from those already there; `repeats` counts the deliveries of an event after the first.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('webhook_inbox', 'receipt', { type: DataTypes.CHAR(16), allowNull: true });
  await q.addColumn('webhook_inbox', 'repeats', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeColumn('webhook_inbox', 'repeats');
  await q.removeColumn('webhook_inbox', 'receipt');
}
