import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { requestIdFor } from '../../infra/request-context.js';
import { errorAnswer } from '../errors/answer.js';
import {
  defaultEndpoint,
  type ReceiverAnswer,
  type ReceiverDeps,
  type ReceiverEndpoint,
  receive,
  unknownMerchant,
} from './receiver.js';

/** Where the gateway delivers its events (merchant.md, The receiver). */
export const WEBHOOK_PATH = '/webhooks/gateway';

/** A merchant id as a path segment: digits, no leading zero (gateway-merchants.ts reads them so). */
const MERCHANT_SEGMENT = /^[1-9]\d{0,9}$/;

/**
 * Where a delivery goes: `/webhooks/gateway` (the default endpoint: `merchant` null) or
 * `/webhooks/gateway/{merchant_id}` (issue 45, platform mode), a query string allowed; null for any
 * other request. Plain string work: it runs on every request the server takes.
 */
export function deliveryTarget(req: IncomingMessage): { merchant: string | null } | null {
  const url = req.url;
  if (req.method !== 'POST' || url === undefined || !url.startsWith(WEBHOOK_PATH)) return null;
  const end = url.indexOf('?', WEBHOOK_PATH.length);
  const path = end < 0 ? url : url.slice(0, end);
  if (path.length === WEBHOOK_PATH.length) return { merchant: null };
  if (path[WEBHOOK_PATH.length] !== '/') return null;
  const segment = path.slice(WEBHOOK_PATH.length + 1);
  return MERCHANT_SEGMENT.test(segment) ? { merchant: segment } : null;
}

/** A delivery as the gateway sends one: POST to a path as the kit registers it, a query string allowed. */
export function isDelivery(req: IncomingMessage): boolean {
  return deliveryTarget(req) !== null;
}

/**
 * The endpoint a delivery's path names, or the 404 of a merchant the kit does not act for. `segment`:
 * the merchant id in the path (digits), or null for the path without one.
 */
function endpointOf(
  deps: ReceiverDeps,
  fallback: ReceiverEndpoint,
  segment: string | null,
): ReceiverEndpoint | null {
  if (segment === null) return fallback;
  return MERCHANT_SEGMENT.test(segment) ? (deps.merchant?.(Number(segment)) ?? null) : null;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The gateway's deliveries, straight off Node's request, before the koa app: the one route under
 * load, thousands a second, where koa's context and middleware chain were a quarter of the API
 * process's CPU a delivery (146 µs before, 107 after, at 32 connections). What the app gives every
 * answer, this gives too: the security headers, `X-Request-Id` (the caller's, or a new one), one log
 * line (at debug when accepted: the inbox keeps each delivery with its time, and the metrics count
 * them), and the app's answer to an error (errors/answer.ts errorAnswer).
 */
export function deliveryListener(
  deps: ReceiverDeps & { securityHeaders: readonly [string, string][] },
): (req: IncomingMessage, res: ServerResponse) => void {
  const fixed = deps.securityHeaders.flat();
  const fallback = defaultEndpoint(deps);
  return (req, res) => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const requestId = requestIdFor(typeof incoming === 'string' ? incoming : undefined);
    const segment = deliveryTarget(req)?.merchant ?? null;
    const path = segment === null ? WEBHOOK_PATH : `${WEBHOOK_PATH}/${segment}`;
    const endpoint = endpointOf(deps, fallback, segment);
    (endpoint === null
      ? Promise.resolve(unknownMerchant(requestId, segment!))
      : receive(req, deps, requestId, endpoint)
    )
      .catch((error: unknown) => failed(deps, requestId, error, path))
      .then((answer) => {
        const headers = [
          ...fixed,
          'content-type',
          JSON_TYPE,
          'content-length',
          String(Buffer.byteLength(answer.body)),
          'x-request-id',
          requestId,
        ];
        for (const name in answer.headers) headers.push(name, answer.headers[name]!);
        res.writeHead(answer.status, headers);
        res.end(answer.body);
        const ms = performance.now() - started;
        deps.observe?.(answer.outcome, ms / 1000);
        const level = answer.status === 200 ? 'debug' : 'info';
        if (deps.logger.isLevelEnabled(level))
          deps.logger[level](
            {
              request_id: requestId,
              method: 'POST',
              path,
              status: answer.status,
              ms: Math.round(ms),
            },
            'request',
          );
      })
      .catch((error: unknown) => {
        // Writing the answer failed (the socket gone mid-write): nothing left to tell the sender.
        deps.logger.warn(
          { request_id: requestId, err: { message: (error as Error).message } },
          'answer not sent',
        );
        res.destroy();
      });
  };
}

/** An error `receive` left to its caller (a body that could not be read, a defect), as the app answers it. */
function failed(deps: ReceiverDeps, requestId: string, caught: unknown, path = WEBHOOK_PATH): ReceiverAnswer {
  const { status, body, headers } = errorAnswer(caught, deps.logger, path, requestId);
  return { outcome: status < 500 ? 'malformed' : 'error', status, body: JSON.stringify(body), headers };
}

/**
 * The same receiver as a route of the koa app, for the path's other spellings (a trailing slash, other
 * letter case) that the router matches and `isDelivery` does not; the app's middleware gives those
 * their headers and log line. An error is answered here as the listener answers it, so the metrics
 * count it the same way.
 */
export function deliveryRoute(deps: ReceiverDeps): (ctx: Context) => Promise<void> {
  const fallback = defaultEndpoint(deps);
  return async (ctx) => {
    const started = performance.now();
    const requestId = ctx.state.requestId as string;
    // The router's `/webhooks/gateway/:merchant_id`, in whatever case the path was written.
    const segment = (ctx.params as Record<string, string> | undefined)?.merchant_id ?? null;
    const endpoint = endpointOf(deps, fallback, segment);
    const answer =
      endpoint === null
        ? unknownMerchant(requestId, segment!)
        : await receive(ctx.req, deps, requestId, endpoint).catch((error: unknown) =>
            failed(deps, requestId, error, segment === null ? WEBHOOK_PATH : `${WEBHOOK_PATH}/${segment}`),
          );
    ctx.status = answer.status;
    ctx.type = JSON_TYPE;
    ctx.body = answer.body;
    ctx.set(answer.headers);
    deps.observe?.(answer.outcome, (performance.now() - started) / 1000);
  };
}
