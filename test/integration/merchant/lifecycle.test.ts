import { expect } from 'chai';
import mysql from 'mysql2/promise';
import {
  ADMIN_URL,
  databaseName,
  delay,
  type Exchange,
  exchange,
  exitWithin,
  freePort,
  groupAlive,
  healthy,
  leftovers,
  logLines,
  type Proc,
  parseResponse,
  type RawClient,
  rawClient,
  start,
  startNpm,
  waitFor,
} from '../../support/process.js';

/**
 * Issue 8, parts 2 and 3: the kit's life as a process. Every request gets an answer from the moment the
 * port is bound (503 STARTING, then the app); a request never finished is dropped after
 * HTTP_REQUEST_TIMEOUT_MS; SIGTERM stops intake, closes at once the connections without a request
 * received whole, gives the handlers that run SHUTDOWN_GRACE_MS, cuts off the rest, closes the
 * connections and logs `stopped` last; and `npm start` passes SIGTERM and Ctrl-C
 * on to the kit. The real `src/main.ts` (and `npm start`) as child processes, each on its own ports and
 * database (dropped afterwards). Every wait is bounded.
 */
const READY_DEADLINE_MS = 25_000;

const GET_HEALTHZ =
  'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: probe-1\r\nConnection: close\r\n\r\n';
const postOrder = (body: string, length = Buffer.byteLength(body), connection = 'close') =>
  'POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
  `Content-Length: ${length}\r\nConnection: ${connection}\r\n\r\n${body}`;
const ORDER = JSON.stringify({ amount: '1.00', currency: 'EUR' });

/** Whether `text` holds a whole response (its status line, headers and Content-Length bytes of body). */
const complete = (text: string) => {
  const { status, headers, body } = parseResponse(text);
  return status !== null && Buffer.byteLength(body) >= Number(headers['content-length'] ?? 0);
};

/** A GET whose headers never end (no blank line): the request never reaches a handler. */
const PARTIAL_HEADERS = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow';

/**
 * An order's row locked FOR UPDATE from a connection of the test's own: a handler that locks it (a new
 * payment attempt does) waits, fully received and running, until `release`. `waitedOn` resolves once
 * a statement of the kit's waits for that lock, so the test knows the handler is running.
 */
async function holdOrderRow(database: string, orderId: string) {
  const holder = await mysql.createConnection(`${ADMIN_URL}/${database}`);
  await holder.query('START TRANSACTION');
  await holder.query('SELECT id FROM orders WHERE id = ? FOR UPDATE', [orderId]);
  let released = false;
  return {
    waitedOn: () =>
      waitFor(
        "a statement of the kit's waiting for the order's row lock",
        async () => {
          const [rows] = await holder.query<mysql.RowDataPacket[]>(
            `SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX t
               JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
              WHERE t.trx_state = 'LOCK WAIT' AND p.DB = ?`,
            [database],
          );
          return Number(rows[0]!.n) > 0;
        },
        5000,
        // InnoDB refreshes what INNODB_TRX shows only when it was last read over 100 ms ago.
        { everyMs: 250 },
      ),
    release: async () => {
      if (released) return;
      released = true;
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end().catch(() => undefined);
    },
  };
}

/** When a raw connection was closed, in ms after `since` (null while it is open). */
function closedAfter(client: RawClient, since: () => number): () => number | null {
  let at: number | null = null;
  void client.closed.then(() => {
    at = Date.now() - since();
  });
  return () => at;
}

describe('merchant: the kit as a process (start-up, request timeouts, shutdown, npm start)', function () {
  this.timeout(60_000);
  const { databases, track, cleanUp } = leftovers();
  after(cleanUp);

  /** The variables of a kit on free ports with a database of its own; LOG_LEVEL=info (JSON lines). */
  async function kitEnv(what: string, env: Record<string, string> = {}) {
    const database = databaseName('life', what);
    databases.push(database);
    const port = await freePort();
    const gatewayPort = await freePort([port]);
    return {
      port,
      database,
      url: `http://127.0.0.1:${port}`,
      env: {
        PORT: String(port),
        GATEWAY_PORT: String(gatewayPort),
        DATABASE_URL: `${ADMIN_URL}/${database}`,
        LOG_LEVEL: 'info',
        ...env,
      },
    };
  }

  /** `src/main.ts` started and healthy. */
  async function startedKit(what: string, env: Record<string, string> = {}) {
    const { port, url, database, env: all } = await kitEnv(what, env);
    const p = track(start('src/main.ts', [], all));
    await healthy(p, url, READY_DEADLINE_MS);
    return { p, port, url, database };
  }

  /** A new order on the kit at `url`: its id and client secret. */
  async function newOrder(url: string): Promise<{ id: string; secret: string }> {
    const res = await fetch(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: ORDER,
    });
    expect(res.status).to.equal(201);
    const { order } = ((await res.json()) as { data: { order: { id: string; client_secret: string } } }).data;
    return { id: order.id, secret: order.client_secret };
  }

  /**
   * A whole request (headers and body) whose handler runs until `release`: a redirect payment on an
   * order whose row the test holds locked. `client` waits for its answer. `head` is added to the
   * request line's path (a query) and to its headers.
   */
  async function runningHandler(
    kit: { port: number; url: string; database: string },
    head: { query?: string; headers?: string } = {},
  ) {
    const { id: orderId, secret } = await newOrder(kit.url);
    const lock = await holdOrderRow(kit.database, orderId);
    try {
      const client = await rawClient(kit.port);
      const body = JSON.stringify({ payment_method: 'ideal', customer: { country_code: 'NL' } });
      client.socket.write(
        `POST /orders/${orderId}/pay/redirect${head.query ?? ''} HTTP/1.1\r\nHost: 127.0.0.1\r\n${head.headers ?? ''}` +
          `Order-Secret: ${secret}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, // keep-alive: HTTP/1.1's default
      );
      await lock.waitedOn();
      return { client, release: lock.release, orderId };
    } catch (error) {
      await lock.release(); // or the database cannot be dropped
      throw error;
    }
  }

  /**
   * The clients that must not hold a stop: (1) headers never finished, (2) headers whole but the body
   * not (10 of 100 bytes), (3) an idle keep-alive connection after its answer.
   */
  async function stuckClients(port: number) {
    const partialHeaders = await rawClient(port);
    partialHeaders.socket.write(PARTIAL_HEADERS);
    const partialBody = await rawClient(port);
    partialBody.socket.write(postOrder('{"amount":', 100));
    const idle = await rawClient(port);
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await waitFor('the answer on the keep-alive connection', () => complete(idle.received()), 3000);
    await delay(300); // the partial requests have reached the server
    return { partialHeaders, partialBody, idle };
  }

  const lastLog = (p: Proc) => logLines(p.stdout()).at(-1);

  describe('start-up', () => {
    it('a burst of probes from the spawn on: each one that connects is answered, 503 STARTING until ready', async () => {
      const { port, env } = await kitEnv('burst');
      const p = track(start('src/main.ts', [], env));
      const probes: Promise<Exchange & { path: string }>[] = [];
      let readyAfter: number | null = null; // how many probes had been sent when /healthz first said 200
      const deadline = Date.now() + READY_DEADLINE_MS;
      for (let i = 0; Date.now() < deadline && p.running(); i += 1) {
        const path = i % 2 === 0 ? '/healthz' : '/orders';
        const sent = exchange(port, path === '/healthz' ? GET_HEALTHZ : postOrder(ORDER), 3000).then((e) => {
          if (path === '/healthz' && e.status === 200) readyAfter ??= probes.length;
          return { ...e, path };
        });
        probes.push(sent);
        if (readyAfter !== null && probes.length > readyAfter + 10) break;
        await delay(20);
      }
      const results = await Promise.all(probes);
      const summary = () =>
        results
          .filter((r) => r.outcome !== 'refused')
          .map((r) => `${r.path}:${r.outcome}:${r.status ?? '-'}:${r.ms}ms`)
          .join(' ');

      expect(readyAfter, `never ready: ${p.stderr()}`).to.not.equal(null);
      const connected = results.filter((r) => r.connected);
      const unanswered = connected.filter((r) => r.outcome !== 'answered');
      expect(unanswered, `connected without an answer within 3 s: ${summary()}`).to.deep.equal([]);
      for (const r of connected) expect([503, 200, 201], summary()).to.include(r.status);

      const starting = connected.filter((r) => r.status === 503);
      expect(starting, `no 503 while starting: ${summary()}`).to.have.length.of.at.least(1);
      for (const r of starting) {
        expect(r.headers['retry-after']).to.equal('1');
        // As the app answers: the caller's id (or a new one) and the security headers.
        const id = r.headers['x-request-id'];
        expect(id).to.match(r.path === '/healthz' ? /^probe-1$/ : /^req_/);
        expect(r.headers).to.include({ 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff' });
        expect(JSON.parse(r.body)).to.deep.equal({
          success: false,
          message: 'The service is starting; retry in a moment.',
          code: 'STARTING',
          data: null,
          request_id: id,
        });
      }
      expect(connected.at(-1)?.status, summary()).to.be.oneOf([200, 201]);

      p.child.kill('SIGTERM');
      expect((await exitWithin(p, 15_000)).code, p.stderr()).to.equal(0);
    });
  });

  describe('HTTP_REQUEST_TIMEOUT_MS=1000', () => {
    let p: Proc;
    let port: number;
    before(async function () {
      this.timeout(READY_DEADLINE_MS + 10_000);
      ({ p, port } = await startedKit('timeout', { HTTP_REQUEST_TIMEOUT_MS: '1000' }));
    });
    after(async () => {
      p.child.kill('SIGTERM');
      await exitWithin(p, 15_000);
    });

    /** Sends `partial` and waits for a status line or the end of the connection, for 2.5 s at most. */
    async function halfRequest(partial: string) {
      const client = await rawClient(port);
      const sent = Date.now();
      client.socket.write(partial);
      await waitFor(
        'a 408 or the connection closed',
        () => client.ended() || parseResponse(client.received()).status !== null,
        2500,
        { everyMs: 20 },
      );
      const ms = Date.now() - sent;
      client.socket.destroy();
      return { status: parseResponse(client.received()).status, ended: client.ended(), ms };
    }

    it('headers sent, body never finished: answered 408 (or dropped) after about a second', async () => {
      const { status, ended, ms } = await halfRequest(postOrder('{"amount":', 100));
      expect(status === 408 || (status === null && ended), `status ${status}, ended ${ended}`).to.equal(true);
      expect(ms).to.be.within(800, 2500);
    });

    it('headers never finished: answered 408 (or dropped) after about a second', async () => {
      const { status, ended, ms } = await halfRequest('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow');
      expect(status === 408 || (status === null && ended), `status ${status}, ended ${ended}`).to.equal(true);
      expect(ms).to.be.within(800, 2500);
    });

    it('a whole request is still served', async () => {
      expect((await exchange(port, GET_HEALTHZ, 2000)).status).to.equal(200);
    });
  });

  describe('SIGTERM', () => {
    it('with the default grace (10 s), clients stuck before their request is whole are closed at once: exit 0 in under 3 s', async () => {
      const { p, port } = await startedKit('stuckclients');
      const { partialHeaders, partialBody, idle } = await stuckClients(port);
      let signalled = 0;
      const since = () => signalled;
      const closed = {
        'headers never finished': closedAfter(partialHeaders, since),
        'body never finished': closedAfter(partialBody, since),
        'idle keep-alive': closedAfter(idle, since),
      };
      signalled = Date.now();
      p.child.kill('SIGTERM');
      const { code, signal } = await exitWithin(p, 15_000);
      const ms = Date.now() - signalled;
      const figures = () =>
        `exit after ${ms} ms; closed after: ${Object.entries(closed)
          .map(([what, at]) => `${what} ${at()} ms`)
          .join(', ')}`;
      expect(signal, p.stderr()).to.equal(null);
      expect(code, p.stderr()).to.equal(0);
      expect(ms, figures()).to.be.below(3000);
      // Closed by the server, before the exit and not by it: none waited for a timeout or the grace.
      for (const [what, at] of Object.entries(closed))
        expect(at(), `${what}: ${figures()}`).to.be.a('number').and.below(ms);
      expect(partialHeaders.received(), 'no answer to a request never received').to.equal('');
      expect(lastLog(p)?.msg, p.stdout()).to.equal('stopped');
    });

    it('a handler running (request whole) keeps its grace and gets its answer (Connection: close), while the stuck clients are closed at once', async () => {
      const kit = await startedKit('running');
      const { p, port } = kit;
      const running = await runningHandler(kit);
      try {
        const { partialHeaders, partialBody, idle } = await stuckClients(port);
        const signalled = Date.now();
        p.child.kill('SIGTERM');
        await waitFor(
          'the stuck clients closed',
          () => partialHeaders.ended() && partialBody.ended() && idle.ended(),
          3000,
          {
            everyMs: 20,
            context: () =>
              `still open ${Date.now() - signalled} ms after the signal: ${Object.entries({
                partialHeaders,
                partialBody,
                idle,
              })
                .filter(([, c]) => !c.ended())
                .map(([name]) => name)
                .join(', ')}`,
          },
        );
        expect(p.running(), 'waits for the handler that runs').to.equal(true);
        expect(running.client.ended(), 'the running request keeps its connection').to.equal(false);

        await running.release();
        await waitFor('the answer', () => complete(running.client.received()), 5000);
        const answered = Date.now();
        const { status, headers } = parseResponse(running.client.received());
        expect(status, running.client.received()).to.equal(200);
        expect(headers.connection).to.equal('close');
        const { code } = await exitWithin(p, 3000);
        expect(code, p.stderr()).to.equal(0);
        expect(Date.now() - answered, 'not kept for the keep-alive timeout or the grace').to.be.below(3000);
        expect(running.client.ended()).to.equal(true);
        expect(lastLog(p)?.msg, p.stdout()).to.equal('stopped');
      } finally {
        await running.release();
      }
    });

    it('with a handler still running when the grace (1 s) is over: cuts it off, exits 0 with "stopped" last', async () => {
      const kit = await startedKit('cutoff', { SHUTDOWN_GRACE_MS: '1000' });
      const { p } = kit;
      // Held past the grace and the exit: the database's close then waits its bound for the query too.
      const running = await runningHandler(kit);
      try {
        const signalled = Date.now();
        p.child.kill('SIGTERM');
        const { code, signal } = await exitWithin(p, 8000);
        const ms = Date.now() - signalled;
        expect(signal, p.stderr()).to.equal(null);
        expect(code, p.stderr()).to.equal(0);
        expect(ms, 'the handler that runs was given the grace, and no more').to.be.within(900, 8000);
        expect(running.client.ended(), 'its connection was closed').to.equal(true);
        expect(running.client.received(), 'and no answer came').to.equal('');
        const logs = logLines(p.stdout());
        const cut = logs.find((l) => l.msg === 'shutdown grace over: cutting off the work left');
        expect(cut?.left, p.stdout()).to.deep.equal(['http']);
        expect(lastLog(p)?.msg, p.stdout()).to.equal('stopped');
      } finally {
        await running.release();
      }
    });

    it('a request cut off when the grace (1 s) is over is logged: its method, path, request id and how long it ran', async () => {
      const kit = await startedKit('cutlog', { SHUTDOWN_GRACE_MS: '1000' });
      const { p } = kit;
      // A query with a card number's digits: the line gives the path alone, as the request log does.
      const running = await runningHandler(kit, {
        query: '?note=4242424242424242',
        headers: 'X-Request-Id: held-req-1\r\n',
      });
      try {
        const asked = Date.now();
        p.child.kill('SIGTERM');
        const { code } = await exitWithin(p, 8000);
        expect(code, p.stderr()).to.equal(0);
        const logs = logLines(p.stdout());
        const cut = logs.filter((l) => l.msg === 'cut off at shutdown');
        expect(cut, p.stdout()).to.have.length(1);
        expect(cut[0]).to.include({
          level: 40,
          work: 'http',
          method: 'POST',
          path: `/orders/${running.orderId}/pay/redirect`,
          requestId: 'held-req-1',
        });
        expect(cut[0]!.ms as number).to.be.within(900, Date.now() - asked + 1000);
        // After the grace's warning, before "stopped"; its own request line never comes.
        const grace = logs.findIndex((l) => l.msg === 'shutdown grace over: cutting off the work left');
        expect(grace, p.stdout()).to.be.above(-1);
        expect(logs.indexOf(cut[0]!)).to.be.above(grace);
        expect(p.stdout()).to.not.contain('4242424242424242');
        expect(lastLog(p)?.msg, p.stdout()).to.equal('stopped');
      } finally {
        await running.release();
      }
    });

    it('a second SIGTERM during the grace (20 s) exits at once, 143, saying so', async () => {
      const kit = await startedKit('second', { SHUTDOWN_GRACE_MS: '20000' });
      const { p } = kit;
      const running = await runningHandler(kit);
      try {
        p.child.kill('SIGTERM');
        await delay(1200); // past the window in which a repeat counts as the same signal
        expect(p.running(), 'still in its grace').to.equal(true);
        const signalled = Date.now();
        p.child.kill('SIGTERM');
        const { code } = await exitWithin(p, 3000);
        expect(Date.now() - signalled).to.be.below(1000);
        expect(code, p.stderr()).to.equal(143);
        expect(lastLog(p)?.msg, p.stdout()).to.equal(
          'second signal during shutdown: exiting at once, dropping the work in hand',
        );
      } finally {
        await running.release();
      }
    });

    it('an idle keep-alive connection does not delay the exit (grace 20 s)', async () => {
      const { p, port } = await startedKit('idle', { SHUTDOWN_GRACE_MS: '20000' });
      const idle = await rawClient(port);
      idle.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'); // keep-alive: HTTP/1.1's default
      await waitFor('the answer on the keep-alive connection', () => complete(idle.received()), 3000);
      const signalled = Date.now();
      p.child.kill('SIGTERM');
      const { code } = await exitWithin(p, 3000);
      expect(code, p.stderr()).to.equal(0);
      expect(Date.now() - signalled).to.be.below(3000);
      expect(idle.ended()).to.equal(true);
      expect(lastLog(p)?.msg, p.stdout()).to.equal('stopped');
    });
  });

  describe('npm start, as a process manager runs it', () => {
    /** `npm start --silent` in the repository, healthy; npm leads a process group of its own. */
    async function npmStart(what: string) {
      const { port, url, env } = await kitEnv(what);
      const p = track(startNpm(['start', '--silent'], env));
      await healthy(p, url, READY_DEADLINE_MS);
      return { p, port };
    }

    /** npm exits 0, nothing of its group is left, the port is closed and the kit's last line is `stopped`. */
    async function expectAllStopped(p: Proc, port: number) {
      const { code } = await exitWithin(p, 10_000);
      await waitFor('no process of the group left', () => !groupAlive(p), 5000);
      expect(code, p.stderr()).to.equal(0);
      expect((await exchange(port, GET_HEALTHZ, 1000)).outcome).to.equal('refused');
      expect(lastLog(p)?.msg, p.stdout()).to.equal('stopped');
    }

    it("SIGTERM to npm's pid alone reaches the kit: it stops, npm exits, no process is left", async () => {
      const { p, port } = await npmStart('npmterm');
      p.child.kill('SIGTERM');
      await expectAllStopped(p, port);
    });

    it('Ctrl-C (SIGINT to the whole process group) stops it gracefully too', async () => {
      const { p, port } = await npmStart('npmint');
      process.kill(-p.child.pid!, 'SIGINT');
      await expectAllStopped(p, port);
    });
  });
});
