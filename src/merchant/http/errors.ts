import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import getRawBody from 'raw-body';
import type { z } from 'zod';
import { GatewayBudgetExceeded, GatewayError, GatewayNetworkError } from '../../client/errors.js';
import { databaseUnavailable } from '../../infra/database.js';
import { loggedPath } from '../../infra/request-log.js';
import { type CurrencyCode, formatMoney } from '../../shared/money.js';
import { NothingToOperate, OperationConflict, OrderDisputed } from '../checkout/operations.js';
import { TooManyAttempts } from '../orders/attempt-cap.js';
import { InvalidTransition } from '../orders/status.js';
import { DuplicateReference, OrderNotFound } from '../store/index.js';

/** The merchant API's one error type; the envelope mirrors the gateway's (merchant.md, HTTP interface). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: {
      errors?: Record<string, string[]>;
      data?: unknown;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
  }
}

export const invalid = (errors: Record<string, string[]>) =>
  new HttpError(422, 'VALIDATION_FAILED', 'The request is not valid.', { errors });

/** 409 INVALID_STATE: the order's status, the statuses the action is allowed from, and `more` (the order, say). */
export const invalidState = (error: InvalidTransition, more: Record<string, unknown> = {}) =>
  new HttpError(409, 'INVALID_STATE', `The order is ${error.current}: ${error.message}.`, {
    data: { status: error.current, allowed: error.allowed, ...more },
  });

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

export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new HttpError(404, 'NOT_FOUND', 'Not found.');
    } catch (caught) {
      const answer = errorAnswer(caught, logger, ctx.path, ctx.state.requestId ?? null);
      ctx.status = answer.status;
      ctx.body = answer.body;
      ctx.set(answer.headers);
    }
  };
}

/**
 * What the API answers to an error: its status, the envelope (with the request id an operator
 * searches the logs for) and headers; an operator's problem, an outage or a defect is logged, a
 * defect by name and stack only (request bodies, which may hold card data, never reach a log).
 * Served by the app's middleware, and by the receiver outside the app (delivery-endpoint.ts).
 */
export function errorAnswer(
  caught: unknown,
  logger: Logger,
  path: string,
  requestId: string | null,
): { status: number; body: Record<string, unknown>; headers: Record<string, string> } {
  let error = toHttp(caught);
  const where = { request_id: requestId ?? undefined, path: loggedPath(path) };
  if (error && (caught instanceof GatewayError || caught instanceof GatewayNetworkError)) {
    // The operator's problem (a revoked key, a gateway outage), not the caller's: say so in the log.
    logger.warn({ ...where, status: error.status, gateway: gatewayCodeOf(caught) }, 'gateway call failed');
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
    body: {
      success: false,
      message: error.message,
      code: error.code,
      data: error.extra.data ?? null,
      ...(error.extra.errors ? { errors: error.extra.errors } : {}),
      request_id: requestId,
    },
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

export function ok(ctx: Context, data: unknown, status = 200, message = ''): void {
  ctx.status = status;
  ctx.body = { success: true, message, code: '', data };
}

/** A JSON object body of at most `limit` bytes; malformed JSON or a non-object is a 422 on `body`. */
export async function jsonBody(ctx: Context, limit = 64 * 1024): Promise<Record<string, unknown>> {
  const raw = await getRawBody(ctx.req, { limit, encoding: 'utf8' });
  let parsed: unknown = {};
  if (raw.trim() !== '') {
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw invalid({ body: ['must be valid JSON'] });
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalid({ body: ['must be a JSON object'] });
  return parsed as Record<string, unknown>;
}

/**
 * Plain words for the checks that carry no message of their own (a schema's own message wins over
 * this map): a client reads "must be at most 255 characters", never a library's pattern dump.
 */
const plainWords: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'is required' : `must be ${article(issue.expected)}`;
    case 'too_big':
      return `must be at most ${String(issue.maximum)}${issue.origin === 'string' ? ' characters' : ''}`;
    case 'too_small':
      return `must be at least ${String(issue.minimum)}${issue.origin === 'string' ? ' characters' : ''}`;
    case 'invalid_format':
      return 'is not in the expected format';
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')}`;
    case 'unrecognized_keys':
      return `has unknown fields: ${issue.keys.join(', ')}`;
    default:
      return 'is not valid';
  }
};

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

export function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = validate(schema, input);
  if (result.ok) return result.data;
  throw invalid(result.errors);
}

/** `parse` of a query string (ctx.query), where a name given twice comes as an array of its values. */
export function parseQuery<S extends z.ZodType>(schema: S, query: Record<string, unknown>): z.output<S> {
  const result = validate(schema, query, { query: true });
  if (result.ok) return result.data;
  throw invalid(result.errors);
}

/**
 * The input, or every field's errors: for a route that reports them beside its own (a required
 * header), so that one 422 names everything the caller must fix.
 */
export function validate<S extends z.ZodType>(
  schema: S,
  input: unknown,
  { query = false }: { query?: boolean } = {},
): { ok: true; data: z.output<S> } | { ok: false; errors: Record<string, string[]> } {
  const result = schema.safeParse(input, { error: plainWords, reportInput: true });
  if (result.success) return { ok: true, data: result.data };
  const errors: Record<string, string[]> = {};
  for (const issue of result.error.issues) {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
    const repeated = query && Array.isArray((input as Record<string, unknown>)[String(issue.path[0])]);
    const message = repeated ? 'is given more than once; send it once' : messageOf(issue);
    if (!errors[field]?.includes(message)) errors[field] = [...(errors[field] ?? []), message];
  }
  return { ok: false, errors };
}

/**
 * What is wrong, where the schema's own message says otherwise: its "is required: ..." is the words
 * for a field left out, not for one given as a number or an object.
 */
function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.input !== undefined && issue.message.startsWith('is required')) {
    // "is required: an object with number, ..." says what it must be: kept, as "must be an object with ...".
    const what = /^is required: (an? .*)$/.exec(issue.message)?.[1];
    return `must be ${what ?? article(issue.expected)}`;
  }
  return issue.message;
}
