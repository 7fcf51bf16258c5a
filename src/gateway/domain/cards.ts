/**
 * Card rules of sandbox.md section 4: Luhn, expiry, and the test-card table. Pure; the full number
 * is used here and never stored (the state keeps last four and a fingerprint).
 */

export function luhnValid(number: string): boolean {
  if (!/^\d{12,19}$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = number.charCodeAt(number.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** A card is valid through the last moment of its expiry month (UTC). */
export function cardExpired(expMonth: number, expYear: number, now: number): boolean {
  return now >= Date.UTC(expYear, expMonth, 1); // month index expMonth is the month after expiry
}

export type ThreeDsScenario =
  | { kind: 'frictionless'; eci: string }
  | { kind: 'challenge' }
  | { kind: 'error'; code: 'ERR_3DS_TECHNICAL_ERROR' | 'ERR_3DS_NOT_ENROLLED' | 'ERR_3DS_NOT_SUPPORTED' };

export type IssuerOutcome =
  | { kind: 'approve' }
  | { kind: 'requires_3ds' }
  | { kind: 'decline'; code: string; doNotRetryAfter: boolean };

/** What the issuer can answer a payment made with a vault token: no 3DS is asked then (sandbox.md section 11). */
export type TokenIssuerOutcome = Exclude<IssuerOutcome, { kind: 'requires_3ds' }>;

interface TestCard {
  threeDs: ThreeDsScenario;
  issuer: IssuerOutcome;
  /** Payments with the card's vault token, when they differ from `issuer` (sandbox.md section 4, 0341). */
  withToken?: TokenIssuerOutcome;
}

const frictionless: ThreeDsScenario = { kind: 'frictionless', eci: '05' };
const approve: TokenIssuerOutcome = { kind: 'approve' };
const decline = (code: string, doNotRetryAfter = false): TokenIssuerOutcome => ({
  kind: 'decline',
  code,
  doNotRetryAfter,
});

const TEST_CARDS: Readonly<Record<string, TestCard>> = {
  '4242424242424242': { threeDs: frictionless, issuer: approve },
  '4000000000003220': { threeDs: { kind: 'challenge' }, issuer: { kind: 'requires_3ds' } },
  '4000000000003063': { threeDs: { kind: 'frictionless', eci: '06' }, issuer: approve },
  '4000000000003097': { threeDs: { kind: 'error', code: 'ERR_3DS_TECHNICAL_ERROR' }, issuer: approve },
  '4000000000003089': { threeDs: { kind: 'error', code: 'ERR_3DS_NOT_ENROLLED' }, issuer: approve },
  '4000000000003055': { threeDs: { kind: 'error', code: 'ERR_3DS_NOT_SUPPORTED' }, issuer: approve },
  '4000000000000002': { threeDs: frictionless, issuer: decline('ERR_CARD_DO_NOT_HONOR') },
  '4000000000009995': { threeDs: frictionless, issuer: decline('ERR_CARD_INSUFFICIENT_FUNDS') },
  '4000000000000069': { threeDs: frictionless, issuer: decline('ERR_EXPIRED_CARD') },
  '4000000000000127': { threeDs: frictionless, issuer: decline('ERR_CARD_SECURITY_VIOLATION') },
  '4000000000000119': { threeDs: frictionless, issuer: decline('ERR_CARD_SYSTEM_ERROR') },
  '4000000000000259': { threeDs: frictionless, issuer: decline('ERR_CARD_ISSUER_UNAVAILABLE') },
  '4100000000000019': { threeDs: frictionless, issuer: decline('ERR_CARD_FRAUD_SUSPECTED', true) },
  '4000000000009987': { threeDs: frictionless, issuer: decline('ERR_CARD_LOST_OR_STOLEN', true) },
  '4000000000000341': {
    threeDs: frictionless,
    issuer: approve,
    withToken: decline('ERR_CARD_DO_NOT_HONOR'),
  },
};

/** Any other Luhn-valid number: frictionless and approved. */
export function testCard(number: string): TestCard {
  return TEST_CARDS[number] ?? { threeDs: frictionless, issuer: approve };
}

/**
 * How the issuer answers every payment made with the vault token of a saved card. Decided when the card
 * is saved, since its number is not kept: the card's own outcome, except that the saving payment's
 * 3D Secure stands for later ones (sandbox.md section 11), and the 0341 card declines from then on.
 */
export function tokenIssuerOutcome(number: string): TokenIssuerOutcome {
  const card = testCard(number);
  if (card.withToken) return card.withToken;
  return card.issuer.kind === 'requires_3ds' ? approve : card.issuer;
}

export { type CardBrand, cardBrand } from '../../shared/card-numbers.js';

export const DECLINE_MESSAGES: Readonly<Record<string, string>> = {
  ERR_CARD_DO_NOT_HONOR: 'The card was declined: do not honor.',
  ERR_CARD_INSUFFICIENT_FUNDS: 'The card was declined: insufficient funds.',
  ERR_EXPIRED_CARD: 'The card has expired.',
  ERR_CARD_SECURITY_VIOLATION: 'The card was declined: security violation.',
  ERR_CARD_SYSTEM_ERROR: 'The card system reported a transient error; retry later.',
  ERR_CARD_ISSUER_UNAVAILABLE: 'The card issuer is unavailable; retry after several seconds.',
  ERR_CARD_FRAUD_SUSPECTED: 'The card was declined: fraud suspected. Do not retry.',
  ERR_CARD_LOST_OR_STOLEN: 'The card was declined: reported lost or stolen. Do not retry.',
  ERR_DO_NOT_RETRY: 'An earlier decline marked these card details as not to be retried.',
};
