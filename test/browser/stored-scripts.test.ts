import { tmpdir } from 'node:os';
import { expect } from 'chai';
import type { Browser, Page, Response } from 'playwright-core';
import { holdOrderSecrets, launchChromium, watchCsp } from '../support/browser.js';
import { card, MERCHANT_KEY } from '../support/gateway.js';
import { getOrder, OPS_TOKEN, pressButton, startTestKit, type TestKit } from '../support/kit.js';
import { waitFor } from '../support/process.js';

/**
 * Issue 24, part 4: what a stranger can make the kit keep, and then show to a shopper or an
 * operator. A script is stored in every free-text field the kit keeps (the order's reference and
 * description, the customer's fields, capture notes, refund and void reasons, review reasons and
 * notes, a dispute's note, a stored event's id) and every page that shows them is opened in
 * Chromium: the demo shop (shopper and operator views, the review queue), the landings, the
 * sandbox's 3DS page, the queue board and /docs. No script runs (each would call `__pwned`), no
 * dialog opens, no injected script even reaches the page to be blocked by the policy (which would
 * mean the escaping failed and only the policy saved us), and every HTML answer carries the
 * security headers.
 */

/** A script in each of the shapes an injection takes, tagged with the field it was stored in. */
const payload = (tag: string) =>
  `"'><img src=x onerror="__pwned('${tag}')"><script>__pwned('${tag}')</script><svg onload=__pwned('${tag}')>`;
/** The same, short and without spaces: for the fields with tight rules (reference, phone, postal code). */
const short = (tag: string) => `<svg/onload=__pwned('${tag}')>`;

const FONTS = 'fonts.googleapis.com'; // bull-board's Google Fonts stylesheet, blocked on purpose

describe('browser: scripts stored in every free-text field run nowhere', function () {
  this.timeout(120_000);
  let browser: Browser | null;
  let t: TestKit;
  let page: Page;
  let csp: { list: () => string[] };
  const pwned: string[] = [];
  const dialogs: string[] = [];
  const documents: { url: string; status: number; headers: Record<string, string> }[] = [];
  const ids: Record<string, string> = {};
  let landing = '';
  let challengePage = '';

  const control = async (path: string, body: unknown = {}) => {
    const res = await fetch(`${t.kit.gatewayUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).to.equal(200);
  };
  const ok = async (answer: Promise<{ status: number; text: string }>, status = 200) => {
    const got = await answer;
    expect(got.status, got.text).to.equal(status);
    return got;
  };

  before(async function () {
    browser = await launchChromium(this);
    t = await startTestKit();
    const ops = { ops: true };
    const customer = {
      merchant_customer_id: payload('merchant_customer_id'),
      first_name: payload('first_name'),
      last_name: payload('last_name'),
      address: payload('address'),
      city: payload('city'),
      phone: short('phone'),
      postal_code: short('pc'),
    };
    const order = async (reference: string, amount = '40.00') => {
      const created = await ok(
        t.call('POST', '/orders', {
          ...ops,
          body: { amount, currency: 'EUR', reference, description: payload('description'), customer },
        }),
        201,
      );
      return (created as unknown as { body: { data: { order: { id: string } } } }).body.data.order.id;
    };

    // Authorised, captured with a note, refunded in part with a reason. (A `by` is no free text any
    // more: it must be the caller's own name, which for the bootstrap token is admin.)
    ids.captured = await order(short('reference'));
    await ok(t.call('POST', `/orders/${ids.captured}/pay/card`, { body: { card: card(), mode: 'auth' } }));
    await ok(
      t.call('POST', `/orders/${ids.captured}/capture`, {
        ...ops,
        body: { note: payload('capture_note') },
      }),
    );
    await ok(
      t.call('POST', `/orders/${ids.captured}/refund`, {
        ...ops,
        body: { amount: '5.00', reason: payload('refund_reason') },
        headers: { 'idempotency-key': `xss-refund-${ids.captured}` },
      }),
    );
    // Charged back, and the dispute recorded lost with a note.
    const transaction = (await getOrder(t, ids.captured)).payment.gateway_transaction_id as string;
    await control(`/sandbox/transactions/${transaction}/chargeback`, { amount: 10 });
    await waitFor('the dispute', async () => (await getOrder(t, ids.captured!)).status === 'disputed');
    const dispute = (await getOrder(t, ids.captured)).disputes[0].id as string;
    await ok(
      t.call('POST', `/disputes/${dispute}/lost`, { ...ops, body: { note: payload('dispute_note') } }),
    );

    // Voided with a reason.
    ids.voided = await order(`void-${Date.now()}`);
    await ok(t.call('POST', `/orders/${ids.voided}/pay/card`, { body: { card: card(), mode: 'auth' } }));
    await ok(
      t.call('POST', `/orders/${ids.voided}/void`, { ...ops, body: { reason: payload('void_reason') } }),
    );

    // Flagged for review: one resolved with a note, one left in the queue.
    for (const name of ['reviewed', 'flagged']) {
      ids[name] = await order(`${name}-${Date.now()}`, '3.00');
      await t.kit.store.orders.flagWithoutAttempt(ids[name]!, {
        reason: payload(`review_reason_${name}`),
        source: 'webhook',
        sourceId: `evt_xss_${name}`,
      });
    }
    await ok(
      t.call('POST', `/orders/${ids.reviewed}/review`, {
        ...ops,
        body: { resolution: 'accepted', note: payload('review_note') },
      }),
    );

    // A challenge: the sandbox's 3DS page, then the landing it returns to.
    ids.challenged = await order(short('reference3ds'));
    const pay = await ok(
      t.call('POST', `/orders/${ids.challenged}/pay/card`, {
        body: { card: card('4000000000003220'), mode: 'sale' },
      }),
    );
    challengePage = (pay as unknown as { body: { data: { next_action: { url: string } } } }).body.data
      .next_action.url;

    // A stored event that no longer reads, its id a script: the queue board lists it as failed.
    const eventId = `evt_${short('job_id')}`;
    await t.kit.store.inbox.store({
      id: eventId,
      type: 'transaction.captured',
      transactionId: '987654321',
      source: 'webhook',
      payload: payload('job_payload'),
      now: new Date(),
    });
    await t.kit.enqueue(eventId);
    await waitFor('the job in the failed set', async () =>
      (await t.kit.queue.getFailed()).some((j) => String(j.id) === eventId),
    );

    page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    await page.exposeFunction('__pwned', (tag: string) => void pwned.push(`${page.url()}: ${tag}`));
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('response', (r: Response) => {
      if (r.request().resourceType() === 'document')
        documents.push({ url: r.url(), status: r.status(), headers: r.headers() });
    });
    csp = await watchCsp(page, (text) => text.includes(FONTS));
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Lets the page run whatever it would (scripts, image errors, its own fetches) before looking. */
  const settle = () => page.waitForTimeout(400);

  it('the detectors work: markup put into a page is caught by the policy, and run where there is none', async () => {
    const probe = await browser!.newPage();
    const ran: string[] = [];
    await probe.exposeFunction('__pwned', (tag: string) => void ran.push(tag));
    const probeCsp = await watchCsp(probe);
    await probe.goto(`${t.url}/ops/login`);
    await probe.evaluate((html) => {
      document.body.insertAdjacentHTML('beforeend', html);
    }, payload('probe'));
    await probe.waitForTimeout(400);
    expect(probeCsp.list().join('\n'), 'the kit page blocks it and says so').to.contain('script-src');
    expect(ran).to.deep.equal([]);
    await probe.close();
    const bare = await browser!.newPage();
    await bare.exposeFunction('__pwned', (tag: string) => void ran.push(tag));
    await bare.setContent(`<!doctype html><body>${payload('probe')}</body>`);
    await bare.waitForTimeout(400);
    expect(ran, 'without the policy it runs, and is seen').to.include('probe');
    await bare.close();
  });

  it('the demo shop: each order as the shopper sees it, then with the operator token, and the review queue', async () => {
    // The shopper's browser holds each order's client secret, as the shop that placed it would.
    await holdOrderSecrets(page, t.url, t.secrets);
    for (const name of ['captured', 'voided', 'reviewed', 'challenged']) {
      await page.goto(`${t.url}/?order=${ids[name]}`);
      await page.waitForSelector('#order .order');
      if (!(await page.isVisible('#ops-token'))) await page.click('#ops summary');
      await page.fill('#ops-token', OPS_TOKEN);
      // The operator view reads the order again with the token: history, customer, review.
      await page.waitForSelector('#order table.history', { timeout: 15_000 });
      await settle();
    }
    // The stored text is shown, as text.
    expect(await page.locator('#order').innerText()).to.contain("__pwned('first_name')");
    await page.goto(`${t.url}/?order=${ids.captured}`);
    await page.click('#ops summary');
    await page.fill('#ops-token', OPS_TOKEN);
    await page.waitForSelector('#order table.history');
    const history = await page.locator('#order table.history').innerText();
    for (const tag of ['capture_note', 'refund_reason', 'dispute_note'])
      expect(history, tag).to.contain(`__pwned('${tag}')`);
    await page.fill('#queue-token', OPS_TOKEN);
    await page.click('#queue-load');
    await page.waitForSelector('#queue table');
    expect(await page.locator('#queue').innerText()).to.contain("__pwned('review_reason_flagged')");
    await settle();
    await page.screenshot({ path: `${tmpdir()}/stored-scripts-demo-shop.png`, fullPage: true });
  });

  it("the sandbox's 3DS page and the landing it returns to (the reference on it)", async () => {
    await page.goto(challengePage);
    await settle();
    landing = await pressButton(challengePage, 'authenticate');
    await page.goto(landing);
    expect(await page.locator('main').innerText()).to.contain("__pwned('reference3ds')");
    // The landings with a script in their query: an id nobody has.
    await page.goto(`${t.url}/checkout/return?payment_session_id=${encodeURIComponent(payload('query'))}`);
    await page.goto(
      `${t.url}/checkout/cancel?payment_session_id=${encodeURIComponent(payload('query'))}&n=1`,
    );
    await page.goto(
      `${t.url}/checkout/3ds-return?card_verification_id=${encodeURIComponent(payload('query'))}`,
    );
    await settle();
  });

  it('the queue board: the failed job, its id and error', async () => {
    await page.goto(`${t.url}/ops/login`);
    await page.fill('#token', OPS_TOKEN);
    await page.click('button[type=submit]');
    await page.waitForURL(`${t.url}/ops/queues`);
    await page.goto(`${t.url}/ops/queues/queue/observations?status=failed`);
    await page.getByText("__pwned('job_id')").first().waitFor();
    await settle();
    await page.goto(`${t.url}/ops/login`); // signed in: who, and the way out
    await settle();
  });

  it('/docs, and /docs asked to load another document or with a script in its fragment', async () => {
    await page.goto(`${t.url}/docs`);
    await page.waitForSelector('.swagger-ui .info');
    await page.goto(
      `${t.url}/docs?url=${encodeURIComponent('data:,{}')}&configUrl=https://evil.example/c.json`,
    );
    await page.waitForSelector('.swagger-ui .info');
    expect(await page.locator('.swagger-ui .info').innerText(), 'still the kit document').to.contain(
      'Merchant',
    );
    await page.goto(`${t.url}/docs#/${encodeURIComponent(payload('fragment'))}`);
    await settle();
  });

  it('no script ran, no dialog opened, no injected script reached a page, and every page had its headers', () => {
    expect(pwned, 'scripts that ran').to.deep.equal([]);
    expect(dialogs, 'dialogs').to.deep.equal([]);
    expect(csp.list(), 'policy violations: markup that reached a page').to.deep.equal([]);
    const html = documents.filter((d) => (d.headers['content-type'] ?? '').startsWith('text/html'));
    expect(html.length).to.be.greaterThan(12);
    for (const d of html) {
      const policy = d.headers['content-security-policy'] ?? '';
      expect(policy, d.url).to.match(/(^|;)\s*script-src 'self'(;|$)/);
      expect(policy, d.url).to.contain("frame-ancestors 'none'");
      expect(d.headers['x-content-type-options'], d.url).to.equal('nosniff');
      expect(d.headers['referrer-policy'], d.url).to.equal('no-referrer');
    }
    const pages = new Set(
      html.map((d) => new URL(d.url).pathname.replace(/\/[a-z]+_[A-Za-z0-9]{16,}$/, '/:id')),
    );
    console.log(`      HTML pages opened: ${[...pages].sort().join(', ')}`);
  });
});
