import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { OPS_TOKEN } from '../../support/kit.js';
import {
  ADMIN_URL,
  databaseName,
  exitWithin,
  freePort,
  healthy,
  leftovers,
  lines,
  start,
} from '../../support/process.js';

/**
 * Issue 23: the kit reads its gateway key's information at start (sandbox.md section 11) and stops
 * with one line for a key it cannot work with, warns for what will fail later, and says in readyz
 * what it learnt. `npm start`'s entry point as a child process, against its embedded sandbox.
 */
describe('merchant: the gateway key, checked at start', function () {
  this.timeout(60_000);
  const { databases, track, cleanUp } = leftovers();
  after(cleanUp);

  // The default seed, plus a key that is inactive and one without webhooks:manage.
  const seed = JSON.parse(readFileSync('config/gateway-seed.json', 'utf8'));
  seed.api_keys.push(
    { key: 'sk_test_inactive_1001', merchant_id: 1001, scopes: ['webhooks:manage'], active: false },
    { key: 'sk_test_noscope_1001', merchant_id: 1001, scopes: [], active: true },
  );
  const seedFile = join(mkdtempSync(join(tmpdir(), 'key-seed-')), 'seed.json');
  writeFileSync(seedFile, JSON.stringify(seed));

  const kitEnv = async (name: string, env: Record<string, string>) => {
    const database = databaseName('key', name);
    databases.push(database);
    const port = await freePort();
    return {
      port,
      env: {
        PORT: String(port),
        GATEWAY_PORT: String(await freePort([port])),
        DATABASE_URL: `${ADMIN_URL}/${database}`,
        GATEWAY_SEED: seedFile,
        OPS_API_TOKEN: OPS_TOKEN,
        ...env,
      },
    };
  };

  /** The one line on stderr of a start-up refused, exit 1. */
  const refused = async (name: string, env: Record<string, string>) => {
    const p = track(start('src/main.ts', [], (await kitEnv(name, env)).env));
    const { code } = await exitWithin(p, 30_000);
    expect(code, p.stderr()).to.equal(1);
    const errLines = lines(p.stderr());
    expect(errLines, p.stderr()).to.have.length(1);
    return errLines[0]!;
  };

  /** A kit that started: its readyz answer and its log lines. */
  const started = async (name: string, env: Record<string, string>) => {
    const { port, env: full } = await kitEnv(name, env);
    const p = track(start('src/main.ts', [], full));
    const url = `http://127.0.0.1:${port}`;
    await healthy(p, url, 30_000);
    // What start-up learnt of the key is an operator's to read.
    const ready = (await (
      await fetch(`${url}/readyz`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } })
    ).json()) as { data: Record<string, unknown> };
    p.child.kill('SIGTERM');
    await exitWithin(p, 20_000);
    return { ready: ready.data, log: p.stdout() };
  };

  it('a partner key without GATEWAY_MERCHANTS: one line naming it and the linked merchants', async () => {
    expect(await refused('partner', { GATEWAY_API_KEY: 'sk_test_partner_9001' })).to.equal(
      'GATEWAY_MERCHANTS: required with a partner key: the merchants the kit acts for (linked merchants: 1001, 1002)',
    );
  });

  it('a partner key with a merchant it is not linked to: one line', async () => {
    expect(
      await refused('unlinked', { GATEWAY_API_KEY: 'sk_test_partner_9001', GATEWAY_MERCHANTS: '1001,1003' }),
    ).to.equal(
      'GATEWAY_MERCHANTS: merchant 1003 is not linked to this partner key (linked merchants: 1001, 1002)',
    );
  });

  it('a key the gateway does not know, and an inactive one: one line naming GATEWAY_API_KEY', async () => {
    expect(await refused('unknown', { GATEWAY_API_KEY: 'sk_test_nobody_0000' })).to.equal(
      'GATEWAY_API_KEY: the gateway does not know this key (401)',
    );
    expect(await refused('inactive', { GATEWAY_API_KEY: 'sk_test_inactive_1001' })).to.match(
      /^GATEWAY_API_KEY: the gateway refuses this key \(403: .+\)$/,
    );
  });

  it('a key without webhooks:manage starts, warned, and readyz shows its scopes', async () => {
    const { ready, log } = await started('noscope', { GATEWAY_API_KEY: 'sk_test_noscope_1001' });
    expect(ready.gateway_key).to.deep.equal({
      key_type: 'merchant',
      merchant_id: 1001,
      merchant_ids: [1001],
      scopes: [],
    });
    expect(log).to.match(/lacks the webhooks:manage scope/);
  });

  it('a partner key for a linked merchant (GATEWAY_MERCHANT_ID, the older form) starts, warned that it has no key of its own', async () => {
    const { ready, log } = await started('linked', {
      GATEWAY_API_KEY: 'sk_test_partner_9001',
      GATEWAY_MERCHANT_ID: '1001',
    });
    expect(ready.gateway_key).to.deep.equal({
      key_type: 'partner',
      merchant_id: 1001,
      merchant_ids: [1001],
      scopes: ['webhooks:manage'],
    });
    expect(log).to.match(
      /merchant 1001 has no key of its own .*3D Secure, capture, refund and void are merchant-only/,
    );
  });

  it('platform mode with the default seed: both linked merchants served, warned of the one without a key of its own', async () => {
    const { ready, log } = await started('platform', {
      GATEWAY_API_KEY: 'sk_test_partner_9001',
      GATEWAY_MERCHANTS: '1001,1002',
      GATEWAY_MERCHANT_KEYS: '1001=sk_test_merchant_1001',
    });
    expect(ready.gateway_key).to.deep.equal({
      key_type: 'partner',
      merchant_id: 1001,
      merchant_ids: [1001, 1002],
      scopes: ['webhooks:manage'],
    });
    expect(log).to.match(/merchant 1002 has no key of its own/);
    expect(log, 'the merchant key is never logged').to.not.include('sk_test_merchant_1001');
  });

  describe('a gateway without the key information', () => {
    let gateway: Server;
    let gatewayUrl: string;
    before(async () => {
      gateway = createServer((_req, res) => {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: false, message: 'Not found.', code: 'ERR_NOT_FOUND', data: null }));
      });
      await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
      gatewayUrl = `http://127.0.0.1:${(gateway.address() as { port: number }).port}`;
    });
    after(() => new Promise<void>((resolve) => gateway.close(() => resolve())));

    it('is tolerated: the kit starts, readyz says the key was not described', async () => {
      const { ready, log } = await started('nokeyinfo', {
        GATEWAY_BASE_URL: gatewayUrl,
        GATEWAY_API_KEY: 'sk_live_elsewhere_1234',
        GATEWAY_WEBHOOK_SECRETS: 'whsec_0123456789abcdef0123',
      });
      expect(ready.gateway_key).to.deep.equal({
        key_type: null,
        merchant_id: null,
        merchant_ids: [],
        scopes: null,
      });
      expect(log).to.match(/did not describe its key/);
    });
  });
});
