import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context, Next } from 'koa';
import { hasCardNumber } from '../shared/card-numbers.js';
import { cryptoRandom, randomId } from '../shared/ids.js';

/** The request a piece of work runs for: every log line written meanwhile carries its id. */
const current = new AsyncLocalStorage<{ requestId: string }>();

/** The id of the request in hand, if any (the logger's mixin reads it). */
export function currentRequestId(): string | undefined {
  return current.getStore()?.requestId;
}

/**
 * An incoming id is honoured when it is a plain token and not a card number (it goes on every log line
 * and into error bodies); anything else is replaced, never echoed.
 */
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const acceptable = (id: string) => ACCEPTABLE_ID.test(id) && !hasCardNumber(id);

/** The id of a request that sent `incoming` as its `X-Request-Id`: that one if acceptable, else a new one. */
export function requestIdFor(incoming: string | undefined): string {
  return incoming !== undefined && acceptable(incoming) ? incoming : randomId('req_', cryptoRandom, 20);
}

/**
 * Gives each request an id: the caller's `X-Request-Id` (a load balancer's, a storefront's) or a new
 * one, answered in the `X-Request-Id` header and in error bodies, and on every log line of the request.
 */
export function requestContext() {
  return async (ctx: Context, next: Next): Promise<void> => {
    const requestId = requestIdFor(ctx.get('X-Request-Id'));
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    await current.run({ requestId }, next);
  };
}
