import { expect } from 'chai';
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
  rawClient,
  start,
  startNpm,
  waitFor,
} from '../../support/process.js';

/**
 * Issue 8, parts 2 and 3: the kit's life as a process. Every request gets an answer from the moment the
 * port is bound (503 STARTING, then the app); a request never finished is dropped after
 * HTTP_REQUEST_TIMEOUT_MS; SIGTERM stops intake, gives the work in hand SHUTDOWN_GRACE_MS, cuts off
 * the rest, closes the connections and logs `stopped` last; and `npm start` passes SIGTERM and Ctrl-C
 * on to the kit. The real `src/main.ts` (and `npm start`) as child processes, each on its own ports and
 * database (dropped afterwards). Every wait is bounded.
 */
const READY_DEADLINE_MS = 25_000;

const GET_HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n';
const postOrder = (body: string, length = Buffer.byteLength(body), connection = 'close') =>
  'POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
  `Content-Length: ${length}\r\nConnection: ${connection}\r\n\r\n${body}`;
const ORDER = JSON.stringify({ amount: '1.00', currency: 'EUR' });

/** Whether `text` holds a whole response (its status line, headers and Content-Length bytes of body). */
const complete = (text: string) => {
  const { status, headers, body } = parseResponse(text);
  return status !== null && Buffer.byteLength(body) >= Number(headers['content-length'] ?? 0);
};

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
    const { port, url, env: all } = await kitEnv(what, env);
    const p = track(start('src/main.ts', [], all));
    await healthy(p, url, READY_DEADLINE_MS);
    return { p, port };
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
        expect(JSON.parse(r.body)).to.deep.equal({
          success: false,
          message: 'The service is starting; retry in a moment.',
          code: 'STARTING',
          data: null,
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
    it('with a client stuck mid-request: waits the grace (1 s), cuts it off, exits 0 with "stopped" last', async () => {
      const { p, port } = await startedKit('stuck', { SHUTDOWN_GRACE_MS: '1000' });
      const stuck = await rawClient(port);
      stuck.socket.write(postOrder('{"amount":', 100)); // 10 of 100 bytes, and no more
      await delay(300); // the request is in the app's hands
      const signalled = Date.now();
      p.child.kill('SIGTERM');
      const { code, signal } = await exitWithin(p, 5000);
      const ms = Date.now() - signalled;
      expect(signal, p.stderr()).to.equal(null);
      expect(code, p.stderr()).to.equal(0);
      expect(ms, 'the request in hand was given the grace, and no more').to.be.within(900, 5000);
      expect(stuck.ended(), 'the stuck connection was closed').to.equal(true);
      const logs = logLines(p.stdout());
      const cut = logs.find((l) => l.msg === 'shutdown grace over: cutting off the work left');
      expect(cut?.left, p.stdout()).to.deep.equal(['http']);
      expect(lastLog(p)?.msg, p.stdout()).to.equal('stopped');
    });

    it('a second SIGTERM during the grace (20 s) exits at once, 143, saying so', async () => {
      const { p, port } = await startedKit('second', { SHUTDOWN_GRACE_MS: '20000' });
      const stuck = await rawClient(port);
      stuck.socket.write(postOrder('{"amount":', 100));
      await delay(300);
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

    it('a request in hand that finishes within the grace is answered (Connection: close); the exit follows at once', async () => {
      const { p, port } = await startedKit('inhand', { SHUTDOWN_GRACE_MS: '20000' });
      const client = await rawClient(port);
      client.socket.write(postOrder(ORDER.slice(0, 10), Buffer.byteLength(ORDER), 'keep-alive'));
      await delay(300);
      p.child.kill('SIGTERM');
      await delay(500);
      expect(p.running(), 'waits for the request in hand').to.equal(true);
      expect(client.ended()).to.equal(false);

      client.socket.write(ORDER.slice(10));
      await waitFor('the answer', () => complete(client.received()), 5000);
      const answered = Date.now();
      const { status, headers } = parseResponse(client.received());
      expect(status, client.received()).to.equal(201);
      expect(headers.connection).to.equal('close');
      const { code } = await exitWithin(p, 3000);
      expect(code, p.stderr()).to.equal(0);
      expect(Date.now() - answered, 'not kept for the keep-alive timeout or the grace').to.be.below(3000);
      expect(client.ended()).to.equal(true);
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
