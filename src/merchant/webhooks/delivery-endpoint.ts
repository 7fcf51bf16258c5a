import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { requestIdFor } from '../../infra/request-context.js';
import { errorAnswer } from '../errors/answer.js';
import { type ReceiverAnswer, type ReceiverDeps, receive } from './receiver.js';

/** Where the gateway delivers its events (merchant.md, The receiver). */
export const WEBHOOK_PATH = '/webhooks/gateway';

/** A delivery as the gateway sends one: POST to the path as the kit registers it, a query string allowed. */
export function isDelivery(req: IncomingMessage): boolean {
  const url = req.url;
  return (
    req.method === 'POST' &&
    url !== undefined &&
    url.startsWith(WEBHOOK_PATH) &&
    (url.length === WEBHOOK_PATH.length || url[WEBHOOK_PATH.length] === '?')
  );
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
  return (req, res) => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const requestId = requestIdFor(typeof incoming === 'string' ? incoming : undefined);
    receive(req, deps, requestId)
      .catch((error: unknown) => failed(deps, requestId, error))
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
              path: WEBHOOK_PATH,
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
function failed(deps: ReceiverDeps, requestId: string, caught: unknown): ReceiverAnswer {
  const { status, body, headers } = errorAnswer(caught, deps.logger, WEBHOOK_PATH, requestId);
  return { outcome: status < 500 ? 'malformed' : 'error', status, body: JSON.stringify(body), headers };
}

/**
 * The same receiver as a route of the koa app, for the path's other spellings (a trailing slash, other
 * letter case) that the router matches and `isDelivery` does not; the app's middleware gives those
 * their headers and log line. An error is answered here as the listener answers it, so the metrics
 * count it the same way.
 */
export function deliveryRoute(deps: ReceiverDeps): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    const started = performance.now();
    const requestId = ctx.state.requestId as string;
    const answer = await receive(ctx.req, deps, requestId).catch((error: unknown) =>
      failed(deps, requestId, error),
    );
    ctx.status = answer.status;
    ctx.type = JSON_TYPE;
    ctx.body = answer.body;
    ctx.set(answer.headers);
    deps.observe?.(answer.outcome, (performance.now() - started) / 1000);
  };
}
