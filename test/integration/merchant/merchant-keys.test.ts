import { expect } from 'chai';
import type { Kit } from '../../../src/kit.js';
import { card } from '../../support/gateway.js';
import { cliEnv, OPS_TOKEN, startSiblingKit, startTestKit, type TestKit } from '../../support/kit.js';
import { OUTLET_KEY, PLATFORM_ENV, platformSeed } from '../../support/platform.js';
import { exitWithin, lines, start } from '../../support/process.js';

/**
 * Issue 45, platform mode: a linked merchant's own key stored at rest by `merchant-key set` (read
 * from stdin, checked with the gateway, sealed under APP_ENCRYPTION_KEY, bound to its merchant), used
 * by the kit's processes from their next start, beside GATEWAY_MERCHANT_KEYS. Merchant 1004 has no
 * key in the environment here (PLATFORM_ENV gives 1001's only).
 */
describe('merchant: merchant keys stored at rest (platform mode)', function () {
  this.timeout(120_000);
  let t: TestKit;
  let again: Kit | null = null;
  const againLogs: string[] = [];

  before(async () => {
    t = await startTestKit({ seed: platformSeed, env: { ...PLATFORM_ENV } });
  });
  after(async () => {
    await again?.close();
    await t?.close();
  });

  /** `merchant-key <args>` against t's database and sandbox, with the kit's settings; `stdin` piped in. */
  const cli = async (args: string[], stdin?: string) => {
    const env = { ...cliEnv(t), ...PLATFORM_ENV, GATEWAY_BASE_URL: t.kit.gatewayUrl };
    const p = start('src/cli.ts', ['merchant-key', ...args], env, { stdin });
    const { code } = await exitWithin(p, 60_000);
    return {
      code,
      out: p.stdout(),
      err: lines(p.stderr()).filter((l) => !l.startsWith('{')),
      all: p.stdout() + p.stderr(),
    };
  };
  const newOrder = async (merchantId: number, amount = '12.34') => {
    const created = await t.call('POST', '/orders', {
      body: { amount, currency: 'EUR', merchant_id: merchantId },
    });
    expect(created.status, created.text).to.equal(201);
    return created.body.data.order.id as string;
  };
  /** A call to the kit started again: the shopper's with the order's secret, or the operator's. */
  const onAgain = async (path: string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(`${again!.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: an envelope of any shape
    return { status: res.status, body: (await res.json()) as any };
  };
  const payOnAgain = (id: string) =>
    onAgain(`/orders/${id}/pay/card`, { card: card(), mode: 'auth' }, { 'order-secret': t.secrets.get(id)! });
  const captureOnAgain = (id: string, key: string) =>
    onAgain(`/orders/${id}/capture`, {}, { authorization: `Bearer ${OPS_TOKEN}`, 'idempotency-key': key });
  const order = async (id: string) => (await t.call('GET', `/orders/${id}`, { ops: true })).body.data.order;
  const storedRows = async () => (await t.dump()).split('\n').find((l) => l.startsWith('merchant_keys:'));

  it('merchant-key set refuses in one line, storing nothing: a merchant not served, no key, a short one, another merchant’s, one the gateway does not know', async () => {
    const refusals: [string[], string | undefined, RegExp][] = [
      [
        ['--merchant', '1002'],
        OUTLET_KEY,
        /^--merchant: merchant 1002 is not among the merchants this kit acts for \(GATEWAY_MERCHANTS: 1001, 1004\)$/,
      ],
      [['--merchant', '1004'], undefined, /^stdin: no key read: pipe it in/],
      [
        ['--merchant', '1004'],
        'sk_1004\n',
        /^stdin: the key read is 7 characters: a gateway key has 8 or more$/,
      ],
      [
        ['--merchant', '1004'],
        'sk_test_merchant_1001\n',
        /^stdin: the gateway says this is merchant 1001's own key, not 1004's: not stored$/,
      ],
      [
        ['--merchant', '1004'],
        'sk_test_partner_9002',
        /^stdin: the gateway says this is a partner key, not a merchant's own: not stored$/,
      ],
      [
        ['--merchant', '1004'],
        'sk_test_nobody_knows_it',
        /^stdin: the gateway does not know this key \(401\): not stored$/,
      ],
    ];
    for (const [args, stdin, line] of refusals) {
      const answer = await cli(['set', ...args], stdin);
      expect(answer.code, answer.all).to.equal(1);
      expect(answer.err, answer.all).to.have.length(1);
      expect(answer.err[0]).to.match(line);
      if (stdin !== undefined && stdin.trim().length >= 8) expect(answer.all).to.not.contain(stdin.trim());
    }
    expect(await storedRows()).to.equal('merchant_keys: []');
  });

  it("before 1004's key is stored, its card payment is a 409 MERCHANT_KEY_MISSING", async () => {
    const id = await newOrder(1004);
    const pay = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'auth' } });
    expect(pay.status, pay.text).to.equal(409);
    expect(pay.body.code).to.equal('MERCHANT_KEY_MISSING');
  });

  it('merchant-key set stores 1004’s key read from stdin; list shows whose and when, never the key; the database never holds it in clear', async () => {
    const set = await cli(['set', '--merchant', '1004'], `${OUTLET_KEY}\n`);
    expect(set.code, set.all).to.equal(0);
    expect(lines(set.out)).to.deep.equal([
      "merchant 1004's key stored, sealed under APP_ENCRYPTION_KEY: the kit's processes use it from their next start",
    ]);
    expect(set.all).to.not.contain(OUTLET_KEY);

    const listed = await cli(['list']);
    expect(listed.code, listed.all).to.equal(0);
    expect(listed.all).to.not.contain(OUTLET_KEY);
    const [only, ...none] = JSON.parse(listed.out);
    expect(none).to.deep.equal([]);
    expect(only).to.include({ merchant_id: 1004, opens: true, in_use: true, note: null });
    expect(Date.parse(only.stored_at)).to.be.closeTo(Date.now(), 120_000);

    const dump = await t.dump();
    expect(dump).to.contain('merchant_keys: [{"merchant_id":1004');
    expect(dump, 'the key is sealed at rest').to.not.contain(OUTLET_KEY);

    // The running kit read its keys at its start: still none for 1004.
    const id = await newOrder(1004);
    const pay = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'auth' } });
    expect(pay.body.code).to.equal('MERCHANT_KEY_MISSING');
  });

  it('a kit started again on the database pays 1004 by card and captures with the stored key; its log says where each key came from, never the key', async () => {
    again = await startSiblingKit(t, 'api', againLogs, { ...PLATFORM_ENV });
    const id = await newOrder(1004);
    const pay = await payOnAgain(id);
    expect(pay.status, JSON.stringify(pay.body)).to.equal(200);
    expect(pay.body.data.order.status).to.equal('authorized');
    const capture = await captureOnAgain(id, `cap-${id}`);
    expect(capture.status, JSON.stringify(capture.body)).to.equal(200);
    expect(capture.body.data.order.status).to.equal('paid');

    const told = againLogs.map((l) => JSON.parse(l)).find((l) => l.msg?.startsWith('merchant keys:'));
    expect(told).to.deep.include({ from_environment: [1001], stored: [1004], environment_over_stored: [] });
    expect(againLogs.join('\n')).to.not.contain(OUTLET_KEY);
    expect(againLogs.join('\n'), 'no warning of a merchant without a key').to.not.match(/no key of its own/);
  });

  it('a stored key the gateway refuses: 409 MERCHANT_KEY_REFUSED naming the merchant key, nothing done; the same request does it once the key is good again', async () => {
    const id = await newOrder(1004);
    expect((await payOnAgain(id)).status).to.equal(200);
    const keys = t.kit.sandbox!.deps.state.keys;
    const good = keys.get(OUTLET_KEY)!;
    keys.set(OUTLET_KEY, { ...good, active: false });
    try {
      const refused = await captureOnAgain(id, `cap-${id}`);
      expect(refused.status, JSON.stringify(refused.body)).to.equal(409);
      expect(refused.body.code).to.equal('MERCHANT_KEY_REFUSED');
      expect(refused.body.message).to.match(
        /^The gateway refused merchant 1004's own key for capture \(HTTP 403: This API key is inactive\.\): the merchant key this kit has for it .*merchant-key set/,
      );
      expect(refused.body.data).to.deep.equal({
        merchant_id: 1004,
        operation: 'capture',
        gateway_status: 403,
        gateway_code: 'ERR_AUTH_FAILED',
      });
      expect((await order(id)).status, 'nothing done').to.equal('authorized');

      // A card payment: no declined card, no attempt left behind.
      const other = await newOrder(1004);
      const pay = await payOnAgain(other);
      expect(pay.status, JSON.stringify(pay.body)).to.equal(409);
      expect(pay.body.code).to.equal('MERCHANT_KEY_REFUSED');
      expect(pay.body.data.operation).to.equal('3D Secure');
      const after = await order(other);
      expect([after.status, after.payment]).to.deep.equal(['pending', null]);
    } finally {
      keys.set(OUTLET_KEY, good);
    }
    const capture = await captureOnAgain(id, `cap-${id}`);
    expect(capture.status, JSON.stringify(capture.body)).to.equal(200);
    expect(capture.body.data.order.status).to.equal('paid');
  });

  it('merchant-key remove forgets it; a second remove says none is stored', async () => {
    const removed = await cli(['remove', '--merchant', '1004']);
    expect(removed.code, removed.all).to.equal(0);
    expect(lines(removed.out)).to.deep.equal([
      "merchant 1004's stored key removed: the kit's processes stop using it at their next start",
    ]);
    expect(JSON.parse((await cli(['list'])).out)).to.deep.equal([]);
    const again = await cli(['remove', '--merchant', '1004']);
    expect(again.code).to.equal(1);
    expect(again.err).to.deep.equal(['--merchant: no key is stored for merchant 1004']);
  });
});
