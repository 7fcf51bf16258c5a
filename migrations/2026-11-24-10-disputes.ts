import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * issue 19, part 2: a dispute record per chargeback (amount, opened, closed, outcome), and the amount
 * a chargeback took on the attempt and its order, so the report can say what was earned after
 * chargebacks. Payments already disputed before this migration get their record and amount: all
 * that was captured and not refunded, what a chargeback takes by default (sandbox.md section 11).
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  const when = (allowNull = false) => ({ type: DataTypes.DATE(3), allowNull });
  const disputed = { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 };
  await q.addColumn('payment_attempts', 'disputed_minor', disputed);
  await q.addColumn('orders', 'disputed_minor', { ...disputed });
  await q.createTable('disputes', {
    id: { type: DataTypes.STRING(32), primaryKey: true },
    order_id: { type: DataTypes.STRING(32), allowNull: false },
    attempt_id: { type: DataTypes.STRING(32), allowNull: false },
    transaction_id: { type: DataTypes.STRING(64), allowNull: true },
    amount_minor: { type: DataTypes.BIGINT, allowNull: false },
    currency: { type: DataTypes.CHAR(3), allowNull: false },
    /** `open`, `won` (the gateway reversed the chargeback) or `lost` (an operator said so). */
    outcome: { type: DataTypes.STRING(8), allowNull: false, defaultValue: 'open' },
    /** The gateway's time of the chargeback (or of its reversal), else when the kit learned it. */
    opened_at: when(),
    closed_at: when(true),
    closed_by: { type: DataTypes.STRING(64), allowNull: true },
    note: { type: DataTypes.STRING(512), allowNull: true },
  });
  await q.addIndex('disputes', ['attempt_id', 'opened_at'], { name: 'disputes_attempt' });
  await q.addIndex('disputes', ['order_id', 'opened_at'], { name: 'disputes_order' });
  await q.addIndex('disputes', ['outcome', 'opened_at'], { name: 'disputes_outcome' });
  await q.sequelize.query(
    `UPDATE payment_attempts SET disputed_minor = GREATEST(COALESCE(captured_minor, 0) - refunded_minor, 0)
      WHERE status = 'disputed'`,
  );
  await q.sequelize.query(
    `UPDATE orders SET disputed_minor = GREATEST(COALESCE(captured_minor, 0) - refunded_minor, 0)
      WHERE status = 'disputed'`,
  );
  await q.sequelize.query(
    `INSERT INTO disputes (id, order_id, attempt_id, transaction_id, amount_minor, currency, outcome, opened_at)
     SELECT CONCAT('dsp_', SUBSTRING(a.id, 5)), a.order_id, a.id, a.gateway_transaction_id, a.disputed_minor,
            o.currency, 'open', COALESCE(a.money_at, a.updated_at)
       FROM payment_attempts a JOIN orders o ON o.id = a.order_id
      WHERE a.status = 'disputed'`,
  );
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.dropTable('disputes');
  await q.removeColumn('orders', 'disputed_minor');
  await q.removeColumn('payment_attempts', 'disputed_minor');
}
