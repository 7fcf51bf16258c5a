import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * Proof that the shop vouches for a customer (issue 21): the storefront's calls about a customer's
 * saved cards carry it, so nobody can list or pay with the cards of a customer id they merely know.
 * The shop's server asks for one (`POST /customers/{id}/tokens`, a storefront credential) for the
 * customer it has signed in and hands it to that customer's browser, as Stripe's ephemeral keys do.
 *
 * `ct1.<expiry, unix seconds>.<HMAC-SHA256 over the version, the customer id and the expiry>`.
 * Stateless: every process checks one with the key alone, and it lapses by itself.
 */
const VERSION = 'ct1';

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

  /**
   * `secret`: the kit's encryption key; the signing key is derived from it for this use alone.
   * `previous`: the keys it replaced (APP_ENCRYPTION_KEY_PREVIOUS): a token they signed, still live, still checks.
   */
  constructor(secret: Uint8Array, previous: readonly Uint8Array[] = []) {
    this.#key = signingKey(secret);
    this.#previous = previous.map(signingKey);
  }

  issue(customerId: string, now: number): { token: string; expiresAt: Date } {
    const expires = Math.floor((now + CUSTOMER_TOKEN_LIFETIME_MS) / 1000);
    return {
      token: `${VERSION}.${expires}.${this.#mac(customerId, expires).toString('base64url')}`,
      expiresAt: new Date(expires * 1000),
    };
  }

  /**
   * Whether `token` is this customer's and still live. Any other string (malformed, expired, another's,
   * or one that would last longer than the kit ever makes one last, from its own clock): false. A
   * signature is no reason to believe an expiry decades away: a token the kit made lapses within an hour.
   */
  verify(customerId: string, token: string, now: number): boolean {
    const [version, expiresText, mac] = token.split('.');
    if (version !== VERSION || !/^\d{1,12}$/.test(expiresText ?? '') || mac === undefined) return false;
    const expires = Number(expiresText);
    if (expires * 1000 <= now) return false;
    if (expires * 1000 > now + CUSTOMER_TOKEN_LIFETIME_MS + CUSTOMER_TOKEN_CLOCK_SKEW_MS) return false;
    const presented = Buffer.from(mac, 'base64url');
    return [this.#key, ...this.#previous].some((key) => {
      const expected = this.#mac(customerId, expires, key);
      return presented.length === expected.length && timingSafeEqual(presented, expected);
    });
  }

  #mac(customerId: string, expires: number, key = this.#key): Buffer {
    return createHmac('sha256', key).update(`${VERSION}\n${customerId}\n${expires}`).digest();
  }
}
