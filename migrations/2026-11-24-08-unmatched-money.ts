import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * issue 19, part 1: money the gateway reports that no attempt of the kit holds is kept, one row per
 * gateway transaction, not only as a failed job. `reference` is '' when the record carries none, so
 * (transaction_id, reference) can be the unique key (a unique index lets NULLs repeat): a gateway that
 * numbers again gives another payment the same id, and its reference tells the two apart.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  const when = (allowNull = false) => ({ type: DataTypes.DATE(3), allowNull });
  await q.createTable('unmatched_money', {
    id: { type: DataTypes.STRING(32), primaryKey: true },
    transaction_id: { type: DataTypes.STRING(64), allowNull: false },
    reference: { type: DataTypes.STRING(255), allowNull: false, defaultValue: '' },
    related_transaction_id: { type: DataTypes.STRING(64), allowNull: true },
    transaction_type: { type: DataTypes.STRING(32), allowNull: false },
    status: { type: DataTypes.STRING(32), allowNull: false },
    status_reason: { type: DataTypes.STRING(64), allowNull: true },
    amount_minor: { type: DataTypes.BIGINT, allowNull: false },
    refunded_minor: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    currency: { type: DataTypes.STRING(16), allowNull: false },
    capture_before: when(true),
    /** The last observation's source and its id (an event id): what told the kit last. */
    source: { type: DataTypes.STRING(16), allowNull: false },
    source_id: { type: DataTypes.STRING(128), allowNull: false },
    first_seen_at: when(),
    last_seen_at: when(),
    seen_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
    /** The order whose reference it carries; once attached, the order it was attached to. */
    order_id: { type: DataTypes.STRING(32), allowNull: true },
    /** `open`, `attached` or `resolved`. */
    resolution: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'open' },
    resolved_note: { type: DataTypes.STRING(512), allowNull: true },
    resolved_by: { type: DataTypes.STRING(64), allowNull: true },
    resolved_at: when(true),
  });
  await q.addIndex('unmatched_money', ['transaction_id', 'reference'], {
    unique: true,
    name: 'unmatched_money_transaction',
  });
  await q.addIndex('unmatched_money', ['first_seen_at'], { name: 'unmatched_money_first_seen' });
  await q.addIndex('unmatched_money', ['resolution', 'first_seen_at'], { name: 'unmatched_money_resolution' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.dropTable('unmatched_money');
}
