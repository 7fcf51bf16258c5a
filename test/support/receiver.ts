import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { verify } from '../../src/shared/signature.js';
import { jsonOf } from './gateway.js';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body bytes as they arrived, for signature checks. */
  raw: Buffer;
  json: unknown;
}

/** What the receiver does with the next request: answer, hang, reset the connection or redirect. */
export type Behaviour =
  | { kind: 'answer'; status: number; body?: string }
  | { kind: 'hang' }
  | { kind: 'reset' }
  | { kind: 'redirect'; location: string };

export interface Receiver {
  url: string;
  received: Received[];
  /** Behaviour for every request from now on (default: 200 "ok"). */
  behave(b: Behaviour): void;
  close(): Promise<void>;
}

/** A real HTTP receiver on a local port, for the sandbox to deliver webhooks to. */
export async function startReceiver(path = '/webhooks'): Promise<Receiver> {
  const received: Received[] = [];
  let behaviour: Behaviour = { kind: 'answer', status: 200, body: 'ok' };
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const json = jsonOf(raw.toString('utf8'));
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, json });
      switch (behaviour.kind) {
        case 'answer':
          res.writeHead(behaviour.status, { 'content-type': 'text/plain' }).end(behaviour.body ?? '');
          return;
        case 'hang':
          return; // never answers; the sandbox's timeout must end it
        case 'reset':
          req.socket.destroy();
          return;
        case 'redirect':
          res.writeHead(302, { location: behaviour.location }).end();
          return;
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    behave: (b) => {
      behaviour = b;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A seed mutation: lets the sandbox deliver to http://127.0.0.1 (sandbox.md section 2). */
export function allowPrivateUrls(seed: { settings?: Record<string, unknown> }): void {
  seed.settings = { ...seed.settings, allow_private_webhook_urls: true };
}

/** X-Service-Signature as the sandbox sends it (sandbox.md section 8): `t=<unix seconds>,v1=<lower-case hex>`. */
export const SIGNATURE_FORMAT = /^t=(\d+),v1=[0-9a-f]{64}$/;
export const signatureOf = (r: Received) => r.headers['x-service-signature'] as string | undefined;
/** The `t=` of a delivery's signature. */
export const tOf = (r: Received) => Number(SIGNATURE_FORMAT.exec(signatureOf(r) ?? '')?.[1]);

/** Whether a delivery's signature verifies with `secret` at `now` (Unix seconds). */
export function verifies(r: Received, secret: string, now: number): boolean {
  return verify({ payload: r.raw, header: signatureOf(r), secrets: [secret], nowSeconds: now }).ok;
}
