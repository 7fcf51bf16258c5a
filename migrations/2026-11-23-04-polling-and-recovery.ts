import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * merchant.md, Background work: the poller reads only what is due (`orders.next_poll_at`, indexed),
 * a session is polled right after it expires (`payment_attempts.session_expires_at`), and recovery
 * resumes from a stored checkpoint (`kit_checkpoints`). Orders the poller watches (open, or paid in
 * the last 30 days) with an attempt at the gateway are due at once, so an upgraded kit looks at them.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('orders', 'next_poll_at', { type: DataTypes.DATE(3), allowNull: true });
  await q.addIndex('orders', ['next_poll_at'], { name: 'orders_next_poll' });
  await q.addColumn('payment_attempts', 'session_expires_at', { type: DataTypes.DATE(3), allowNull: true });
  await q.createTable('kit_checkpoints', {
    name: { type: DataTypes.STRING(64), primaryKey: true },
    value: { type: DataTypes.STRING(64), allowNull: false },
    updated_at: { type: DataTypes.DATE(3), allowNull: false },
  });
  await q.sequelize.query(
    `UPDATE orders o JOIN payment_attempts a ON a.id = o.current_attempt_id
     SET o.next_poll_at = UTC_TIMESTAMP(3)
     WHERE (o.status IN ('pending', 'requires_action', 'authorized')
            OR (o.status IN ('paid', 'partially_refunded') AND o.updated_at > UTC_TIMESTAMP(3) - INTERVAL 30 DAY))
       AND (a.gateway_transaction_id IS NOT NULL OR a.payment_session_id IS NOT NULL)`,
  );
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.dropTable('kit_checkpoints');
  await q.removeColumn('payment_attempts', 'session_expires_at');
  await q.removeIndex('orders', 'orders_next_poll');
  await q.removeColumn('orders', 'next_poll_at');
}
