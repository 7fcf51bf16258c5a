import { GatewayBudgetExceeded, GatewayError, GatewayNetworkError } from './errors.js';

export interface RetryPolicy {
  /** Attempts in all, the first included. Default 4. */
  maxAttempts: number;
  /** Default 200 ms. */
  baseDelayMs: number;
  /** Default 5 s. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 5000 };

/**
 * Capped exponential backoff with full jitter: attempt n (1-based) waits a random time up to
 * min(max, base * 2^(n-1)). `random` is in [0, 1).
 */
export function backoffMs(policy: RetryPolicy, attempt: number, random: number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(cap * random);
}

/**
 * Whether a failed request may be sent again. `replayable` says a repeat cannot do the work twice:
 * reads, and writes carrying an Idempotency-Key. Anything else is retried only when the gateway
 * certainly did not act: nothing was sent, or it answered 429, 409 in-progress or 500 (which the spec
 * calls safe to retry).
 */
export function shouldRetry(error: unknown, replayable: boolean): boolean {
  // The budget already held the call as long as its caller may wait.
  if (error instanceof GatewayBudgetExceeded) return false;
  if (error instanceof GatewayNetworkError) return replayable || error.sentNothing;
  if (!(error instanceof GatewayError)) return false;
  if (error.status === 429) return true;
  if (error.code === 'ERR_IDEMPOTENT_REQUEST_IN_PROGRESS') return true;
  // gateway-api.md, HTTP statuses: 500 is "unexpected; safe to retry with backoff", keyed or not.
  if (error.status === 500) return true;
  return error.status > 500 && replayable;
}

/** How long to wait before the next attempt: the gateway's Retry-After when it gave one. */
export function retryDelayMs(policy: RetryPolicy, attempt: number, error: unknown, random: number): number {
  if (error instanceof GatewayError && error.details.retryAfterSeconds !== undefined) {
    return error.details.retryAfterSeconds * 1000;
  }
  return backoffMs(policy, attempt, random);
}
