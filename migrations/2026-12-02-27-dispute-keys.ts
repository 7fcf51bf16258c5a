import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Dispute records keyed by what the gateway says (issue 44, part 3): a chargeback is its attempt's
 * payment and the gateway's time of it (`charged_back_at`, unique per attempt), and the reversals the
 * gateway announced are kept by their time (`dispute_reversals`), apart from the records, since one
 * may arrive before the chargeback it ends (src/merchant/orders/disputes.ts).
 *
 * Rows from before: `opened_at` is already the chargeback's record's `updated_at` wherever that record
 * had one (the apply path and migration 10 dated it so), so it becomes the key; should two records of
 * an attempt share it, the later ones are left without a key (as a session's chargeback is). A record
 * the gateway closed `won` gives its `closed_at`, a time at which the payment was no longer charged
 * back, as a reversal heard of: a record of an earlier chargeback heard later closes at the earliest.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('disputes', 'charged_back_at', { type: DataTypes.DATE(3), allowNull: true });
  await q.sequelize.query('UPDATE disputes SET charged_back_at = opened_at');
  await q.sequelize.query(
    `UPDATE disputes d JOIN (
        SELECT attempt_id, charged_back_at, MIN(id) AS first FROM disputes
         GROUP BY attempt_id, charged_back_at HAVING COUNT(*) > 1
      ) shared ON shared.attempt_id = d.attempt_id AND shared.charged_back_at = d.charged_back_at
       SET d.charged_back_at = NULL
     WHERE d.id <> shared.first`,
  );
  await q.addIndex('disputes', ['attempt_id', 'charged_back_at'], {
    name: 'disputes_chargeback',
    unique: true,
  });
  await q.createTable('dispute_reversals', {
    attempt_id: { type: DataTypes.STRING(32), allowNull: false, primaryKey: true },
    /** The gateway's time of the reversal (the record's `updated_at`). */
    reversed_at: { type: DataTypes.DATE(3), allowNull: false, primaryKey: true },
    /** The order writer reads an order's reversals with the order it locks. */
    order_id: { type: DataTypes.STRING(32), allowNull: false },
  });
  await q.addIndex('dispute_reversals', ['order_id'], { name: 'dispute_reversals_order' });
  await q.sequelize.query(
    `INSERT INTO dispute_reversals (attempt_id, reversed_at, order_id)
     SELECT attempt_id, closed_at, MIN(order_id) FROM disputes
      WHERE outcome = 'won' AND closed_by = 'gateway' AND closed_at IS NOT NULL
      GROUP BY attempt_id, closed_at`,
  );
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.dropTable('dispute_reversals');
  await q.removeIndex('disputes', 'disputes_chargeback');
  await q.removeColumn('disputes', 'charged_back_at');
}
