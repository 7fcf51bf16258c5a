import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, watchCsp } from '../support/browser.js';
import { card, startGateway, type TestGateway } from '../support/gateway.js';

/** A stand-in shop: its landing pages echo the query the gateway redirected the browser with. */
async function startShop(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://shop');
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<h1 id="landing">${url.pathname}</h1><pre id="query">${url.searchParams.toString()}</pre>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('browser: the hosted pages in Chromium', function () {
  this.timeout(60_000);
  let browser: Browser | null;
  let sandbox: TestGateway;
  let shop: { url: string; server: Server };
  let page: Page;
  let csp: Awaited<ReturnType<typeof watchCsp>>;

  before(async function () {
    browser = await launchChromium(this);
    sandbox = await startGateway();
    shop = await startShop();
  });
  after(async () => {
    await browser?.close();
    await sandbox?.close();
    shop?.server.close();
  });
  beforeEach(async () => {
    page = await browser!.newPage();
    // The sandbox's policy has no form-action: its forms are answered with a 303 to the shop, another
    // origin, and Chromium checks form-action on that redirect too. Any violation fails the test.
    csp = await watchCsp(page);
  });
  afterEach(async () => {
    await page.close();
    expect(csp.list()).to.deep.equal([]);
  });

  const landingQuery = async () => new URLSearchParams((await page.textContent('#query')) ?? '');

  for (const [button, status] of [
    ['Authenticate', 'full_auth'],
    ['Fail', 'failed'],
  ] as const) {
    it(`the 3DS challenge: ${button} returns the browser to auth_url with status ${status}`, async () => {
      const verify = await sandbox.call('POST', '/api/v1/3ds/verify', {
        body: {
          amount: 25,
          currency: 'EUR',
          card: card('4000000000003220'),
          auth_url: `${shop.url}/checkout/3ds-return`,
        },
      });
      expect(verify.status).to.equal(200);
      await page.goto(verify.body.data.challenge_url);
      await page.getByRole('button', { name: button }).click();
      await page.waitForURL(`${shop.url}/checkout/3ds-return?**`);
      const query = await landingQuery();
      expect(query.get('card_verification_id')).to.equal(verify.body.data.public_id);
      expect(query.get('status')).to.equal(status);
    });
  }

  for (const [button, landing, status] of [
    ['Pay', 'return', 'paid'],
    ['Cancel', 'cancel', 'cancelled'],
  ] as const) {
    it(`the checkout page: ${button} lands on the ${landing} page with status ${status}`, async () => {
      const created = await sandbox.call('POST', '/api/v1/payment-sessions', {
        body: {
          amount: '10.00',
          currency: 'EUR',
          reference: `browser-${button}`,
          payment_method: 'psc',
          success_url: `${shop.url}/checkout/return`,
          cancel_url: `${shop.url}/checkout/cancel`,
        },
      });
      expect(created.status).to.equal(201);
      const session = created.body.data.payment_session;
      await page.goto(session.checkout_url);
      expect(await page.textContent('body')).to.contain('10.00 EUR');
      await page.getByRole('button', { name: button }).click();
      await page.waitForURL(`${shop.url}/checkout/${landing}?**`);
      const query = await landingQuery();
      expect(Object.fromEntries(query)).to.deep.equal({
        payment_session_id: session.payment_session_id,
        reference: `browser-${button}`,
        status,
      });
      const after = await sandbox.call('GET', `/api/v1/payment-sessions/${session.payment_session_id}`);
      expect(after.body.data.payment_session.status).to.equal(status);
    });
  }
});
