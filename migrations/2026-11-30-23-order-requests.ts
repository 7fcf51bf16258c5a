import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * POST /orders made once (issue 43, part 1): each `Idempotency-Key` a caller sent, for 24 hours, with
 * the order it made. The row and its order are inserted in one transaction, so a key is never kept
 * without its order, nor an order made under a key without it. The key and the request are kept as
 * digests; the order's client secret sealed (AES-256-GCM, bound to the order), since the same
 * request again is answered with it. The `idempotency-keys` job deletes the rows past their day.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.createTable('order_requests', {
    /** SHA-256 (base64url) of the caller's scope and the key: the key as sent is kept nowhere. */
    key_digest: { type: DataTypes.CHAR(43), primaryKey: true },
    /** Whose keys: the credential's id (`opr_...`, `bootstrap`) or `anonymous`. */
    scope: { type: DataTypes.STRING(32), allowNull: false },
    /** SHA-256 (base64url) of the order the request asked for: the same key with another is refused. */
    request_digest: { type: DataTypes.CHAR(43), allowNull: false },
    order_id: { type: DataTypes.STRING(32), allowNull: false },
    /** The order's client secret, sealed under APP_ENCRYPTION_KEY (AAD `order-secret:<order id>`). */
    client_secret_sealed: { type: DataTypes.STRING(255), allowNull: false },
    created_at: { type: DataTypes.DATE(3), allowNull: false },
    expires_at: { type: DataTypes.DATE(3), allowNull: false },
  });
  await q.addIndex('order_requests', ['expires_at'], { name: 'order_requests_expiry' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.dropTable('order_requests');
}
