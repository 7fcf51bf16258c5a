import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * An order's client secret (issue 41): the SHA-256 (base64url) of the secret `POST /orders` hands the
 * storefront once, never the secret itself. The shopper-facing routes compare a presented secret
 * against it. Orders made before this have none (NULL): only an operator's or the storefront's
 * credential reaches them; a shopper's request for one is a 404.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('orders', 'client_secret_hash', { type: DataTypes.CHAR(43), allowNull: true });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeColumn('orders', 'client_secret_hash');
}
