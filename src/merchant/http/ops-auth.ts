import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { HttpError } from './errors.js';

/** Compared in constant time, as digests, so that neither content nor length leaks. */
export function sameSecret(presented: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

const bearerOf = (ctx: Context) => /^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization'))?.[1] ?? '';

/** The operator and finance endpoints: `Authorization: Bearer <OPS_API_TOKEN>`. */
export function authorizeOperator(ctx: Context, token: string): void {
  if (!sameSecret(bearerOf(ctx), token))
    throw new HttpError(
      401,
      'UNAUTHORIZED',
      'Operator endpoints need Authorization: Bearer <OPS_API_TOKEN>.',
    );
}

/** The browser's way into the operator pages: a cookie set by POST /ops/login, good this long. */
export const OPS_SESSION_MS = 30 * 60_000;
export const OPS_SESSION_COOKIE = 'kit_ops';

/**
 * `<expiry ms>.<HMAC of it>`, under a key derived from the token: nothing to store, it ends by
 * itself, and a new token ends every session.
 */
export function opsSession(token: string, now: number): string {
  const until = String(now + OPS_SESSION_MS);
  return `${until}.${sessionMac(token, until)}`;
}

export function validOpsSession(value: string | undefined, token: string, now: number): boolean {
  const [until, mac, ...rest] = (value ?? '').split('.');
  if (!until || !mac || rest.length > 0 || !/^\d+$/.test(until) || Number(until) <= now) return false;
  return sameSecret(mac, sessionMac(token, until));
}

function sessionMac(token: string, until: string): string {
  const key = createHash('sha256').update(`ops-session:${token}`).digest();
  return createHmac('sha256', key).update(until).digest('base64url');
}

/** The operator pages (the queue board): the bearer token, or the session cookie of POST /ops/login. */
export function authorizeOpsPage(ctx: Context, token: string, now: number): boolean {
  return sameSecret(bearerOf(ctx), token) || validOpsSession(ctx.cookies.get(OPS_SESSION_COOKIE), token, now);
}
