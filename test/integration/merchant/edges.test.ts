import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { withDotEnv } from '../../../src/config.js';
import { event, paidOrder, post, storedSecret, wire } from '../../support/events.js';
import { card } from '../../support/gateway.js';
import { startTestKit, type TestKit } from '../../support/kit.js';
import {
  ADMIN_URL,
  databaseExists,
  databaseName,
  exchange,
  exitWithin,
  freePort,
  leftovers,
  lines,
  start,
  waitFor,
} from '../../support/process.js';

/** A POST through `agent` (a keep-alive pool of one): its status, its Connection header, how long it took. */
function requestOn(agent: Agent, base: string, path: string, body: Buffer) {
  const url = new URL(base);
  const started = performance.now();
  return new Promise<{ status: number; connection: string; ms: number }>((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        agent,
        headers: { 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: String(res.headers.connection),
            ms: performance.now() - started,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** issue 8, part 6: the smaller edges a new user meets first. */
describe('merchant: edges a new user meets', () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
  });
  after(async () => {
    await t?.close();
  });

  describe('a request id', () => {
    it('is made for each request, answered in X-Request-Id and in error bodies, and on the log lines of the request', async () => {
      const res = await t.call('GET', '/orders/ord_missing');
      expect(res.status).to.equal(404);
      const id = res.headers.get('x-request-id');
      expect(id).to.match(/^req_[A-Za-z0-9]{20}$/);
      expect(res.body.request_id).to.equal(id);
      const line = t.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.request_id === id);
      expect(line, 'the request log line carries the id').to.include({
        path: '/orders/ord_missing',
        status: 404,
      });
      const other = await t.call('GET', '/orders/ord_missing');
      expect(other.headers.get('x-request-id')).to.not.equal(id);
    });

    it("the gateway's accepted deliveries are logged at debug (the inbox keeps them); a refused one at info", async () => {
      const secret = await storedSecret(t);
      const accepted = event('transaction.captured', wire((await paidOrder(t)).sale));
      expect((await post(t, accepted.body, secret)).status).to.equal(200);
      expect((await post(t, accepted.body, 'whsec_not_the_secret')).status).to.equal(401);
      const lines = t.logs
        .map((l) => JSON.parse(l))
        .filter((l) => l.msg === 'request' && l.path === '/webhooks/gateway');
      expect(lines.slice(-2).map((l) => [l.status, l.level])).to.deep.equal([
        [200, 20],
        [401, 30],
      ]);
      expect(lines.at(-1).request_id, 'with its request id, as every request line').to.match(/^req_/);
    });

    it('honours an incoming X-Request-Id that is a plain token, and replaces one that is not', async () => {
      const honoured = await t.call('GET', '/orders/ord_missing', {
        headers: { 'x-request-id': 'lb-7f3a.9:2' },
      });
      expect(honoured.headers.get('x-request-id')).to.equal('lb-7f3a.9:2');
      expect(honoured.body.request_id).to.equal('lb-7f3a.9:2');
      const replaced = await t.call('GET', '/orders/ord_missing', {
        headers: { 'x-request-id': '<script>alert(1)</script>' },
      });
      expect(replaced.headers.get('x-request-id')).to.match(/^req_/);
    });
  });

  describe('a card number where none belongs', () => {
    const logLines = () => t.logs.map((l) => JSON.parse(l) as Record<string, unknown>);

    it('as X-Request-Id is replaced, never echoed or logged', async () => {
      for (const id of ['4242424242424242', '4000-0000-0000-3220']) {
        const res = await t.call('GET', '/orders/ord_missing', { headers: { 'x-request-id': id } });
        expect(res.headers.get('x-request-id')).to.match(/^req_/);
        expect(res.text).to.not.contain(id);
      }
      expect(
        t.logs.filter((l) => l.includes('4242424242424242') || l.includes('4000-0000-0000-3220')),
      ).to.deep.equal([]);
    });

    it('in a path is masked on the request line of the log', async () => {
      const res = await t.call('GET', '/orders/4242424242424242');
      expect(res.status).to.equal(404);
      const line = logLines().find(
        (l) => l.msg === 'request' && l.request_id === res.headers.get('x-request-id'),
      );
      expect(line).to.include({ path: '/orders/[card number]', status: 404 });
      await t.call('GET', '/orders/ref%204000%200000%200000%203220');
      expect(t.logs.filter((l) => /4242424242424242|4000%200000%200000%203220/.test(l))).to.deep.equal([]);
    });

    it('in an Idempotency-Key is no card data kept: the key is kept as its digest, and works', async () => {
      const created = await t.call('POST', '/orders', { body: { amount: '1.00', currency: 'EUR' } });
      const id = created.body.data.order.id as string;
      const paid = await t.call('POST', `/orders/${id}/pay/card`, { body: { mode: 'auth', card: card() } });
      expect(paid.body.data.order.status, paid.text).to.equal('authorized');
      for (const _ of ['first', 'again']) {
        const res = await t.call('POST', `/orders/${id}/void`, {
          ops: true,
          body: {},
          headers: { 'Idempotency-Key': 'void-4242424242424242' },
        });
        expect(res.status, res.text).to.equal(200);
        expect(res.body.data.order.status).to.equal('voided');
      }
      expect(await t.dump()).to.not.match(/4242424242424242/);
      expect(t.logs.filter((l) => l.includes('4242424242424242'))).to.deep.equal([]);
    });

    it('an id is no card number: a UUID reference that reads 4-4-4-3 across its hyphens is taken', async () => {
      const reference = `ord-${'6eaa6525-0352-4801-945c-78ba3c6e1490'}`;
      const res = await t.call('POST', '/orders', {
        ops: true,
        body: { amount: '1.00', currency: 'EUR', reference },
      });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.data.order.reference).to.equal(reference);
    });

    it('in free text of an order is 422 naming the field, and nothing is stored', async () => {
      const res = await t.call('POST', '/orders', {
        body: { amount: '1.00', currency: 'EUR', description: 'gift, card 4242 4242 4242 4242' },
      });
      expect(res.status, res.text).to.equal(422);
      expect(res.body.errors).to.deep.equal({ description: ['must not hold a card number'] });
      expect(await t.dump()).to.not.match(/4242 4242 4242 4242/);
    });
  });

  describe('a request the app cannot take', () => {
    it('a body over the limit is 413 and closes the connection: a keep-alive client is not left hanging', async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const send = (path: string, size: number) => requestOn(agent, t.url, path, Buffer.alloc(size, 0x20));
        for (const [path, size] of [
          ['/orders', 70_000],
          ['/webhooks/gateway', 300_000],
        ] as const) {
          const first = await send(path, size);
          expect(first, path).to.include({ status: 413, connection: 'close' });
          const next = await send('/orders', 2);
          expect(next.status, `${path}: the next request on the agent`).to.equal(422);
          expect(next.ms, `${path}: the next request on the agent`).to.be.below(2000);
        }
      } finally {
        agent.destroy();
      }
    });

    it('headers over 16 KiB, or not HTTP at all: answered with the envelope by the server itself', async () => {
      const port = Number(new URL(t.url).port);
      const big = await exchange(
        port,
        `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        2000,
      );
      expect(big.status).to.equal(431);
      expect(JSON.parse(big.body)).to.deep.equal({
        success: false,
        message: 'The request headers are too large.',
        code: 'HEADERS_TOO_LARGE',
        data: null,
        request_id: big.headers['x-request-id'],
      });
      const garbage = await exchange(port, 'HELLO THERE\r\n\r\n', 2000);
      expect(garbage.status).to.equal(400);
      expect(JSON.parse(garbage.body)).to.include({ success: false, code: 'BAD_REQUEST' });
      // As every answer of the app: the security headers, and an id to find it by.
      for (const answer of [big, garbage]) {
        expect(answer.headers['x-request-id']).to.match(/^req_/);
        expect(answer.headers).to.include({ 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff' });
        expect(answer.headers['content-security-policy']).to.contain("frame-ancestors 'none'");
      }
    });
  });

  describe("the kit's own /", () => {
    it('is a page, where the landings\' "Back to the shop" leads while SHOP_URL is unset', async () => {
      const res = await fetch(`${t.url}/`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      expect(await res.text()).to.contain('SHOP_URL');
    });
  });

  describe('amounts', () => {
    it('captured_amount and refunded_amount have their _formatted twins, as amount has', async () => {
      const created = await t.call('POST', '/orders', { body: { amount: '12.30', currency: 'EUR' } });
      expect(created.body.data.order).to.include({
        captured_amount: null,
        captured_amount_formatted: null,
        refunded_amount: 0,
        refunded_amount_formatted: '0.00',
      });
      const paid = await t.call('POST', `/orders/${created.body.data.order.id}/pay/card`, {
        body: { mode: 'sale', card: card() },
      });
      expect(paid.status, paid.text).to.equal(200);
      expect(paid.body.data.order).to.include({ captured_amount: 1230, captured_amount_formatted: '12.30' });
    });
  });

  describe('card input', () => {
    for (const month of [13, '13', 0, 'June']) {
      it(`exp_month ${JSON.stringify(month)} is 422 with plain words, not a library's text`, async () => {
        const created = await t.call('POST', '/orders', { body: { amount: '1.00', currency: 'EUR' } });
        const res = await t.call('POST', `/orders/${created.body.data.order.id}/pay/card`, {
          body: { mode: 'sale', card: card('4242424242424242', { exp_month: month }) },
        });
        expect(res.status).to.equal(422);
        expect(res.body.errors).to.deep.equal({ 'card.exp_month': ['must be a month from 1 to 12'] });
      });
    }

    it('a card that is not an object, and a description too long, get plain words', async () => {
      const created = await t.call('POST', '/orders', { body: { amount: '1.00', currency: 'EUR' } });
      const res = await t.call('POST', `/orders/${created.body.data.order.id}/pay/card`, {
        body: { card: 5 },
      });
      expect(res.body.errors.card).to.deep.equal([
        'must be an object with number, exp_month, exp_year and cvv',
      ]);
      const missing = await t.call('POST', `/orders/${created.body.data.order.id}/pay/card`, { body: {} });
      expect(missing.body.errors.card[0]).to.match(/^is required: an object/);
      const long = await t.call('POST', '/orders', {
        body: { amount: '1.00', currency: 'EUR', description: 'x'.repeat(1025) },
      });
      expect(long.body.errors).to.deep.equal({ description: ['must be at most 1024 characters'] });
    });
  });
});

describe('configuration: a .env file', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kit-env-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is read when present, and a variable of the environment wins over it', () => {
    const file = join(dir, '.env');
    writeFileSync(file, '# a comment\nPORT=3100\nLOG_LEVEL=debug\nSHOP_URL="https://shop.example"\n');
    expect(withDotEnv({ LOG_LEVEL: 'warn' }, file)).to.deep.include({
      PORT: '3100',
      LOG_LEVEL: 'warn',
      SHOP_URL: 'https://shop.example',
    });
  });

  it('is not required', () => {
    expect(withDotEnv({ PORT: '1' }, join(dir, 'absent.env'))).to.deep.equal({ PORT: '1' });
  });
});

describe('the CLI: one line, exit 1, when it cannot do what it was asked', function () {
  this.timeout(60_000);
  const { databases, track, cleanUp } = leftovers();
  after(cleanUp);

  it('webhook status says the kit is not running and how to start it: one line, exit 1', async () => {
    const p = track(start('src/cli.ts', ['webhook', 'status'], { GATEWAY_PORT: String(await freePort()) }));
    const { code } = await exitWithin(p, 20_000);
    expect(code).to.equal(1);
    const err = lines(p.stderr());
    expect(err, p.stderr()).to.have.length(1);
    expect(err[0]).to.match(/^no running kit: .*npm start/);
  });

  it('a command that reads or changes rows, with a database that does not exist: one line naming it, and nothing made', async () => {
    const database = databaseName('edges', 'mistyped');
    databases.push(database);
    for (const args of [
      ['disputes', 'list'],
      ['report', '--from', '2026-11-01', '--to', '2026-11-02', '--out', '/dev/null'],
    ]) {
      const p = track(start('src/cli.ts', args, { DATABASE_URL: `${ADMIN_URL}/${database}` }));
      expect((await exitWithin(p, 20_000)).code, args[0]).to.equal(1);
      const err = lines(p.stderr());
      expect(err, p.stderr()).to.have.length(1);
      expect(err[0]).to.match(
        new RegExp(`^DATABASE_URL: the database ${database} does not exist: create it with`),
      );
      expect(p.stdout(), 'no empty answer as if nothing were wrong').to.equal('');
    }
    expect(await databaseExists(database), 'not created').to.equal(false);
  });

  it("webhook register with a URL the gateway refuses: the gateway's own words and the field, one line, exit 1", async () => {
    // The default seed takes https endpoints only (allow_private_webhook_urls: false).
    const gatewayPort = await freePort();
    const sandbox = track(start('src/gateway/main.ts', [], { GATEWAY_PORT: String(gatewayPort) }));
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    await waitFor(
      'the sandbox answering',
      () =>
        fetch(gatewayUrl).then(
          () => true,
          () => false,
        ),
      20_000,
      {
        context: () => sandbox.stderr(),
      },
    );
    const database = databaseName('edges', 'register');
    databases.push(database);
    const p = track(
      start('src/cli.ts', ['webhook', 'register', '--url', 'http://127.0.0.1:9/webhooks/gateway'], {
        GATEWAY_BASE_URL: gatewayUrl,
        GATEWAY_API_KEY: 'sk_test_merchant_1001',
        DATABASE_URL: `${ADMIN_URL}/${database}`,
      }),
    );
    expect((await exitWithin(p, 20_000)).code).to.equal(1);
    const err = lines(p.stderr());
    expect(err, p.stderr()).to.have.length(1);
    expect(err[0]).to.match(/^the gateway refused: .* url: must use https \(HTTP 422 /);
  });
});
