import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Operators with names and roles, the audit log, and the review queue (issue, parts 2 and 3).
 *
 * `operators`: one row per token handed out; only the token's SHA-256 is kept. `active_name` is the
 * name while the token is live and NULL once revoked: its unique key lets one live token per name
 * exist, and a revoked name be given a new token.
 *
 * `audit_log`: who did what (capture, refund, void, a review resolved, money attached or resolved, a
 * dispute lost, an operator added or revoked), appended in the transaction of the act where it can be.
 *
 * `orders.resolved_reasons`: the review reasons a person resolved, so the same finding seen again (the
 * next poll of a payment whose amount differs) does not flag the order anew. The index serves the
 * review queue, newest first.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  const when = (allowNull = false) => ({ type: DataTypes.DATE(3), allowNull });
  await q.createTable('operators', {
    id: { type: DataTypes.STRING(32), primaryKey: true },
    name: { type: DataTypes.STRING(64), allowNull: false },
    role: { type: DataTypes.STRING(16), allowNull: false },
    token_hash: { type: DataTypes.CHAR(64), allowNull: false, unique: true },
    active_name: { type: DataTypes.STRING(64), allowNull: true, unique: true },
    created_at: when(),
    created_by: { type: DataTypes.STRING(64), allowNull: false },
    revoked_at: when(true),
    revoked_by: { type: DataTypes.STRING(64), allowNull: true },
  });
  await q.createTable('audit_log', {
    id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
    at: when(),
    actor: { type: DataTypes.STRING(64), allowNull: false },
    role: { type: DataTypes.STRING(16), allowNull: false },
    /** `opr_...` (a named operator), `bootstrap`, `cli` or `system`. */
    credential: { type: DataTypes.STRING(32), allowNull: false },
    action: { type: DataTypes.STRING(32), allowNull: false },
    order_id: { type: DataTypes.STRING(32), allowNull: true },
    /** What the act was on: the operation, the unmatched money, the dispute, the operator. */
    subject_id: { type: DataTypes.STRING(64), allowNull: true },
    amount_minor: { type: DataTypes.BIGINT, allowNull: true },
    /** As wide as unmatched money's: the currency a gateway record said, whatever it was. */
    currency: { type: DataTypes.STRING(16), allowNull: true },
    /** The reason or note the person gave. */
    reason: { type: DataTypes.STRING(512), allowNull: true },
    detail: { type: DataTypes.STRING(512), allowNull: true },
    request_id: { type: DataTypes.STRING(128), allowNull: true },
  });
  await q.addIndex('audit_log', ['at'], { name: 'audit_log_at' });
  await q.addColumn('orders', 'resolved_reasons', { type: DataTypes.STRING(1024), allowNull: true });
  await q.addIndex('orders', ['needs_review', 'created_at', 'id'], { name: 'orders_review' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeIndex('orders', 'orders_review');
  await q.removeColumn('orders', 'resolved_reasons');
  await q.dropTable('audit_log');
  await q.dropTable('operators');
}
