import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { MERCHANT_KEY, transactionBody } from '../../support/gateway.js';
import { exitWithin, freePort, leftovers, lines, type Proc, start, waitFor } from '../../support/process.js';

/**
 * `npm run gateway` (src/gateway/main.ts) as a real process: its state file survives SIGTERM and a
 * new start, `--fresh` starts afresh on purpose, and a corrupt file stops it with one line.
 */

const SCRIPT = 'src/gateway/main.ts';

describe('gateway: the standalone sandbox keeps its state file (src/gateway/main.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-main-'));
  const file = join(dir, 'var', 'sandbox-state.json');
  const key = randomBytes(32).toString('base64');
  const left = leftovers();
  let port: number;

  before(async () => {
    port = await freePort();
  });
  after(async () => {
    await left.cleanUp();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}) => ({
    GATEWAY_PORT: String(port),
    GATEWAY_SANDBOX_STATE: file,
    APP_ENCRYPTION_KEY: key,
    ...extra,
  });
  const url = () => `http://127.0.0.1:${port}`;

  /** Started and answering HTTP; fails early if it exits. */
  async function started(args: string[] = [], extra: Record<string, string> = {}): Promise<Proc> {
    const p = left.track(start(SCRIPT, args, env(extra)));
    await waitFor(
      'the sandbox answering',
      async () => {
        if (!p.running()) throw new Error(`exited early: ${p.stderr()}`);
        return fetch(`${url()}/api/v1/webhook`, { signal: AbortSignal.timeout(1000) }).then(
          () => true,
          () => false,
        );
      },
      15_000,
      { everyMs: 50, context: () => p.stderr() },
    );
    return p;
  }

  async function pay(): Promise<number> {
    const res = await fetch(`${url()}/api/v1/transactions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(transactionBody()),
    });
    const body = (await res.json()) as { data: { id: number } };
    expect(res.status, JSON.stringify(body)).to.equal(200);
    return body.data.id;
  }

  async function stop(p: Proc): Promise<void> {
    p.child.kill('SIGTERM');
    const { code } = await exitWithin(p, 10_000);
    expect(code, p.stderr()).to.equal(0);
  }

  it('never reuses an id after SIGTERM and a new start; --fresh starts from 100000 again', async () => {
    let p = await started();
    const first = await pay();
    expect(first).to.equal(100000);
    expect(existsSync(file)).to.equal(true);
    await stop(p);

    p = await started();
    const second = await pay();
    expect(second).to.be.greaterThan(first);
    const status = await fetch(`${url()}/api/v1/transactions/${first}/status`, {
      headers: { authorization: `Bearer ${MERCHANT_KEY}` },
    });
    expect(status.status, 'the first transaction is still there').to.equal(200);
    await stop(p);

    p = await started(['--fresh'], { LOG_LEVEL: 'info' });
    expect(await pay()).to.equal(100000);
    expect(p.stdout()).to.match(/state file deleted/);
    await stop(p);
  });

  it('exits 1 with one line naming the file when the state file is corrupt', async () => {
    writeFileSync(file, '{"version": 1, "transactions": [');
    const p = left.track(start(SCRIPT, [], env()));
    const { code } = await exitWithin(p, 15_000);
    expect(code).to.equal(1);
    const errors = lines(p.stderr());
    expect(errors, p.stderr()).to.have.length(1);
    expect(errors[0]).to.include(file);
    expect(errors[0]).to.match(/not valid JSON/);
  });

  it('exits 1 with `configuration: ...` on a bad setting, and on an unknown argument', async () => {
    const bad = left.track(start(SCRIPT, [], env({ GATEWAY_PORT: 'eighty' })));
    expect((await exitWithin(bad, 15_000)).code).to.equal(1);
    expect(lines(bad.stderr())).to.deep.equal([
      'configuration: GATEWAY_PORT: must be a port number from 0 to 65535',
    ]);
    const unknown = left.track(start(SCRIPT, ['--frsh'], env()));
    expect((await exitWithin(unknown, 15_000)).code).to.equal(1);
    expect(lines(unknown.stderr())).to.have.length(1);
    expect(unknown.stderr()).to.include('--frsh');
  });
});
