import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, watchCsp } from '../support/browser.js';
import { card, MERCHANT_KEY } from '../support/gateway.js';
import { startTestKit, type TestKit } from '../support/kit.js';

/**
 * issue 8, part 4, in Chromium: from the sandbox's hosted pages back to the kit's landings, which
 * show the truth in words on their first render and reload themselves (a meta refresh, no script)
 * while the payment is being confirmed. Each landing is saved as a screenshot, for a person to look at.
 */
describe('browser: the checkout landings in Chromium', function () {
  this.timeout(60_000);
  let browser: Browser | null;
  let t: TestKit;
  let page: Page;
  let csp: Awaited<ReturnType<typeof watchCsp>>;
  const shots = mkdtempSync(join(tmpdir(), 'landing-screens-'));

  before(async function () {
    browser = await launchChromium(this);
    t = await startTestKit({ env: { ROLES: 'api' } });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });
  beforeEach(async () => {
    page = await browser!.newPage({ viewport: { width: 800, height: 600 } });
    // The landings and the hosted pages, under the kit's and the sandbox's policies.
    csp = await watchCsp(page);
  });
  afterEach(async () => {
    await page.close();
    expect(csp.list(), 'Content-Security-Policy violations').to.deep.equal([]);
  });

  const screenshot = async (name: string) => {
    const path = join(shots, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    console.log(`      screenshot: ${path}`);
  };
  const shown = async () => ({
    status: (await (await page.$('[data-status]'))?.getAttribute('data-status')) ?? null,
    headline: (await page.textContent('h1'))?.trim(),
    text: (await page.textContent('body')) ?? '',
  });
  const hasRefresh = () => page.locator('meta[http-equiv="refresh"]').count();

  /** An order and a redirect payment through the merchant API: the hosted checkout page. */
  const redirectPayment = async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '49.90', currency: 'EUR' } });
    expect(created.status, created.text).to.equal(201);
    const order = created.body.data.order as { id: string; reference: string };
    const pay = await t.call('POST', `/orders/${order.id}/pay/redirect`, {
      body: { payment_method: 'ideal', customer: { country_code: 'NL' } },
    });
    expect(pay.status, pay.text).to.equal(200);
    const url = pay.body.data.next_action.url as string;
    return { order, url, sessionId: url.split('/').pop()! };
  };

  for (const [button, landing, status, headline, name] of [
    ['Pay', 'return', 'paid', 'Thank you: your payment was received', 'return-paid'],
    ['Cancel', 'cancel', 'cancelled', 'Your payment was cancelled', 'cancel-cancelled'],
  ] as const) {
    it(`${button} on the hosted page lands on /checkout/${landing}, which says at once: “${headline}”`, async () => {
      const { order, url } = await redirectPayment();
      await page.goto(url);
      await page.getByRole('button', { name: button }).click();
      await page.waitForURL(`${t.kit.publicBaseUrl}/checkout/${landing}?**`);
      const seen = await shown();
      expect(seen.status).to.equal(status);
      expect(seen.headline).to.equal(headline);
      expect(seen.text).to.not.contain('being confirmed');
      expect(seen.text).to.contain(order.reference);
      expect(seen.text).to.contain('49.90 EUR');
      expect(await hasRefresh()).to.equal(0);
      expect(await page.getByRole('link', { name: 'Back to the shop' }).getAttribute('href')).to.equal(
        `${t.kit.publicBaseUrl}/`,
      );
      await screenshot(name);
    });
  }

  it('Pending lands on a page that reloads itself and moves to paid by itself once the provider confirms', async () => {
    const { url, sessionId } = await redirectPayment();
    await page.goto(url);
    await page.getByRole('button', { name: 'Pending' }).click();
    await page.waitForURL(`${t.kit.publicBaseUrl}/checkout/return?**`);
    const waiting = await shown();
    expect(waiting.status).to.equal('requires_action');
    expect(waiting.headline).to.equal('Waiting for your payment to be confirmed');
    expect(waiting.text).to.not.contain('requires_action');
    expect(await hasRefresh()).to.equal(1);
    await screenshot('return-waiting');

    // It reloads on its own: the counter in the query moves.
    await page.waitForURL(/[?&]n=1(&|$)/, { timeout: 10_000 });
    expect(new URL(page.url()).searchParams.get('payment_session_id')).to.equal(sessionId);
    expect((await shown()).status).to.equal('requires_action');

    const settled = await fetch(`${t.kit.gatewayUrl}/sandbox/payment-sessions/${sessionId}/settle`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'paid' }),
    });
    expect(settled.status).to.equal(200);
    await page.waitForSelector('[data-status="paid"]', { timeout: 10_000 });
    const paid = await shown();
    expect(paid.headline).to.equal('Thank you: your payment was received');
    expect(await hasRefresh()).to.equal(0);
    await screenshot('return-paid-after-pending');
  });

  it('a payment still unconfirmed after the cap: the page stops reloading and says so', async () => {
    const { url, sessionId } = await redirectPayment();
    await page.goto(url);
    await page.getByRole('button', { name: 'Pending' }).click();
    await page.waitForURL(`${t.kit.publicBaseUrl}/checkout/return?**`);
    await page.goto(`${t.kit.publicBaseUrl}/checkout/return?payment_session_id=${sessionId}&n=10`);
    const slow = await shown();
    expect(slow.status).to.equal('requires_action');
    expect(slow.headline).to.equal('Your payment is taking longer than usual to confirm');
    expect(slow.text).to.contain('close this page');
    expect(await hasRefresh()).to.equal(0);
    await screenshot('return-slow');
    await page.setViewportSize({ width: 360, height: 640 });
    await screenshot('return-slow-phone');
  });

  it('a 3DS challenge (4000000000003220): Authenticate lands on /checkout/3ds-return, which says paid', async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });
    const order = created.body.data.order as { id: string; reference: string };
    const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
      body: { card: card('4000000000003220'), mode: 'sale' },
    });
    expect(pay.status, pay.text).to.equal(200);
    await page.goto(pay.body.data.next_action.url);
    await page.getByRole('button', { name: 'Authenticate' }).click();
    await page.waitForURL(`${t.kit.publicBaseUrl}/checkout/3ds-return?**`);
    const seen = await shown();
    expect(seen.status).to.equal('paid');
    expect(seen.headline).to.equal('Thank you: your payment was received');
    expect(seen.text).to.contain(order.reference);
    expect(seen.text).to.contain('12.34 EUR');
    await screenshot('3ds-return-paid');
  });

  it('an unknown payment is a 404 page in words', async () => {
    const res = await page.goto(`${t.kit.publicBaseUrl}/checkout/return?payment_session_id=ps_unknown`);
    expect(res?.status()).to.equal(404);
    expect((await shown()).headline).to.equal('We could not find this payment');
    await screenshot('return-404');
  });
});
