import { createHash, timingSafeEqual } from 'node:crypto';
import type { RandomSource } from '../../shared/ids.js';

/**
 * An order's client secret (issue 41, part 2), as a payment intent's: `POST /orders` hands it to the
 * storefront once, and the shopper-facing routes of the order (its pay routes, its public view) ask
 * for it beside the id, so an order id seen in a URL, a log or a screenshot lets nobody pay the order,
 * spend its failed-attempt cap or read it.
 *
 * `ocs_` and 256 random bits (43 base64url characters). Only its SHA-256 is stored: a secret this
 * random needs no salt or slow hash (nobody can guess 2^256), and a copy of the database holds no
 * secret that opens an order.
 */
export const CLIENT_SECRET_PREFIX = 'ocs_';

/** The header a shopper's request carries it in; the pay routes also take `client_secret` in the body. */
export const ORDER_SECRET_HEADER = 'Order-Secret';

export function newClientSecret(random: RandomSource): string {
  return CLIENT_SECRET_PREFIX + Buffer.from(random(32)).toString('base64url');
}

/**
 * What is stored: the SHA-256 of the whole secret, in base64url. Not hex: a run of 13 to 19 decimal
 * digits in a hex digest reads as a card number about once in 500 digests, and the kit's own check
 * that no table holds one would then find it.
 */
export function clientSecretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

/** Compared against when there is no order or no stored hash: every answer costs the same work. */
const NOTHING = clientSecretHash('');

/**
 * Whether `presented` is the secret whose hash is `stored`, compared in constant time. No secret
 * presented, an order made before secrets existed (`stored` null) and a wrong secret are all false.
 */
export function secretMatches(presented: string | undefined, stored: string | null): boolean {
  const given = createHash('sha256')
    .update(presented ?? '')
    .digest();
  const expected = Buffer.from(stored ?? NOTHING, 'base64url');
  const same = expected.length === given.length && timingSafeEqual(given, expected);
  return same && stored !== null && presented !== undefined && presented !== '';
}
