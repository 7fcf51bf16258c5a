import { createServer, type IncomingMessage, type RequestListener, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { failureEnvelope } from '../shared/envelope.js';
import { requestIdFor } from './request-context.js';
import { loggedPath } from './request-log.js';

/** The merchant error envelope (shared/envelope.ts), for the answers the server gives itself. */
const envelope = (code: string, message: string, requestId: string) =>
  JSON.stringify(failureEnvelope(code, message, { requestId }));

/**
 * What Node answers by itself when a request cannot reach the app (headers over 16 KiB, not HTTP, too
 * slow), as Node would (status, then the connection closed), but in the envelope instead of an empty body.
 */
const CLIENT_ERRORS: Record<string, [number, string, string, string]> = {
  HPE_HEADER_OVERFLOW: [
    431,
    'Request Header Fields Too Large',
    'HEADERS_TOO_LARGE',
    'The request headers are too large.',
  ],
  ERR_HTTP_REQUEST_TIMEOUT: [
    408,
    'Request Timeout',
    'REQUEST_TIMEOUT',
    'The request did not arrive in time.',
  ],
};
const NOT_HTTP: [number, string, string, string] = [
  400,
  'Bad Request',
  'BAD_REQUEST',
  'The request is not valid HTTP.',
];

/** Node's own answer as the app's would be: the headers every answer carries, an id, the envelope. */
function clientErrorAnswer(errorCode: string | undefined, headers: readonly [string, string][]): string {
  const [status, reason, code, message] = CLIENT_ERRORS[errorCode ?? ''] ?? NOT_HTTP;
  const requestId = requestIdFor(undefined);
  const body = envelope(code, message, requestId);
  return [
    `HTTP/1.1 ${status} ${reason}`,
    'Connection: close',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    ...headers.map(([name, value]) => `${name}: ${value}`),
    '',
    body,
  ].join('\r\n');
}

/** Of a request that came before the app was ready: 503 STARTING, as the app answers (its headers, an id). */
const answerStarting =
  (headers: readonly [string, string][]): RequestListener =>
  (req, res) => {
    const sent = req.headers['x-request-id'];
    const requestId = requestIdFor(Array.isArray(sent) ? sent[0] : sent);
    const body = envelope('STARTING', 'The service is starting; retry in a moment.', requestId);
    for (const [name, value] of headers) res.setHeader(name, value);
    res.writeHead(503, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'retry-after': '1',
      'x-request-id': requestId,
    });
    res.end(body);
  };

export interface HttpServer {
  port: number;
  /** From now on requests go to `handler` (until now: 503 STARTING). */
  ready(handler: RequestListener): void;
  /**
   * Takes no new connection and closes at once every connection without a request received whole
   * (idle, headers or body still arriving); each other one closes as soon as its answer is out.
   * Resolves when none is left.
   */
  drain(): Promise<void>;
  /**
   * Closes every connection left, requests in hand too: those it returns, for the log (their own
   * request line never comes: it is written once an answer is out).
   */
  cutOff(): CutRequest[];
}

/** A request whose answer was cut off, as the shutdown's warning names it. */
export interface CutRequest {
  method: string;
  /** Without its query, card numbers masked: as the request log gives it. */
  path: string;
  /** The id the app gave it (its X-Request-Id answer header); null if the app had not yet. */
  requestId: string | null;
  /** How long it had run. */
  ms: number;
}

/** An answer that knows when its request came: made as Node reads the request's head. */
class TimedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  readonly askedAt = performance.now();
}

/** A request in hand as its log line would name it; the app's request context set the id on `res`. */
function cutRequest(res: ServerResponse, since: number): CutRequest {
  const id = res.getHeader('x-request-id');
  return {
    method: res.req.method ?? '',
    path: loggedPath((res.req.url ?? '').split('?')[0]!),
    requestId: typeof id === 'string' ? id : null,
    ms: Math.round(performance.now() - since),
  };
}

/**
 * Binds the HTTP server before anything else starts. One request listener, attached before the port
 * is bound and kept for the server's life, passes each request to the handler of the moment: no
 * request ever finds no listener, so none waits forever for an answer (issue 8).
 */
export async function bindHttpServer(
  port: number,
  requestTimeoutMs: number,
  /** What every answer carries (the security headers): the server's own answers too. */
  headers: readonly [string, string][] = [],
  /** The address to listen on (HOST): loopback unless told otherwise. */
  host = '127.0.0.1',
): Promise<HttpServer> {
  let handler = answerStarting(headers);
  let draining = false;
  /** Each open connection and the answers in hand on it (several when requests are pipelined). */
  const connections = new Map<Socket, Set<ServerResponse>>();
  const server = createServer({
    // Each answer knows when it was asked for (for cutOff's log): a field, where an entry a request in
    // a WeakMap cost its insertion and the collector's work on it.
    ServerResponse: TimedResponse,
    // A request not complete (headers and body) in time is answered 408 and its socket closed
    // (HTTP_REQUEST_TIMEOUT_MS); the headers alone get at most 10 s. Node checks for both every
    // `connectionsCheckingInterval` (its default, 30 s, would let a 1 s timeout run 30 s).
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.min(10_000, requestTimeoutMs),
    connectionsCheckingInterval: Math.min(1000, Math.floor(requestTimeoutMs / 4)),
    // Node's default, stated: an idle client connection is kept 5 s (and closed at once on shutdown).
    // Behind a proxy that reuses connections longer, this must exceed the proxy's idle timeout.
    keepAliveTimeout: 5000,
  });

  /**
   * During a drain, a connection stays only while a request received whole (headers and body) waits
   * for its answer: the grace is for handlers that run. Node's closeIdleConnections() leaves one whose
   * headers or body are still arriving, which held a stop until its timeout (10 s for the headers).
   */
  const closeUnlessAnswering = (socket: Socket) => {
    const answers = connections.get(socket);
    if (!answers || socket.destroyed || socket.writableEnded) return; // gone, or Node is ending it
    if (![...answers].some((res) => res.req.complete)) socket.destroy();
  };

  server.on('connection', (socket: Socket) => {
    if (draining) {
      socket.destroy(); // accepted just as the drain began: it has no request in hand
      return;
    }
    connections.set(socket, new Set());
    socket.once('close', () => connections.delete(socket));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // Not over an answer already begun on this connection: that would corrupt it (Node's own rule).
    const begun = [...(connections.get(socket as Socket) ?? [])].some((res) => res.headersSent);
    if (socket.writable && !begun) socket.write(clientErrorAnswer(error.code, headers));
    socket.destroy(error);
  });
  /** An answer is done with (its `close`, which comes once): one function for every answer, no closure each. */
  function answered(this: ServerResponse) {
    const socket = this.req.socket;
    connections.get(socket)?.delete(this);
    // Node keeps a keep-alive connection open after its answer even when the server is closing, and
    // a next request may have begun on it: the next turn, once Node has done with this answer.
    if (draining) setImmediate(() => closeUnlessAnswering(socket));
  }
  server.on('request', (req, res) => {
    connections.get(req.socket)?.add(res);
    res.on('close', answered);
    if (draining) {
      res.setHeader('connection', 'close');
      // A request begun during the drain is kept only if it is already whole (its body parsed by then).
      const socket = req.socket;
      setImmediate(() => closeUnlessAnswering(socket));
    }
    handler(req, res);
  });
  const bound = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
  return {
    port: bound,
    ready: (next) => {
      handler = next;
    },
    drain: () =>
      new Promise<void>((resolve) => {
        draining = true;
        server.close(() => resolve());
        for (const [socket, answers] of connections) {
          // Answers not yet begun tell their clients that the connection ends with them.
          for (const res of answers) if (!res.headersSent) res.setHeader('connection', 'close');
          closeUnlessAnswering(socket);
        }
      }),
    cutOff: () => {
      const cut: CutRequest[] = [];
      for (const answers of connections.values())
        for (const res of answers)
          if (!res.writableEnded) cut.push(cutRequest(res, (res as TimedResponse).askedAt));
      server.closeAllConnections();
      return cut;
    },
  };
}
