/**
 * The merchant API's envelope, the one place its answers are written (merchant.md, HTTP interface:
 * the gateway's shape, gateway-api.md Response envelope, and on an error the request's id). The app's
 * routes and error middleware, the receiver served before the app and the server's own answers
 * (infra/http-server.ts) all build their bodies here. Pure: the server's answers sit below the merchant
 * folders, so the shape lives with what both sides may use. Its schemas, for the API document, are
 * `success` and `failure` in merchant/http/response-schemas.ts.
 */

/** A success: `code` empty, `data` what the route answers. */
export interface SuccessEnvelope<T = unknown> {
  success: true;
  message: string;
  code: '';
  data: T;
}

/** An error: its code, what it carries (`data`), each field's errors, and the request's id. */
export interface FailureEnvelope {
  success: false;
  message: string;
  code: string;
  data: unknown;
  errors?: Record<string, string[]>;
  /** The X-Request-Id of the request: what an operator searches the logs for. */
  request_id?: string | null;
}

export function successEnvelope<T>(data: T, message = ''): SuccessEnvelope<T> {
  return { success: true, message, code: '', data };
}

/**
 * An error's envelope. `requestId` is given by every error a request meets (null when the request has
 * no id yet); left out only by the readiness probe's 503, a state report rather than a request's error.
 */
export function failureEnvelope(
  code: string,
  message: string,
  {
    data = null,
    errors,
    requestId,
  }: { data?: unknown; errors?: Record<string, string[]>; requestId?: string | null } = {},
): FailureEnvelope {
  return {
    success: false,
    message,
    code,
    data,
    ...(errors ? { errors } : {}),
    ...(requestId === undefined ? {} : { request_id: requestId }),
  };
}
