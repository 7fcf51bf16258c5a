import type { QueryInterface } from 'sequelize';

/**
 * An operator's Idempotency-Key is kept as its SHA-256 (hex), not as sent: the key is the caller's
 * free text, so kept whole it could hold a card number, and refusing such keys refused one random
 * hex key in about 1,400.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.sequelize.query('UPDATE gateway_operations SET request_key = SHA2(request_key, 256)');
}

export async function down(): Promise<void> {
  throw new Error('2026-11-27-16-operation-key-digests cannot be undone: the keys it kept are digests');
}
