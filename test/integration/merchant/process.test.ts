import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import mysql from 'mysql2/promise';
import { MIGRATIONS } from '../../../migrations/index.js';

/**
 * merchant.md, Running it: the real entry points, `src/main.ts` (what `npm start` runs) and `src/cli.ts`,
 * as child processes against databases of their own, dropped afterwards. Every wait is bounded.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ADMIN_URL = 'mysql://root@127.0.0.1:3306';
const READY_DEADLINE_MS = 20_000;

/** Variables the kit reads: none leaks in from the test runner's environment. */
const KIT_VARIABLES = [
  'NODE_ENV',
  'PORT',
  'PUBLIC_BASE_URL',
  'DATABASE_URL',
  'REDIS_URL',
  'GATEWAY_BASE_URL',
  'GATEWAY_API_KEY',
  'GATEWAY_MERCHANT_ID',
  'GATEWAY_WEBHOOK_SECRETS',
  'GATEWAY_PORT',
  'GATEWAY_SEED',
  'OPS_API_TOKEN',
  'APP_ENCRYPTION_KEY',
  'ROLES',
  'LOG_LEVEL',
];

interface Proc {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running: () => boolean;
}

function start(script: string, args: string[], env: Record<string, string>): Proc {
  const base = { ...process.env };
  for (const name of KIT_VARIABLES) delete base[name];
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: { ...base, NODE_ENV: 'development', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => {
    out += String(chunk);
  });
  child.stderr!.on('data', (chunk) => {
    err += String(chunk);
  });
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  return { child, stdout: () => out, stderr: () => err, exited, running: () => !done };
}

/** The process's exit, or a failure after `ms` (the process is then killed). */
async function exitWithin(p: Proc, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      p.child.kill('SIGKILL');
      reject(new Error(`no exit within ${ms} ms; stderr: ${p.stderr()}`));
    }, ms);
  });
  try {
    return await Promise.race([p.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A port free right now: bound on 0 and released. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const databaseName = (what: string) =>
  `merchant_proc_${what}_${process.pid}_${randomBytes(3).toString('hex')}`;

async function dropDatabases(names: string[]): Promise<void> {
  const connection = await mysql.createConnection(ADMIN_URL);
  try {
    for (const name of names) await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
  } finally {
    await connection.end();
  }
}

async function databaseExists(name: string): Promise<boolean> {
  const connection = await mysql.createConnection(ADMIN_URL);
  try {
    const [rows] = await connection.query<mysql.RowDataPacket[]>('SHOW DATABASES LIKE ?', [name]);
    return rows.length > 0;
  } finally {
    await connection.end();
  }
}

async function tablesOf(name: string): Promise<string[]> {
  const connection = await mysql.createConnection(`${ADMIN_URL}/${name}`);
  try {
    const [rows] = await connection.query<mysql.RowDataPacket[]>('SHOW TABLES');
    return rows.map((r) => String(Object.values(r)[0]));
  } finally {
    await connection.end();
  }
}

const lines = (text: string) => text.split(/\r?\n/).filter((l) => l.trim() !== '');

describe('merchant: the real entry points as processes', function () {
  this.timeout(40_000);
  const databases: string[] = [];
  const processes: Proc[] = [];
  const track = (p: Proc) => {
    processes.push(p);
    return p;
  };

  after(async () => {
    for (const p of processes) {
      if (p.running()) {
        p.child.kill('SIGKILL');
        await exitWithin(p, 5000).catch(() => undefined);
      }
    }
    await dropDatabases(databases);
  });

  describe('main (npm start) with a bad variable', () => {
    it('PORT=abc: exits 1, printing exactly one line naming PORT on stderr', async () => {
      const database = databaseName('bad');
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
  });

  describe('main (npm start) with good variables', () => {
    let p: Proc;
    let url: string;
    const database = databaseName('main');

    before(async function () {
      this.timeout(READY_DEADLINE_MS + 10_000);
      databases.push(database);
      const port = await freePort();
      let gatewayPort = await freePort();
      while (gatewayPort === port) gatewayPort = await freePort();
      url = `http://127.0.0.1:${port}`;
      p = track(
        start('src/main.ts', [], {
          PORT: String(port),
          GATEWAY_PORT: String(gatewayPort),
          DATABASE_URL: `${ADMIN_URL}/${database}`,
        }),
      );
      const deadline = Date.now() + READY_DEADLINE_MS;
      for (;;) {
        if (!p.running()) throw new Error(`main exited early: ${p.stderr()}`);
        try {
          const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
          if (res.status === 200) break;
        } catch {
          // not listening yet
        }
        if (Date.now() > deadline)
          throw new Error(`no /healthz within ${READY_DEADLINE_MS} ms: ${p.stderr()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
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

    it('/readyz answers 200 with the database and the gateway ok', async () => {
      const res = await fetch(`${url}/readyz`);
      const body = (await res.json()) as { data: Record<string, string> };
      expect(res.status, JSON.stringify(body)).to.equal(200);
      expect(body.data.database).to.equal('ok');
      expect(body.data.gateway).to.equal('ok');
    });

    it('/readyz checks Redis too (merchant.md: "readiness (database, Redis, gateway)")', async () => {
      const res = await fetch(`${url}/readyz`);
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
        data: { order: { id: string; status: string; amount: number } };
      };
      expect(created.status, JSON.stringify(body)).to.equal(201);
      expect(body.data.order.status).to.equal('pending');
      expect(body.data.order.amount).to.equal(999);
      const got = await fetch(`${url}/orders/${body.data.order.id}`);
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
      const database = databaseName('cli');
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
