import { expect } from 'chai';
import fc from 'fast-check';
import {
  cardNumberRuns,
  hasCardNumber,
  jsonHasCardNumber,
  luhn,
  maskCardNumbers,
  truncateCardNumbers,
  withLuhnCheckDigit,
} from '../../../src/shared/card-numbers.js';

/** Both readings, always: what jsonHasCardNumber must answer, however it gets there. */
function bothReadings(text: string): boolean {
  const texts: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string' || typeof v === 'number') texts.push(String(v));
    else if (v !== null && typeof v === 'object')
      for (const [k, inner] of Object.entries(v)) {
        texts.push(k);
        walk(inner);
      }
  };
  walk(JSON.parse(text));
  return hasCardNumber(text) || hasCardNumber(texts.join('\n'));
}

const CARDS = ['4242424242424242', '378282246310005', '5555555555554444', '4000000000003220'];
/** A JSON value's text as a sender might write it: card numbers in every disguise, and plain values. */
const valueText = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.constantFrom(...CARDS).chain((card) =>
    fc.oneof(
      fc.constant(card), // a number
      fc.constant(`"${card}"`),
      fc.constant(`${card[0]}.${card.slice(1)}e${card.length - 1}`), // the same number, an exponent
      fc.constant(`${card}0e-1`),
      fc.nat(card.length - 1).map((i) => `"${card.slice(0, i)}\\u003${card[i]}${card.slice(i + 1)}"`),
      fc.constant(`"${card.replace(/(\d{4})(?=\d)/g, '$1 ')}"`),
    ),
  ),
  fc.stringMatching(/^[1-9]\d{11,19}$/), // long numbers JavaScript rounds
  fc.stringMatching(/^[1-9]\d{0,12}\.\d{1,8}$/),
);

/** merchant.md, Card data: telling a card number in free text, so that the kit keeps none. */
describe('shared: card numbers in free text', () => {
  it('finds a card number alone, inside words, and in groups split by spaces or hyphens', () => {
    for (const text of [
      '4242424242424242',
      'order 4242424242424242 for Ada',
      'ref-4000000000003220',
      '4242 4242 4242 4242',
      'card: 4242-4242-4242-4242.',
      '378282246310005', // Amex, 15 digits
      '5555555555554444', // Mastercard
      '2223003122003222', // Mastercard 2-series
      '6011111111111117', // Discover
      'a 4242424242424242 5', // a number after it does not hide it
      'order 12 4242 4242 4242 4242', // nor one before it
      '3782 822463 10005', // Amex as printed
      '4000 0000 0000 0000 006', // 19 digits
    ])
      expect(hasCardNumber(text), text).to.equal(true);
  });

  it('leaves alone what is not one: Luhn failures, other lengths, numbers no card brand starts with', () => {
    for (const text of [
      '',
      'shop-order-1001',
      '4242424242424241', // fails Luhn
      '424242424242', // 12 digits
      '42424242424242424242', // 20 digits
      '20261123000123', // an order number of a date: starts with 2026, not a brand
      '1000000000000009', // Luhn-valid, starts with 1
      '9000000000000008',
      'evt_8htPov2t6rpVnXkMAXTd4huZ',
      '2026-11-23T10:00:00.000000Z',
      '+44 20 7946 0958',
      'card-41234-1795471234567-3', // a reference made of a pid, a timestamp and a counter
      '4242-4242-42-4242-4242', // 4-4-2-4-4: not a card's grouping
    ])
      expect(hasCardNumber(text), text).to.equal(false);
  });

  it('leaves ids alone, whatever digits they hold: a UUID, 32, 40 or 64 hex digits', () => {
    for (const text of [
      '6eaa6525-0352-4801-945c-78ba3c6e1490', // reads 6525-0352-4801-945 across its hyphens
      'ord-CC3B4325-3794-4850-98B2-61217C59391E', // upper case, after a prefix
      '9f3c4242424242424242e07d5a1b33c8',
      'refund_9f3c4242424242424242e07d5a1b33c8',
      `${'0'.repeat(8)}4242424242424242${'ab'.repeat(8)}`, // 40
      `4242424242424242${'c'.repeat(48)}`, // 64
    ])
      expect(hasCardNumber(text), text).to.equal(false);
    // Not ids: a card number beside one, a card number in a hex-like word of another length.
    for (const text of [
      'card 4242424242424242 for 6eaa6525-0352-4801-945c-78ba3c6e1490',
      '9f3c4242424242424242e07d5a1b33c', // 31
      'x9f3c4242424242424242e07d5a1b33c8', // 33 characters: no id of ours
      'A4242424242424242',
    ])
      expect(hasCardNumber(text), text).to.equal(true);
  });

  it('random UUIDs and hex ids are never card numbers (property)', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uint8Array({ minLength: 16, maxLength: 16 }), (uuid, bytes) => {
        const hex = Buffer.from(bytes).toString('hex');
        return !hasCardNumber(uuid) && !hasCardNumber(`ord-${hex}`) && !hasCardNumber(hex + hex);
      }),
      { numRuns: 20_000 },
    );
  });

  it('masks each card number and nothing else', () => {
    expect(maskCardNumbers('/orders/4242424242424242/pay and 4000 0000 0000 3220, 1001')).to.equal(
      '/orders/[card number]/pay and [card number], 1001',
    );
    expect(maskCardNumbers('/orders/ord_abc')).to.equal('/orders/ord_abc');
  });

  it('truncates each card number to its last four digits, spaces and hyphens kept, ids and other digits left', () => {
    const cases: [string, string][] = [
      ['4242424242424242', '************4242'],
      ['order 4242424242424242 for Ada', 'order ************4242 for Ada'],
      ['4242 4242 4242 4242', '**** **** **** 4242'],
      ['card: 4242-4242-4242-4242.', 'card: ****-****-****-4242.'],
      ['3782 822463 10005', '**** ****** *0005'], // Amex as printed: 4-6-5
      ['4000 0000 0000 0000 006', '**** **** **** ***0 006'], // 19 digits
      ['ref 12 4242 4242 4242 4242 x', 'ref 12 **** **** **** 4242 x'], // the 12 before it is not the card's
      ['2026-11-23 4000000000003220', '2026-11-23 ************3220'],
      [
        '6eaa6525-0352-4801-945c-78ba3c6e1490 and 5555555555554444',
        '6eaa6525-0352-4801-945c-78ba3c6e1490 and ************4444',
      ],
      ['shop-order-1001', 'shop-order-1001'],
    ];
    for (const [text, truncated] of cases) expect(truncateCardNumbers(text), text).to.equal(truncated);
    // The four digits kept, and the next number's, would read as a card number: read again, masked too.
    const again = truncateCardNumbers('4242424242424242 4242 4242 4242 4242');
    expect(hasCardNumber(again), again).to.equal(false);
    const text = 'no card here: 20261123000123, 4242424242424241';
    expect(truncateCardNumbers(text)).to.equal(text);
  });

  it('truncation leaves no card number, changes only digits, to *, and keeps text without one as it is (property)', () => {
    const piece = fc.oneof(
      fc
        .constantFrom(...CARDS)
        .chain((card) =>
          fc
            .constantFrom('', ' ', '-')
            .map((sep) => (sep ? card.replace(/(\d{4})(?=\d)/g, `$1${sep}`) : card)),
        ),
      fc.stringMatching(/^[\d -]{0,24}$/),
      fc.string({ maxLength: 12 }),
      fc.uuid(),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (pieces) => {
        const text = pieces.join('');
        const truncated = truncateCardNumbers(text);
        expect(hasCardNumber(truncated), `${text} -> ${truncated}`).to.equal(false);
        expect(truncated.length).to.equal(text.length);
        for (let i = 0; i < text.length; i += 1)
          if (truncated[i] !== text[i])
            expect(/\d/.test(text[i]!) && truncated[i] === '*', text).to.equal(true);
        if (!hasCardNumber(text)) expect(truncated).to.equal(text);
        expect(truncateCardNumbers(truncated)).to.equal(truncated);
      }),
      { numRuns: 3000 },
    );
  });

  it('counts the runs of digits that hold a card number', () => {
    expect(cardNumberRuns('a 4242424242424242, b 4000-0000-0000-3220, c 1234')).to.equal(2);
    expect(cardNumberRuns('{"id":"6eaa6525-0352-4801-945c-78ba3c6e1490","n":1234}')).to.equal(0);
    expect(cardNumberRuns('')).to.equal(0);
  });

  it('completes a number with its Luhn check digit', () => {
    expect(withLuhnCheckDigit('424242424242424')).to.equal('4242424242424242');
    fc.assert(
      fc.property(fc.stringMatching(/^\d{1,18}$/), (body) => {
        const full = withLuhnCheckDigit(body);
        return full.startsWith(body) && full.length === body.length + 1 && luhn(full);
      }),
    );
  });

  it('reads JSON both ways, its bytes and its values, whichever way a card number is written', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string(), valueText), { maxLength: 4 }), (pairs) => {
        const text = `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
        expect(jsonHasCardNumber(text, JSON.parse(text)), text).to.equal(bothReadings(text));
      }),
      { numRuns: 2000 },
    );
    // Each disguise is found: the property above must see both answers.
    for (const text of [
      '{"n":4.242424242424242e15}',
      '{"s":"\\u0034242424242424242"}',
      '{"n":42424242424242420e-1}',
    ])
      expect(jsonHasCardNumber(text, JSON.parse(text)), text).to.equal(true);
    expect(jsonHasCardNumber('{"n":1234,"at":"2026-11-23"}', { n: 1234, at: '2026-11-23' })).to.equal(false);
  });

  it('reads a long run of digits in one pass (a signed webhook may carry 256 KiB of them)', () => {
    for (const text of ['9'.repeat(256 * 1024), '4 '.repeat(128 * 1024), '1-'.repeat(128 * 1024)]) {
      const started = performance.now();
      expect(hasCardNumber(text)).to.equal(false);
      maskCardNumbers(text);
      truncateCardNumbers(text);
      expect(performance.now() - started, text.slice(0, 10)).to.be.below(200);
    }
  });
});
