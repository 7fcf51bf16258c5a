import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'chai';
import { bindHttpServer, type HttpServer } from '../../../src/infra/http-server.js';
import { parseResponse, type RawClient, rawClient, waitFor } from '../../support/process.js';

/**
 * drain() on a real server (port 0, real sockets): a stop waits for the handlers that run, and for
 * no client whose request is not whole (issue 8). Node's own timeouts are long here (30 s for a
 * request, 10 s for its headers), so a drain held by a stuck client shows as one not settled.
 */

const REQUEST_TIMEOUT_MS = 30_000;
/** Far below Node's timeouts: a drain not settled by then waits for a stuck client. */
const PROMPT_MS = 2000;

const PARTIAL_HEADERS = 'GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow';
const PARTIAL_BODY = 'POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"amount":';
const WHOLE_GET = 'GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'; // keep-alive: HTTP/1.1's default

/** A handler that reads the whole body, then answers once `gate` (if any) opens. */
function gatedHandler() {
  let open: () => void = () => undefined;
  let gate: Promise<void> | null = null;
  const started: string[] = [];
  return {
    started,
    /** From now on handlers wait until `release`. */
    hold: () => {
      gate = new Promise<void>((resolve) => {
        open = resolve;
      });
    },
    release: () => open(),
    /** Answers with head and a first chunk at once, the rest at `release` (a response in progress). */
    streaming: false,
    async serve(req: IncomingMessage, res: ServerResponse) {
      started.push(`${req.method} ${req.url}`);
      try {
        await req.toArray();
      } catch {
        return; // the client went away mid-body
      }
      if (this.streaming) {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 4 });
        res.write('ok');
        await gate;
        res.end('!!');
        return;
      }
      await gate;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
      res.end('ok');
    },
  };
}

describe('infra/http-server: drain() and the clients in hand', () => {
  let server: HttpServer;
  let h: ReturnType<typeof gatedHandler>;
  const clients: RawClient[] = [];

  const connect = async (request: string) => {
    const client = await rawClient(server.port);
    clients.push(client);
    client.socket.write(request);
    return client;
  };
  const answered = (c: RawClient) => {
    const { status, headers, body } = parseResponse(c.received());
    return status !== null && Buffer.byteLength(body) >= Number(headers['content-length'] ?? 0);
  };
  /** Whether `promise` settles within `ms` (false: still pending then). */
  const settlesWithin = (promise: Promise<unknown>, ms: number) =>
    Promise.race([
      promise.then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), ms)),
    ]);

  beforeEach(async () => {
    h = gatedHandler();
    server = await bindHttpServer(0, REQUEST_TIMEOUT_MS);
    server.ready((req, res) => void h.serve(req, res));
  });
  afterEach(() => {
    server.cutOff();
    for (const c of clients.splice(0)) c.socket.destroy();
  });

  /** Headers never finished, a body never finished, and an idle keep-alive connection, all in place. */
  async function stuckClients() {
    const partialHeaders = await connect(PARTIAL_HEADERS);
    const partialBody = await connect(PARTIAL_BODY);
    const idle = await connect(WHOLE_GET);
    await waitFor('the idle connection answered', () => answered(idle), PROMPT_MS);
    await waitFor('the partial body in the handler', () => h.started.includes('POST /x'), PROMPT_MS);
    return { partialHeaders, partialBody, idle };
  }

  it('resolves promptly with clients stuck mid-headers, mid-body and idle, closing each of them', async () => {
    const stuck = await stuckClients();
    const started = Date.now();
    const drained = await settlesWithin(server.drain(), PROMPT_MS);
    const open = Object.entries(stuck).filter(([, c]) => !c.ended());
    expect(
      drained,
      `drain() not settled after ${Date.now() - started} ms; open: ${open.map(([n]) => n)}`,
    ).to.equal(true);
    await waitFor('every stuck client closed', () => open.every(([, c]) => c.ended()), PROMPT_MS);
    expect(stuck.partialHeaders.received(), 'no answer to a request never received').to.equal('');
    expect(stuck.partialBody.received(), 'no answer to a request never received').to.equal('');
  });

  it('waits for a handler running on a whole request, which gets its answer with Connection: close', async () => {
    h.hold();
    const running = await connect('POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}');
    await waitFor('the handler running', () => h.started.includes('POST /x'), PROMPT_MS);
    const stuck = await connect(PARTIAL_HEADERS);
    let drained = false;
    const draining = server.drain().then(() => {
      drained = true;
    });
    await waitFor('the stuck client closed', () => stuck.ended(), PROMPT_MS);
    expect(drained, 'drain() waits for the running handler').to.equal(false);
    expect(running.ended()).to.equal(false);

    h.release();
    await waitFor('the answer', () => answered(running), PROMPT_MS);
    const { status, headers } = parseResponse(running.received());
    expect(status).to.equal(200);
    expect(headers.connection).to.equal('close');
    expect(await settlesWithin(draining, PROMPT_MS), 'drain() once the answer is out').to.equal(true);
    await waitFor('the answered connection closed', () => running.ended(), PROMPT_MS);
  });

  it('closes a connection whose next request starts arriving during the drain, once its answer in hand is out', async () => {
    h.hold();
    h.streaming = true; // the head goes out (keep-alive) before the drain: it cannot say close any more
    const client = await connect(WHOLE_GET);
    await waitFor('the head of the answer', () => parseResponse(client.received()).status === 200, PROMPT_MS);
    let drained = false;
    const draining = server.drain().then(() => {
      drained = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(drained, 'drain() waits for the answer in progress').to.equal(false);
    client.socket.write(PARTIAL_HEADERS); // the next request, begun and never finished

    h.release();
    await waitFor('the whole answer', () => answered(client), PROMPT_MS);
    expect(parseResponse(client.received()).body).to.equal('ok!!');
    expect(await settlesWithin(draining, PROMPT_MS), 'drain() not held by the next request').to.equal(true);
    await waitFor('the connection closed', () => client.ended(), PROMPT_MS);
  });

  it('cutOff() names the requests it cuts: method, path (masked, no query), the id the app gave, how long', async () => {
    // The app's request context sets the id as an answer header before its handlers run.
    server.ready((req, res) => {
      res.setHeader('x-request-id', `req_${req.method}`);
      void h.serve(req, res);
    });
    const idle = await connect(WHOLE_GET);
    await waitFor('the idle connection answered', () => answered(idle), PROMPT_MS);
    h.hold();
    const running = await connect(
      'POST /cards/4242424242424242/x?pan=4000000000000002 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}',
    );
    await waitFor('the handler running', () => h.started.some((s) => s.startsWith('POST')), PROMPT_MS);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const cut = server.cutOff();
    expect(cut).to.have.length(1);
    expect(cut[0]).to.deep.include({ method: 'POST', path: '/cards/[card number]/x', requestId: 'req_POST' });
    expect(cut[0]!.ms).to.be.within(50, PROMPT_MS);
    await waitFor('the cut connection closed', () => running.ended(), PROMPT_MS);
    expect(running.received()).to.equal('');
  });
});
