/** A sandbox test card, as the demo shop lists it. */
export interface TestCard {
  number: string;
  /** What the 3D Secure check does with it. */
  threeDs: string;
  /** What the transaction does after it. */
  transaction: string;
  /** How the demo's order ends: the choice's words in the card list. */
  outcome: string;
}

/**
 * sandbox.md section 4, copied rather than imported: the kit never imports src/gateway/, and a real
 * gateway's test cards are documentation too. The kit does not pay without 3D Secure, so a 3DS error
 * fails the order with its code even where the sandbox would approve the transaction.
 */
export const TEST_CARDS: readonly TestCard[] = [
  {
    number: '4242424242424242',
    threeDs: 'frictionless (full_auth)',
    transaction: 'approved',
    outcome: 'approved, no challenge',
  },
  {
    number: '4000000000003220',
    threeDs: 'challenge: the challenge page, Authenticate or Fail',
    transaction: 'approved after Authenticate',
    outcome: '3DS challenge, then approved',
  },
  {
    number: '4000000000003063',
    threeDs: 'frictionless, attempted (full_auth, ECI 06)',
    transaction: 'approved',
    outcome: 'approved, 3DS attempted',
  },
  {
    number: '4000000000003097',
    threeDs: 'ERR_3DS_TECHNICAL_ERROR',
    transaction: 'approved (if sent without 3DS)',
    outcome: 'fails: 3DS technical error',
  },
  {
    number: '4000000000003089',
    threeDs: 'ERR_3DS_NOT_ENROLLED',
    transaction: 'approved (if sent without 3DS)',
    outcome: 'fails: card not enrolled in 3DS',
  },
  {
    number: '4000000000003055',
    threeDs: 'ERR_3DS_NOT_SUPPORTED (card not participating)',
    transaction: 'approved (if sent without 3DS)',
    outcome: 'fails: 3DS not supported',
  },
  {
    number: '4000000000000002',
    threeDs: 'frictionless',
    transaction: 'ERR_CARD_DO_NOT_HONOR',
    outcome: 'declined: do not honor',
  },
  {
    number: '4000000000009995',
    threeDs: 'frictionless',
    transaction: 'ERR_CARD_INSUFFICIENT_FUNDS',
    outcome: 'declined: insufficient funds',
  },
  {
    number: '4000000000000069',
    threeDs: 'frictionless',
    transaction: 'ERR_EXPIRED_CARD',
    outcome: 'declined: expired card',
  },
  {
    number: '4000000000000127',
    threeDs: 'frictionless',
    transaction: 'ERR_CARD_SECURITY_VIOLATION',
    outcome: 'declined: security violation',
  },
  {
    number: '4000000000000119',
    threeDs: 'frictionless',
    transaction: 'ERR_CARD_SYSTEM_ERROR (transient)',
    outcome: 'declined: system error (transient)',
  },
  {
    number: '4000000000000259',
    threeDs: 'frictionless',
    transaction: 'ERR_CARD_ISSUER_UNAVAILABLE',
    outcome: 'declined: issuer unavailable',
  },
  {
    number: '4100000000000019',
    threeDs: 'frictionless',
    transaction: 'ERR_CARD_FRAUD_SUSPECTED; again within 24 h: ERR_DO_NOT_RETRY',
    outcome: 'declined: fraud suspected',
  },
  {
    number: '4000000000009987',
    threeDs: 'frictionless',
    transaction: 'ERR_CARD_LOST_OR_STOLEN; again within 24 h: ERR_DO_NOT_RETRY',
    outcome: 'declined: lost or stolen',
  },
  {
    number: '4000000000000341',
    threeDs: 'frictionless',
    transaction: 'approved; saved, every later payment with it: ERR_CARD_DO_NOT_HONOR',
    outcome: 'approved, then declined once saved',
  },
];

/** 4242424242424242 -> 4242 4242 4242 4242: easier to read, and to type into another shop. */
export function groupDigits(number: string): string {
  return number.replace(/(\d{4})(?=\d)/g, '$1 ');
}
