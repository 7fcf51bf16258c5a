import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createGateway, type Gateway } from '../../src/gateway/app.js';
import { parseSeed, type SeedInput } from '../../src/gateway/seed.js';
import { ManualClock } from '../../src/shared/clock.js';
import { seededRandom } from '../../src/shared/ids.js';

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
}

/** A sandbox on port 0 with a manual clock, seeded randomness and captured logs. */
export async function startGateway(options: StartOptions = {}): Promise<TestGateway> {
  const input = testSeed();
  options.seed?.(input);
  const clock = new ManualClock();
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
    random: seededRandom(42),
    logger: pino({ level: 'trace' }, stream),
    resolve: options.resolve ?? (async () => ['93.184.216.34']),
    deliveryTimeoutMs: options.deliveryTimeoutMs ?? 500,
    sleep:
      options.sleep ??
      (async (ms) => {
        sleeps.push(ms);
      }),
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
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, body, text };
  };
  return { gateway, url, clock, logs, sleeps, call, close };
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
