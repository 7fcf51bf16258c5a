import type { Logger } from 'pino';
import { GatewayBudgetExceeded, GatewayError, GatewayNetworkError } from '../../client/errors.js';
import { MerchantKeyMissing, MerchantKeyRefused, MerchantNotServed } from '../../client/merchant-gateways.js';
import { databaseUnavailable } from '../../infra/database.js';
import { loggedPath } from '../../infra/request-log.js';
import { type FailureEnvelope, failureEnvelope } from '../../shared/envelope.js';
import { type CurrencyCode, formatMoney } from '../../shared/money.js';
import { NothingToOperate, OperationConflict, OrderDisputed } from '../checkout/operations.js';
import { TooManyAttempts } from '../orders/attempt-cap.js';
import { InvalidTransition } from '../orders/status.js';
import { DuplicateReference, OrderNotFound } from '../store/index.js';
import { HttpError, invalidState } from './http-error.js';

/** Known domain errors to their answers; anything else is a 500 that shows nothing inside. */
function toHttp(error: unknown): HttpError | null {
  if (error instanceof HttpError) return error;
  if (error instanceof OrderNotFound) return new HttpError(404, 'NOT_FOUND', 'Order not found.');
  if (error instanceof DuplicateReference) {
    return new HttpError(409, 'DUPLICATE_REFERENCE', 'An order with this reference exists.', {
      errors: { reference: ['is already used'] },
    });
  }
  if (error instanceof InvalidTransition) return invalidState(error);
  if (error instanceof TooManyAttempts) {
    return new HttpError(
      409,
      'TOO_MANY_ATTEMPTS',
      `This order has had ${error.failed} failed payment attempts and takes no more. Place a new order to pay again.`,
      { data: { failed_attempts: error.failed, limit: error.limit } },
    );
  }
  // Platform mode: what the partner key may not ask, refused before anything was sent or stored.
  if (error instanceof MerchantKeyMissing)
    return new HttpError(409, 'MERCHANT_KEY_MISSING', error.message, {
      data: { merchant_id: error.merchantId, operation: error.operation },
    });
  // Platform mode, the merchant's own key refused by the gateway: a 409 as its missing key is (the
  // kit's setting is what is wrong, not the request), naming the key; nothing was done at the gateway.
  if (error instanceof MerchantKeyRefused)
    return new HttpError(409, 'MERCHANT_KEY_REFUSED', error.message, {
      data: {
        merchant_id: error.merchantId,
        operation: error.operation,
        gateway_status: error.refusal.status,
        gateway_code: error.refusal.code,
      },
    });
  if (error instanceof MerchantNotServed)
    return new HttpError(409, 'MERCHANT_NOT_SERVED', error.message, {
      data: { merchant_id: error.merchantId },
    });
  if (error instanceof OperationConflict) return new HttpError(409, 'IDEMPOTENCY_CONFLICT', error.message);
  if (error instanceof NothingToOperate) return new HttpError(409, 'INVALID_STATE', error.message);
  if (error instanceof OrderDisputed) {
    const o = error.order;
    const taken = formatMoney(o.disputed_minor, o.currency as CurrencyCode);
    return new HttpError(
      409,
      'ORDER_DISPUTED',
      `The order's payment is charged back (${taken} taken back by the bank): a refund would pay the customer twice. Nothing was refunded. If the dispute is won the order is paid again and can be refunded.`,
      { data: { status: o.status, disputed_amount: o.disputed_minor } },
    );
  }
  const gateway = gatewayFailure(error);
  if (gateway) return gateway;
  if (databaseUnavailable(error))
    return new HttpError(503, 'UNAVAILABLE', 'The service cannot reach its database; please retry.', {
      headers: { 'Retry-After': '5' },
    });
  // raw-body's own errors carry a `type` (request.aborted, encoding.unsupported, ...) and a 4xx status.
  const e = error as { type?: string; status?: number };
  if (e?.type === 'entity.too.large')
    return new HttpError(413, 'VALIDATION_FAILED', 'The request body is too large.', {
      errors: { body: ['is too large'] },
    });
  if (typeof e?.type === 'string' && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return new HttpError(400, 'BAD_REQUEST', 'The request body could not be read.', {
      errors: { body: ['could not be read'] },
    });
  }
  return null;
}

/**
 * A gateway call that a route passed through (the payment-methods list): the gateway being down or
 * slowing the key down is 503 (try again), any other refusal 502 (the kit's request or key is wrong,
 * which the caller cannot fix). Checkout and operations map their own gateway answers.
 */
export function gatewayFailure(error: unknown): HttpError | null {
  if (error instanceof GatewayBudgetExceeded)
    return new HttpError(503, 'GATEWAY_BUSY', 'The payment gateway is busy; try again shortly.', {
      headers: { 'Retry-After': String(error.retryAfterSeconds) },
    });
  if (error instanceof GatewayNetworkError)
    return new HttpError(503, 'GATEWAY_UNAVAILABLE', 'The payment gateway did not answer; try again.');
  if (!(error instanceof GatewayError)) return null;
  if (error.retryable) {
    const after = error.details.retryAfterSeconds;
    return new HttpError(503, 'GATEWAY_UNAVAILABLE', 'The payment gateway is not available; try again.', {
      data: { gateway_code: error.code },
      ...(after === undefined ? {} : { headers: { 'Retry-After': String(after) } }),
    });
  }
  return new HttpError(502, 'GATEWAY_ERROR', 'The payment gateway refused the request.', {
    data: { gateway_code: error.code },
  });
}

/** What the kit answers to an error: its status, its envelope and its headers. */
export interface ErrorAnswer {
  status: number;
  body: FailureEnvelope;
  headers: Record<string, string>;
}

/**
 * What the API answers to an error: its status, the envelope (with the request id an operator
 * searches the logs for) and headers; an operator's problem, an outage or a defect is logged, a
 * defect by name and stack only (request bodies, which may hold card data, never reach a log).
 * Served by the app's middleware (http/errors.ts), and by the receiver outside the app
 * (webhooks/delivery-endpoint.ts): below both, so the receiver imports nothing of the app that
 * mounts it.
 */
export function errorAnswer(
  caught: unknown,
  logger: Logger,
  path: string,
  requestId: string | null,
): ErrorAnswer {
  let error = toHttp(caught);
  const where = { request_id: requestId ?? undefined, path: loggedPath(path) };
  if (error && (caught instanceof GatewayError || caught instanceof GatewayNetworkError)) {
    // The operator's problem (a revoked key, a gateway outage), not the caller's: say so in the log.
    logger.warn({ ...where, status: error.status, gateway: gatewayCodeOf(caught) }, 'gateway call failed');
  }
  if (caught instanceof MerchantKeyRefused) {
    const { merchantId, operation, refusal } = caught;
    logger.warn(
      { ...where, merchant: merchantId, operation, gateway: refusal.code, gateway_status: refusal.status },
      "the gateway refused a merchant's own key: set the right one (merchant-key set or GATEWAY_MERCHANT_KEYS)",
    );
  }
  if (error?.code === 'UNAVAILABLE') {
    // An outage, not a defect: one line for the operator, no stack.
    logger.error({ ...where, err: { message: (caught as Error).message } }, 'database unavailable');
  }
  if (!error) {
    logger.error(
      {
        ...where,
        err: {
          name: (caught as Error)?.name,
          message: (caught as Error)?.message,
          stack: (caught as Error)?.stack,
        },
      },
      'unexpected error',
    );
    error = new HttpError(500, 'INTERNAL', 'Something went wrong on our side.');
  }
  return {
    status: error.status,
    body: failureEnvelope(error.code, error.message, {
      data: error.extra.data ?? null,
      errors: error.extra.errors,
      requestId,
    }),
    headers: {
      ...error.extra.headers,
      // A body refused as too large is left unread: the connection cannot carry another request, and
      // a client that sent the next one on it would wait, then find it reset.
      ...(error.status === 413 ? { Connection: 'close' } : {}),
    },
  };
}

const gatewayCodeOf = (error: GatewayError | GatewayNetworkError) =>
  error instanceof GatewayError ? error.code : error.kind;
