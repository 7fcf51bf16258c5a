import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The merchant's first schema. No column can hold card data: the one exception, the 3DS hold, is
 * ciphertext (AES-256-GCM under APP_ENCRYPTION_KEY) with a 15-minute expiry, erased once used.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  const now = { type: DataTypes.DATE(3), allowNull: false };
  await q.createTable('orders', {
    id: { type: DataTypes.STRING(32), primaryKey: true },
    reference: { type: DataTypes.STRING(255), allowNull: false, unique: true },
    amount_minor: { type: DataTypes.BIGINT, allowNull: false },
    currency: { type: DataTypes.CHAR(3), allowNull: false },
    description: { type: DataTypes.STRING(1024), allowNull: true },
    customer: { type: DataTypes.JSON, allowNull: true },
    status: { type: DataTypes.STRING(32), allowNull: false },
    captured_minor: { type: DataTypes.BIGINT, allowNull: true },
    refunded_minor: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    failure_code: { type: DataTypes.STRING(64), allowNull: true },
    needs_review: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    review_reason: { type: DataTypes.STRING(512), allowNull: true },
    current_attempt_id: { type: DataTypes.STRING(32), allowNull: true },
    version: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    created_at: now,
    updated_at: now,
  });
  await q.addIndex('orders', ['status', 'updated_at']);

  await q.createTable('payment_attempts', {
    id: { type: DataTypes.STRING(32), primaryKey: true },
    order_id: { type: DataTypes.STRING(32), allowNull: false, references: { model: 'orders', key: 'id' } },
    kind: { type: DataTypes.STRING(16), allowNull: false },
    mode: { type: DataTypes.STRING(8), allowNull: true },
    payment_method: { type: DataTypes.STRING(64), allowNull: true },
    gateway_transaction_id: { type: DataTypes.STRING(64), allowNull: true, unique: true },
    payment_session_id: { type: DataTypes.STRING(64), allowNull: true, unique: true },
    verification_id: { type: DataTypes.STRING(64), allowNull: true, unique: true },
    status: { type: DataTypes.STRING(32), allowNull: false },
    captured_minor: { type: DataTypes.BIGINT, allowNull: true },
    refunded_minor: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    capture_id: { type: DataTypes.STRING(64), allowNull: true },
    failure_code: { type: DataTypes.STRING(64), allowNull: true },
    hold_sealed: { type: DataTypes.TEXT, allowNull: true },
    hold_expires_at: { type: DataTypes.DATE(3), allowNull: true },
    created_at: now,
    updated_at: now,
  });
  await q.addIndex('payment_attempts', ['order_id']);

  await q.createTable('gateway_operations', {
    id: { type: DataTypes.STRING(32), primaryKey: true },
    order_id: { type: DataTypes.STRING(32), allowNull: false, references: { model: 'orders', key: 'id' } },
    attempt_id: { type: DataTypes.STRING(32), allowNull: false },
    operation: { type: DataTypes.STRING(16), allowNull: false },
    /** Sent to the gateway as Idempotency-Key: stored before the call, reused on every retry. */
    idempotency_key: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    /** The operator's own Idempotency-Key, so their retry finds this row. */
    request_key: { type: DataTypes.STRING(255), allowNull: false },
    amount_minor: { type: DataTypes.BIGINT, allowNull: false },
    reason: { type: DataTypes.STRING(255), allowNull: true },
    status: { type: DataTypes.STRING(16), allowNull: false },
    result_transaction_id: { type: DataTypes.STRING(64), allowNull: true },
    error_code: { type: DataTypes.STRING(64), allowNull: true },
    error_message: { type: DataTypes.STRING(512), allowNull: true },
    created_at: now,
    updated_at: now,
  });
  await q.addIndex('gateway_operations', ['order_id', 'operation', 'request_key'], { unique: true, name: 'gateway_operations_request' });

  await q.createTable('order_history', {
    id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
    order_id: { type: DataTypes.STRING(32), allowNull: false, references: { model: 'orders', key: 'id' } },
    attempt_id: { type: DataTypes.STRING(32), allowNull: true },
    source: { type: DataTypes.STRING(16), allowNull: false },
    source_id: { type: DataTypes.STRING(128), allowNull: false },
    status_before: { type: DataTypes.STRING(32), allowNull: false },
    status_after: { type: DataTypes.STRING(32), allowNull: false },
    outcome: { type: DataTypes.STRING(16), allowNull: false },
    detail: { type: DataTypes.STRING(512), allowNull: true },
    created_at: now,
  });
  await q.addIndex('order_history', ['order_id', 'id']);

  await q.createTable('webhook_secrets', {
    id: { type: DataTypes.INTEGER, autoIncrement: true, primaryKey: true },
    secret_sealed: { type: DataTypes.TEXT, allowNull: false },
    label: { type: DataTypes.STRING(64), allowNull: false },
    active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    created_at: now,
    retired_at: { type: DataTypes.DATE(3), allowNull: true },
  });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  for (const table of ['webhook_secrets', 'order_history', 'gateway_operations', 'payment_attempts', 'orders']) {
    await q.dropTable(table);
  }
}
