import { expect } from 'chai';
import { PRODUCTION_ENV, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * The kit's `/` as `npm start` composes it: the demo shop outside production, the small page in
 * production (with the embedded sandbox asked for on purpose, as a production demo would).
 */
describe('merchant: the kit serves the demo shop at / outside production only', function () {
  this.timeout(30_000);
  let t: TestKit | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const home = async (kit: TestKit) => {
    const res = await fetch(`${kit.url}/`);
    return { status: res.status, cache: res.headers.get('cache-control'), html: await res.text() };
  };

  it('NODE_ENV=test: the demo shop, with the configured currencies', async () => {
    t = await startTestKit({ env: { ROLES: 'api', ORDER_CURRENCIES: 'EUR,GBP' } });
    const { status, cache, html } = await home(t);
    expect(status).to.equal(200);
    expect(cache).to.equal('no-store');
    expect(html).to.contain('<title>Demo shop</title>');
    expect(html).to.contain('<option value="EUR" selected>EUR</option><option value="GBP">GBP</option>');
  });

  it('NODE_ENV=production: the small page', async () => {
    t = await startTestKit({ env: { ROLES: 'api', ...PRODUCTION_ENV } });
    const { status, html } = await home(t);
    expect(status).to.equal(200);
    expect(html).to.contain('Thank you for shopping with us');
    expect(html).to.not.contain('Demo shop');
    expect(html).to.not.contain('<script');
  });
});
