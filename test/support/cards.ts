/** sandbox.md section 4: the cards that pass 3DS frictionlessly and are declined at the transaction. */
export const DECLINING_CARDS = [
  '4000000000000002',
  '4000000000009995',
  '4000000000000069',
  '4000000000000127',
  '4000000000000119',
  '4000000000000259',
  '4100000000000019',
  '4000000000009987',
] as const;

/** sandbox.md section 4: every test card, for the checks that none is ever written down. */
export const TEST_CARDS = [
  '4242424242424242',
  '4000000000003220',
  '4000000000003063',
  '4000000000003097',
  '4000000000003089',
  '4000000000003055',
  ...DECLINING_CARDS,
  '4000000000000341',
] as const;

/** sandbox.md section 4: approved when paid with, declined with ERR_CARD_DO_NOT_HONOR once saved and paid by token. */
export const DECLINES_ONCE_SAVED = '4000000000000341';

/** `prefix` padded with zeros to `length - 1` digits, then the Luhn check digit: a valid number of any brand. */
export function luhnNumber(prefix: string, length = 16): string {
  const body = prefix.padEnd(length - 1, '0');
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    // From the right, the check digit will be position 0: the body's last digit is doubled.
    let digit = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}
