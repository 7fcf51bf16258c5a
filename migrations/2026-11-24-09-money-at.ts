import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * A chargeback can be reversed (sandbox.md section 11): the attempt keeps the gateway's time of the
 * latest record seen once money moved, so a captured record after a chargeback reads as its reversal
 * and one before it as old news, whatever order they arrive in.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('payment_attempts', 'money_at', { type: DataTypes.DATE(3), allowNull: true });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeColumn('payment_attempts', 'money_at');
}
