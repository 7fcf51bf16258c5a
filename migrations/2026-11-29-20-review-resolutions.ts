import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * What a person last decided about an order's review (issue 42, part 6): the resolution (`accepted`,
 * `refunded`, `corrected`, `written_off`, `false_alarm`), who and when, on the order itself, so the
 * reconciliation report shows it beside the order instead of reading an accepted difference as an open
 * `mismatched` forever. Orders resolved before this get theirs from the audit log, whose line for a
 * resolution (`review.resolve`) was written in the same transaction and starts its detail with it.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('orders', 'review_resolution', { type: DataTypes.STRING(16), allowNull: true });
  await q.addColumn('orders', 'review_resolved_by', { type: DataTypes.STRING(96), allowNull: true });
  await q.addColumn('orders', 'review_resolved_at', { type: DataTypes.DATE(3), allowNull: true });
  await q.sequelize.query(
    `UPDATE orders o
       JOIN (SELECT order_id, MAX(id) AS id FROM audit_log
              WHERE action = 'review.resolve' AND order_id IS NOT NULL GROUP BY order_id) last
         ON last.order_id = o.id
       JOIN audit_log a ON a.id = last.id
        SET o.review_resolution = SUBSTRING_INDEX(a.detail, ';', 1),
            o.review_resolved_by = LEFT(CONCAT(a.actor, ' (', a.role, ')'), 96),
            o.review_resolved_at = a.at
      WHERE SUBSTRING_INDEX(a.detail, ';', 1) IN ('accepted', 'refunded', 'corrected', 'written_off', 'false_alarm')`,
  );
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeColumn('orders', 'review_resolved_at');
  await q.removeColumn('orders', 'review_resolved_by');
  await q.removeColumn('orders', 'review_resolution');
}
