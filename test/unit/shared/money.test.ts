import { expect } from 'chai';
import fc from 'fast-check';
import {
  CURRENCY_EXPONENTS,
  type CurrencyCode,
  currencyExponent,
  formatMinor,
  formatMoney,
  isCurrencyCode,
  type ParseMajorError,
  parseMajor,
  toMajorNumber,
} from '../../../src/shared/money.js';

const CURRENCIES = Object.keys(CURRENCY_EXPONENTS) as CurrencyCode[];

function expectMinor(value: unknown, currency: CurrencyCode, minor: number): void {
  expect(parseMajor(value, currency), `${String(value)} ${currency}`).to.deep.equal({ ok: true, minor });
}

function expectError(value: unknown, currency: CurrencyCode, error: ParseMajorError): void {
  const result = parseMajor(value, currency);
  expect(result.ok, `${String(value)} ${currency}`).to.equal(false);
  if (!result.ok) {
    expect(result.error, `${String(value)} ${currency}`).to.equal(error);
    expect(result.message).to.be.a('string').and.not.equal('');
  }
}

describe('shared/money', () => {
  describe('currencies', () => {
    it('has the platform currencies and exponents from sandbox.md section 3', () => {
      expect(CURRENCY_EXPONENTS).to.deep.equal({
        EUR: 2,
        USD: 2,
        GBP: 2,
        CHF: 2,
        SEK: 2,
        NOK: 2,
        DKK: 2,
        PLN: 2,
        CZK: 2,
        JPY: 0,
        KWD: 3,
        BHD: 3,
      });
      expect(currencyExponent('JPY')).to.equal(0);
      expect(currencyExponent('KWD')).to.equal(3);
      expect(currencyExponent('EUR')).to.equal(2);
    });

    it('recognises only supported upper-case codes', () => {
      for (const code of CURRENCIES) expect(isCurrencyCode(code)).to.equal(true);
      for (const code of [
        'eur',
        'XXX',
        'ABC',
        '',
        'toString',
        '__proto__',
        'hasOwnProperty',
        978,
        null,
        undefined,
      ]) {
        expect(isCurrencyCode(code), String(code)).to.equal(false);
      }
    });
  });

  describe('parseMajor', () => {
    it('converts the examples from the spec exactly', () => {
      expectMinor(12.34, 'EUR', 1234);
      expectMinor(0.29, 'EUR', 29);
      expectMinor(500, 'JPY', 500);
      expectMinor(1.234, 'KWD', 1234);
      expectMinor(1000000, 'EUR', 100000000);
      expectMinor(1.15, 'EUR', 115);
      expectMinor(4.35, 'USD', 435);
      expectMinor(0.07, 'GBP', 7);
      expectMinor(0.001, 'BHD', 1);
    });

    it('accepts plain decimal strings, with trailing zeros', () => {
      expectMinor('12.34', 'EUR', 1234);
      expectMinor('12', 'EUR', 1200);
      expectMinor('12.30', 'EUR', 1230);
      expectMinor('12.340', 'EUR', 1234);
      expectMinor('12.3400000', 'EUR', 1234);
      expectMinor('500.000', 'JPY', 500);
      expectMinor('007.5', 'EUR', 750);
      expectMinor('0.05', 'EUR', 5);
    });

    it('rejects more decimals than the exponent as too_precise', () => {
      expectError(1.005, 'EUR', 'too_precise');
      expectError(0.1 + 0.2, 'EUR', 'too_precise');
      expectError(12.5, 'JPY', 'too_precise');
      expectError('12.5', 'JPY', 'too_precise');
      expectError('1.2345', 'KWD', 'too_precise');
      expectError('0.001', 'EUR', 'too_precise');
      expectError(1e-7, 'EUR', 'too_precise');
      expectError(1.5e-7, 'KWD', 'too_precise');
    });

    it('names the rule in the too_precise message', () => {
      expect(parseMajor(1.005, 'EUR')).to.deep.include({
        error: 'too_precise',
        message: 'must have at most 2 decimal places for EUR',
      });
      expect(parseMajor(1.0005, 'KWD')).to.deep.include({
        message: 'must have at most 3 decimal places for KWD',
      });
      expect(parseMajor(1.5, 'JPY')).to.deep.include({ message: 'must be a whole number for JPY' });
    });

    it('rejects zero and negatives as not_positive', () => {
      expectError(0, 'EUR', 'not_positive');
      expectError(-0, 'EUR', 'not_positive');
      expectError('0', 'EUR', 'not_positive');
      expectError('0.00', 'EUR', 'not_positive');
      expectError('0.0000', 'EUR', 'not_positive');
      expectError(-1, 'EUR', 'not_positive');
      expectError(-12.34, 'EUR', 'not_positive');
      expectError(-1e-7, 'EUR', 'not_positive');
      expectError(Number.MIN_SAFE_INTEGER, 'JPY', 'not_positive');
    });

    it('rejects anything that is not a finite number or a plain decimal string as not_a_number', () => {
      const values: unknown[] = [
        true,
        false,
        null,
        undefined,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
        '1e3',
        ' 12',
        '12 ',
        '12.',
        '.5',
        '-1',
        '+1',
        '1,5',
        '0x10',
        '',
        '12.3.4',
        '١٢',
        {},
        [],
        [12],
        { valueOf: () => 12 },
        12n,
      ];
      for (const value of values) expectError(value, 'EUR', 'not_a_number');
    });

    it('classifies numbers that String() writes in exponent notation', () => {
      expect(String(1e-7)).to.equal('1e-7');
      expectError(1e-7, 'KWD', 'too_precise');
      expectError(1.2345e-7, 'EUR', 'too_precise');
      expect(String(1.5e21)).to.equal('1.5e+21');
      expectError(1.5e21, 'JPY', 'too_large');
      expectError(1e21, 'JPY', 'too_large');
    });

    it('rejects results above Number.MAX_SAFE_INTEGER as too_large', () => {
      expectMinor('90071992547409.91', 'EUR', Number.MAX_SAFE_INTEGER);
      expectError('90071992547409.92', 'EUR', 'too_large');
      expectMinor(Number.MAX_SAFE_INTEGER, 'JPY', Number.MAX_SAFE_INTEGER);
      expectError('9007199254740992', 'JPY', 'too_large');
      expectError(1.5e21, 'EUR', 'too_large');
      expectError(1e300, 'JPY', 'too_large');
      expectError(Number.MAX_VALUE, 'KWD', 'too_large');
      expectError(`1${'0'.repeat(40)}`, 'EUR', 'too_large');
    });

    it('gives back m from formatMinor(m) and toMajorNumber(m), for every currency and minor up to 10^12', () => {
      fc.assert(
        fc.property(fc.constantFrom(...CURRENCIES), fc.integer({ min: 1, max: 1e12 }), (currency, minor) => {
          expect(parseMajor(formatMinor(minor, currency), currency)).to.deep.equal({ ok: true, minor });
          expect(parseMajor(toMajorNumber(minor, currency), currency)).to.deep.equal({ ok: true, minor });
        }),
        { numRuns: 2000 },
      );
    });

    it('rejects a decimal with a non-zero digit beyond the exponent as too_precise', () => {
      const digits = (minLength: number, maxLength: number) =>
        fc.string({ unit: fc.constantFrom(...'0123456789'), minLength, maxLength });
      fc.assert(
        fc.property(
          fc.constantFrom(...CURRENCIES),
          digits(1, 30),
          digits(3, 3),
          digits(0, 10),
          fc.integer({ min: 1, max: 9 }),
          digits(0, 5),
          (currency, integerPart, allowed, extra, nonZero, trailing) => {
            const exponent = currencyExponent(currency);
            const fraction = `${allowed.slice(0, exponent)}${extra}${nonZero}${trailing}`;
            expectError(`${integerPart}.${fraction}`, currency, 'too_precise');
          },
        ),
        { numRuns: 2000 },
      );
    });

    it('rejects a number with a non-zero digit beyond the exponent as too_precise', () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...CURRENCIES),
          fc.integer({ min: 0, max: 1e9 }),
          fc.integer({ min: 1, max: 9 }),
          (currency, minor, excess) => {
            // minor/10^e plus a digit in the (e+1)th place, built as text so the value is what we mean.
            const value = Number(
              `${formatMinor(minor, currency)}${currencyExponent(currency) === 0 ? '.' : ''}${excess}`,
            );
            expectError(value, currency, 'too_precise');
          },
        ),
      );
    });
  });

  describe('formatMinor and toMajorNumber', () => {
    it('formats the spec examples', () => {
      expect(formatMinor(1234, 'EUR')).to.equal('12.34');
      expect(formatMinor(500, 'JPY')).to.equal('500');
      expect(formatMinor(1234, 'KWD')).to.equal('1.234');
      expect(formatMinor(5, 'EUR')).to.equal('0.05');
      expect(formatMinor(1230, 'EUR')).to.equal('12.30');
      expect(formatMinor(0, 'EUR')).to.equal('0.00');
      expect(formatMinor(1, 'BHD')).to.equal('0.001');
      expect(formatMinor(-5, 'EUR')).to.equal('-0.05');
      expect(formatMinor(Number.MAX_SAFE_INTEGER, 'EUR')).to.equal('90071992547409.91');
    });

    it('formats an amount as people read it, with its currency', () => {
      expect(formatMoney(1234, 'EUR')).to.equal('12.34 EUR');
      expect(formatMoney(600, 'JPY')).to.equal('600 JPY');
      expect(formatMoney(1234, 'KWD')).to.equal('1.234 KWD');
    });

    it('gives the JSON number a request carries', () => {
      expect(toMajorNumber(1234, 'EUR')).to.equal(12.34);
      expect(toMajorNumber(29, 'EUR')).to.equal(0.29);
      expect(toMajorNumber(500, 'JPY')).to.equal(500);
      expect(toMajorNumber(1234, 'KWD')).to.equal(1.234);
      expect(toMajorNumber(1230, 'EUR')).to.equal(12.3);
      expect(JSON.stringify({ amount: toMajorNumber(100000000, 'EUR') })).to.equal('{"amount":1000000}');
    });

    it('refuses minor amounts that are not safe integers', () => {
      for (const minor of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, 1e300]) {
        expect(() => formatMinor(minor, 'EUR'), String(minor)).to.throw(RangeError);
      }
    });
  });
});
