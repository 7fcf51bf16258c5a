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
