import type { CardInput, CustomerInput } from '../../client/gateway-client.js';
import type { SecretBox } from '../../shared/secret-box.js';

/** merchant.md, Card data: what a payment still needs after a 3DS challenge, held at most this long. */
export const HOLD_LIFETIME_MS = 15 * 60 * 1000;

export interface CardHold {
  card: CardInput;
  mode: 'sale' | 'auth';
  customer?: CustomerInput;
  browserIp?: string;
  /** Save the card for this customer when the payment is approved (the customer consented). */
  saveFor?: string;
}

/** Sealed to one attempt (AAD), so a hold cannot be replayed against another. */
export function sealHold(box: SecretBox, attemptId: string, hold: CardHold): string {
  return box.seal(JSON.stringify(hold), `hold:${attemptId}`);
}

export function openHold(box: SecretBox, attemptId: string, sealed: string): CardHold {
  return JSON.parse(box.open(sealed, `hold:${attemptId}`)) as CardHold;
}

/**
 * A hold without what it kept of the customer (issue 43, part 4: they were erased while the challenge
 * was open): the card and the mode still pay, money wins; the customer's details, the device address
 * and the consent to keep the card for them are gone, so nothing of theirs is sent or saved after.
 */
export function withoutCustomer(hold: CardHold): CardHold {
  return { card: hold.card, mode: hold.mode };
}
