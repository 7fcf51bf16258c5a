import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { keepSecret, withSecret } from '../../support/order-secrets.js';
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
 * issue 8, part 1: `npm start` twice on one database. The embedded sandbox keeps its state in a file
 * (GATEWAY_SANDBOX_STATE), so a restart continues its ids, its webhook endpoint and secret; and when
 * it is started afresh on purpose, the ids that come again never put money on an old order.
 */
describe('merchant: a restart on the same database', function () {
  this.timeout(120_000);
  const { databases, track, cleanUp } = leftovers();
  const dir = mkdtempSync(join(tmpdir(), 'kit-restart-'));
  const stateFile = join(dir, 'sandbox-state.json');
  const database = databaseName('restart', 'main');
  const OPS = 'restart-ops-token-0123456789';
  databases.push(database);
  let env: Record<string, string>;
  let url: string;
  let kit: Proc | null = null;

  before(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = {
      PORT: String(port),
      GATEWAY_PORT: String(await freePort([port])),
      DATABASE_URL: `${ADMIN_URL}/${database}`,
      GATEWAY_SANDBOX_STATE: stateFile,
      LOG_LEVEL: 'warn',
      OPS_API_TOKEN: OPS,
    };
  });
  after(async () => {
    await cleanUp();
    rmSync(dir, { recursive: true, force: true });
  });

  const startKit = async (extra: Record<string, string> = {}) => {
    kit = track(start('src/main.ts', [], { ...env, ...extra }));
    await healthy(kit, url, 30_000);
  };
  const stopKit = async () => {
    kit!.child.kill('SIGTERM');
    const { code } = await exitWithin(kit!, 15_000);
    expect(code, kit!.stderr()).to.equal(0);
  };
  /** Each order's client secret, as the shop keeps it: its pay routes and its public view need it. */
  const secrets = new Map<string, string>();
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: withSecret(secrets, method, path, { 'content-type': 'application/json', ...headers }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: an envelope of any shape
    const answer = { status: res.status, body: (await res.json()) as any };
    keepSecret(secrets, method, path, answer);
    return answer;
  };
  /** The whole order, with its history: the operator's read. */
  const order = async (id: string) =>
    (await call('GET', `/orders/${id}`, undefined, { authorization: `Bearer ${OPS}` })).body.data.order;

  /** A card sale, answered, and its webhook applied: the order as it then stands. */
  const paidOrder = async (amount: string) => {
    const created = await call('POST', '/orders', { amount, currency: 'EUR' });
    expect(created.status).to.equal(201);
    const id = created.body.data.order.id as string;
    const paid = await call('POST', `/orders/${id}/pay/card`, {
      mode: 'sale',
      card: { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvv: '123' },
    });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(paid.body.data.order.status).to.equal('paid');
    await waitFor(
      `the webhook of ${id} verified and applied`,
      async () => (await order(id)).history.some((h: { source: string }) => h.source === 'webhook'),
      15_000,
      { everyMs: 100, context: () => kit!.stderr() },
    );
    return order(id);
  };

  const unharmed = async (before: { id: string; history: unknown[] }) => {
    const now = await order(before.id);
    expect(now.status).to.equal('paid');
    expect(now.needs_review, now.review_reason).to.equal(false);
    expect(now.history, 'no observation of another payment reached it').to.deep.equal(before.history);
  };

  let first: { id: string; history: unknown[]; payment: { gateway_transaction_id: string } };
  let second: typeof first;

  it('first run: a card payment, paid and confirmed by its signed webhook', async () => {
    await startKit();
    first = await paidOrder('10.00');
    await stopKit();
  });

  it('second run: the sandbox continues where it was (a new id, the same webhook secret); the first order is unharmed', async () => {
    await startKit();
    second = await paidOrder('20.00');
    expect(Number(second.payment.gateway_transaction_id)).to.be.greaterThan(
      Number(first.payment.gateway_transaction_id),
    );
    await unharmed(first);
    await stopKit();
  });

  it('after `cli sandbox reset`, ids come again: the new payment lands on its own order, 200, and no old order is touched', async () => {
    const reset = track(start('src/cli.ts', ['sandbox', 'reset'], env));
    expect((await exitWithin(reset, 20_000)).code, reset.stderr()).to.equal(0);
    await startKit();
    const third = await paidOrder('30.00');
    expect(third.payment.gateway_transaction_id, 'the sandbox numbers from the start again').to.equal(
      first.payment.gateway_transaction_id,
    );
    expect(third.needs_review, third.review_reason).to.equal(false);
    await unharmed(first);
    await unharmed(second);
    await stopKit();
  });

  it('a new database beside the kept sandbox: the kit takes a new signing secret, and webhooks verify', async () => {
    const other = databaseName('restart', 'other');
    databases.push(other);
    await startKit({ DATABASE_URL: `${ADMIN_URL}/${other}` });
    const fourth = await paidOrder('40.00');
    expect(fourth.status).to.equal('paid');
    await stopKit();
  });
});
