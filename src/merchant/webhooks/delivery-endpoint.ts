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

/** Where a delivery to `/webhooks/gateway` goes: one object, the same for each. */
const DEFAULT_TARGET: { readonly merchant: string | null } = Object.freeze({ merchant: null });

/**
 * Where a delivery goes: `/webhooks/gateway` (the default endpoint: `merchant` null) or
 * `/webhooks/gateway/{merchant_id}` (issue 45, platform mode), a query string allowed; null for any
 * other request. Plain string work: it runs on every request the server takes.
 */
export function deliveryTarget(req: IncomingMessage): { readonly merchant: string | null } | null {
  const url = req.url;
  if (req.method !== 'POST' || url === undefined || !url.startsWith(WEBHOOK_PATH)) return null;
  const end = url.indexOf('?', WEBHOOK_PATH.length);
  const length = end < 0 ? url.length : end;
  if (length === WEBHOOK_PATH.length) return DEFAULT_TARGET;
  if (url[WEBHOOK_PATH.length] !== '/') return null;
  const segment = url.slice(WEBHOOK_PATH.length + 1, length);
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

/** The path a delivery's log line names. */
const pathOf = (segment: string | null) => (segment === null ? WEBHOOK_PATH : `${WEBHOOK_PATH}/${segment}`);

/**
 * The gateway's deliveries, straight off Node's request, before the koa app: the one route under
 * load, thousands a second, where koa's context and middleware chain were a quarter of the API
 * process's CPU a delivery (146 µs before, 107 after, at 32 connections). What the app gives every
 * answer, this gives too: the security headers (`securityHeaders`: the kit passes those of a JSON
 * answer, security-headers.ts jsonSecurityHeaderList), `X-Request-Id` (the caller's, or a new one),
 * one log line (at debug when accepted: the inbox keeps each delivery with its time, and the metrics
 * count them), and the app's answer to an error (errors/answer.ts errorAnswer). `otherwise`: where
 * every other request goes (the app), the path read once.
 *
 * Nothing a delivery does not need is made for it: an answer that is the same for every delivery
 * (a 200) has its header list written once, and each delivery only puts its request id in it.
 */
export function deliveryListener(
  deps: ReceiverDeps & { securityHeaders: readonly [string, string][] },
  otherwise?: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  const fixed = deps.securityHeaders.flat();
  const fallback = defaultEndpoint(deps);
  /** An answer's header list, the request id last: `Connection` and `Retry-After` are the answer's own. */
  const headList = (answer: ReceiverAnswer): string[] => {
    const list = [
      ...fixed,
      'content-type',
      JSON_TYPE,
      'content-length',
      String(Buffer.byteLength(answer.body)),
    ];
    for (const name in answer.headers) list.push(name, answer.headers[name]!);
    list.push('x-request-id', '');
    return list;
  };
  // Node reads the list as writeHead is called and keeps none of it: the same list serves every
  // delivery the same answer goes to, its last entry that delivery's id.
  const kept = new Map<ReceiverAnswer, string[]>();
  const head = (answer: ReceiverAnswer, requestId: string): string[] => {
    let list = answer.fixed ? kept.get(answer) : undefined;
    if (list === undefined) {
      list = headList(answer);
      if (answer.fixed) kept.set(answer, list);
    }
    list[list.length - 1] = requestId;
    return list;
  };

  const serve = async (req: IncomingMessage, res: ServerResponse, segment: string | null) => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const requestId = requestIdFor(typeof incoming === 'string' ? incoming : undefined);
    const endpoint = endpointOf(deps, fallback, segment);
    try {
      let answer: ReceiverAnswer;
      try {
        answer =
          endpoint === null
            ? unknownMerchant(requestId, segment!)
            : await receive(req, deps, requestId, endpoint);
      } catch (error) {
        answer = failed(deps, requestId, error, pathOf(segment));
      }
      res.writeHead(answer.status, head(answer, requestId));
      res.end(answer.body);
      const ms = performance.now() - started;
      deps.observe?.(answer.outcome, ms / 1000);
      const level = answer.status === 200 ? 'debug' : 'info';
      if (deps.logger.isLevelEnabled(level))
        deps.logger[level](
          {
            request_id: requestId,
            method: 'POST',
            path: pathOf(segment),
            status: answer.status,
            ms: Math.round(ms),
          },
          'request',
        );
    } catch (error) {
      // Writing the answer failed (the socket gone mid-write): nothing left to tell the sender.
      deps.logger.warn(
        { request_id: requestId, err: { message: (error as Error).message } },
        'answer not sent',
      );
      res.destroy();
    }
  };
  return (req, res) => {
    const target = deliveryTarget(req);
    if (target !== null) void serve(req, res, target.merchant);
    else if (otherwise) otherwise(req, res);
    else void serve(req, res, null);
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
