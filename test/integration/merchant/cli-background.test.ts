import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { REPORT_COLUMNS } from '../../../src/merchant/reports/reconciliation.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { keepSecret, withSecret } from '../../support/order-secrets.js';
import {
  ADMIN_URL,
  databaseName,
  exitWithin,
  freePort,
  healthy,
  leftovers,
  lines,
  type Proc,
  SUITE_PREFIX,
  start,
  waitFor,
} from '../../support/process.js';

/**
 * merchant.md, Running it: `npm run cli -- recover --since` and `poll` beside a running kit (its
 * embedded sandbox, its database and Redis): a summary on stdout, exit 0; a bad `--since` is one line
 * and exit 1. Processes, as an operator runs them.
 */
describe('merchant: the CLI’s recover and poll beside a running kit', function () {
  this.timeout(120_000);
  const { databases, track, cleanUp } = leftovers();
  const database = databaseName('clibg', 'main');
  databases.push(database);
  let env: Record<string, string>;
  let url: string;
  let gatewayUrl: string;
  let kit: Proc;

  /** Each order's client secret, as the shop keeps it: its pay routes and its public view need it. */
  const secrets = new Map<string, string>();
  const call = async (base: string, method: string, path: string, body?: unknown, key?: string) => {
    const headers = {
      'content-type': 'application/json',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    };
    const res = await fetch(base + path, {
      method,
      headers: withSecret(secrets, method, path, headers),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: an envelope of any shape
    const answer = { status: res.status, body: (await res.json()) as any };
    if (base === url) keepSecret(secrets, method, path, answer);
    return answer;
  };
  const cli = async (...args: string[]) => {
    const p = track(start('src/cli.ts', args, env));
    const { code } = await exitWithin(p, 60_000);
    return { code, out: p.stdout(), err: p.stderr() };
  };
  /** The summary's `name  value` lines as a record. */
  const summary = (out: string) =>
    Object.fromEntries(
      lines(out)
        .slice(1)
        .map((l) => /^\s+(.+?)\s{2,}(\S.*)$/.exec(l))
        .filter((m) => m !== null)
        .map((m) => [m[1]!, m[2]!]),
    );

  before(async () => {
    const port = await freePort();
    const gatewayPort = await freePort([port]);
    url = `http://127.0.0.1:${port}`;
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    env = {
      PORT: String(port),
      GATEWAY_PORT: String(gatewayPort),
      DATABASE_URL: `${ADMIN_URL}/${database}`,
      // The kit's own recovery (every 5 minutes on the clock) would fetch the missed events first
      // whenever a test runs across such a minute: the CLI's recover is what these tests look at.
      JOB_SCHEDULES: 'recovery=off',
    };
    kit = track(start('src/main.ts', [], env));
    await healthy(kit, url, 30_000);
  });
  after(async () => {
    await cleanUp();
  });

  it('recover --since fetches what the paused endpoint did not deliver; the orders are paid; exit 0', async () => {
    const since = new Date(Date.now() - 60_000).toISOString();
    const paused = await call(gatewayUrl, 'GET', '/api/v1/webhook', undefined, MERCHANT_KEY);
    const put = await call(
      gatewayUrl,
      'PUT',
      '/api/v1/webhook',
      { url: paused.body.data.url, is_active: false },
      MERCHANT_KEY,
    );
    expect(put.status).to.equal(200);
    // Two redirect payments paid on the hosted page: only events (or polls) can tell the kit.
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const created = await call(url, 'POST', '/orders', { amount: '9.99', currency: 'EUR' });
      const id = created.body.data.order.id as string;
      const redirect = await call(url, 'POST', `/orders/${id}/pay/redirect`, {
        payment_method: 'ideal',
        customer: { country_code: 'NL' },
      });
      const page = redirect.body.data.next_action.url as string;
      const pressed = await fetch(page, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=pay',
        redirect: 'manual',
      });
      expect(pressed.status).to.equal(303);
      ids.push(id);
    }

    const run = await cli('recover', '--since', since);
    expect(run.code, run.err).to.equal(0);
    expect(lines(run.out)[0]).to.equal(`recovery from ${since}`);
    const s = summary(run.out);
    expect(s).to.include({ missing: '2', recovered: '2', replayed: '0', failed: '0', 'gateway calls': '3' });
    for (const id of ids)
      await waitFor(
        `order ${id} paid`,
        async () => (await call(url, 'GET', `/orders/${id}`)).body.data.order.status === 'paid',
      );

    const again = await cli('recover', '--since', since);
    expect(again.code, again.err).to.equal(0);
    expect(summary(again.out)).to.include({ missing: '0', recovered: '0', 'gateway calls': '1' });
  });

  it('poll asks about every watched order now, whatever its schedule; exit 0', async () => {
    const created = await call(url, 'POST', '/orders', { amount: '4.00', currency: 'EUR' });
    const auth = await call(url, 'POST', `/orders/${created.body.data.order.id}/pay/card`, {
      mode: 'auth',
      card: card(),
    });
    expect(auth.body.data.order.status).to.equal('authorized');
    const run = await cli('poll');
    expect(run.code, run.err).to.equal(0);
    expect(lines(run.out)[0]).to.match(/^polled \d+ orders$/);
    const s = summary(run.out);
    expect(Number(s['gateway calls'])).to.be.at.least(1);
    expect(s).to.include({ failed: '0' });
  });

  it('poll with the gateway not answering stops at the first order: one line, exit 1, not every order in turn', async () => {
    const closed = await freePort();
    const p = track(
      start('src/cli.ts', ['poll'], {
        ...env,
        GATEWAY_BASE_URL: `http://127.0.0.1:${closed}`,
        GATEWAY_API_KEY: MERCHANT_KEY,
      }),
    );
    const { code } = await exitWithin(p, 60_000);
    expect(code, p.stderr()).to.equal(1);
    expect(lines(p.stdout())[0]).to.equal('polled 1 orders');
    expect(summary(p.stdout())).to.include({ failed: '1' });
    const err = lines(p.stderr()).filter((l) => !l.startsWith('{')); // the JSON log lines aside
    expect(err, p.stderr()).to.have.length(1);
    expect(err[0]).to.match(
      /^stopped: the gateway does not answer \(.*ECONNREFUSED.*\); [1-9]\d* of \d+ orders not asked: the poller asks them on its schedule$/,
    );
  });

  it('a bad --since is one line naming it, exit 1, and nothing is asked', async () => {
    const run = await cli('recover', '--since', 'yesterday');
    expect(run.code).to.equal(1);
    expect(lines(run.err)).to.deep.equal([
      '--since: must be a real ISO 8601 date or time, such as 2026-11-23T08:00:00Z (got "yesterday")',
    ]);
    expect(run.out).to.equal('');
  });

  it('report writes the day as CSV into --out (totals on stdout) or on stdout (totals on stderr), exit 0; a bad --from is one line and exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-report-'));
    const out = join(dir, 'day.csv');
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const run = await cli('report', '--from', today, '--to', tomorrow, '--out', out);
    expect(run.code, run.err).to.equal(0);
    const csv = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(csv[0]).to.equal(REPORT_COLUMNS.join(','));
    expect(csv).to.have.length(1 + 3); // the orders this file made: two redirects and an auth
    expect(lines(run.out)[0]).to.equal(
      `reconciliation of the orders created from ${today}T00:00:00.000Z to ${tomorrow}T00:00:00.000Z`,
    );
    expect(summary(run.out)).to.include({ orders: '3', mismatched: '0', 'written to': out });

    // Without --out the CSV is stdout, byte for byte the file's, and the totals go to stderr.
    const piped = await cli('report', '--from', today, '--to', tomorrow);
    expect(piped.code, piped.err).to.equal(0);
    expect(piped.out).to.equal(readFileSync(out, 'utf8'));
    const said = lines(piped.err).filter((l) => !l.startsWith('{')); // the JSON log lines aside
    expect(said[0]).to.equal(lines(run.out)[0]);
    expect(summary(said.join('\n'))).to.include({ orders: '3', mismatched: '0', 'written to': 'stdout' });
    for (const from of ['today', '2026-02-30']) {
      const bad = await cli('report', '--from', from, '--to', tomorrow, '--out', out);
      expect(bad.code, from).to.equal(1);
      expect(lines(bad.err)).to.deep.equal([
        `--from: must be a real ISO 8601 date or time, such as 2026-11-23T08:00:00Z (got "${from}")`,
      ]);
    }
    // --merchant: one merchant's orders (platform mode); this kit's are all its one merchant's, 1001.
    const mine = await cli('report', '--from', today, '--to', tomorrow, '--out', out, '--merchant', '1001');
    expect(mine.code, mine.err).to.equal(0);
    expect(lines(mine.out)[0]).to.match(/^reconciliation of the orders of merchant 1001 created from /);
    expect(summary(mine.out)).to.include({ orders: '3' });
    expect(
      readFileSync(out, 'utf8')
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((l) => l.split(',').at(-1)),
    ).to.deep.equal(['1001', '1001', '1001']);
    const other = await cli('report', '--from', today, '--to', tomorrow, '--out', out, '--merchant', '1004');
    expect(other.code, other.err).to.equal(0);
    expect(summary(other.out)).to.include({ orders: '0' });
    const badMerchant = await cli('report', '--from', today, '--to', tomorrow, '--merchant', 'acme');
    expect(badMerchant.code).to.equal(1);
    expect(lines(badMerchant.err)).to.deep.equal([
      '--merchant: must be a merchant id, a whole number such as 1001 (got "acme")',
    ]);
    const nowhere = join(dir, 'no-such-folder', 'day.csv');
    const unwritable = await cli('report', '--from', today, '--to', tomorrow, '--out', nowhere);
    expect(unwritable.code).to.equal(1);
    expect(lines(unwritable.err)).to.deep.equal([`--out: cannot write ${nowhere} (ENOENT)`]);
    expect(unwritable.out, 'said before any report is made').to.equal('');
    rmSync(dir, { recursive: true, force: true });
  });

  it('recover and poll wait while another instance holds their job’s lock, then run: never beside the job', async () => {
    // The kit's processes (and this CLI) use the Redis prefix SUITE_PREFIX on the default Redis.
    const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
    try {
      for (const [command, job] of [
        ['recover', 'recovery'],
        ['poll', 'poller'],
      ] as const) {
        const key = `${SUITE_PREFIX}:lock:${job}`;
        // What a scheduler running the job holds (the running kit's own may hold it for a moment).
        await waitFor(
          `the ${job} lock taken`,
          async () => (await redis.set(key, 'elsewhere', 'PX', 30_000, 'NX')) === 'OK',
        );
        const p = track(start('src/cli.ts', [command], env));
        await waitFor(
          `${command} waiting, or done`,
          () => !p.running() || p.stderr().includes('waiting'),
          30_000,
          { everyMs: 50 },
        );
        expect(p.running(), `${command} ran while the lock was held elsewhere: ${p.stdout()}`).to.equal(true);
        expect(lines(p.stderr()), p.stderr()).to.deep.equal([
          `${job} is running on another instance (its lock is held): waiting for it to finish`,
        ]);
        expect(p.stdout()).to.equal('');
        await redis.del(key);
        const { code } = await exitWithin(p, 30_000);
        expect(code, p.stderr()).to.equal(0);
        expect(lines(p.stdout())[0]).to.match(
          command === 'recover' ? /^recovery from / : /^polled \d+ orders$/,
        );
      }
    } finally {
      redis.disconnect();
    }
  });

  it('the kit stops cleanly after', async () => {
    kit.child.kill('SIGTERM');
    expect((await exitWithin(kit, 20_000)).code, kit.stderr()).to.equal(0);
  });
});
