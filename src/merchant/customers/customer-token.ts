import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * Proof that the shop vouches for a customer (issue 21): the storefront's calls about a customer's
 * saved cards carry it, so nobody can list or pay with the cards of a customer id they merely know.
 * The shop's server asks for one (`POST /customers/{id}/tokens`, a storefront credential) for the
 * customer it has signed in and hands it to that customer's browser, as Stripe's ephemeral keys do.
 *
 * Two kinds, neither stored: every process checks one with the key alone, and it lapses by itself.
 * - `ct1.<expiry, unix seconds>.<HMAC>`: lists and removes the customer's cards; it pays nothing.
 * - `ct2.<expiry>.<order id>.<credential>.<HMAC>`: also pays that one order with a saved card (issue
 *   41): the shop's server mints it for the order its signed-in customer is paying, so a token that
 *   leaks pays nothing else; the credential that vouched is named in the payment's audit line.
 * The HMAC (SHA-256) covers the version and every field with the customer id, and, in platform mode
 * (issue 45), the merchant whose customer it is: a customer id names a customer of one merchant, so
 * merchant A's token for `cus-1` is no token for merchant B's `cus-1`. The kit's first merchant is
 * signed as no merchant at all: a single shop's tokens are as they always were.
 */
const VERSION = 'ct1';
const FOR_ORDER = 'ct2';

/** What a good token lets its holder do: the cards alone, or also pay one order. */
export type CustomerGrant = { orderId: null } | { orderId: string; credential: string };

/** Order ids and credential ids as the kit makes them (`ord_...`, `opr_...`, `bootstrap`): no dot. */
const PART = /^[A-Za-z0-9_-]{1,64}$/;

/** An hour: a checkout's length, with room; a leaked one is worth little for long. */
export const CUSTOMER_TOKEN_LIFETIME_MS = 60 * 60 * 1000;

/**
 * How far the clocks of the kit's processes may disagree: a token made by a process a little ahead
 * of this one still checks. Beyond one lifetime and this, an expiry is none the kit gave.
 */
export const CUSTOMER_TOKEN_CLOCK_SKEW_MS = 60 * 1000;

const signingKey = (secret: Uint8Array) =>
  Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'kit customer tokens v1', 32));

export class CustomerTokens {
  readonly #key: Buffer;
  readonly #previous: readonly Buffer[];
  readonly #erasureKey: Buffer;

  /**
   * `secret`: the kit's encryption key; the signing key is derived from it for this use alone.
   * `previous`: the keys it replaced (APP_ENCRYPTION_KEY_PREVIOUS): a token they signed, still live, still checks.
   */
  constructor(secret: Uint8Array, previous: readonly Uint8Array[] = []) {
    this.#key = signingKey(secret);
    this.#previous = previous.map(signingKey);
    this.#erasureKey = Buffer.from(
      hkdfSync('sha256', secret, Buffer.alloc(0), 'kit customer erasure v1', 32),
    );
  }

  /**
   * How the records name a customer once erased (issue 43, part 4): `cer_` and an HMAC of their id,
   * under a key derived from the kit's for this use alone. The id is not in it and cannot be guessed
   * back from it without the key; the same id gives the same reference, so whoever holds an id can
   * ask whether that customer was erased (`cli customers erase` prints it). A new APP_ENCRYPTION_KEY
   * makes new references.
   */
  erasureReference(customerId: string, merchant: number | null = null): string {
    const named = merchant === null ? customerId : `${customerId}\nmerchant ${merchant}`;
    return `cer_${createHmac('sha256', this.#erasureKey).update(named).digest('hex').slice(0, 32)}`;
  }

  /**
   * A token for the customer's cards; with `order`, also for paying that order (and the credential
   * that vouched). `merchant`: whose customer, in platform mode (null: the kit's first, or its only).
   */
  issue(
    customerId: string,
    now: number,
    order?: { orderId: string; credential: string },
    merchant: number | null = null,
  ): { token: string; expiresAt: Date } {
    const expires = Math.floor((now + CUSTOMER_TOKEN_LIFETIME_MS) / 1000);
    if (order && !(PART.test(order.orderId) && PART.test(order.credential)))
      throw new Error('an order id or credential a token cannot carry');
    const fields = order
      ? [FOR_ORDER, String(expires), order.orderId, order.credential]
      : [VERSION, String(expires)];
    return {
      token: `${fields.join('.')}.${this.#mac(customerId, fields, merchant).toString('base64url')}`,
      expiresAt: new Date(expires * 1000),
    };
  }

  /**
   * Whether `token` is this customer's and still live. Any other string (malformed, expired, another's,
   * or one that would last longer than the kit ever makes one last, from its own clock): false. A
   * signature is no reason to believe an expiry decades away: a token the kit made lapses within an hour.
   */
  verify(customerId: string, token: string, now: number, merchant: number | null = null): boolean {
    return this.grant(customerId, token, now, merchant) !== null;
  }

  /**
   * What a live token of this customer's (of this merchant's, in platform mode) grants; null for any
   * other string (as `verify` is false for).
   */
  grant(
    customerId: string,
    token: string,
    now: number,
    merchant: number | null = null,
  ): CustomerGrant | null {
    const parts = token.split('.');
    const mac = parts.pop();
    const [version, expiresText] = parts;
    const shape =
      (version === VERSION && parts.length === 2) ||
      (version === FOR_ORDER && parts.length === 4 && parts.slice(2).every((p) => PART.test(p)));
    if (!shape || !/^\d{1,12}$/.test(expiresText ?? '') || mac === undefined) return null;
    const expires = Number(expiresText);
    if (expires * 1000 <= now) return null;
    if (expires * 1000 > now + CUSTOMER_TOKEN_LIFETIME_MS + CUSTOMER_TOKEN_CLOCK_SKEW_MS) return null;
    const presented = Buffer.from(mac, 'base64url');
    const good = [this.#key, ...this.#previous].some((key) => {
      const expected = this.#mac(customerId, parts, merchant, key);
      return presented.length === expected.length && timingSafeEqual(presented, expected);
    });
    if (!good) return null;
    return version === FOR_ORDER ? { orderId: parts[2]!, credential: parts[3]! } : { orderId: null };
  }

  /**
   * The HMAC over the customer id and the token's fields (the first two as ct1 always signed them),
   * and the merchant when one is named.
   */
  #mac(customerId: string, fields: readonly string[], merchant: number | null, key = this.#key): Buffer {
    const [version, expires, ...rest] = fields;
    const whose = merchant === null ? [] : [`merchant ${merchant}`];
    return createHmac('sha256', key)
      .update([version, customerId, expires, ...rest, ...whose].join('\n'))
      .digest();
  }
}
