import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { loggedPath } from '../../infra/request-log.js';
import { ApiError } from './errors.js';

/** gateway-api.md, Response envelope: the shape of every answer, errors included. */
export interface Envelope {
  success: boolean;
  message: string;
  code: string;
  data: unknown;
  errors?: Record<string, string[]>;
}

export function respond(ctx: Context, data: unknown, message: string, status = 200): void {
  ctx.status = status;
  ctx.body = { success: true, message, code: '', data } satisfies Envelope;
}

export function errorEnvelope(error: ApiError): Envelope {
  const body: Envelope = {
    success: false,
    message: error.message,
    code: error.code,
    data: error.options.data ?? null,
  };
  if (error.options.errors) body.errors = error.options.errors;
  return body;
}

/**
 * The one mapping from errors to answers. Unexpected errors show no internals; the rate header is
 * set on every answer, this one's included (sandbox.md section 9).
 */
export function envelopeMiddleware(logger: Logger, defaultRemaining: () => number) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined)
        throw new ApiError(404, 'ERR_NOT_FOUND', 'Not found.');
    } catch (caught) {
      const error = toApiError(caught, logger, ctx);
      ctx.status = error.status;
      ctx.body = errorEnvelope(error);
      for (const [name, value] of Object.entries(error.options.headers ?? {})) ctx.set(name, value);
    } finally {
      const remaining = ctx.state.rateRemaining as number | undefined;
      ctx.set('X-RateLimit-Remaining', String(remaining ?? defaultRemaining()));
    }
  };
}

function toApiError(caught: unknown, logger: Logger, ctx: Context): ApiError {
  if (caught instanceof ApiError) return caught;
  // raw-body's errors carry a status and a type; they are the client's fault, not ours.
  const e = caught as { status?: number; type?: string };
  if (e?.type === 'entity.too.large') {
    return new ApiError(413, 'ERR_VALIDATION_FAILED', 'The request body is larger than 1 MiB.', {
      errors: { body: ['must be at most 1 MiB'] },
    });
  }
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    return new ApiError(422, 'ERR_VALIDATION_FAILED', 'The request body could not be read.', {
      errors: { body: ['could not be read'] },
    });
  }
  logger.error({ err: caught, method: ctx.method, path: loggedPath(ctx.path) }, 'unexpected error');
  return new ApiError(
    500,
    'ERR_UNEXPECTED',
    'An unexpected error occurred. It is safe to retry with backoff.',
  );
}
