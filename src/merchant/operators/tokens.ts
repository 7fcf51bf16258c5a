import { createHash, timingSafeEqual } from 'node:crypto';
import type { RandomSource } from '../../shared/ids.js';

/**
 * An operator's token: `kop_` and 256 random bits (43 base64url characters). The prefix tells it
 * from the bootstrap OPS_API_TOKEN at a glance and lets a secret scanner find a leaked one. Only its
 * SHA-256 is stored: a token this random needs no salt or slow hash (nobody can guess 2^256), and a
 * copy of the database lets nobody in.
 */
export const TOKEN_PREFIX = 'kop_';
const TOKEN_SHAPE = /^kop_[A-Za-z0-9_-]{43}$/;

export function newOperatorToken(random: RandomSource): string {
  return TOKEN_PREFIX + Buffer.from(random(32)).toString('base64url');
}

/** Whether a presented bearer can be an operator's token at all (else it is not looked up). */
export const looksLikeOperatorToken = (token: string) => TOKEN_SHAPE.test(token);

/** What is stored and looked up: the hex SHA-256 of the whole token. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Two hex digests of equal length, compared in constant time. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
