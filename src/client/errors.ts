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
    readonly kind: 'connection' | 'timeout' | 'malformed' | 'budget',
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

/**
 * The key's shared budget would not admit the call within what its caller may wait (checkout traffic
 * past its share of the minute): nothing was sent. Not retried by the client: it already waited.
 */
export class GatewayBudgetExceeded extends GatewayNetworkError {
  override name = 'GatewayBudgetExceeded';
  constructor(
    message: string,
    /** Whole seconds until the budget would admit the call, at least 1. */
    readonly retryAfterSeconds: number,
  ) {
    super('budget', message, true);
  }
}

/**
 * Whether an error says the gateway is not answering at all (no connection, no answer in time, a 5xx
 * or 429, the key's budget spent), rather than something about the request: a caller with more to ask
 * stops there.
 */
export function gatewayNotAnswering(error: unknown): boolean {
  if (error instanceof GatewayNetworkError) return error.kind !== 'malformed';
  return error instanceof GatewayError && (error.status === 429 || error.status >= 500);
}

/**
 * Who holds the reference of an ERR_DUPLICATE, read from its `data` (gateway-api.md: `transaction_id`;
 * sandbox.md section 11: `payment_session_id` when the holder is a session's transaction, so a client
 * whose first answer was lost can resume that session). Ids are opaque: a numeric one becomes its
 * string. Null for any other error, or a duplicate that names no transaction; a gateway without the
 * session field gives `paymentSessionId` null.
 */
export function duplicateHolder(
  error: unknown,
): { transactionId: string; paymentSessionId: string | null } | null {
  if (!(error instanceof GatewayError) || error.code !== 'ERR_DUPLICATE') return null;
  const data = error.details.data;
  if (data === null || typeof data !== 'object') return null;
  const { transaction_id: transactionId, payment_session_id: sessionId } = data as Record<string, unknown>;
  const id =
    typeof transactionId === 'number' && Number.isFinite(transactionId)
      ? String(transactionId)
      : transactionId;
  if (typeof id !== 'string' || id === '') return null;
  // An empty session id names nothing to resume: null, like an absent one.
  return {
    transactionId: id,
    paymentSessionId: typeof sessionId === 'string' && sessionId !== '' ? sessionId : null,
  };
}
