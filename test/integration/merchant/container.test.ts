import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { MIGRATIONS } from '../../../migrations/index.js';
import { card } from '../../support/gateway.js';
import { pressButton } from '../../support/kit.js';
import {
  ADMIN_URL,
  call,
  databaseName,
  exitWithin,
  freePort,
  healthy,
  leftovers,
  lines,
  logLines,
  type Proc,
  startBuilt,
  waitFor,
} from '../../support/process.js';
import { claimRedisDatabase, REDIS_BASE, releaseRedisDatabase } from '../../support/redis.js';

/**
 * The container as it will run: `npm run build` once, then the compiled entry points with plain node
 * and NODE_ENV=production, as the Dockerfile's commands run them (`node dist/src/main.js`, the CLI,
 * `node dist/src/gateway/main.js`), against MySQL and Redis. First the image's default command with
 * the built-in sandbox (GATEWAY_BASE_URL=embedded); then the compose file's split: the sandbox as a
 * process of its own on 0.0.0.0 with the compose seed, the one-shot `webhook register`, an api and a
 * worker. Each group has its own database and Redis index, dropped afterwards; every wait is bounded.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const READY_DEADLINE_MS = 15_000;
const SANDBOX_KEY = 'sk_test_merchant_1001';
const CARD_NUMBER = '4242424242424242';
const CHALLENGE_CARD = '4000000000003220';

/** The settings every kit process of the image gets: production, its own secrets. */
const production = () => ({
  NODE_ENV: 'production',
  LOG_LEVEL: 'info', // the default: the test runner's `warn` would hide what production logs
  OPS_API_TOKEN: randomBytes(24).toString('base64url'),
  APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  METRICS_TOKEN: randomBytes(24).toString('base64url'),
});

/** The order's history (an operator's read, with `token`) once a line from `source` is in it. */
async function historyWith(url: string, token: string, id: string, source: string, context: () => string) {
  return waitFor(
    `a ${source} line in the history of ${id}`,
    async () => {
      const got = await call(url, 'GET', `/orders/${id}`, undefined, { authorization: `Bearer ${token}` });
      const history = got.body?.data?.order?.history as { source: string; outcome: string }[] | undefined;
      return history?.some((h) => h.source === source) ? history : undefined;
    },
    15_000,
    { everyMs: 100, context },
  );
}

/** Every line any of `procs` wrote that shows card data or a signing secret. */
const leaks = (procs: Proc[]) =>
  procs
    .flatMap((p) => lines(p.stdout() + p.stderr()))
    .filter((l) => l.includes(CARD_NUMBER) || l.includes(CHALLENGE_CARD) || l.includes('whsec_'));

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe('merchant: the container as it will run (the build, with plain node, NODE_ENV=production)', function () {
  this.timeout(30_000);
  const { databases, track, cleanUp } = leftovers();
  const redisClaims: Redis[] = [];

  before(async function () {
    this.timeout(60_000);
    // What the image's build stage runs, once for the whole file.
    await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT, timeout: 55_000 });
  });

  after(async () => {
    await cleanUp();
    for (const redis of redisClaims) await releaseRedisDatabase(redis).catch(() => undefined);
  });

  const claimRedis = async () => {
    const claimed = await claimRedisDatabase();
    redisClaims.push(claimed.redis);
    return `${REDIS_BASE}/${claimed.index}`;
  };

  describe('what the image needs is in the build', () => {
    it('dist/ holds the three entry points and every migration, compiled', () => {
      for (const file of ['dist/src/main.js', 'dist/src/cli.js', 'dist/src/gateway/main.js'])
        expect(existsSync(join(ROOT, file)), file).to.equal(true);
      expect(existsSync(join(ROOT, 'dist/migrations/index.js'))).to.equal(true);
      for (const m of MIGRATIONS)
        expect(existsSync(join(ROOT, `dist/migrations/${m.name}.js`)), m.name).to.equal(true);
    });

    it('the built code imports only runtime dependencies: the image installs no devDependencies', () => {
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      const imported = new Set<string>();
      for (const file of filesUnder(join(ROOT, 'dist')).filter((f) => f.endsWith('.js'))) {
        const text = readFileSync(file, 'utf8');
        const specifiers = [
          // static: no parenthesis on the way to `from`, or a function's body (`export async function
          // f(o) { const r = { from: g('--from'` ...) would read as an import of what follows
          ...text.matchAll(/^(?:import|export)\s[^;()]*?\bfrom\s*['"]([^'"\n]+)['"]/gm),
          ...text.matchAll(/^import\s*['"]([^'"\n]+)['"]/gm), // for its effect
          ...text.matchAll(/\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g), // dynamic
        ];
        for (const [, specifier] of specifiers) {
          if (specifier!.startsWith('.') || isBuiltin(specifier!)) continue;
          const parts = specifier!.split('/');
          imported.add(specifier!.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!);
        }
      }
      expect(imported.size, 'some packages are imported').to.be.greaterThan(3);
      const missing = [...imported].filter((name) => !(name in pkg.dependencies));
      expect(missing, 'imported by dist/ but not in dependencies').to.deep.equal([]);
    });

    it('node dist/src/cli.js migrate applies every migration to a new database; a second run is up to date', async () => {
      const database = databaseName('container', 'cli');
      databases.push(database);
      const env = { ...production(), GATEWAY_BASE_URL: 'embedded', DATABASE_URL: `${ADMIN_URL}/${database}` };
      const first = track(startBuilt('dist/src/cli.js', ['migrate'], env));
      expect((await exitWithin(first, 20_000)).code, first.stderr()).to.equal(0);
      for (const m of MIGRATIONS) expect(first.stdout()).to.contain(m.name);
      const second = track(startBuilt('dist/src/cli.js', ['migrate'], env));
      expect((await exitWithin(second, 20_000)).code, second.stderr()).to.equal(0);
      expect(second.stdout().trim()).to.equal('up to date');
    });
  });

  describe('node dist/src/main.js, the image command, with the built-in sandbox (GATEWAY_BASE_URL=embedded)', () => {
    let kit: Proc;
    let url: string;
    let env: ReturnType<typeof production>;
    let orderId: string;

    before(async function () {
      this.timeout(READY_DEADLINE_MS + 10_000);
      const database = databaseName('container', 'main');
      databases.push(database);
      const port = await freePort();
      const gatewayPort = await freePort([port]);
      url = `http://127.0.0.1:${port}`;
      env = production();
      kit = track(
        startBuilt('dist/src/main.js', [], {
          ...env,
          GATEWAY_BASE_URL: 'embedded',
          GATEWAY_SANDBOX_STATE: 'memory',
          PORT: String(port),
          GATEWAY_PORT: String(gatewayPort),
          DATABASE_URL: `${ADMIN_URL}/${database}`,
          REDIS_URL: await claimRedis(),
        }),
      );
      await healthy(kit, url, READY_DEADLINE_MS);
    });

    it('/healthz answers 200; /readyz answers 200, and to an operator with the database, Redis and the gateway ok', async () => {
      expect((await call(url, 'GET', '/healthz')).status).to.equal(200);
      const probe = await call(url, 'GET', '/readyz');
      expect(probe.status, probe.text).to.equal(200);
      expect(probe.body.data).to.deep.equal({ status: 'ready' });
      const ready = await call(url, 'GET', '/readyz', undefined, {
        authorization: `Bearer ${env.OPS_API_TOKEN}`,
      });
      expect(ready.status, ready.text).to.equal(200);
      expect(ready.body.data).to.deep.equal({
        status: 'ready',
        database: 'ok',
        redis: 'ok',
        gateway: 'ok',
        gateway_key: {
          key_type: 'merchant',
          merchant_id: 1001,
          merchant_ids: [1001],
          scopes: ['webhooks:manage'],
        },
      });
    });

    it('takes a card payment through the merchant API: the order is paid', async () => {
      const created = await call(url, 'POST', '/orders', { amount: '12.34', currency: 'EUR' });
      expect(created.status, created.text).to.equal(201);
      orderId = created.body.data.order.id;
      const pay = await call(url, 'POST', `/orders/${orderId}/pay/card`, {
        card: card(CARD_NUMBER),
        mode: 'sale',
      });
      expect(pay.status, pay.text).to.equal(200);
      expect(pay.body.data.order.status).to.equal('paid');
      expect(pay.body.data.order.captured_amount).to.equal(1234);
    });

    it("the sandbox's signed webhook reaches the receiver, is stored and applied: a webhook line in the history", async () => {
      expect(orderId, 'the payment above').to.be.a('string');
      const history = await historyWith(url, env.OPS_API_TOKEN, orderId, 'webhook', () => kit.stderr());
      const line = history.find((h) => h.source === 'webhook')!;
      // The API's answer got there first: the event confirms it (or applies it, had it come first).
      expect(['duplicate', 'applied'], JSON.stringify(history)).to.include(line.outcome);
      const got = await call(url, 'GET', `/orders/${orderId}`, undefined, {
        authorization: `Bearer ${env.OPS_API_TOKEN}`,
      });
      expect(got.body.data.order.status).to.equal('paid');
      expect(got.body.data.order.needs_review).to.equal(false);
    });

    it('/metrics answers Prometheus text: the process, the receiver that took the webhook above', async () => {
      // Production takes no open /metrics on the public port: the scraper's token opens it.
      expect((await call(url, 'GET', '/metrics')).status).to.equal(401);
      const res = await call(url, 'GET', '/metrics', undefined, {
        authorization: `Bearer ${env.METRICS_TOKEN}`,
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.type).to.match(/^text\/plain/);
      expect(res.text).to.match(/^# TYPE \w+ (counter|gauge|histogram|summary|untyped)$/m);
      expect(res.text).to.match(/^process_cpu_user_seconds_total \d/m);
      expect(res.text).to.match(/^kit_webhook_requests_total\{outcome="accepted"\} [1-9]/m);
      expect(res.text).to.match(
        /^kit_observations_total\{source="webhook",outcome="(duplicate|applied)"\} [1-9]/m,
      );
      expect(res.text).to.not.contain(CARD_NUMBER);
      expect(res.text).to.not.contain('whsec_');
    });

    it('runs on Node 24 LTS (issue 41): the process says so in /metrics, and the image and engines ask for it', async () => {
      // What npm scripts (and so this test's `node`) resolve after npm ci is the registry's Node 24,
      // even on a machine whose own Node is older: Node 20 reached its end of life on 2026-04-30.
      const res = await call(url, 'GET', '/metrics', undefined, {
        authorization: `Bearer ${env.METRICS_TOKEN}`,
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.text).to.match(/^nodejs_version_info\{version="v24\.\d+\.\d+",major="24",/m);
      const stages = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').match(/^FROM \S+/gm);
      expect(stages, 'the build and run stages').to.deep.equal(['FROM node:24-slim', 'FROM node:24-slim']);
      const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
      expect(manifest.engines.node).to.equal('>=22.12');
      expect(manifest.devDependencies.node).to.match(/^\^24\./);
    });

    it('SIGTERM: exits 0 with `stopped` as its last log line', async () => {
      kit.child.kill('SIGTERM');
      const { code, signal } = await exitWithin(kit, 15_000);
      expect(signal, kit.stderr()).to.equal(null);
      expect(code, kit.stderr()).to.equal(0);
      const logged = logLines(kit.stdout());
      expect(logged.at(-1)?.msg, kit.stdout().slice(-2000)).to.equal('stopped');
    });

    it('no line of its output holds the card number or a signing secret (whsec_)', () => {
      expect(kit.running(), 'stopped above').to.equal(false);
      expect(lines(kit.stdout()).length, 'it logged its requests').to.be.greaterThan(5);
      expect(leaks([kit])).to.deep.equal([]);
    });
  });

  describe("the compose file's split: the built sandbox on 0.0.0.0, `webhook register`, an api and a worker", () => {
    const dir = mkdtempSync(join(tmpdir(), 'container-sandbox-'));
    const procs: Proc[] = [];
    let sandbox: Proc;
    let api: Proc;
    let worker: Proc;
    let apiUrl: string;
    let sandboxPort: number;
    let env: Record<string, string>;

    after(() => rmSync(dir, { recursive: true, force: true }));

    before(async function () {
      this.timeout(READY_DEADLINE_MS + 20_000);
      const database = databaseName('container', 'split');
      databases.push(database);
      const apiPort = await freePort();
      sandboxPort = await freePort([apiPort]);
      apiUrl = `http://127.0.0.1:${apiPort}`;
      const secrets = production();
      // The compose `sandbox` service: its own settings only, its state in a file (the volume).
      sandbox = track(
        startBuilt('dist/src/gateway/main.js', [], {
          NODE_ENV: 'production',
          LOG_LEVEL: 'info',
          APP_ENCRYPTION_KEY: secrets.APP_ENCRYPTION_KEY,
          GATEWAY_HOST: '0.0.0.0',
          GATEWAY_PORT: String(sandboxPort),
          GATEWAY_PUBLIC_URL: `http://localhost:${sandboxPort}`,
          GATEWAY_SEED: 'config/gateway-seed.compose.json',
          GATEWAY_SANDBOX_STATE: join(dir, 'var', 'sandbox-state.json'),
        }),
      );
      procs.push(sandbox);
      await waitFor(
        'the sandbox answering',
        async () => {
          if (!sandbox.running()) throw new Error(`the sandbox exited: ${sandbox.stderr()}`);
          return fetch(`http://127.0.0.1:${sandboxPort}/`, { signal: AbortSignal.timeout(1000) }).then(
            () => true,
            () => false,
          );
        },
        READY_DEADLINE_MS,
        { everyMs: 50, context: () => sandbox.stderr() },
      );
      // What every kit service of the compose file gets, the gateway being the sandbox above.
      env = {
        ...secrets,
        PORT: String(apiPort),
        PUBLIC_BASE_URL: apiUrl,
        DATABASE_URL: `${ADMIN_URL}/${database}`,
        REDIS_URL: await claimRedis(),
        GATEWAY_BASE_URL: `http://127.0.0.1:${sandboxPort}`,
        GATEWAY_API_KEY: SANDBOX_KEY,
      };
      // The one-shots in their order: migrate, then register (at the api's address for the sandbox).
      const migrate = track(startBuilt('dist/src/cli.js', ['migrate'], env));
      procs.push(migrate);
      expect((await exitWithin(migrate, 20_000)).code, migrate.stderr()).to.equal(0);
      const register = track(
        startBuilt('dist/src/cli.js', ['webhook', 'register', '--url', `${apiUrl}/webhooks/gateway`], env),
      );
      procs.push(register);
      expect((await exitWithin(register, 20_000)).code, register.stderr()).to.equal(0);
      expect(register.stdout()).to.contain('its signing secret is stored');

      api = track(startBuilt('dist/src/main.js', [], { ...env, ROLES: 'api' }));
      worker = track(startBuilt('dist/src/main.js', [], { ...env, ROLES: 'worker' }));
      procs.push(api, worker);
      await healthy(api, apiUrl, READY_DEADLINE_MS);
    });

    it('the sandbox listens on every interface (GATEWAY_HOST=0.0.0.0), not only on loopback', async function () {
      const logged = logLines(sandbox.stdout()).find((l) => l.msg === 'sandbox gateway listening');
      expect(logged?.url, sandbox.stdout()).to.equal(`http://0.0.0.0:${sandboxPort}`);
      const external = Object.values(networkInterfaces())
        .flat()
        .find((a) => a?.family === 'IPv4' && !a.internal)?.address;
      if (external === undefined) {
        this.test!.title += ' (the address check skipped: this machine has no non-loopback IPv4 address)';
        return;
      }
      const res = await fetch(`http://${external}:${sandboxPort}/api/v1/webhook`, {
        headers: { authorization: `Bearer ${SANDBOX_KEY}` },
        signal: AbortSignal.timeout(5000),
      });
      expect(res.status, `reached on ${external}`).to.equal(200);
    });

    it('/readyz of the api: the database, Redis and the sandbox as its gateway are ok', async () => {
      const ready = await call(apiUrl, 'GET', '/readyz', undefined, {
        authorization: `Bearer ${env.OPS_API_TOKEN}`,
      });
      expect(ready.status, ready.text).to.equal(200);
      expect(ready.body.data).to.deep.equal({
        status: 'ready',
        database: 'ok',
        redis: 'ok',
        gateway: 'ok',
        gateway_key: {
          key_type: 'merchant',
          merchant_id: 1001,
          merchant_ids: [1001],
          scopes: ['webhooks:manage'],
        },
      });
    });

    it("a 3DS challenge on the sandbox's public URL, then its webhook, delivered to the api and applied by the worker", async () => {
      const created = await call(apiUrl, 'POST', '/orders', { amount: '30.00', currency: 'EUR' });
      expect(created.status, created.text).to.equal(201);
      const id = created.body.data.order.id as string;
      const pay = await call(apiUrl, 'POST', `/orders/${id}/pay/card`, {
        card: card(CHALLENGE_CARD),
        mode: 'sale',
      });
      expect(pay.status, pay.text).to.equal(200);
      expect(pay.body.data.order.status).to.equal('requires_action');
      // GATEWAY_PUBLIC_URL, not the origin the kit called the sandbox on.
      const page = pay.body.data.next_action.url as string;
      expect(page.startsWith(`http://localhost:${sandboxPort}/hosted/3ds/`), page).to.equal(true);
      const back = await pressButton(page.replace('//localhost:', '//127.0.0.1:'), 'authenticate');
      expect(back.startsWith(`${apiUrl}/checkout/3ds-return?`), back).to.equal(true);
      expect((await fetch(back)).status).to.equal(200);

      const history = await historyWith(
        apiUrl,
        env.OPS_API_TOKEN!,
        id,
        'webhook',
        () => api.stderr() + worker.stderr(),
      );
      const got = await call(apiUrl, 'GET', `/orders/${id}`);
      expect(got.body.data.order.status, JSON.stringify(history)).to.equal('paid');
    });

    it('SIGTERM stops each of them with exit 0; none printed card data or a signing secret', async () => {
      for (const p of [api, worker, sandbox]) {
        p.child.kill('SIGTERM');
        const { code } = await exitWithin(p, 15_000);
        expect(code, p.stderr()).to.equal(0);
      }
      for (const p of [api, worker])
        expect(logLines(p.stdout()).at(-1)?.msg, p.stdout().slice(-1000)).to.equal('stopped');
      expect(existsSync(join(dir, 'var', 'sandbox-state.json')), 'the state saved').to.equal(true);
      expect(leaks(procs)).to.deep.equal([]);
    });
  });
});
