import { request } from 'node:http';
import { expect } from 'chai';
import fc from 'fast-check';
import { eventIdsOf, type ObservationJob } from '../../src/merchant/reconciler/queue.js';
import { jsonOf, MERCHANT_KEY, TEST_CARDS } from './gateway.js';
import { OPS_TOKEN, type TestKit } from './kit.js';

/**
 * What the fuzz files share (test/integration/merchant/fuzz-*.test.ts): how many inputs, a raw HTTP
 * sender, the leak check over everything the kit wrote, and inputs that carry card numbers.
 */

/** Inputs per property: FUZZ_RUNS (`npm run fuzz` sets many), else `fallback`, a few for `npm test`. */
export function fuzzRuns(fallback: number): number {
  const runs = Number(process.env.FUZZ_RUNS);
  return Number.isSafeInteger(runs) && runs > 0 ? runs : fallback;
}

/** fast-check's settings: FUZZ_SEED replays a run (fast-check prints the seed and path on failure). */
export function fuzzParameters(numRuns: number): fc.Parameters<unknown> {
  const seed = Number(process.env.FUZZ_SEED);
  return {
    numRuns,
    ...(Number.isSafeInteger(seed) ? { seed } : {}),
    ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
    endOnFailure: process.env.FUZZ_SHRINK !== 'true',
  };
}

export interface RawRequest {
  method: string;
  /** Sent as is: the generators encode what must be encoded. */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
}

/** A request not answered within this long is a failure (a hang), not a slow answer. */
const ANSWER_WITHIN_MS = 15_000;

/**
 * One request through node:http rather than fetch: header values may be any latin1 bytes and the
 * body any bytes, as a hostile client sends them.
 */
export function send(
  base: string,
  r: RawRequest,
): Promise<{ status: number; type: string; text: string; headers: Headers }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: r.method,
        path: r.path,
        headers: { ...r.headers, ...(r.body ? { 'content-length': String(r.body.length) } : {}) },
        timeout: ANSWER_WITHIN_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString('utf8'),
            // Every header, so that those the document requires (Retry-After, ...) are checked too.
            headers: new Headers(
              Object.entries(res.headers).flatMap(([name, value]) =>
                value === undefined
                  ? []
                  : [[name, Array.isArray(value) ? value.join(', ') : value] as [string, string]],
              ),
            ),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${ANSWER_WITHIN_MS} ms`)));
    req.on('error', reject);
    req.end(r.body);
  });
}

/** merchant.md, HTTP interface: every refusal is the envelope `{success: false, message, code, data}`. */
export function expectErrorEnvelope(answer: { status: number; text: string }, where: string): void {
  const body = jsonOf(answer.text) as Record<string, unknown> | undefined;
  const what = `${where} -> ${answer.status}: ${answer.text.slice(0, 300)}`;
  expect(body, `${what}: not JSON`).to.be.an('object');
  expect(body!.success, what).to.equal(false);
  expect(body!.message, what).to.be.a('string');
  expect(body!.code, what).to.be.a('string').and.not.equal('');
  expect(body, what).to.have.property('data');
}

/** The secrets nothing may write: the operator token, the API key, the encryption key, the signing secrets. */
export async function secretsOf(t: TestKit): Promise<string[]> {
  const signing = await t.kit.store.secrets.active();
  return ['whsec_', OPS_TOKEN, MERCHANT_KEY, t.config.encryptionKey.toString('base64'), ...signing];
}

/**
 * Which of `needles` occur in `text`, also percent-decoded (a logged path) and with digit groups
 * joined: "4242 4242 4242 4242", "4242-4242-4242-4242" and "4242%204242%204242%204242" are the card
 * 4242424242424242 too.
 */
export function found(text: string, needles: readonly string[]): string[] {
  const decoded = text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
  const variants = [text, decoded].flatMap((v) => [v, v.replace(/(\d)[ -](?=\d)/g, '$1')]);
  return needles.filter((n) => variants.some((v) => v.includes(n)));
}

/** Every key under the kit's Redis prefix with what it holds, as text, and the event ids bull's jobs carry. */
export async function redisContents(t: TestKit): Promise<{ text: string; jobIds: Set<string> }> {
  const redis = t.kit.redis;
  const keys = await redis.keys(`${t.redisPrefix}:*`);
  const jobPrefix = `${t.redisPrefix}:${t.kit.queue.name}:`;
  const out: string[] = [];
  const jobIds = new Set<string>();
  for (const key of keys.sort()) {
    const type = await redis.type(key);
    let value: unknown;
    if (type === 'hash') value = await redis.hgetall(key);
    else if (type === 'list') value = await redis.lrange(key, 0, -1);
    else if (type === 'zset') value = await redis.zrange(key, 0, -1);
    else if (type === 'set') value = await redis.smembers(key);
    else if (type === 'string') value = await redis.get(key);
    // A job is a hash with its `data`, under the queue's prefix and its id: one event, or a batch's.
    if (type === 'hash' && key.startsWith(jobPrefix) && 'data' in (value as object))
      for (const id of eventIdsOf(JSON.parse((value as { data: string }).data) as ObservationJob))
        jobIds.add(id);
    out.push(`${key} (${type}): ${JSON.stringify(value)}`);
  }
  return { text: out.join('\n'), jobIds };
}

/**
 * Where a card number or a secret shows up in what the kit wrote: its log lines, Redis (the queue's
 * jobs included), every table, and the error bodies it answered. One line per place, empty when none.
 */
export async function leaks(
  t: TestKit,
  errorBodies: readonly string[],
  /** More secrets the test knows of (an operator's token). */
  more: readonly string[] = [],
): Promise<string[]> {
  const needles = [...TEST_CARDS, ...(await secretsOf(t)), ...more];
  const places: [string, string[]][] = [
    ['log line', t.logs],
    ['Redis', [(await redisContents(t)).text]],
    ['database', [await t.dump()]],
    ['error body', [...errorBodies]],
  ];
  const out: string[] = [];
  for (const [place, texts] of places) {
    for (const text of texts) {
      const hits = found(text, needles);
      if (hits.length > 0) out.push(`${place} holds ${hits.join(', ')}: ${text.slice(0, 400)}`);
    }
  }
  return out;
}

/** A body that fast-check prints as its size and text, not as a list of bytes, in a counterexample. */
export function printable(bytes: Buffer): Buffer {
  return Object.assign(bytes, {
    [fc.toStringMethod]: () =>
      `<${bytes.length} bytes: ${JSON.stringify(bytes.toString('utf8').slice(0, 600))}>`,
  });
}

/** 1234567 -> "1,234,567", for the summary lines. */
export const thousands = (n: number) => n.toLocaleString('en-US');

// ---------------------------------------------------------------------------------------------
// inputs

/** Text with no digits, so a card number put inside it stays one number (not run into other digits). */
const digitless = (maxLength: number) =>
  fc.string({ unit: 'grapheme', maxLength }).map((s) => s.replace(/\d/g, ''));

/** A test card as a caller might type it: plain, in groups of four with spaces or hyphens. */
export const cardNumber = fc
  .tuple(fc.constantFrom(...TEST_CARDS), fc.constantFrom('', ' ', '-'))
  .map(([n, sep]) => (sep ? n.replace(/(\d{4})(?=\d)/g, `$1${sep}`) : n));

/** A test card number inside free text ("order 4242424242424242 for Ada"), or a token ("ref-4242424242424242"). */
export const textWithCard = fc.oneof(
  fc
    .tuple(digitless(20), cardNumber, digitless(20))
    .map(([before, n, after]) => `${before}${before && /\S$/.test(before) ? ' ' : ''}${n} ${after}`.trim()),
  fc
    .tuple(fc.constantFrom('', 'ref-', 'order_', 'A'), cardNumber, fc.constantFrom('', '-x', '_2'))
    .map(([before, n, after]) => `${before}${n.replace(/\D/g, '')}${after}`),
);

/** Strings that break naive code: empty, control characters, lone surrogates, unicode, card numbers. */
export const shortNasty = fc.oneof(
  fc.constantFrom('', ' ', '\u0000', '\r\n', '\ud800', '\udfff', '\ufeff', 'null', 'undefined', 'NaN'),
  fc.constantFrom('💳', 'Zoë', 'Ω≈ç√', 'اَلْعَرَبِيَّةُ', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', 'a\u0301', '\u202Eevil'),
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a placeholder a careless template would fill
  fc.constantFrom("'; DROP TABLE orders; --", '<script>alert(1)</script>', '../../etc/passwd', '%00', '${x}'),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  textWithCard,
);

/** Those, and very long ones: past every column and limit (bodies; a URL or header that long is a 431). */
export const nastyString = fc.oneof(
  { weight: 6, arbitrary: shortNasty },
  fc
    .tuple(fc.constantFrom('a', 'é', '💳', ' ', '9'), fc.integer({ min: 250, max: 70_000 }))
    .map(([c, n]) => c.repeat(n)),
);

/** Percent-encoding of any string's UTF-8 (a lone surrogate becomes U+FFFD, as encodeURIComponent cannot). */
export const percent = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

/** A JSON value as text, hostile ones included: what goes after a key's colon. */
export const jsonFragment: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  nastyString.map((s) => JSON.stringify(s)),
  fc.constantFrom(
    '1e999',
    '-1e999',
    '-0',
    '1e-400',
    '123456789012345678901234567890',
    '9007199254740993',
    '-1',
    '-12.34',
    '0.001',
    '12.345',
    '1.5',
    '0',
    'true',
    'null',
    '[]',
    '{}',
    '"\\ud800"',
    '"\\u0000"',
  ),
  fc
    .constantFrom('__proto__', 'constructor', 'prototype')
    .map((k) => `{"${k}":{"polluted":true,"toString":1}}`),
  fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'['.repeat(depth)}1${']'.repeat(depth)}`),
  fc.integer({ min: 1, max: 2_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  cardNumber.map((n) => (/^\d+$/.test(n) ? n : JSON.stringify(n))),
);

/** A JSON object as text from `[key, fragment]` entries (keys may repeat, as JSON allows). */
export const objectText = (entries: readonly (readonly [string, string])[]) =>
  `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;

/** Keys a hostile body tries: prototype keys, unicode, empty, very long. */
export const nastyKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', ''),
  fc.string({ maxLength: 12 }),
  cardNumber,
);

/** A body's bytes in some encoding: UTF-8 (with or without a BOM), latin1, UTF-16, or broken UTF-8. */
export const encodedAs = fc.constantFrom(
  'utf8',
  'utf8-bom',
  'latin1',
  'utf16le',
  'utf16le-bom',
  'broken-utf8',
);
export function encode(text: string, encoding: string, at = 0.5): Buffer {
  switch (encoding) {
    case 'utf8-bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
    case 'latin1':
      return Buffer.from(text, 'latin1');
    case 'utf16le':
      return Buffer.from(text, 'utf16le');
    case 'utf16le-bom':
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    case 'broken-utf8': {
      // A lone continuation byte and a truncated sequence, somewhere inside.
      const bytes = Buffer.from(text, 'utf8');
      const i = Math.floor(bytes.length * at);
      return Buffer.concat([bytes.subarray(0, i), Buffer.from([0x80, 0xc3]), bytes.subarray(i)]);
    }
    default:
      return Buffer.from(text, 'utf8');
  }
}

/** A string as node:http lets it be a header value: latin1, no control characters but tab. */
/** `text` as bytes: mostly UTF-8, sometimes another encoding or broken at a random place. */
export const encodedText = (text: fc.Arbitrary<string>) =>
  fc
    .tuple(
      text,
      fc.oneof({ weight: 12, arbitrary: fc.constant('utf8') }, encodedAs),
      fc.double({ min: 0, max: 1 }),
    )
    .map(([t, encoding, at]) => encode(t, encoding, at));

export function headerSafe(s: string): string {
  const safe = (code: number) =>
    code > 0xff ? '?' : (code < 0x20 && code !== 9) || code === 0x7f ? ' ' : null;
  return [...s]
    .map((c) => safe(c.charCodeAt(0)) ?? c)
    .join('')
    .trim();
}
export const headerValue = (arb: fc.Arbitrary<string>) => arb.map(headerSafe);

/** Content types a client may send, right or wrong. */
export const contentType = headerValue(
  fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      '*/*',
      ';;;',
      '',
    ),
    fc.string({ unit: 'binary-ascii', maxLength: 30 }),
  ),
);
