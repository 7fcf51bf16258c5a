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
] as const;
