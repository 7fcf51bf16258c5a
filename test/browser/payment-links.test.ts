import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, watchCsp } from '../support/browser.js';
import { getOrder, pressButton, startTestKit, type TestKit } from '../support/kit.js';

/**
 * Issue 43, part 3, in Chromium: a payment link opened in two browsers at once goes to one hosted
 * checkout, both shoppers press Pay, and the gateway takes one payment; the link's own pages (paid,
 * closed, expired, a payment under way, unknown) in words, under the kit's security headers, without
 * a CSP violation. Each page is saved as a screenshot, for a person to look at.
 */
describe('browser: a payment link in Chromium', function () {
  this.timeout(90_000);
  let first: Browser | null;
  let second: Browser | null;
  let t: TestKit;
  const pages: { page: Page; csp: Awaited<ReturnType<typeof watchCsp>> }[] = [];
  const shots = mkdtempSync(join(tmpdir(), 'payment-link-screens-'));

  before(async function () {
    first = await launchChromium(this);
    second = await launchChromium(this);
    t = await startTestKit();
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await t?.close();
  });
  afterEach(async () => {
    for (const { page, csp } of pages.splice(0)) {
      await page.close();
      expect(csp.list(), 'Content-Security-Policy violations').to.deep.equal([]);
    }
  });

  const open = async (browser: Browser) => {
    const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
    const csp = await watchCsp(page);
    pages.push({ page, csp });
    return page;
  };
  const screenshot = async (page: Page, name: string) => {
    const path = join(shots, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    console.log(`      screenshot: ${path}`);
  };

  const orderWithLink = async (body: Record<string, unknown> = {}) => {
    const created = await t.call('POST', '/orders', {
      body: { amount: '49.90', currency: 'EUR', customer: { country_code: 'NL' } },
    });
    expect(created.status, created.text).to.equal(201);
    const order = created.body.data.order as { id: string; reference: string };
    const link = await t.call('POST', `/orders/${order.id}/payment-link`, {
      ops: true,
      body: { expires_in: 7 * 24 * 3600, payment_method: 'ideal', ...body },
    });
    expect(link.status, link.text).to.equal(201);
    return { order, url: link.body.data.payment_link.url as string };
  };
  const captured = (reference: string) =>
    [...t.kit.sandbox!.deps.state.transactions.values()].filter(
      (x) => x.reference === reference && x.status === 'captured',
    );

  it('opened in two browsers at once: one hosted checkout, both press Pay, one payment', async () => {
    const { order, url } = await orderWithLink();
    const [a, b] = [await open(first!), await open(second!)];
    await Promise.all([a.goto(url), b.goto(url)]);
    await Promise.all([a.waitForURL('**/hosted/checkout/ps_*'), b.waitForURL('**/hosted/checkout/ps_*')]);
    expect(a.url()).to.equal(b.url());
    expect(await a.textContent('h1')).to.equal('Pay with iDEAL');
    await screenshot(a, 'link-to-checkout');

    await Promise.all([
      a.getByRole('button', { name: 'Pay' }).click(),
      b.getByRole('button', { name: 'Pay' }).click(),
    ]);
    await Promise.all([
      a.waitForURL(`${t.kit.publicBaseUrl}/checkout/return?**`),
      b.waitForURL(`${t.kit.publicBaseUrl}/checkout/return?**`),
    ]);
    for (const page of [a, b]) await page.waitForSelector('[data-status="paid"]', { timeout: 10_000 });
    expect(captured(order.reference)).to.have.length(1);
    expect((await getOrder(t, order.id)).status).to.equal('paid');

    // The link opened again, in either browser: the order is paid.
    const again = await a.goto(url);
    expect(again?.status()).to.equal(200);
    expect(await again?.headerValue('content-security-policy')).to.contain("script-src 'self'");
    expect(await a.getAttribute('main', 'data-link')).to.equal('paid');
    expect(await a.textContent('h1')).to.equal('This order is already paid');
    expect(await a.textContent('body')).to.contain(order.reference);
    expect(await a.textContent('body')).to.contain('49.90 EUR');
    await screenshot(a, 'link-paid');
    expect(captured(order.reference)).to.have.length(1);
  });

  it('closed, expired, under way and unknown links say so', async () => {
    const page = await open(first!);
    const closed = await orderWithLink();
    await t.call('POST', `/orders/${closed.order.id}/cancel`, { ops: true, body: {} });
    expect((await page.goto(closed.url))?.status()).to.equal(200);
    expect(await page.textContent('h1')).to.equal('This order is closed');
    await screenshot(page, 'link-closed');

    const waiting = await orderWithLink();
    const checkout = (await fetch(waiting.url, { redirect: 'manual' })).headers.get('location')!;
    await pressButton(checkout, 'pending'); // the provider is confirming: no page to send anyone to
    await page.goto(waiting.url);
    expect(await page.getAttribute('main', 'data-link')).to.equal('wait');
    expect(await page.textContent('h1')).to.equal('A payment for this order is under way');
    await screenshot(page, 'link-under-way');

    const expired = await orderWithLink({ expires_in: 60 });
    t.sandboxClock.advance(61_000);
    expect((await page.goto(expired.url))?.status()).to.equal(410);
    expect(await page.textContent('h1')).to.equal('This payment link has expired');
    await screenshot(page, 'link-expired');
    await page.setViewportSize({ width: 360, height: 640 });
    await screenshot(page, 'link-expired-phone');

    expect((await page.goto(`${t.kit.publicBaseUrl}/pay/plt_${'q'.repeat(43)}`))?.status()).to.equal(404);
    expect(await page.textContent('h1')).to.equal('We could not find this payment link');
    await screenshot(page, 'link-unknown');
  });
});
