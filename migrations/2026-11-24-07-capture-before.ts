import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * sandbox.md section 11: an auth lapses unless captured or voided by its `capture_before`. The
 * attempt keeps the deadline its gateway record carries, indexed: the authorisations job reads the
 * authorized orders whose deadline comes soon.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('payment_attempts', 'capture_before', { type: DataTypes.DATE(3), allowNull: true });
  await q.addIndex('payment_attempts', ['capture_before'], { name: 'payment_attempts_capture_before' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeIndex('payment_attempts', 'payment_attempts_capture_before');
  await q.removeColumn('payment_attempts', 'capture_before');
}
