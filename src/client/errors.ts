/**
 * The client's errors: one for every answer the gateway gave (a non-2xx envelope), one for every
 * request that got no answer. Callers branch on `code` and `retryable`, never on messages.
 */
export class GatewayError extends Error {
  override name = 'GatewayError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: {
      errors?: Record<string, string[]>;
      data?: unknown;
      requestId?: string;
      retryAfterSeconds?: number;
    } = {},
  ) {
    super(message);
  }

  /** gateway-api.md, Errors: 500 is safe to retry with backoff; 429 after Retry-After; issuer hiccups later. */
  get retryable(): boolean {
    return this.status === 429 || this.status >= 500 || RETRYABLE_CODES.has(this.code);
  }
}

const RETRYABLE_CODES = new Set([
  'ERR_IDEMPOTENT_REQUEST_IN_PROGRESS',
  'ERR_CARD_ISSUER_UNAVAILABLE',
  'ERR_CARD_SYSTEM_ERROR',
  'ERR_UNEXPECTED',
]);

/** No usable answer: the connection failed, timed out, or the answer was not the envelope. */
export class GatewayNetworkError extends Error {
  override name = 'GatewayNetworkError';
  constructor(
    readonly kind: 'connection' | 'timeout' | 'malformed',
    message: string,
    /** False when the request may have reached the gateway (a timeout, a reset, a garbled answer). */
    readonly sentNothing: boolean,
  ) {
    super(message);
  }
  /** A repeat cannot act twice only when nothing was sent; otherwise only keyed or read requests may repeat. */
  get retryable(): boolean {
    return this.sentNothing;
  }
}
