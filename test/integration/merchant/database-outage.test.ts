import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { expect } from 'chai';
import { startTestKit, type TestKit } from '../../support/kit.js';
import { ADMIN_URL, dropDatabases } from '../../support/process.js';

/**
 * The database gone while the API serves: the kit reaches MariaDB through a TCP relay the test can
 * cut, as a network partition or a restart would. An outage is the operator's problem and passes:
 * 503 with Retry-After, one log line without a stack; once the database is back, the same calls work.
 */

/** A TCP relay to MySQL that can refuse and drop every connection, then let them through again. */
async function cuttableRelay(targetPort: number) {
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) return void client.destroy();
    const upstream = connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut: () => {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore: () => {
      open = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('merchant: the database unreachable while the API serves', function () {
  this.timeout(60_000);
  const database = `merchant_outage_${process.pid}_${randomBytes(3).toString('hex')}`;
  let relay: Awaited<ReturnType<typeof cuttableRelay>>;
  let t: TestKit;

  before(async () => {
    relay = await cuttableRelay(Number(new URL(ADMIN_URL).port || 3306));
    t = await startTestKit({ env: { DATABASE_URL: `mysql://root@127.0.0.1:${relay.port}/${database}` } });
  });
  after(async () => {
    relay?.restore();
    await t?.close();
    await relay?.close();
    await dropDatabases([database]);
  });

  const createOrder = () => t.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });

  it('while it is gone: 503 UNAVAILABLE with Retry-After, a log line without a stack; back, it works', async () => {
    const before = await createOrder();
    expect(before.status, before.text).to.equal(201);
    const id = before.body.data.order.id as string;

    relay.cut();
    const logsFrom = t.logs.length;
    for (const answer of [await createOrder(), await t.call('GET', `/orders/${id}`)]) {
      expect(answer.status, answer.text).to.equal(503);
      expect(answer.headers.get('retry-after')).to.equal('5');
      expect(answer.body).to.include({ success: false, code: 'UNAVAILABLE' });
      expect(answer.text).to.not.match(/ECONNREFUSED|at .*\.js/);
    }
    const lines = t.logs.slice(logsFrom).map((l) => JSON.parse(l));
    const outage = lines.filter((l) => l.msg === 'database unavailable');
    expect(outage, 'one line per refused request').to.have.length(2);
    expect(outage.every((l) => l.err?.stack === undefined)).to.equal(true);
    expect(lines.filter((l) => l.msg === 'unexpected error')).to.have.length(0);

    // readyz names the dependency, not its error: a host, a port or a driver's text is for the log.
    const ready = await t.call('GET', '/readyz', { ops: true });
    expect(ready.status).to.equal(503);
    expect(ready.body.data).to.include({ database: 'unavailable', redis: 'ok', gateway: 'ok' });
    expect(ready.text).to.not.match(/ECONN|127\.0\.0\.1|connect|timed out/i);
    const why = t.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'readyz: a dependency is unavailable');
    expect(why, 'the reason is logged').to.include({ dependency: 'database' });
    expect(why.err).to.be.a('string').and.not.equal('');

    relay.restore();
    const again = await createOrder();
    expect(again.status, again.text).to.equal(201);
    expect((await t.call('GET', `/orders/${id}`)).status).to.equal(200);
  });
});
