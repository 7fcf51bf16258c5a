import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What crosses the wire between processes a test runs, seen from the middle: plain HTTP
 * pass-throughs on 127.0.0.1 that record each request and forward it unchanged. Nothing is answered
 * in the target's place.
 */

/** One request that went through, with the target's answer. */
export interface WireCall {
  /** Who sent it: the first path segment of the proxy URL it was given (`/<who>/...`). */
  who: string;
  /** When it arrived (Date.now()). */
  at: number;
  method: string;
  /** The path the target saw, without the query string. */
  path: string;
  query: string;
  status: number;
}

export interface Wire {
  /** The proxy's origin. */
  url: string;
  /** A base URL for `who`: requests under it reach the target with `/<who>` taken off. */
  baseFor(who: string): string;
  calls: WireCall[];
  close(): Promise<void>;
}

/** Hop-by-hop and length headers: the forwarding sets its own. */
const SKIPPED = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

/** The whole body of a request, as it came. */
export const bodyOf = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined && !SKIPPED.has(name))
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}

/** Sends `req` (with `body`) to `url`; the answer's status, headers and body. */
export async function forward(req: IncomingMessage, body: Buffer, url: string) {
  const res = await fetch(url, {
    method: req.method,
    headers: headersOf(req),
    body: req.method === 'GET' || req.method === 'HEAD' ? undefined : new Uint8Array(body),
    redirect: 'manual',
    signal: AbortSignal.timeout(20_000),
  });
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!SKIPPED.has(name) && name !== 'content-encoding') headers[name] = value;
  });
  return { status: res.status, headers, body: Buffer.from(await res.arrayBuffer()) };
}

async function listen(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>) {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${error.message}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { url, close };
}

/**
 * A recording proxy in front of `target`: each process gets `baseFor(name)` as its gateway URL, so
 * every call is recorded with the process that made it.
 */
export async function recordingProxy(target: string): Promise<Wire> {
  const calls: WireCall[] = [];
  const { url, close } = await listen(async (req, res) => {
    const at = Date.now();
    const body = await bodyOf(req);
    const [, who = '', ...rest] = (req.url ?? '/').split('/');
    const tail = `/${rest.join('/')}`;
    const answer = await forward(req, body, target + tail);
    const [path = '/', query = ''] = tail.split('?');
    calls.push({ who, at, method: req.method ?? 'GET', path, query, status: answer.status });
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  });
  return { url, baseFor: (who) => `${url}/${who}`, calls, close };
}

/** One delivery through a tee: where it went, and what each receiver answered. */
export interface TeeDelivery {
  at: number;
  path: string;
  primary: number;
  mirror: number;
}

/**
 * A tee in front of two receivers: each request goes to `primary` and, at the same moment, the same
 * bytes with the same headers to `mirror`; the sender gets the primary's answer. What a gateway's
 * duplicate deliveries to two instances behind a load balancer come to, on purpose and every time.
 */
export async function tee(
  primary: string,
  mirror: string,
): Promise<{ url: string; deliveries: TeeDelivery[]; close(): Promise<void> }> {
  const deliveries: TeeDelivery[] = [];
  const { url, close } = await listen(async (req, res) => {
    const at = Date.now();
    const body = await bodyOf(req);
    const path = req.url ?? '/';
    const [first, second] = await Promise.all([
      forward(req, body, primary + path),
      forward(req, body, mirror + path).catch(() => ({ status: 0 })),
    ]);
    deliveries.push({ at, path, primary: first.status, mirror: second.status });
    res.writeHead(first.status, first.headers);
    res.end(first.body);
  });
  return { url, deliveries, close };
}
