import type { QueryInterface } from 'sequelize';

/**
 * A gateway transaction id is an attempt's pointer, not a key: a gateway that numbers again (a sandbox
 * started afresh) may give a new payment an id an old attempt still holds. The unique index made
 * recording that payment fail after the money moved; the order's reference tells the two apart.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeIndex('payment_attempts', 'gateway_transaction_id');
  await q.addIndex('payment_attempts', ['gateway_transaction_id'], { name: 'payment_attempts_transaction' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeIndex('payment_attempts', 'payment_attempts_transaction');
  await q.addIndex('payment_attempts', ['gateway_transaction_id'], {
    unique: true,
    name: 'gateway_transaction_id',
  });
}
