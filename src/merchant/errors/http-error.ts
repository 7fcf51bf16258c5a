import { type InvalidTransition, OrderClosed } from '../orders/status.js';

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

/**
 * 409 INVALID_STATE: the order's status, the statuses the action is allowed from, and `more` (the
 * order, say). An order that ended is 409 ORDER_CLOSED: not a state to wait out, a new order pays.
 */
export const invalidState = (error: InvalidTransition, more: Record<string, unknown> = {}) =>
  error instanceof OrderClosed
    ? new HttpError(
        409,
        'ORDER_CLOSED',
        `The order is closed (${error.reason ?? 'ended'}) and takes no more payments; place a new order to pay.`,
        { data: { status: error.current, allowed: error.allowed, closed_reason: error.reason, ...more } },
      )
    : new HttpError(409, 'INVALID_STATE', `The order is ${error.current}: ${error.message}.`, {
        data: { status: error.current, allowed: error.allowed, ...more },
      });
