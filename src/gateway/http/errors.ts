import type { Refusal } from '../domain/payment-checks.js';

/** The gateway's one error type: everything that is not a success becomes one of these, then the envelope. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly options: {
      errors?: Record<string, string[]>;
      data?: unknown;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const validationFailed = (errors: Record<string, string[]>, message = 'The given data was invalid.') =>
  new ApiError(422, 'ERR_VALIDATION_FAILED', message, { errors });

export const notFound = (what = 'Resource') => new ApiError(404, 'ERR_NOT_FOUND', `${what} not found.`);

export const authFailed = (status: 400 | 401 | 403, message: string) =>
  new ApiError(status, 'ERR_AUTH_FAILED', message);

/** A refusal of the domain's rules; `data` goes in the envelope, the duplicate's holder by default. */
export const refused = (r: Refusal, data: unknown = r.data ?? null) =>
  new ApiError(r.status, r.code, r.message, { data });

/** A 400 from the transaction endpoints: a decline, a gateway failure, a 3DS outcome. */
export const declined = (code: string, message: string, data: unknown = null) =>
  new ApiError(400, code, message, { data });
