import { createHash } from 'node:crypto';

/*
 * POST /orders made once (issue 43, part 1): an `Idempotency-Key` names one order for 24 hours. Pure:
 * whose key it is, how a key and a request are kept (digests), and when a key is free again. The
 * store (store/order-requests.ts) keeps them; the route (http/create-order.ts) answers.
 */

/** How long a key names its order: as the gateway keeps its own keys (gateway-api.md, Idempotency contract, rule 1). */
export const ORDER_KEY_WINDOW_MS = 24 * 60 * 60_000;

/**
 * The scope of the keys of callers without a credential. One scope for all of them: a browser's
 * retry may come from another address (a phone between networks), so the address cannot tell one
 * anonymous caller from another; the key itself must (KEY_MIN_ANONYMOUS).
 */
export const ANONYMOUS_SCOPE = 'anonymous';

/**
 * Without a credential a key is shared with every anonymous caller, and whoever sends it again with
 * the same body is answered the order and its client secret: it must be a secret, such as a UUID
 * (36 characters) or 128 random bits. Length is all the kit can check.
 */
export const KEY_MIN_ANONYMOUS = 16;

/**
 * Whose keys a request's key is among: the credential that sent it (an operator's id, `opr_...`, or
 * `bootstrap` for OPS_API_TOKEN), or every caller without one. Two storefront credentials never
 * answer each other's orders, and a new token (a rotation) starts with no keys.
 */
export function keyScope(credential: string | null): string {
  return credential ?? ANONYMOUS_SCOPE;
}

/** What is wrong with a key in its scope, or null. Any text is a key; it is kept only as a digest. */
export function keyProblem(scope: string, key: string): string | null {
  if (scope === ANONYMOUS_SCOPE && key.length < KEY_MIN_ANONYMOUS)
    return `must be at least ${KEY_MIN_ANONYMOUS} characters without a token (Authorization: Bearer): every caller without one shares the keys, so use a random one, such as a UUID`;
  return null;
}

const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

/**
 * The key as the table keeps it: the SHA-256 of its scope and the key (base64url, 43 characters). The
 * key itself is never stored: it is the caller's free text, which may hold anything (even a card
 * number's digits), and only a caller who knows it can find its row.
 */
export function keyDigest(scope: string, key: string): string {
  // As a JSON pair: no scope and key run into another pair's.
  return digest(JSON.stringify([scope, key]));
}

/** An order's request as POST /orders parsed it: what "the same body" compares. */
export interface OrderRequestBody {
  amountMinor: number;
  currency: string;
  reference?: string | null;
  description?: string | null;
  customer?: Record<string, unknown> | null;
  /** The merchant as the body named it (platform mode); not named: the kit's one merchant. */
  namedMerchant?: number;
}

/**
 * The request's digest: the order it asks for, not the bytes that asked. `"12.5"` and `12.50` are one
 * amount; the order of a customer's fields, a field sent as null or left out, are the same request.
 * Another amount, currency, reference, description or customer field is another request.
 */
export function requestDigest(body: OrderRequestBody): string {
  return digest(
    canonical({
      amount_minor: body.amountMinor,
      currency: body.currency,
      reference: body.reference ?? null,
      description: body.description ?? null,
      customer: body.customer ?? null,
      merchant_id: body.namedMerchant ?? null,
    }),
  );
}

/** JSON with every object's keys sorted and null-valued or absent fields alike (left out). */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const fields = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== null && v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`);
    return `{${fields.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** When a key stored at `createdAt` is free again. */
export const keyExpiresAt = (createdAt: Date): Date => new Date(createdAt.getTime() + ORDER_KEY_WINDOW_MS);

/** Whether a key that expires at `expiresAt` still names its order at `now`. */
export const keyLive = (expiresAt: Date, now: number): boolean => expiresAt.getTime() > now;

/** The AAD the order's client secret is sealed under beside its key: it opens for that order alone. */
export const sealedSecretAad = (orderId: string) => `order-secret:${orderId}`;
