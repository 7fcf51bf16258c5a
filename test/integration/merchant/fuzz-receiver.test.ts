import { expect } from 'chai';
import fc from 'fast-check';
import { GATEWAY_ID_FIELDS } from '../../../src/merchant/orders/event-masking.js';
import { MAX_WEBHOOK_BYTES } from '../../../src/merchant/webhooks/receiver.js';
import { hasCardNumber, truncateCardNumbers } from '../../../src/shared/card-numbers.js';
import { unixSeconds } from '../../../src/shared/clock.js';
import { generateSecret, sign } from '../../../src/shared/signature.js';
import { maskVaultTokens } from '../../../src/shared/vault-tokens.js';
import { withoutGatewayIds } from '../../support/card-scan.js';
import { TEST_CARDS } from '../../support/cards.js';
import { rows } from '../../support/db.js';
import { storedSecret } from '../../support/events.js';
import {
  contentType,
  encodedText,
  expectErrorEnvelope,
  found,
  fuzzParameters,
  fuzzRuns,
  headerValue,
  jsonFragment,
  leaks,
  nastyKey,
  nastyString,
  objectText,
  printable,
  redisContents,
  send,
  textWithCard,
  thousands,
} from '../../support/fuzz.js';
import { startTestKit, type TestKit } from '../../support/kit.js';

/**
 * issue, part 4: POST /webhooks/gateway under random input. Bodies (random bytes, JSON of every
 * shape, events sound or broken in places: wrong types, huge and negative numbers, deep nesting,
 * prototype keys, long strings, unicode, card numbers; in several encodings, from empty to past 256
 * KiB) under every kind of signature (none, malformed, stale, another secret, right over a mutated
 * body, right). Each answer is compared with what merchant.md says it must be (413, 401, 400, 200),
 * decided here from the bytes, not by the kit's code; afterwards the inbox holds exactly the events
 * that were validly signed and well formed, as signed (a card number outside the gateway's ids
 * truncated, issue 44 part 1: never a refusal), bull holds a job for no other, and nothing the kit
 * wrote holds a card number or a secret. FUZZ_RUNS sets the number of inputs (`npm run fuzz`);
 * FUZZ_SEED (and FUZZ_PATH) replay a failure.
 */

const RUNS = fuzzRuns(1000);

// ---------------------------------------------------------------------------------------------
// what the receiver must do with a body, decided here from gateway-api.md's payload, not by the kit

/** An identifier the kit keeps (event id, event type, transaction id): 1-64 printable ASCII, no space. */
const KEPT_ID = /^[\x21-\x7e]{1,64}$/;

type Verdict =
  | { kind: 'too_large' }
  | { kind: 'malformed'; why: string }
  | { kind: 'ping' }
  /** `carded`: a card number somewhere in its bytes or values, ids included: kept rewritten, perhaps. */
  | { kind: 'event'; id: string; type: string; transactionId: string; text: string; carded: boolean };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const optional = (v: unknown, ok: (v: unknown) => boolean) => v === undefined || ok(v);
const isString = (v: unknown) => typeof v === 'string';
const isNumber = (v: unknown) => typeof v === 'number' && Number.isFinite(v);

/** gateway-api.md, Webhook payload: `data.transaction` as the kit reads it. */
function transactionProblem(tx: unknown): string | null {
  if (!isObject(tx)) return 'transaction not an object';
  const id = tx.id;
  if (!((isString(id) && id !== '') || isNumber(id)) || !KEPT_ID.test(String(id))) return 'transaction id';
  const checks: [string, boolean][] = [
    ['related_trans_id', optional(tx.related_trans_id, (v) => v === null || isString(v) || isNumber(v))],
    ['merchant_id', optional(tx.merchant_id, (v) => (isString(v) && v !== '') || isNumber(v))],
    ['amount', Number.isSafeInteger(tx.amount)],
    ['currency', isString(tx.currency)],
    ['status', isString(tx.status)],
    ['transaction_type', isString(tx.transaction_type)],
    ['merchant_trans_id', optional(tx.merchant_trans_id, (v) => v === null || isString(v))],
    ['refunded_amount', optional(tx.refunded_amount, Number.isSafeInteger)],
    ['status_reason', optional(tx.status_reason, (v) => v === null || isString(v))],
    ['created_at', optional(tx.created_at, isString)],
    ['updated_at', optional(tx.updated_at, isString)],
  ];
  return checks.find(([, ok]) => !ok)?.[0] ?? null;
}

/** Every key, string and number in a JSON value, a line each; a loop, for bodies nested 20,000 deep. */
function valuesOf(json: unknown): string {
  const lines: string[] = [];
  const todo = [json];
  while (todo.length > 0) {
    const v = todo.pop();
    if (typeof v === 'string' || typeof v === 'number') lines.push(String(v));
    else if (typeof v === 'object' && v !== null) {
      for (const [k, inner] of Object.entries(v)) {
        lines.push(k);
        todo.push(inner);
      }
    }
  }
  return lines.join('\n');
}

/**
 * That `stored` is the event `sent` with each card number outside the gateway's ids truncated: the
 * same keys and values, ids as sent, other texts and numbers alike but for digits turned to `*`
 * (a number then text), and no card number left outside the ids, in the values or the bytes.
 */
function keptAs(sent: string, stored: string, where: string): void {
  expect(hasCardNumber(withoutGatewayIds(stored)), `${where}: a card number kept: ${stored}`).to.equal(false);
  const truncated = (a: unknown, b: unknown) => {
    const [x, y] = [String(a), String(b)];
    return x.length === y.length && x.split('').every((c, i) => c === y[i] || (/\d/.test(c) && y[i] === '*'));
  };
  const todo: [unknown, unknown, string][] = [[JSON.parse(sent), JSON.parse(stored), '']];
  while (todo.length > 0) {
    let [a, b, path] = todo.pop()!;
    // JSON.parse reads 1e999 as Infinity, which JSON writes as null.
    if (typeof a === 'number' && !Number.isFinite(a)) a = null;
    if (a === null || typeof a !== 'object') {
      const id = GATEWAY_ID_FIELDS.has(path.slice(path.lastIndexOf('.') + 1));
      if (a !== b)
        expect(!id && truncated(a, b), `${where}: ${path}: ${String(a)} kept as ${String(b)}`).to.equal(true);
      continue;
    }
    expect(b, `${where}: ${path}`).to.be.an(Array.isArray(a) ? 'array' : 'object');
    const keys = Object.keys(b as object);
    expect(keys.length, `${where}: ${path} keys`).to.equal(Object.keys(a).length);
    for (const key of Object.keys(a)) {
      const kept = keys.find((k) => k === key) ?? keys.find((k) => truncated(key, k));
      expect(kept, `${where}: ${path}.${key}`).to.be.a('string');
      todo.push([
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[kept!],
        `${path}.${key}`,
      ]);
    }
  }
}

/**
 * An object's fields as the kit keeps them (issue 44, part 1): a number outside the gateway's ids
 * (GATEWAY_ID_FIELDS) that reads as a card number becomes its truncated text.
 */
function asKept(o: Record<string, unknown>): Record<string, unknown> {
  const kept = (key: string, value: unknown) =>
    typeof value === 'number' && !GATEWAY_ID_FIELDS.has(key) && hasCardNumber(String(value))
      ? truncateCardNumbers(String(value))
      : value;
  return Object.fromEntries(Object.entries(o).map(([key, value]) => [key, kept(key, value)]));
}

function verdictOf(bytes: Buffer): Verdict {
  if (bytes.length > MAX_WEBHOOK_BYTES) return { kind: 'too_large' };
  let text: string;
  try {
    // JSON is UTF-8 (RFC 8259); a BOM is kept, and then is not JSON.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { kind: 'malformed', why: 'not UTF-8' };
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { kind: 'malformed', why: 'not JSON' };
  }
  if (!isObject(v)) return { kind: 'malformed', why: 'not an object' };
  // Read as kept: a number outside the ids that reads as a card number is text, truncated.
  const e = asKept(v);
  if (isObject(e.data) && isObject(e.data.transaction))
    e.data = { ...e.data, transaction: asKept(e.data.transaction) };
  if (!isString(e.id) || !KEPT_ID.test(e.id as string)) return { kind: 'malformed', why: 'id' };
  if (!isString(e.type) || !KEPT_ID.test(e.type as string)) return { kind: 'malformed', why: 'type' };
  if (!isString(e.created_at)) return { kind: 'malformed', why: 'created_at' };
  if (!optional(e.api_version, isString)) return { kind: 'malformed', why: 'api_version' };
  if (!isObject(e.data)) return { kind: 'malformed', why: 'data' };
  const tx = e.data.transaction;
  const problem = tx === undefined ? null : transactionProblem(tx);
  if (problem) return { kind: 'malformed', why: problem };
  if (e.type === 'webhook.ping') return { kind: 'ping' };
  if (tx === undefined) return { kind: 'malformed', why: 'no transaction' };
  const id = e.id as string;
  const type = e.type as string;
  return {
    kind: 'event',
    id,
    // The event's type is no id: a card number in it is truncated too.
    type: truncateCardNumbers(type),
    transactionId: String((tx as { id: unknown }).id),
    text,
    // In the bytes (a value a repeated key hides) or in the values (JSON escapes decoded), keys included.
    carded: hasCardNumber(text) || hasCardNumber(valuesOf(v)),
  };
}

// ---------------------------------------------------------------------------------------------
// inputs

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const alnum = (n: number) => fc.string({ unit: fc.constantFrom(...ALNUM), minLength: n, maxLength: n });

/** Event ids: fresh ones, and a few that repeat (and differ only in case): duplicates. */
const eventId = fc.oneof(
  { weight: 6, arbitrary: alnum(24).map((s) => `evt_${s}`) },
  { weight: 2, arbitrary: fc.constantFrom('evt_fuzz_a', 'evt_FUZZ_A', 'evt_fuzz_b') },
);
const TIME = JSON.stringify('2026-11-23T10:00:00.000000Z');
const json = (arb: fc.Arbitrary<unknown>) => arb.map((v) => JSON.stringify(v));
const soundText = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 30 }));

/** A sound event's fields, as JSON text, by name (`tx.` for `data.transaction`'s). */
const soundEvent = fc.record({
  id: json(eventId),
  type: json(
    fc.constantFrom('transaction.captured', 'transaction.refunded', 'transaction.voided', 'webhook.ping'),
  ),
  created_at: fc.constant(TIME),
  api_version: fc.constant(JSON.stringify('2026-11-01')),
  'tx.id': json(fc.oneof(fc.integer({ min: 100_000, max: 999_999 }), alnum(12))),
  'tx.related_trans_id': json(fc.option(fc.integer({ min: 100_000, max: 999_999 }))),
  'tx.merchant_trans_id': json(
    fc.oneof(
      alnum(10).map((s) => `ord-${s}`),
      soundText,
    ),
  ),
  'tx.transaction_type': json(fc.constantFrom('sale', 'auth', 'capture', 'refund', 'void')),
  'tx.status': json(
    fc.constantFrom('captured', 'auth', 'refunded', 'voided', 'failed', 'pending', 'chargeback'),
  ),
  'tx.amount': json(fc.integer({ min: 1, max: 100_000_000 })),
  'tx.currency': json(fc.constantFrom('EUR', 'USD', 'JPY', 'KWD')),
  'tx.refunded_amount': json(fc.integer({ min: 0, max: 100_000 })),
  'tx.description': json(soundText),
  'tx.acquirer_trans_id': json(alnum(16)),
  'tx.created_at': fc.constant(TIME),
});
type EventFields = Record<string, string | undefined>;
const FIELDS = [
  'id',
  'type',
  'created_at',
  'api_version',
  'tx.id',
  'tx.related_trans_id',
  'tx.merchant_trans_id',
  'tx.transaction_type',
  'tx.status',
  'tx.amount',
  'tx.currency',
  'tx.refunded_amount',
  'tx.description',
  'tx.acquirer_trans_id',
  'tx.created_at',
];

/** Ids the inbox cannot keep as sent: too long, a trailing or leading space, not ASCII, empty. */
const badId = fc.oneof(
  fc.constantFrom('evt_fuzz_a ', ' evt_fuzz_a', 'evt_fuzz_\u00e9', '', 'evt fuzz'),
  fc.integer({ min: 60, max: 70 }).map((n) => `evt_${'x'.repeat(n)}`),
  shortNastyId(),
);
function shortNastyId() {
  return fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }).map((s) => `evt_${s}`);
}

/**
 * Fragments with no test card number: an id keeps what it holds, card-like or not (issue 44, part 1),
 * into job ids and log lines, where the leak check would take it for a card (event-masking.test.ts
 * tries ids that read as card numbers).
 */
const cardless = jsonFragment.filter((f) => found(f, TEST_CARDS).length === 0);

/** A hostile value for a field: any fragment, left out, and for ids and text what hurts them most. */
function hostile(field: string): fc.Arbitrary<string | undefined> {
  const key = field.replace(/^tx\./, '');
  const common = [GATEWAY_ID_FIELDS.has(key) ? cardless : jsonFragment, fc.constant(undefined)];
  if (field === 'id' || field === 'type' || field === 'tx.id') return fc.oneof(json(badId), ...common);
  if (field === 'tx.description' || field === 'tx.merchant_trans_id')
    return fc.oneof(json(textWithCard), json(nastyString), ...common);
  return fc.oneof(...common);
}

/** One to three places of a sound event broken: a field hostile or left out, or a hostile extra key. */
const breakage = fc.array(
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(...FIELDS).chain((f) => hostile(f).map((v) => ({ field: f, v }))),
    },
    fc
      .tuple(fc.constantFrom('', 'data.', 'tx.'), nastyKey, jsonFragment)
      // An extra key of an id's name may stand for the id (the real one left out): no card number there.
      .filter(([, k, v]) => !GATEWAY_ID_FIELDS.has(k) || found(v, TEST_CARDS).length === 0)
      .map(([at, k, v]) => ({ field: `${at}+${k}`, v })),
    fc.constant({ field: 'data.transaction', v: undefined }),
  ),
  { minLength: 1, maxLength: 3 },
);

/** Prototype keys with plain values, which a sound event may carry too. */
const protoExtras = fc.array(
  fc.tuple(
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'metadata'),
    json(fc.jsonValue({ maxDepth: 2 })),
  ),
  { maxLength: 2 },
);

/** An event's text from its fields; `+key` fields are extra keys, put first (a later real key wins). */
function eventFrom(f: EventFields, extras: [string, string][]): string {
  const at = (prefix: string) =>
    Object.entries(f)
      .filter((e): e is [string, string] => e[0].startsWith(prefix) && e[1] !== undefined)
      .map(([k, v]) => [k.slice(prefix.length), v] as [string, string]);
  const extra = (prefix: string) => at(`${prefix}+`);
  const plain = (prefix: string) => at(prefix).filter(([k]) => !k.includes('.') && !k.startsWith('+'));
  const transaction =
    f['data.transaction'] === undefined && 'data.transaction' in f
      ? []
      : [['transaction', objectText([...extras, ...extra('tx.'), ...plain('tx.')])] as [string, string]];
  const data = objectText([...extra('data.'), ...transaction]);
  return objectText([...extra(''), ...plain('').filter(([k]) => k !== 'data'), ['data', data]]);
}

/** An event as gateway-api.md shapes it: sound, or broken in one to three places. */
const anyEvent = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(soundEvent, protoExtras).map(([f, x]) => eventFrom(f, x)) },
  {
    weight: 2,
    arbitrary: fc.tuple(soundEvent, breakage).map(([f, broken]) => {
      const fields: EventFields = { ...f };
      for (const { field, v } of broken) fields[field] = v;
      return eventFrom(fields, []);
    }),
  },
);

/** Bodies: events, JSON of any shape, random bytes; in some encoding. */
const bodyText = fc.oneof(
  { weight: 8, arbitrary: anyEvent },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: jsonFragment },
);
const encodedBody = fc.oneof(
  {
    weight: 8,
    arbitrary: encodedText(bodyText),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)) },
  {
    // Around the 256 KiB limit: an event padded with whitespace (still JSON) to an exact size.
    weight: 1,
    arbitrary: fc
      .tuple(anyEvent, fc.integer({ min: -2, max: 2 }), fc.constantFrom(0, 0, 0, 40_000))
      .map(([text, off, more]) => pad(Buffer.from(text, 'utf8'), MAX_WEBHOOK_BYTES + off + more)),
  },
  fc.constantFrom(Buffer.alloc(0), Buffer.from('{'), Buffer.from('{}'), Buffer.from(' ')),
);
function pad(bytes: Buffer, size: number): Buffer {
  if (bytes.length >= size) return bytes.subarray(0, size);
  return Buffer.concat([bytes, Buffer.alloc(size - bytes.length, 0x20)]);
}

/** How the delivery is signed. `valid` ones verify; every other kind must not. */
type Signing =
  | { kind: 'valid'; skew: number; style: 'plain' | 'upper' | 'extra' | 'spaced' }
  | { kind: 'none' }
  | { kind: 'header'; value: string }
  | { kind: 'stale'; skew: number }
  | { kind: 'other-secret'; secret: string }
  | { kind: 'mutated'; at: number; byte: number };

const signing: fc.Arbitrary<Signing> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant('valid' as const),
      // Within the 300 s tolerance, with a margin: the clock moves while the run goes on.
      skew: fc.integer({ min: -280, max: 280 }),
      style: fc.constantFrom('plain', 'plain', 'upper', 'extra', 'spaced'),
    }),
  },
  fc.constant({ kind: 'none' as const }),
  fc.record({
    kind: fc.constant('header' as const),
    value: headerValue(
      fc.oneof(
        fc.string({ maxLength: 80 }),
        fc.constantFrom(
          't=',
          'v1=',
          't=1',
          ',',
          '=',
          't=1,v1=',
          't=-1,v1=00',
          't=1e3,v1=00',
          't=99999999999999999999,v1=00',
        ),
        fc
          .string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 })
          .map((h) => `t=${Math.floor(Date.now() / 1000)},v1=${h}`),
      ),
    ),
  }),
  fc.record({
    kind: fc.constant('stale' as const),
    skew: fc.oneof(fc.integer({ min: 320, max: 1e9 }), fc.integer({ min: -1e9, max: -320 })),
  }),
  fc.record({
    kind: fc.constant('other-secret' as const),
    secret: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => generateSecret(() => b)),
  }),
  fc.record({
    kind: fc.constant('mutated' as const),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    byte: fc.integer({ min: 0, max: 255 }),
  }),
);

const delivery = fc.record({
  body: encodedBody.map(printable),
  signing,
  contentType: fc.option(contentType),
  replay: fc.option(fc.constantFrom('true', 'false', 'TRUE', '1')),
});
type Delivery = typeof delivery extends fc.Arbitrary<infer D> ? D : never;

// ---------------------------------------------------------------------------------------------

describe('fuzz: the webhook receiver (POST /webhooks/gateway)', function () {
  this.timeout(10 * 60_000);
  let t: TestKit;
  let secret: string;
  /** The model: every event the kit must hold, as first accepted. */
  const accepted = new Map<
    string,
    /** `payload`: what the inbox must hold; null: `sent` rewritten, its card numbers truncated (keptAs). */
    { type: string; transactionId: string; source: string; payload: string | null; sent: string }
  >();
  const statuses = new Map<number, number>();
  const errorBodies: string[] = [];
  let inputs = 0;
  let fiveHundreds = 0;
  let leaked: string[] | null = null;

  before(async () => {
    // api alone: no worker takes the jobs, so bull shows every job the receiver made.
    t = await startTestKit({ env: { ROLES: 'api' } });
    secret = await storedSecret(t);
  });
  after(async () => {
    const stored = t ? (await rows(t, 'webhook_inbox')).length : 0;
    console.log(
      `      fuzz: receiver: ${thousands(inputs)} inputs, ${fiveHundreds} 5xx, ${thousands(stored)} stored (${stored === accepted.size ? 'all signed and well-formed' : `expected ${accepted.size}`}; ${[...accepted.values()].filter((e) => e.payload === null).length} with a card number), ${leaked === null ? 'leaks not checked' : `${leaked.length} secrets or card numbers in logs/jobs/db`}; answers ${[
        ...statuses,
      ]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}: ${thousands(n)}`)
        .join(', ')}`,
    );
    await t?.close();
  });

  /** The X-Service-Signature header of a delivery, made now with the kit's clock; and whether it verifies. */
  function signatureOf(d: Delivery): { header: string | null; sent: Buffer; valid: boolean } {
    const now = unixSeconds(t.clock.now());
    const s = d.signing;
    switch (s.kind) {
      case 'valid': {
        const header = sign(d.body, secret, now + s.skew);
        const [tPart, v1] = header.split(',') as [string, string];
        const styled = {
          plain: header,
          upper: `${tPart},${v1.toUpperCase().replace('V1=', 'v1=')}`,
          extra: `v0=abc,${tPart},v1=${'0'.repeat(64)},${v1}`,
          spaced: ` ${tPart} , ${v1} `,
        }[s.style];
        return { header: styled, sent: d.body, valid: true };
      }
      case 'none':
        return { header: null, sent: d.body, valid: false };
      case 'header':
        return { header: s.value, sent: d.body, valid: false };
      case 'stale':
        return { header: sign(d.body, secret, Math.max(0, now + s.skew)), sent: d.body, valid: false };
      case 'other-secret':
        return { header: sign(d.body, s.secret, now), sent: d.body, valid: false };
      case 'mutated': {
        // One byte replaced by another, or one byte more: signed over the body, sent over another.
        const sent = Buffer.from(d.body);
        const i = Math.floor(s.at * sent.length);
        const replaced = i < sent.length && sent[i] !== s.byte;
        if (replaced) sent[i] = s.byte;
        const mutated = replaced ? sent : Buffer.concat([sent, Buffer.from([s.byte])]);
        return { header: sign(d.body, secret, now), sent: mutated, valid: false };
      }
    }
  }

  it('answers every delivery as merchant.md says: 413, 401, 400, or 200 stored once; never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(delivery, async (d) => {
        const { header, sent, valid } = signatureOf(d);
        const headers: Record<string, string> = {};
        if (header !== null) headers['X-Service-Signature'] = header;
        if (d.contentType !== null) headers['content-type'] = d.contentType;
        if (d.replay !== null) headers['X-Service-Replay'] = d.replay;
        const answer = await send(t.url, { method: 'POST', path: '/webhooks/gateway', headers, body: sent });
        inputs += 1;
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status >= 500) fiveHundreds += 1;
        if (answer.status >= 400) {
          errorBodies.push(answer.text);
          expectErrorEnvelope(answer, 'POST /webhooks/gateway');
        }

        const verdict = verdictOf(sent);
        const expected =
          verdict.kind === 'too_large' ? 413 : !valid ? 401 : verdict.kind === 'malformed' ? 400 : 200;
        const why = verdict.kind === 'malformed' ? ` (${verdict.why})` : '';
        expect(
          answer.status,
          `${verdict.kind}${why}, ${d.signing.kind}: ${answer.text.slice(0, 300)}`,
        ).to.equal(expected);
        if (expected === 200 && verdict.kind === 'event' && !accepted.has(verdict.id)) {
          accepted.set(verdict.id, {
            type: verdict.type,
            transactionId: verdict.transactionId,
            source: d.replay === 'true' ? 'replay' : 'webhook',
            // As signed, but for a vault token, which the inbox keeps masked (shared/vault-tokens.ts),
            // and a card number outside the ids, which it keeps truncated (keptAs).
            payload: verdict.carded ? null : maskVaultTokens(verdict.text),
            sent: verdict.text,
          });
        }
      }),
      fuzzParameters(RUNS),
    );
  });

  it('the inbox holds exactly the validly signed, well-formed events, each as signed, card numbers truncated', async () => {
    const inbox = await rows(t, 'webhook_inbox');
    const held = new Map(inbox.map((r) => [r.event_id as string, r]));
    expect([...held.keys()].sort(), 'the inbox event ids').to.deep.equal([...accepted.keys()].sort());
    for (const [id, { sent, ...e }] of accepted) {
      const r = held.get(id)!;
      if (e.payload === null) keptAs(maskVaultTokens(sent), r.payload, `inbox row ${id}`);
      expect(
        { type: r.event_type, transactionId: r.transaction_id, source: r.source, payload: r.payload },
        `inbox row ${id}`,
      ).to.deep.equal({ ...e, payload: e.payload ?? r.payload });
    }
    expect(
      accepted.size,
      'some events were accepted (the generators reach the happy path)',
    ).to.be.greaterThan(RUNS / 20);
  });

  it('bull holds a job for no other event', async () => {
    const { jobIds } = await redisContents(t);
    const strangers = [...jobIds].filter((id) => !accepted.has(id));
    expect(strangers, 'jobs for events the kit did not accept').to.deep.equal([]);
  });

  it('no card number or secret in a log line, Redis, a table or an error body', async () => {
    leaked = await leaks(t, errorBodies);
    expect(leaked.slice(0, 5), `${leaked.length} leaks`).to.deep.equal([]);
  });
});
