import { expect } from 'chai';
import mysql from 'mysql2/promise';
import { MIGRATIONS } from '../../../migrations/index.js';
import {
  ADMIN_URL,
  databaseExists,
  databaseName,
  exitWithin,
  freePort,
  healthy,
  leftovers,
  lines,
  type Proc,
  start,
} from '../../support/process.js';

/**
 * merchant.md, Running it: the real entry points, `src/main.ts` (what `npm start` runs) and `src/cli.ts`,
 * as child processes against databases of their own, dropped afterwards. Every wait is bounded.
 */
const READY_DEADLINE_MS = 20_000;

async function tablesOf(name: string): Promise<string[]> {
  const connection = await mysql.createConnection(`${ADMIN_URL}/${name}`);
  try {
    const [rows] = await connection.query<mysql.RowDataPacket[]>('SHOW TABLES');
    return rows.map((r) => String(Object.values(r)[0]));
  } finally {
    await connection.end();
  }
}

describe('merchant: the real entry points as processes', function () {
  this.timeout(40_000);
  const { databases, track, cleanUp } = leftovers();
  after(cleanUp);

  describe('main (npm start) with a bad variable', () => {
    it('PORT=abc: exits 1, printing exactly one line naming PORT on stderr', async () => {
      const database = databaseName('proc', 'bad');
      databases.push(database);
      const p = track(
        start('src/main.ts', [], {
          PORT: 'abc',
          GATEWAY_PORT: String(await freePort()),
          DATABASE_URL: `${ADMIN_URL}/${database}`,
        }),
      );
      const { code } = await exitWithin(p, 15_000);
      expect(code, p.stderr()).to.equal(1);
      const errLines = lines(p.stderr());
      expect(errLines, p.stderr()).to.have.length(1);
      expect(errLines[0]).to.match(/\bPORT\b/);
      expect(errLines[0]).to.not.match(/GATEWAY_PORT/);
      expect(await databaseExists(database), 'nothing started: no database created').to.equal(false);
    });

    it('several bad settings in production: exits 1, one line on stderr for each, naming it, and no stack trace', async () => {
      const database = databaseName('proc', 'many');
      databases.push(database);
      const env = {
        NODE_ENV: 'production',
        PORT: 'abc',
        DATABASE_URL: `postgres://127.0.0.1:5432/${database}`,
        GATEWAY_PORT: String(await freePort()),
        GATEWAY_BASE_URL: 'https://gateway.example.com',
        OPS_API_TOKEN: 'change-me-to-a-long-random-token',
        LIMIT_PAY_PER_ORDER: 'lots',
        GATEWAY_BACKGROUND_PER_MINUTE: '300',
        GATEWAY_KEY_PER_MINUTE: '200',
      };
      const expected = [
        'PORT',
        'DATABASE_URL',
        'LIMIT_PAY_PER_ORDER',
        'APP_ENCRYPTION_KEY',
        'GATEWAY_API_KEY',
        'OPS_API_TOKEN',
        'METRICS_TOKEN',
        'GATEWAY_BACKGROUND_PER_MINUTE',
      ];
      // `npm start` and a CLI command read the settings alike.
      for (const [script, args] of [
        ['src/main.ts', []],
        ['src/cli.ts', ['migrate']],
      ] as const) {
        const p = track(start(script, [...args], env));
        const { code } = await exitWithin(p, 15_000);
        expect(code, p.stderr()).to.equal(1);
        const errLines = lines(p.stderr());
        expect(
          errLines.map((l) => /^configuration: ([A-Z_]+): \S/.exec(l)?.[1]),
          p.stderr(),
        ).to.deep.equal(expected);
        expect(p.stderr(), 'no stack trace').to.not.match(/\n\s+at /);
        expect(p.stderr(), 'no secret echoed').to.not.contain('change-me-to-a-long-random-token');
      }
      expect(await databaseExists(database), 'nothing started: no database created').to.equal(false);
    });

    it('production refuses weak secrets (issue 41): a token of one character 32 times, the development key without its padding', async () => {
      const database = databaseName('proc', 'weak');
      databases.push(database);
      // The development key (32 bytes of 7) as base64 without its '=': the same bytes, other text.
      const unpadded = Buffer.alloc(32, 7).toString('base64').replace(/=+$/, '');
      const p = track(
        start('src/main.ts', [], {
          NODE_ENV: 'production',
          PORT: String(await freePort()),
          GATEWAY_PORT: String(await freePort()),
          DATABASE_URL: `${ADMIN_URL}/${database}`,
          GATEWAY_BASE_URL: 'embedded',
          METRICS_TOKEN: 'a-metrics-token-of-its-own-0123456789',
          OPS_API_TOKEN: 'x'.repeat(32),
          APP_ENCRYPTION_KEY: unpadded,
        }),
      );
      const { code } = await exitWithin(p, 15_000);
      expect(code, p.stderr()).to.equal(1);
      const errLines = lines(p.stderr());
      expect(
        errLines.map((l) => /^configuration: ([A-Z_]+): /.exec(l)?.[1]),
        p.stderr(),
      ).to.deep.equal(['APP_ENCRYPTION_KEY', 'OPS_API_TOKEN']);
      expect(errLines[0]).to.contain('is the development key');
      expect(errLines[1]).to.contain('at least 16 different characters');
      expect(p.stderr(), 'no secret echoed').to.not.contain('x'.repeat(32));
      expect(await databaseExists(database), 'nothing started: no database created').to.equal(false);
    });

    it('a Redis that answers and refuses REDIS_URL: one line naming it, before anything is created', async () => {
      const database = databaseName('proc', 'redis');
      databases.push(database);
      const cases: [string, RegExp][] = [
        ['redis://127.0.0.1:6379/99', /^REDIS_URL: Redis refuses it \(ERR DB index is out of range\)$/],
        ['redis://nobody:pw@127.0.0.1:6379/5', /^REDIS_URL: Redis refuses it \(WRONGPASS /],
      ];
      for (const [url, line] of cases) {
        const p = track(
          start('src/main.ts', [], {
            GATEWAY_PORT: String(await freePort()),
            DATABASE_URL: `${ADMIN_URL}/${database}`,
            REDIS_URL: url,
          }),
        );
        expect((await exitWithin(p, 15_000)).code, p.stderr()).to.equal(1);
        const errLines = lines(p.stderr());
        expect(errLines, p.stderr()).to.have.length(1);
        expect(errLines[0]).to.match(line);
        expect(errLines[0], 'never the password').to.not.contain('pw');
      }
      expect(await databaseExists(database), 'nothing started: no database created').to.equal(false);
    });

    it('a database that refuses the user, or lets it in without the right to create: one line naming DATABASE_URL', async () => {
      const database = databaseName('proc', 'denied');
      databases.push(database);
      const user = `kit_ro_${process.pid}`;
      const admin = await mysql.createConnection(ADMIN_URL);
      try {
        await admin.query(`CREATE USER '${user}'@'127.0.0.1' IDENTIFIED BY 'pw'`);
        const cases: [string, RegExp][] = [
          [
            `mysql://${user}:wrong@127.0.0.1:3306/${database}`,
            /^DATABASE_URL: cannot connect to the database \(ER_ACCESS_DENIED_ERROR: Access denied for user/,
          ],
          [
            `mysql://${user}:pw@127.0.0.1:3306/${database}`,
            /^DATABASE_URL: the database refuses this user what the kit needs \(ER_DBACCESS_DENIED_ERROR: /,
          ],
          [
            'mysql://root@127.0.0.1:3306/a-shop',
            /^configuration: DATABASE_URL: the database name \(the path\) must be/,
          ],
        ];
        for (const [url, line] of cases) {
          const p = track(
            start('src/main.ts', [], { GATEWAY_PORT: String(await freePort()), DATABASE_URL: url }),
          );
          expect((await exitWithin(p, 15_000)).code, p.stderr()).to.equal(1);
          const errLines = lines(p.stderr());
          expect(errLines, p.stderr()).to.have.length(1);
          expect(errLines[0]).to.match(line);
          expect(errLines[0], 'never the password').to.not.contain(':pw@');
        }
      } finally {
        await admin.query(`DROP USER IF EXISTS '${user}'@'127.0.0.1'`);
        await admin.end();
      }
    });
  });

  describe('main (npm start) with good variables', () => {
    let p: Proc;
    let url: string;
    const database = databaseName('proc', 'main');

    before(async function () {
      this.timeout(READY_DEADLINE_MS + 10_000);
      databases.push(database);
      const port = await freePort();
      const gatewayPort = await freePort([port]);
      url = `http://127.0.0.1:${port}`;
      p = track(
        start('src/main.ts', [], {
          PORT: String(port),
          GATEWAY_PORT: String(gatewayPort),
          DATABASE_URL: `${ADMIN_URL}/${database}`,
        }),
      );
      await healthy(p, url, READY_DEADLINE_MS);
    });

    const printedToken = () => /OPS_API_TOKEN[^\n]*?:\s*(\S+)\s*$/m.exec(p.stdout())?.[1];

    it('prints the generated OPS_API_TOKEN on one line of its stdout', () => {
      const tokenLines = lines(p.stdout()).filter((l) => l.includes('OPS_API_TOKEN'));
      expect(tokenLines, p.stdout()).to.have.length(1);
      expect(printedToken(), p.stdout()).to.be.a('string').with.length.of.at.least(16);
    });

    it('/healthz answers 200', async () => {
      const res = await fetch(`${url}/healthz`);
      expect(res.status).to.equal(200);
    });

    /** /readyz as an operator reads it: with the printed token. */
    const readyz = () => fetch(`${url}/readyz`, { headers: { authorization: `Bearer ${printedToken()}` } });

    it('/readyz answers 200 with the database and the gateway ok', async () => {
      const res = await readyz();
      const body = (await res.json()) as { data: Record<string, string> };
      expect(res.status, JSON.stringify(body)).to.equal(200);
      expect(body.data.database).to.equal('ok');
      expect(body.data.gateway).to.equal('ok');
    });

    it("/readyz reports the gateway key start-up read: the sandbox's merchant key and its scopes", async () => {
      const body = (await (await readyz()).json()) as { data: Record<string, unknown> };
      expect(body.data.gateway_key).to.deep.equal({
        key_type: 'merchant',
        merchant_id: 1001,
        merchant_ids: [1001],
        scopes: ['webhooks:manage'],
      });
    });

    it('/readyz checks Redis too (merchant.md: "readiness (database, Redis, gateway)")', async () => {
      const res = await readyz();
      const body = (await res.json()) as { data: Record<string, string> };
      const redis = Object.entries(body.data).find(([name]) => /redis/i.test(name));
      expect(redis, `readiness checks: ${Object.keys(body.data).join(', ')}`).to.not.equal(undefined);
      expect(redis![1]).to.equal('ok');
    });

    it('POST /orders creates an order that GET /orders/{id} returns', async () => {
      const created = await fetch(`${url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: '9.99', currency: 'EUR' }),
      });
      const body = (await created.json()) as {
        data: { order: { id: string; status: string; amount: number; client_secret: string } };
      };
      expect(created.status, JSON.stringify(body)).to.equal(201);
      expect(body.data.order.status).to.equal('pending');
      expect(body.data.order.amount).to.equal(999);
      const got = await fetch(`${url}/orders/${body.data.order.id}`, {
        headers: { 'order-secret': body.data.order.client_secret },
      });
      expect(got.status).to.equal(200);
    });

    it('the printed token is the operator token: it passes where another is refused', async () => {
      const created = await fetch(`${url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: '5.00', currency: 'EUR' }),
      });
      const id = ((await created.json()) as { data: { order: { id: string } } }).data.order.id;
      const capture = (token: string) =>
        fetch(`${url}/orders/${id}/capture`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        });
      expect((await capture('not-the-printed-token-000')).status).to.equal(401);
      // Authorized, then refused for the order's state: a pending order cannot be captured.
      expect((await capture(printedToken()!)).status).to.equal(409);
    });

    it('SIGTERM makes it exit 0 within a few seconds', async () => {
      p.child.kill('SIGTERM');
      const { code, signal } = await exitWithin(p, 8000);
      expect(signal, p.stderr()).to.equal(null);
      expect(code, p.stderr()).to.equal(0);
    });
  });

  describe('cli', () => {
    it('migrate on a new database applies every migration; a second run is up to date', async () => {
      const database = databaseName('proc', 'cli');
      databases.push(database);
      const env = { DATABASE_URL: `${ADMIN_URL}/${database}` };

      const first = track(start('src/cli.ts', ['migrate'], env));
      expect((await exitWithin(first, 20_000)).code, first.stderr()).to.equal(0);
      for (const m of MIGRATIONS) expect(first.stdout(), 'names what it applied').to.contain(m.name);
      expect(first.stdout()).to.not.contain('up to date');
      expect(await tablesOf(database)).to.include.members(['orders', 'order_history', 'gateway_operations']);

      const second = track(start('src/cli.ts', ['migrate'], env));
      expect((await exitWithin(second, 20_000)).code, second.stderr()).to.equal(0);
      expect(second.stdout().trim()).to.equal('up to date');
    });

    it('migrate with a bad DATABASE_URL exits 1 with one line naming it', async () => {
      const p = track(start('src/cli.ts', ['migrate'], { DATABASE_URL: 'http://x' }));
      expect((await exitWithin(p, 15_000)).code).to.equal(1);
      const errLines = lines(p.stderr());
      expect(errLines, p.stderr()).to.have.length(1);
      expect(errLines[0]).to.contain('DATABASE_URL');
    });
  });
});
