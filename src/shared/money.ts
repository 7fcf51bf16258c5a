// Exact conversions between major-unit decimals and integer minor units (sandbox.md section 3).
// Everything is done on decimal strings so that no float multiplication can round a value.

export const CURRENCY_EXPONENTS = {
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
} as const;

export type CurrencyCode = keyof typeof CURRENCY_EXPONENTS;

export function isCurrencyCode(code: unknown): code is CurrencyCode {
  // hasOwn, so that inherited names such as "toString" are not currencies.
  return typeof code === 'string' && Object.hasOwn(CURRENCY_EXPONENTS, code);
}

export function currencyExponent(currency: CurrencyCode): number {
  return CURRENCY_EXPONENTS[currency];
}

export type ParseMajorError = 'not_a_number' | 'not_positive' | 'too_precise' | 'too_large';

export type ParseMajorResult =
  | { ok: true; minor: number }
  | { ok: false; error: ParseMajorError; message: string };

const PLAIN_DECIMAL = /^\d+(\.\d+)?$/;
const NUMBER_WITH_EXPONENT = /^(\d+)(?:\.(\d+))?e([+-]?\d+)$/;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function failure(error: ParseMajorError, message: string): ParseMajorResult {
  return { ok: false, error, message };
}

/** Rewrites String(n) output such as "1e-7" or "1.5e+21" as a plain decimal, exactly. */
function expandExponent(text: string): string {
  const match = NUMBER_WITH_EXPONENT.exec(text);
  if (!match) return text;
  const digits = match[1]! + (match[2] ?? '');
  const point = match[1]!.length + Number(match[3]);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** Exact major-unit -> integer minor-unit conversion, by decimal string arithmetic, never float multiplication. */
export function parseMajor(value: unknown, currency: CurrencyCode): ParseMajorResult {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return failure('not_a_number', 'must be a finite number');
    if (value <= 0) return failure('not_positive', 'must be greater than zero');
    text = expandExponent(String(value));
  } else if (typeof value === 'string') {
    text = value;
  } else {
    return failure('not_a_number', 'must be a number in major units, such as 12.34');
  }
  if (!PLAIN_DECIMAL.test(text)) {
    return failure('not_a_number', 'must be a number in major units, such as 12.34');
  }

  const exponent = currencyExponent(currency);
  const [integerPart = '', rawFraction = ''] = text.split('.');
  // Trailing zeros add no precision: "12.340" EUR is 1234.
  const fraction = rawFraction.replace(/0+$/, '');
  const digits = (integerPart + fraction).replace(/^0+/, '');
  if (digits === '') return failure('not_positive', 'must be greater than zero');
  if (fraction.length > exponent) {
    const rule = exponent === 0 ? 'must be a whole number' : `must have at most ${exponent} decimal places`;
    return failure('too_precise', `${rule} for ${currency}`);
  }

  const minorText = (integerPart + fraction.padEnd(exponent, '0')).replace(/^0+/, '');
  if (minorText.length > 16 || BigInt(minorText) > MAX_SAFE) {
    return failure('too_large', 'is too large to be represented exactly');
  }
  return { ok: true, minor: Number(minorText) };
}

/** "12.34" for (1234, EUR), "500" for (500, JPY), "1.234" for (1234, KWD), "0.05" for (5, EUR). Integer minor input only. */
export function formatMinor(minor: number, currency: CurrencyCode): string {
  if (!Number.isSafeInteger(minor)) {
    throw new RangeError(`minor amount must be a safe integer, got ${String(minor)}`);
  }
  const exponent = currencyExponent(currency);
  const sign = minor < 0 ? '-' : '';
  const digits = String(Math.abs(minor));
  if (exponent === 0) return sign + digits;
  const padded = digits.padStart(exponent + 1, '0');
  return `${sign}${padded.slice(0, -exponent)}.${padded.slice(-exponent)}`;
}

/** "12.34 EUR": an amount as people read it, in major units with its currency (history lines, messages). */
export function formatMoney(minor: number, currency: CurrencyCode): string {
  return `${formatMinor(minor, currency)} ${currency}`;
}

/** The JSON number a request in major units carries: Number(formatMinor(...)), e.g. 12.34. */
export function toMajorNumber(minor: number, currency: CurrencyCode): number {
  return Number(formatMinor(minor, currency));
}
