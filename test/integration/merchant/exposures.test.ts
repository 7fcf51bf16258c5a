import { expect } from 'chai';
import { CustomerTokens } from '../../../src/merchant/customers/customer-token.js';
import { startTestKit, type TestKit } from '../../support/kit.js';

/**
 * The smaller findings of a security review (issue 41, part 5), each through HTTP against the real
 * kit (its MySQL, Redis and embedded sandbox).
 */
describe('merchant: the smaller exposures (issue 41, part 5)', function () {
  this.timeout(60_000);
  let t: TestKit;

  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
  });
  after(async () => {
    await t?.close();
  });

  describe('HOST', () => {
    /** Whether anything answers at `url`: an HTTP answer of any status, or the connection refused. */
    const answers = async (url: string) => {
      try {
        await fetch(url);
        return true;
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code;
        if (code === 'ECONNREFUSED') return false;
        throw error;
      }
    };

    it('outside production the kit listens on 127.0.0.1 alone: another address of this machine gets no answer', async () => {
      const port = new URL(t.url).port;
      expect(await answers(`http://127.0.0.1:${port}/healthz`)).to.equal(true);
      // Linux routes all of 127.0.0.0/8 to this machine: a kit on every interface answers there too.
      expect(await answers(`http://127.0.0.2:${port}/healthz`)).to.equal(false);
      expect(t.config.host).to.equal('127.0.0.1');
    });
  });

  describe('/readyz', () => {
    it('without a token says only ready or not; the dependencies and the gateway key are a reader’s', async () => {
      const probe = await t.call('GET', '/readyz');
      expect(probe.status, probe.text).to.equal(200);
      expect(probe.body.data).to.deep.equal({ status: 'ready' });
      expect(probe.text).to.not.contain('gateway_key').and.not.contain('merchant_id');
      expect(probe.headers.get('vary')).to.match(/Authorization/i);
      const { token: viewer } = await t.kit.store.operators.add({
        name: 'ready-reader',
        role: 'viewer',
        by: { name: 'test', role: 'admin', credential: 'cli' },
      });
      const read = await t.call('GET', '/readyz', { token: viewer });
      expect(read.status, read.text).to.equal(200);
      expect(read.body.data).to.deep.include({
        status: 'ready',
        database: 'ok',
        redis: 'ok',
        gateway: 'ok',
        gateway_key: { key_type: 'merchant', merchant_id: 1001, scopes: ['webhooks:manage'] },
      });
      // A token that is sent must be good, and a role that reads.
      expect((await t.call('GET', '/readyz', { token: `${viewer}x` })).status).to.equal(401);
      const { token: storefront } = await t.kit.store.operators.add({
        name: 'ready-shop',
        role: 'storefront',
        by: { name: 'test', role: 'admin', credential: 'cli' },
      });
      expect((await t.call('GET', '/readyz', { token: storefront })).status).to.equal(403);
    });
  });

  describe('customer tokens', () => {
    const HOUR = 3_600_000;
    /** A token signed with the kit's own key, as if made at `at`: what a leaked or mis-made one looks like. */
    const signedAt = (customerId: string, at: number) =>
      new CustomerTokens(t.config.encryptionKey).issue(customerId, at).token;
    const cards = (customerId: string, token: string) =>
      t.call('GET', `/customers/${customerId}/cards`, { headers: { 'Customer-Token': token } });

    it('one whose expiry lies further ahead than one lifetime from the kit’s clock is refused, however well signed', async () => {
      const decades = await cards('cus-far', signedAt('cus-far', t.clock.now() + 30 * 365 * 24 * HOUR));
      expect(decades.status, decades.text).to.equal(401);
      expect(decades.body.code).to.equal('CUSTOMER_TOKEN_INVALID');
      const twoHours = await cards('cus-far', signedAt('cus-far', t.clock.now() + HOUR));
      expect(twoHours.status, twoHours.text).to.equal(401);
      // One the kit makes now, and one made a minute ahead (another process's clock), are good.
      expect((await cards('cus-far', signedAt('cus-far', t.clock.now()))).status).to.equal(200);
      expect((await cards('cus-far', signedAt('cus-far', t.clock.now() + 30_000))).status).to.equal(200);
    });
  });
});
