import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, watchCsp } from '../support/browser.js';
import { startTestKit, type TestKit } from '../support/kit.js';

/**
 * issue, part 4, in Chromium: GET /docs of the kit and of its sandbox renders the API reference with
 * no other site to load from (everything comes from the app's own origin), shows the API's title and
 * an operation, and is saved as a screenshot for a person to look at.
 */
describe('browser: the API reference pages (/docs) in Chromium', function () {
  this.timeout(60_000);
  let browser: Browser | null;
  let t: TestKit;
  let page: Page;
  const shots = mkdtempSync(join(tmpdir(), 'api-docs-screens-'));
  let requested: string[];
  let errors: string[];
  let csp: Awaited<ReturnType<typeof watchCsp>>;

  before(async function () {
    browser = await launchChromium(this);
    t = await startTestKit({ env: { ROLES: 'api' } });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });
  beforeEach(async () => {
    page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    requested = [];
    errors = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('pageerror', (error) => errors.push(error.message));
    // Swagger UI runs from files of the app's own origin, under its Content-Security-Policy.
    csp = await watchCsp(page);
  });
  afterEach(async () => {
    await page.close();
  });

  const screenshot = async (name: string) => {
    const path = join(shots, `${name}.png`);
    await page.screenshot({ path });
    console.log(`      screenshot: ${path}`);
  };

  /** Opens `origin`/docs and waits for Swagger UI to render the document's title. */
  const open = async (origin: string, title: string) => {
    const answer = await page.goto(`${origin}/docs`);
    expect(answer?.status()).to.equal(200);
    const heading = page.locator('.information-container .info .title');
    await heading.waitFor({ timeout: 20_000 });
    expect(await heading.textContent()).to.contain(title);
  };

  /** Expands an operation (Swagger UI's id: `operations-<tag>-<operationId>`) and returns what it says. */
  const expand = async (tag: string, operationId: string) => {
    const block = page.locator(`#operations-${tag}-${operationId}`);
    await block.locator('.opblock-summary-control').click();
    await block.locator('.responses-wrapper').waitFor({ timeout: 10_000 });
    await block.scrollIntoViewIfNeeded();
    return (await block.textContent()) ?? '';
  };

  const expectOnlyOwnOrigin = (origin: string) => {
    const elsewhere = requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'));
    expect(elsewhere, 'requests to another origin').to.deep.equal([]);
    expect(errors, 'errors on the page').to.deep.equal([]);
    expect(csp.list(), 'Content-Security-Policy violations').to.deep.equal([]);
  };

  it("the kit's /docs: the title, pay by card with its answers, served from the kit alone", async () => {
    await open(t.url, 'Merchant payment kit API');
    await screenshot('kit-docs');
    const text = await expand('Payments', 'payByCard');
    expect(text).to.contain('Pay by card');
    for (const status of ['200', '402', '409', '422']) expect(text).to.contain(status);
    await screenshot('kit-docs-pay-by-card');
    // The operator routes show their lock: they need the ops bearer token.
    expect(await page.locator('[data-path="/orders/{id}/refund"]').count()).to.be.greaterThan(0);
    expect(requested).to.include(`${t.url}/openapi.json`);
    expectOnlyOwnOrigin(t.url);
  });

  it("the kit's /docs: the order events it sends the shop, as webhooks with their signed headers and body", async () => {
    await open(t.url, 'Merchant payment kit API');
    const webhooks = page.locator('.webhooks');
    await webhooks.waitFor({ timeout: 10_000 });
    // One a type, each shown by its name, as Swagger UI shows the 3.1 document's webhooks.
    for (const type of ['order.paid', 'order.partially_refunded', 'order.dispute_won', 'order.needs_review'])
      expect(await webhooks.locator(`[data-path="${type}"]`).count(), type).to.equal(1);
    const text = await expand('webhooks', 'orderPaidEvent');
    for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
      expect(text).to.contain(header);
    // The example is a body the kit's own code wrote.
    expect(text).to.contain('"type": "order.paid"');
    expect(text).to.contain('"captured_amount_formatted": "12.34"');
    await screenshot('kit-docs-order-paid-event');
    expectOnlyOwnOrigin(t.url);
  });

  it("the sandbox's /docs: the title, the sandbox controls, served from the sandbox alone", async () => {
    const sandbox = t.kit.gatewayUrl;
    await open(sandbox, 'Sandbox payment gateway API');
    expect(await page.locator('[data-path="/api/v1/transactions/{id}/capture"]').count()).to.be.greaterThan(
      0,
    );
    expect(await page.locator('[data-path="/sandbox/tick"]').count()).to.be.greaterThan(0);
    await screenshot('sandbox-docs');
    const text = await expand('Transactions', 'createTransaction');
    expect(text).to.contain('ERR_DUPLICATE');
    await screenshot('sandbox-docs-transactions');
    expectOnlyOwnOrigin(sandbox);
  });
});
