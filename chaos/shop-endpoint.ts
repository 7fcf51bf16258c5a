import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * The shop's endpoint for the kit's order events, served by the run itself: it verifies every request
 * with the published Standard Webhooks library (`standardwebhooks`, `Webhook.verify`) and once more by
 * the specification's own recipe, records what it was sent, and answers as the run's phase says: 204,
 * 500, no connection at all, or no answer until the run drops the connection.
 */

/** How the endpoint answers now. */
export type EndpointMode =
  /** Takes each event and answers 204. */
  | 'up'
  /** Answers 500: the shop's side is broken. */
  | 'error'
  /** Not listening: connections are refused. */
  | 'refuse'
  /** Takes each event (the shop has it) and holds the answer until `drop()`: the kit never hears. */
  | 'hold';

export interface Receipt {
  /** `webhook-id`. */
  id: string;
  /** The raw body, as sent. */
  body: string;
  /** When it was received whole (wall clock, ms). */
  at: number;
  /**
   * `taken`: the shop has it and answered 204; `held`: the shop has it, its answer never left;
   * `refused`: answered 500 (the shop did not take it); `forged`: a signature that does not verify (400).
   */
  outcome: 'taken' | 'held' | 'refused' | 'forged';
  /** `Webhook.verify` of the published library passed. */
  library: boolean;
  /** The signature equals the specification's HMAC-SHA256, computed here without the library. */
  spec: boolean;
  /** Why it did not verify; null when it did. */
  error: string | null;
  type: string | null;
  orderId: string | null;
  orderStatus: string | null;
}

/** The signed content's headers, as the request carried them ('' when absent). */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Standard Webhooks, "Verifying webhooks": HMAC-SHA256 over `${id}.${timestamp}.${body}` under the
 * secret's base64 bytes after `whsec_`, base64 in the header as `v1,<signature>` (several, space
 * separated). Without the library: a check that does not share its code with the kit's signer.
 */
export function signedBySpec(secret: string, headers: SignedHeaders, body: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const content = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`;
  const want = createHmac('sha256', key).update(content, 'utf8').digest();
  return headers['webhook-signature'].split(' ').some((versioned) => {
    const [version, signature] = versioned.split(',');
    if (version !== 'v1' || !signature) return false;
    const got = Buffer.from(signature, 'base64');
    return got.length === want.length && timingSafeEqual(got, want);
  });
}

export class ShopEndpoint {
  readonly receipts: Receipt[] = [];
  #mode: EndpointMode = 'up';
  #server: Server | null = null;
  #port = 0;
  readonly #held: ServerResponse[] = [];
  readonly #library: Webhook;

  private constructor(private readonly secret: string) {
    this.#library = new Webhook(secret);
  }

  /** Listening on a free port of 127.0.0.1, up. */
  static async start(secret: string): Promise<ShopEndpoint> {
    const endpoint = new ShopEndpoint(secret);
    await endpoint.#listen(0);
    return endpoint;
  }

  /** SHOP_WEBHOOK_URLS: the same port whatever the mode. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}/order-events`;
  }

  get mode(): EndpointMode {
    return this.#mode;
  }

  /** Held requests waiting for their answer. */
  get holding(): number {
    return this.#held.length;
  }

  /** Answers as `mode` says from now on; `refuse` closes the port (and every connection), another mode opens it again. */
  async set(mode: EndpointMode): Promise<void> {
    if (mode === this.#mode) return;
    if (mode === 'refuse') await this.#close();
    else if (this.#mode === 'refuse') await this.#listen(this.#port);
    this.#mode = mode;
  }

  /** Every held request's connection destroyed, unanswered: the sender sees its connection cut. */
  drop(): number {
    const n = this.#held.length;
    for (const res of this.#held.splice(0)) res.destroy();
    return n;
  }

  async close(): Promise<void> {
    this.drop();
    await this.#close();
  }

  #listen(port: number): Promise<void> {
    const server = createServer((req, res) => this.#handle(req, res));
    // The kit's sender keeps connections alive: closing the port must close them too (`refuse`).
    server.keepAliveTimeout = 60_000;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        this.#server = server;
        this.#port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  async #close(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const receipt = this.#read(req, body);
      const mode = this.#mode;
      if (receipt.error !== null) receipt.outcome = 'forged';
      else if (mode === 'error') receipt.outcome = 'refused';
      else if (mode === 'hold') receipt.outcome = 'held';
      this.receipts.push(receipt);
      if (receipt.outcome === 'forged') res.writeHead(400).end('signature does not verify');
      else if (receipt.outcome === 'refused') res.writeHead(500).end('down');
      else if (receipt.outcome === 'held') this.#held.push(res);
      else res.writeHead(204).end();
    });
  }

  /** The request, verified both ways, read into a receipt (outcome `taken` until the mode says otherwise). */
  #read(req: IncomingMessage, body: string): Receipt {
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : (value ?? '');
    };
    const headers: SignedHeaders = {
      'webhook-id': header('webhook-id'),
      'webhook-timestamp': header('webhook-timestamp'),
      'webhook-signature': header('webhook-signature'),
    };
    const receipt: Receipt = {
      id: headers['webhook-id'],
      body,
      at: Date.now(),
      outcome: 'taken',
      library: false,
      spec: signedBySpec(this.secret, headers, body),
      error: null,
      type: null,
      orderId: null,
      orderStatus: null,
    };
    try {
      const event = this.#library.verify(body, { ...headers }) as {
        type?: string;
        data?: { order?: { id?: string; status?: string } };
      };
      receipt.library = true;
      receipt.type = event.type ?? null;
      receipt.orderId = event.data?.order?.id ?? null;
      receipt.orderStatus = event.data?.order?.status ?? null;
    } catch (error) {
      receipt.error = `the library: ${(error as Error).message}`;
    }
    if (receipt.error === null && !receipt.spec) receipt.error = "not the specification's HMAC-SHA256";
    return receipt;
  }
}
