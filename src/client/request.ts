import type { z } from 'zod';
import { type Budget, type Caller, MemoryBudget } from './budget.js';
import { GatewayBudgetExceeded, GatewayError, GatewayNetworkError } from './errors.js';
import { DEFAULT_RETRY, type RetryPolicy, retryDelayMs, shouldRetry } from './retry.js';
import { envelopeSchema } from './schemas.js';

/** The seams: tests inject them, nothing else does. */
export interface ClientDeps {
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
  /** In [0, 1): the jitter. */
  random: () => number;
}

export const defaultDeps: ClientDeps = {
  fetch: (...args) => fetch(...args),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  now: () => Date.now(),
  random: Math.random,
};

export interface RequestSpec<T> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: Record<string, unknown>;
  schema: z.ZodType<T>;
  /** Sent as `Idempotency-Key`, the same on every retry. */
  idempotencyKey?: string;
  /**
   * Who calls, for the budget: checkout and landing calls wait for it at most `shopperMaxWaitMs`;
   * the others as long as it says. Default `checkout`.
   */
  caller?: Caller;
}

export interface Answer<T> {
  data: T;
  status: number;
  replayed: boolean;
  remaining: number | null;
}

export interface RequesterOptions {
  baseUrl: string;
  apiKey: string;
  /** Per attempt. Default 15 s. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Shared by every client of the key in every process (the Redis budget). Default: this client's own. */
  budget?: Budget;
  /**
   * With a partner key: the merchant this client's calls are for, as the budget knows it (the gateway
   * merchant id as text), so that they spend from its part of the key's minute and no other
   * merchant's. Default: nobody's.
   */
  budgetTenant?: string;
  /**
   * How long a checkout or landing call may wait for the budget (checkout traffic past its share of
   * the minute, a 429's Retry-After) before it gives up with GatewayBudgetExceeded, sending nothing: a
   * shopper is waiting. Default 5 s. Operators and background callers wait as long as it says.
   */
  shopperMaxWaitMs?: number;
  deps?: Partial<ClientDeps>;
}

/** Codes of a connect that never reached the gateway: repeating it cannot do anything twice. */
const NOTHING_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The one request builder: auth, JSON, timeouts, the envelope, errors, retries and the budget. */
export class Requester {
  readonly deps: ClientDeps;
  readonly budget: Budget;
  readonly #retry: RetryPolicy;
  readonly #timeoutMs: number;
  readonly #baseUrl: string;

  constructor(private readonly options: RequesterOptions) {
    this.deps = { ...defaultDeps, ...options.deps };
    this.budget = options.budget ?? new MemoryBudget(this.deps.now);
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#timeoutMs = options.timeoutMs ?? 15_000;
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  async send<T>(spec: RequestSpec<T>): Promise<Answer<T>> {
    // Reads and keyed writes are safe to repeat; the gateway treats them as one (gateway-api.md, Idempotency).
    const replayable = spec.method === 'GET' || spec.idempotencyKey !== undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#once(spec);
      } catch (error) {
        if (attempt >= this.#retry.maxAttempts || !shouldRetry(error, replayable)) throw error;
        await this.deps.sleep(retryDelayMs(this.#retry, attempt, error, this.deps.random()));
      }
    }
  }

  async #once<T>(spec: RequestSpec<T>): Promise<Answer<T>> {
    // Every attempt, retries included, goes only once the budget admits it (and so counts it): a wait
    // is not a promise of a slot, since other callers, in this process or another, may take it first.
    const caller = spec.caller ?? 'checkout';
    const patience =
      caller === 'checkout' || caller === 'landing'
        ? (this.options.shopperMaxWaitMs ?? 5000)
        : Number.POSITIVE_INFINITY;
    const tenant = this.options.budgetTenant;
    let waited = 0;
    for (
      let wait = await this.budget.reserve(caller, tenant);
      wait > 0;
      wait = await this.budget.reserve(caller, tenant)
    ) {
      if (waited + wait > patience) {
        throw new GatewayBudgetExceeded(
          `${spec.method} ${spec.path}: the gateway budget's checkout share is spent for now`,
          Math.max(1, Math.ceil(wait / 1000)),
        );
      }
      waited += wait;
      await this.deps.sleep(wait);
    }
    const url = new URL(this.#baseUrl + spec.path);
    for (const [k, v] of Object.entries(spec.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.options.apiKey}`,
      Accept: 'application/json',
    };
    if (spec.body !== undefined) headers['Content-Type'] = 'application/json';
    if (spec.idempotencyKey !== undefined) headers['Idempotency-Key'] = spec.idempotencyKey;

    let response: Response;
    let text: string;
    try {
      response = await this.deps.fetch(url, {
        method: spec.method,
        headers,
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw networkError(error, spec);
    }
    const remaining = numberHeader(response.headers.get('X-RateLimit-Remaining'));
    const retryAfter =
      response.status === 429 ? (numberHeader(response.headers.get('Retry-After')) ?? 1) : null;
    // A 429 that shows budget left is a per-endpoint limit (test pings, replays): it delays only this
    // request's own retry. Any other 429 holds every caller of the key back.
    await this.budget.observe(remaining, remaining !== null && remaining > 0 ? null : retryAfter);

    const envelope = parseEnvelope(text);
    if (!envelope) {
      throw new GatewayNetworkError(
        'malformed',
        `${spec.method} ${spec.path}: HTTP ${response.status} without the gateway's envelope`,
        false,
      );
    }
    if (!response.ok || !envelope.success) {
      throw new GatewayError(
        response.status,
        envelope.code || `HTTP_${response.status}`,
        envelope.message || `HTTP ${response.status}`,
        {
          errors: envelope.errors,
          data: envelope.data,
          requestId: response.headers.get('X-Request-Id') ?? undefined,
          retryAfterSeconds: retryAfter ?? undefined,
        },
      );
    }
    const data = spec.schema.safeParse(envelope.data);
    if (!data.success) {
      const where = data.error.issues[0]?.path.join('.') || 'data';
      throw new GatewayNetworkError(
        'malformed',
        `${spec.method} ${spec.path}: unexpected answer at ${where}`,
        false,
      );
    }
    return {
      data: data.data,
      status: response.status,
      replayed: response.headers.get('Idempotency-Replayed') === 'true',
      remaining,
    };
  }
}

function parseEnvelope(text: string) {
  try {
    const parsed = envelopeSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function numberHeader(value: string | null): number | null {
  if (value === null || !/^\d+$/.test(value.trim())) return null;
  return Number(value);
}

/** Never the request body in a message: it may carry card data. */
function networkError(error: unknown, spec: RequestSpec<unknown>): GatewayNetworkError {
  const e = error as { name?: string; code?: string; cause?: { code?: string } };
  const where = `${spec.method} ${spec.path}`;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError')
    return new GatewayNetworkError('timeout', `${where}: no answer in time`, false);
  const code = e?.cause?.code ?? e?.code ?? 'unknown';
  return new GatewayNetworkError(
    'connection',
    `${where}: connection failed (${code})`,
    NOTHING_SENT.has(code),
  );
}
