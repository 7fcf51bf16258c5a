import { expect } from 'chai';
import {
  type Answer,
  OTHER_MERCHANT_KEY,
  PARTNER_KEY,
  startGateway,
  type TestGateway,
} from '../../support/gateway.js';

/**
 * GET /api/v1/payment-methods: gateway-api.md "Payment method entry" and Payment sessions rule 6
 * (configuration only, enabled redirect methods of the account, `available` computed when filtered).
 */

interface MethodEntry {
  payment_method: string;
  label: string;
  provider: string;
  available: boolean;
  unavailable_reasons: string[];
  supported_countries: string[];
  supported_currencies: string[];
}

describe('gateway: GET /api/v1/payment-methods', () => {
  let t: TestGateway;

  before(async () => {
    t = await startGateway({
      seed: (seed) => {
        // A method the account has but has not enabled: never listed.
        seed.merchants[0]!.payment_methods.push({
          payment_method: 'sofort',
          label: 'Sofort',
          provider: 'sandbox-sofort',
          countries: ['DE'],
          currencies: ['EUR'],
          enabled: false,
        });
      },
    });
  });

  after(async () => {
    await t.close();
  });

  const list = (query = '', key?: string): Promise<Answer> =>
    t.call('GET', `/api/v1/payment-methods${query}`, key === undefined ? {} : { key });

  function methodsOf(res: Answer): Record<string, MethodEntry> {
    expect(res.status, res.text).to.equal(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.code).to.equal('');
    const entries = res.body.data.payment_methods as MethodEntry[];
    expect(entries).to.be.an('array');
    return Object.fromEntries(entries.map((m) => [m.payment_method, m]));
  }

  function expectValidation(res: Answer, field: string): void {
    expect(res.status, res.text).to.equal(422);
    expect(res.body.success).to.equal(false);
    expect(res.body.code).to.equal('ERR_VALIDATION_FAILED');
    expect(res.body.errors, res.text).to.have.property(field);
    expect(res.body.errors[field]).to.be.an('array').that.is.not.empty;
  }

  function expectAuthFailed(res: Answer, status: number): void {
    expect(res.status, res.text).to.equal(status);
    expect(res.body.success).to.equal(false);
    expect(res.body.code).to.equal('ERR_AUTH_FAILED');
  }

  it('lists the enabled redirect methods of the account, all available without filters', async () => {
    const res = await list();
    const methods = methodsOf(res);
    expect(Object.keys(methods)).to.have.members(['ideal', 'psc']);
    expect(res.body.data.payment_methods).to.have.length(2);
    expect(res.body.data.merchant_id).to.equal(1001);
    expect(res.body.data).to.have.property('country');
    expect(res.body.data).to.have.property('currency');
    expect(res.body.data.country ?? null).to.equal(null);
    expect(res.body.data.currency ?? null).to.equal(null);

    expect(methods.ideal).to.deep.equal({
      payment_method: 'ideal',
      label: 'iDEAL',
      provider: 'sandbox-ideal',
      available: true,
      unavailable_reasons: [],
      supported_countries: ['NL'],
      supported_currencies: ['EUR'],
    });
    expect(methods.psc).to.deep.equal({
      payment_method: 'psc',
      label: 'paysafecard',
      provider: 'sandbox-psc',
      available: true,
      unavailable_reasons: [],
      supported_countries: [],
      supported_currencies: ['EUR', 'USD', 'GBP'],
    });
  });

  it('never lists the disabled method or card payments', async () => {
    const methods = methodsOf(await list('?country=DE&currency=EUR'));
    expect(methods).to.not.have.property('sofort');
    for (const name of Object.keys(methods)) expect(name).to.not.match(/card/i);
  });

  it('country=DE: ideal unavailable (country_not_supported), psc available', async () => {
    const res = await list('?country=DE');
    const methods = methodsOf(res);
    expect(res.body.data.country).to.equal('DE');
    expect(methods.ideal?.available).to.equal(false);
    expect(methods.ideal?.unavailable_reasons).to.deep.equal(['country_not_supported']);
    expect(methods.psc?.available).to.equal(true);
    expect(methods.psc?.unavailable_reasons).to.deep.equal([]);
  });

  it('country=NL: both available', async () => {
    const methods = methodsOf(await list('?country=NL'));
    expect(methods.ideal?.available).to.equal(true);
    expect(methods.ideal?.unavailable_reasons).to.deep.equal([]);
    expect(methods.psc?.available).to.equal(true);
  });

  it('currency=USD: ideal unavailable (currency_not_supported), psc available', async () => {
    const res = await list('?currency=USD');
    const methods = methodsOf(res);
    expect(res.body.data.currency).to.equal('USD');
    expect(methods.ideal?.available).to.equal(false);
    expect(methods.ideal?.unavailable_reasons).to.deep.equal(['currency_not_supported']);
    expect(methods.psc?.available).to.equal(true);
    expect(methods.psc?.unavailable_reasons).to.deep.equal([]);
  });

  it('country=DE and currency=USD: ideal has both reasons', async () => {
    const res = await list('?country=DE&currency=USD');
    const methods = methodsOf(res);
    expect(res.body.data.country).to.equal('DE');
    expect(res.body.data.currency).to.equal('USD');
    expect(methods.ideal?.available).to.equal(false);
    expect(methods.ideal?.unavailable_reasons).to.have.members([
      'country_not_supported',
      'currency_not_supported',
    ]);
    expect(methods.ideal?.unavailable_reasons).to.have.length(2);
    expect(methods.psc?.available).to.equal(true);
    // The supported lists stay the configuration, whatever the filters.
    expect(methods.ideal?.supported_countries).to.deep.equal(['NL']);
    expect(methods.ideal?.supported_currencies).to.deep.equal(['EUR']);
  });

  it('rejects a country that is not two uppercase letters with 422', async () => {
    for (const country of ['de', 'DEU', 'D', 'D1'])
      expectValidation(await list(`?country=${country}`), 'country');
  });

  it('rejects an unknown or malformed currency with 422', async () => {
    for (const currency of ['XYZ', 'usd', 'EURO'])
      expectValidation(await list(`?currency=${currency}`), 'currency');
  });

  it('needs merchant_id from a partner key: 400 without or unlinked, 200 with a linked one', async () => {
    expectAuthFailed(await list('', PARTNER_KEY), 400);
    expectAuthFailed(await list('?merchant_id=1002', PARTNER_KEY), 400);
    const res = await list('?merchant_id=1001&country=DE', PARTNER_KEY);
    const methods = methodsOf(res);
    expect(res.body.data.merchant_id).to.equal(1001);
    expect(Object.keys(methods)).to.have.members(['ideal', 'psc']);
    expect(methods.ideal?.unavailable_reasons).to.deep.equal(['country_not_supported']);
  });

  it("lists each merchant's own methods (none for a merchant without redirect methods)", async () => {
    const res = await list('', OTHER_MERCHANT_KEY);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.merchant_id).to.equal(1002);
    expect(res.body.data.payment_methods).to.deep.equal([]);
  });

  it('creates nothing: no session, no transaction, no event', async () => {
    const { state } = t.gateway.deps;
    const before = [state.sessions.size, state.transactions.size, state.webhooks.events.size];
    for (const query of ['', '?country=NL', '?currency=EUR', '?country=DE&currency=USD']) {
      expect((await list(query)).status).to.equal(200);
    }
    expect([state.sessions.size, state.transactions.size, state.webhooks.events.size]).to.deep.equal(before);
  });
});
