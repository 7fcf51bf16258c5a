import { cardBrand, hasCardNumber } from '../../shared/card-numbers.js';

/**
 * A saved card as the kit shows and checks it (issue 21): pure, no I/O. The kit never holds a card
 * number past the request that carries it; what it keeps is what the gateway's instrument record says
 * (sandbox.md section 11): brand, last four, expiry.
 */

/** What a card in hand says of itself, kept when the gateway saves it: never the number. */
export interface CardFacts {
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
}

export function factsOf(card: { number: string; exp_month: number | string; exp_year: number | string }) {
  return {
    brand: cardBrand(card.number),
    last4: card.number.slice(-4),
    expMonth: Number(card.exp_month),
    expYear: Number(card.exp_year),
  } satisfies CardFacts;
}

/** A card is good through the last moment of its expiry month (UTC), as card networks count it. */
export function cardExpired(card: { exp_month: number; exp_year: number }, now: number): boolean {
  return now >= Date.UTC(card.exp_year, card.exp_month, 1);
}

/** What the customer is told of a saved card that cannot pay, whoever found it out (the kit or the gateway). */
export const CARD_REFUSALS = {
  CARD_REVOKED: 'This saved card was removed. Pay with another card.',
  CARD_EXPIRED: 'This saved card has expired. Pay with another card.',
} as const;
export type CardRefusalCode = keyof typeof CARD_REFUSALS;

/** Why a saved card cannot pay now (removed, or past its expiry month); null when it can. */
export function cardRefusal(
  card: { status: string; exp_month: number; exp_year: number },
  now: number,
): { code: CardRefusalCode; message: string; field: string } | null {
  if (card.status !== 'active')
    return {
      code: 'CARD_REVOKED',
      message: CARD_REFUSALS.CARD_REVOKED,
      field: 'was removed: it can no longer pay',
    };
  if (cardExpired(card, now))
    return {
      code: 'CARD_EXPIRED',
      message: CARD_REFUSALS.CARD_EXPIRED,
      field: `expired at the end of ${String(card.exp_month).padStart(2, '0')}/${card.exp_year}`,
    };
  return null;
}

/** "visa •••• 4242, 12/2030": how a history line and the demo shop name a card. */
export function cardLabel(card: { brand: string; last4: string; exp_month: number; exp_year: number }) {
  return `${card.brand} •••• ${card.last4}, ${String(card.exp_month).padStart(2, '0')}/${card.exp_year}`;
}

/**
 * The shop's id for a customer (`merchant_customer_id`): kept, logged and sent to the gateway, so it
 * is plain printable text of at most 255 characters, and not a card number (as an order's customer
 * is refused one). Null: a good id; else what is wrong.
 */
export function customerIdProblem(id: string): string | null {
  if (id.length === 0 || id.length > 255) return 'must be 1 to 255 characters';
  if (!/^[\x21-\x7e]+$/.test(id)) return 'must be printable ASCII without spaces';
  if (hasCardNumber(id)) return 'must not hold a card number';
  return null;
}
