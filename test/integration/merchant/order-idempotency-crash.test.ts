import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import mysql from 'mysql2/promise';
import {
  ADMIN_URL,
  databaseName,
  exitWithin,
  freePort,
  healthy,
  leftovers,
  type Proc,
  start,
  waitFor,
} from '../../support/process.js';

/**
 * Issue 43, part 1: a kit killed (SIGKILL) while it makes an order under an `Idempotency-Key` never
 * makes a second one when the storefront sends the request again to a kit started afresh. The key's
 * row and the order's are one transaction: killed before its commit, the server rolls it back and the
 * retry makes the order once; killed after it, whether or not the answer got out, the retry is
 * answered the order the first request made.
 */
describe('merchant: an order under an Idempotency-Key, across a SIGKILL (issue 43, part 1)', function () {
  this.timeout(180_000);
  const { databases, track, cleanUp } = leftovers();
  const database = databaseName('idemkill', 'main');
  const OPS = 'idem-kill-ops-token-0123456789abc';
  databases.push(database);
  let env: Record<string, string>;
  let url: string;
  let kit: Proc;
  let db: mysql.Connection;

  before(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = {
      PORT: String(port),
      GATEWAY_PORT: String(await freePort([port])),
      DATABASE_URL: `${ADMIN_URL}/${database}`,
      LOG_LEVEL: 'warn',
      OPS_API_TOKEN: OPS,
    };
    await startKit();
    db = await mysql.createConnection(`${ADMIN_URL}/${database}`);
  });
  after(async () => {
    await db?.end();
    await cleanUp();
  });

  async function startKit() {
    kit = track(start('src/main.ts', [], env));
    await healthy(kit, url, 60_000);
    // One order first: a fresh process's first request is slow (the code is loaded on first use), and
    // the waits below are for the request under test.
    const warm = await answered(await create(`warm-${randomUUID()}`, randomUUID()));
    expect(warm.status).to.equal(201);
  }
  async function killKit() {
    kit.child.kill('SIGKILL');
    const { signal } = await exitWithin(kit, 15_000);
    expect(signal).to.equal('SIGKILL');
  }
  /** POST /orders as the shop's server sends it: its token, a reference of its own, a key. */
  const create = (reference: string, key: string, signal?: AbortSignal) =>
    fetch(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${OPS}`, 'idempotency-key': key },
      body: JSON.stringify({ amount: '42.00', currency: 'EUR', reference }),
      signal,
    });
  const answered = async (res: Response) => ({
    status: res.status,
    replayed: res.headers.get('idempotency-replayed'),
    // biome-ignore lint/suspicious/noExplicitAny: an envelope
    body: (await res.json()) as any,
  });
  const counted = async (sql: string, values: unknown[]) => {
    const [[row]] = await db.query<mysql.RowDataPacket[]>(sql, values);
    return Number(row!.n);
  };
  const ordersWith = (reference: string) =>
    counted('SELECT COUNT(*) AS n FROM orders WHERE reference = ?', [reference]);
  /** The keys kept for the order with a reference. */
  const keysOf = (reference: string) =>
    counted(
      'SELECT COUNT(*) AS n FROM order_requests r JOIN orders o ON o.id = r.order_id WHERE o.reference = ?',
      [reference],
    );
  /** Statements of this database's connections inserting an order, still at it (others run tests beside this one). */
  const inserting = () =>
    counted(
      "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ? AND INFO LIKE 'INSERT INTO `orders`%'",
      [database],
    );
  /** The keys stored, committed or not. */
  const keysStored = async (peek: mysql.Connection) => {
    const [[row]] = await peek.query<mysql.RowDataPacket[]>('SELECT COUNT(*) AS n FROM order_requests');
    return Number(row!.n);
  };

  it('killed between storing the key and its commit: nothing is kept, and the retry makes the order once', async () => {
    const reference = `kill-before-${randomUUID()}`;
    const key = randomUUID();
    // The test holds the gap where the order's reference goes: the kit's transaction writes the key's
    // row, then waits on the order's insert, uncommitted, until the kit is killed.
    const blocker = await mysql.createConnection(`${ADMIN_URL}/${database}`);
    try {
      await blocker.query('START TRANSACTION');
      await blocker.query('SELECT id FROM orders WHERE reference = ? FOR UPDATE', [reference]);
      let outcome = 'pending';
      const lost = create(reference, key).then(
        async (res) => (outcome = `answered ${res.status} ${await res.text()}`),
        () => (outcome = 'lost'),
      );
      await waitFor(
        'the kit’s insert waiting on the test’s lock',
        async () => (await inserting()) > 0,
        45_000,
        {
          context: () => `request: ${outcome}; ${kit.stderr()}`,
        },
      );
      // The key's row is written, in the transaction the kill ends (read uncommitted: only such a
      // reader sees it). The kill lands between storing the key and answering.
      const peek = await mysql.createConnection(`${ADMIN_URL}/${database}`);
      try {
        await peek.query('SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
        expect(await keysStored(peek), 'the warm-up’s key and this one, uncommitted').to.equal(2);
      } finally {
        await peek.end();
      }
      await killKit();
      expect(await lost).to.equal('lost');
      await blocker.query('ROLLBACK');
    } finally {
      await blocker.end();
    }
    // The dead connection's transaction is rolled back: neither the key nor the order stays.
    await waitFor('the killed transaction gone', async () => (await inserting()) === 0, 15_000);
    expect(await ordersWith(reference)).to.equal(0);
    expect(await counted('SELECT COUNT(*) AS n FROM order_requests', []), 'only the warm-up’s key').to.equal(
      1,
    );

    await startKit();
    const retry = await answered(await create(reference, key));
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    const again = await answered(await create(reference, key));
    expect(again).to.deep.include({ status: 200, replayed: 'true' });
    expect(again.body.data.order.id).to.equal(retry.body.data.order.id);
    expect(again.body.data.order.client_secret).to.equal(retry.body.data.order.client_secret);
    expect(await ordersWith(reference)).to.equal(1);
    expect(await keysOf(reference)).to.equal(1);
  });

  it('killed after the commit, its answer lost: the retry is answered the order made, with its secret', async () => {
    const reference = `kill-after-${randomUUID()}`;
    const key = randomUUID();
    const gone = new AbortController();
    const lost = create(reference, key, gone.signal).catch(() => null);
    await waitFor('the order and its key committed', async () => (await keysOf(reference)) === 1, 15_000);
    // Whether or not the answer left the process, the storefront never reads it.
    gone.abort();
    await killKit();
    await lost;
    const [[made]] = await db.query<mysql.RowDataPacket[]>('SELECT id FROM orders WHERE reference = ?', [
      reference,
    ]);

    await startKit();
    const retry = await answered(await create(reference, key));
    expect(retry).to.deep.include({ status: 200, replayed: 'true' });
    expect(retry.body.data.order.id).to.equal(made!.id);
    expect(retry.body.data.order.client_secret).to.match(/^ocs_/);
    // The secret is the order's: it opens the order's public view.
    const shown = await fetch(`${url}/orders/${made!.id}`, {
      headers: { 'order-secret': retry.body.data.order.client_secret },
    });
    expect(shown.status).to.equal(200);
    expect(await ordersWith(reference)).to.equal(1);
    expect(await keysOf(reference)).to.equal(1);
    kit.child.kill('SIGTERM');
    await exitWithin(kit, 15_000);
  });
});
