import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { createGateway, type Gateway, type GatewayPersistence } from '../../src/gateway/app.js';
import { parseSeed, type SeedInput } from '../../src/gateway/state/seed.js';
import { ManualClock } from '../../src/shared/clock.js';
import { type RandomSource, seededRandom } from '../../src/shared/ids.js';

export const MERCHANT_KEY = 'sk_test_merchant_1001';
export const OTHER_MERCHANT_KEY = 'sk_test_merchant_1002';
export const NO_SCOPE_KEY = 'sk_test_merchant_1002_noscope';
export const INACTIVE_KEY = 'sk_test_merchant_1001_inactive';
export const INACTIVE_MERCHANT_KEY = 'sk_test_merchant_1003';
export const PARTNER_KEY = 'sk_test_partner_9001';

/**
 * The accounts of config/gateway-seed.json, plus the cases the auth rules need: a second merchant
 * (KWD and EUR), an inactive merchant linked to the partner, an inactive key and a key without scopes.
 */
export function testSeed(): SeedInput {
  return {
    merchants: [
      {
        id: 1001,
        name: 'Acme Shop',
        active: true,
        currencies: ['EUR', 'USD', 'GBP', 'JPY'],
        webhook_readiness_gate: false,
        payment_methods: [
          {
            payment_method: 'ideal',
            label: 'iDEAL',
            provider: 'sandbox-ideal',
            countries: ['NL'],
            currencies: ['EUR'],
            enabled: true,
          },
          {
            payment_method: 'psc',
            label: 'paysafecard',
            provider: 'sandbox-psc',
            countries: [],
            currencies: ['EUR', 'USD', 'GBP'],
            enabled: true,
          },
        ],
      },
      {
        id: 1002,
        name: 'Other Shop',
        active: true,
        currencies: ['EUR', 'KWD'],
        webhook_readiness_gate: false,
        payment_methods: [],
      },
      {
        id: 1003,
        name: 'Closed Shop',
        active: false,
        currencies: ['EUR'],
        webhook_readiness_gate: false,
        payment_methods: [],
      },
    ],
    partners: [{ id: 9001, merchant_ids: [1001, 1003] }],
    api_keys: [
      { key: MERCHANT_KEY, merchant_id: 1001, scopes: ['webhooks:manage'], active: true },
      { key: OTHER_MERCHANT_KEY, merchant_id: 1002, scopes: ['webhooks:manage'], active: true },
      { key: NO_SCOPE_KEY, merchant_id: 1002, scopes: [], active: true },
      { key: INACTIVE_KEY, merchant_id: 1001, scopes: ['webhooks:manage'], active: false },
      { key: INACTIVE_MERCHANT_KEY, merchant_id: 1003, scopes: ['webhooks:manage'], active: true },
      { key: PARTNER_KEY, partner_id: 9001, scopes: ['webhooks:manage'], active: true },
    ],
  };
}

/** The parsed JSON of an answer's text, or `undefined` when it is not JSON (an HTML page, a bare 502). */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: tests read envelopes of every shape
export interface Answer<T = any> {
  status: number;
  headers: Headers;
  /** The parsed JSON envelope (or `undefined` for a non-JSON answer). */
  body: T;
  text: string;
}

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is, instead of JSON of `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestGateway {
  gateway: Gateway;
  url: string;
  clock: ManualClock;
  /** Every line the gateway logged, at trace level. */
  logs: string[];
  /** What the injected `sleep` was asked to wait, in order. */
  sleeps: number[];
  // biome-ignore lint/suspicious/noExplicitAny: tests read envelopes of every shape
  call<T = any>(method: string, path: string, options?: CallOptions): Promise<Answer<T>>;
  close(): Promise<void>;
}

export interface StartOptions {
  seed?: (seed: SeedInput) => void;
  /** Webhook host resolution; default: every name resolves to a public documentation-free address. */
  resolve?: (host: string) => Promise<string[]>;
  /** Default 500 ms, so a hanging receiver costs tests little. */
  deliveryTimeoutMs?: number;
  /** Replaces the default sleep, which records and returns at once. */
  sleep?: (ms: number) => Promise<void>;
  /** A state file (src/gateway/persistence); default none: memory only. */
  persistence?: GatewayPersistence;
  /** Default `seededRandom(42)`. A restarted sandbox needs another seed, or it draws the same random ids again. */
  random?: RandomSource;
  /** Default a new ManualClock at 2026-11-01 12:00 UTC. */
  clock?: ManualClock;
  /** What sends webhooks; default the global fetch, to real receivers on local ports. */
  fetch?: typeof fetch;
}

/** A sandbox on port 0 with a manual clock, seeded randomness and captured logs. */
export async function startGateway(options: StartOptions = {}): Promise<TestGateway> {
  const input = testSeed();
  options.seed?.(input);
  const clock = options.clock ?? new ManualClock();
  const logs: string[] = [];
  const sleeps: number[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const gateway = createGateway({
    seed: parseSeed(input),
    clock,
    random: options.random ?? seededRandom(42),
    logger: pino({ level: 'trace' }, stream),
    resolve: options.resolve ?? (async () => ['93.184.216.34']),
    deliveryTimeoutMs: options.deliveryTimeoutMs ?? 500,
    sleep:
      options.sleep ??
      (async (ms) => {
        sleeps.push(ms);
      }),
    persistence: options.persistence,
    fetch: options.fetch,
  });
  const { url, close } = await gateway.listen(0);
  const call = async (method: string, path: string, o: CallOptions = {}): Promise<Answer> => {
    const headers: Record<string, string> = { ...o.headers };
    const key = o.key === undefined ? MERCHANT_KEY : o.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let payload: string | undefined = o.rawBody;
    if (payload === undefined && o.body !== undefined) payload = JSON.stringify(o.body);
    if (payload !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(url + path, { method, headers, body: payload, redirect: 'manual' });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: jsonOf(text), text };
  };
  return { gateway, url, clock, logs, sleeps, call, close };
}

/** Fails with the answer's text in the message, so a wrong status shows what came back. */
export const expectStatus = (answer: Answer, status: number) => {
  expect(answer.status, `${answer.status} ${answer.text}`).to.equal(status);
};

/** X-RateLimit-Remaining, which every answer must carry. */
export function remainingOf(answer: Answer): number {
  const header = answer.headers.get('x-ratelimit-remaining');
  expect(header, `X-RateLimit-Remaining on ${answer.status}`).to.match(/^\d+$/);
  return Number(header);
}

/** The sandbox clock in Unix seconds, as signatures and retry schedules count it. */
export const nowSeconds = (gw: TestGateway) => Math.floor(gw.clock.now() / 1000);
export const advance = (gw: TestGateway, seconds: number) => gw.clock.advance(seconds * 1000);

/**
 * A seed mutation: limits high enough that the many calls of one file (the manual clock does not move
 * by itself) never reach the rate limits under test elsewhere.
 */
export function liftRateLimits(seed: SeedInput): void {
  seed.settings = {
    ...seed.settings,
    rate_limit: { limit: 100_000, window_s: 60, slowdown: [] },
    public_pages_per_minute: 100_000,
  };
}

/** Test cards of sandbox.md section 4, with a far-future expiry. */
export function card(number = '4242424242424242', extra: Record<string, unknown> = {}) {
  return { number, exp_month: 12, exp_year: 2034, cvv: '123', name: 'Ada Lovelace', ...extra };
}

let referenceCounter = 0;
export function uniqueReference(prefix = 'order'): string {
  referenceCounter += 1;
  return `${prefix}-${process.pid}-${referenceCounter}`;
}

/** A body for POST /api/v1/transactions that succeeds with the default card. */
export function transactionBody(overrides: Record<string, unknown> = {}) {
  return {
    amount: 12.34,
    currency: 'EUR',
    transaction_type: 'sale',
    reference: uniqueReference(),
    card: card(),
    customer: { email: 'ada@example.com', country_code: 'GB' },
    ...overrides,
  };
}

export { DECLINES_ONCE_SAVED, DECLINING_CARDS, luhnNumber, TEST_CARDS } from './cards.js';
