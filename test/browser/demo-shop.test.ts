import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, Page, Route } from 'playwright-core';
import { TEST_CARDS } from '../../src/merchant/http/demo-test-cards.js';
import { holdOrderSecrets, launchChromium, watchCsp } from '../support/browser.js';
import { MERCHANT_KEY } from '../support/gateway.js';
import { getOrder, OPS_TOKEN, startTestKit, type TestKit } from '../support/kit.js';
import { LINKED, PLATFORM_ENV, platformSeed } from '../support/platform.js';

/**
 * The demo shop at `/`, driven end to end in Chromium: it creates and pays orders through the kit's
 * own API, follows the browser through the sandbox's hosted pages and the kit's landings, and shows
 * the order as the backend knows it when the shopper comes back. Each step is saved as a screenshot.
 */
describe('browser: the demo shop in Chromium', function () {
  this.timeout(60_000);
  let browser: Browser | null;
  let t: TestKit;
  let page: Page;
  let problems: string[];
  let csp: Awaited<ReturnType<typeof watchCsp>>;
  const shots = mkdtempSync(join(tmpdir(), 'demo-shop-screens-'));

  before(async function () {
    browser = await launchChromium(this);
    // Every role: the worker applies the webhooks the sandbox delivers to the kit. Every test acts for
    // the page's one customer, whose cards each page load lists: more than one shopper would in a minute.
    t = await startTestKit({ env: { LIMIT_CARD_LISTS_PER_CUSTOMER: '600/1m' } });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });
  beforeEach(async () => {
    // A new page is a new context: no order remembered from another test.
    page = await browser!.newPage({ viewport: { width: 1200, height: 900 } });
    problems = [];
    // The page runs under the kit's Content-Security-Policy: its script a file, its settings data.
    csp = await watchCsp(page);
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    // The kit's pages and the sandbox's name an icon of their own: no browser asks for one and gets a 404.
    page.on('console', (message) => {
      if (message.type() === 'error' && message.location().url.endsWith('/favicon.ico'))
        problems.push(`asked for ${message.location().url}`);
    });
    page.on('request', (request) => {
      const url = request.url();
      const local = [t.url, t.kit.gatewayUrl].some((base) => url.startsWith(base));
      if (!local && !url.startsWith('data:')) problems.push(`request elsewhere: ${url}`);
    });
  });
  afterEach(async () => {
    await page.close();
    expect([...problems, ...csp.list()]).to.deep.equal([]);
  });

  const screenshot = async (name: string) => {
    const path = join(shots, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    console.log(`      screenshot: ${path}`);
  };
  const openShop = async () => {
    await page.goto(`${t.url}/`);
    // The payment methods come from GET /payment-methods as the page loads.
    await page.waitForSelector('#methods [data-method="ideal"]');
  };
  /** The order panel once it shows `status`, and the order's id it names. */
  const orderShown = async (status: string) => {
    const panel = await page.waitForSelector(`#order .order[data-status="${status}"]`, { timeout: 15_000 });
    return (await panel.getAttribute('data-order-id'))!;
  };
  const historyText = () => page.locator('#order table.history').innerText();
  /**
   * Types a token in "Operator actions": the page reads the order again with it, whole, with its
   * history (a shopper's page shows the status and amounts only).
   */
  const asOperator = async (token = OPS_TOKEN) => {
    if (!(await page.isVisible('#ops-token'))) await page.click('#ops summary');
    await page.fill('#ops-token', token);
    await page.waitForSelector('#order table.history', { timeout: 15_000 });
  };
  const remembered = () => page.evaluate(() => localStorage.getItem('demo-shop:last-order'));
  /** Presses "Place the order and pay": the id of the order the page created (POST /orders). */
  const placeOrder = async () => {
    // The answer is read as it passes, not from the page's network log: a 3DS challenge navigates away
    // at once, and the browser then has no body to give for a response it has left behind.
    let created: (id: string) => void;
    const id = new Promise<string>((resolve) => {
      created = resolve;
    });
    const passOn = async (route: Route) => {
      if (route.request().method() !== 'POST') return route.fallback();
      const answer = await route.fetch();
      created(((await answer.json()) as { data: { order: { id: string } } }).data.order.id);
      await route.fulfill({ response: answer });
    };
    await page.route(`${t.url}/orders`, passOn);
    try {
      await page.click('#pay');
      return await id;
    } finally {
      await page.unroute(`${t.url}/orders`, passOn);
    }
  };
  const backToTheShop = async () => {
    await page.getByRole('link', { name: 'Back to the shop' }).click();
    await page.waitForURL(`${t.url}/`);
  };

  // The demo shop acts for one signed-in customer; the test asks the API about its cards with a token
  // of its own, as the shop's server would.
  const CUSTOMER = 'demo-customer';
  const customerHeaders = () => ({
    'customer-token': t.kit.checkout.customerTokens.issue(CUSTOMER, t.clock.now()).token,
  });
  /** The demo customer's cards, through the API. */
  const cardsThroughApi = async () => {
    const listed = await t.call('GET', `/customers/${CUSTOMER}/cards`, { headers: customerHeaders() });
    expect(listed.status, listed.text).to.equal(200);
    return listed.body.data.cards as { id: string; brand: string; last4: string }[];
  };
  /** No card saved by an earlier test: the tests share the kit, and so the customer. */
  const clearSavedCards = async () => {
    for (const card of await cardsThroughApi()) {
      const removed = await t.call('DELETE', `/customers/${CUSTOMER}/cards/${card.id}`, {
        headers: customerHeaders(),
      });
      expect(removed.status, removed.text).to.equal(200);
    }
  };
  /** The saved cards panel once it lists `count` cards (it says how many once a list has come). */
  const savedCardsShown = (count: number) =>
    page.waitForSelector(`#saved[data-count="${count}"]`, { timeout: 15_000 });

  it('lists the test cards and the payment methods as it loads', async () => {
    await openShop();
    const cards = page.locator('table.cards tbody tr');
    expect(await cards.count()).to.equal(TEST_CARDS.length);
    expect(await cards.first().innerText()).to.contain('4242 4242 4242 4242');
    expect(await page.locator('#methods').innerText()).to.contain('iDEAL');
    expect(await page.locator('#methods').innerText()).to.contain('paysafecard');
    expect(await page.locator('#order').innerText()).to.contain('No order yet');
    await screenshot('shop-empty');
  });

  it('a frictionless card sale (4242...): the order shows paid, with its history', async () => {
    await openShop();
    await page.fill('#amount', '19.99');
    await page.selectOption('#card', '4242424242424242');
    await page.selectOption('#mode', 'sale');
    // The order's client secret, answered by POST /orders, goes with its payment and its reads.
    const [created, paying, read] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${t.url}/orders` && r.request().method() === 'POST'),
      page.waitForRequest((r) => r.url().endsWith('/pay/card')),
      page.waitForRequest((r) => /\/orders\/ord_[A-Za-z0-9]+$/.test(r.url()) && r.method() === 'GET'),
      page.click('#pay'),
    ]);
    const { client_secret: secret } = (
      (await created.json()) as { data: { order: { client_secret: string } } }
    ).data.order;
    expect(secret).to.match(/^ocs_/);
    expect(paying.headers()['order-secret']).to.equal(secret);
    expect(read.headers()['order-secret']).to.equal(secret);
    const id = await orderShown('paid');
    expect(await remembered()).to.equal(id);
    // The shopper's page: the status and the amounts; nothing of who pays, the payment or its history.
    const shopper = await page.locator('#order').innerText();
    expect(shopper).to.contain('19.99 EUR');
    expect(shopper).to.contain('Who pays');
    for (const hidden of ['card, sale', 'demo-customer', 'Demo shop order', 'Gateway transaction'])
      expect(shopper).to.not.contain(hidden);
    expect(await page.locator('#order table.history').count()).to.equal(0);
    await screenshot('card-sale-shopper');
    // With an operator's token: the whole order, as the kit keeps it.
    await asOperator();
    const panel = await page.locator('#order').innerText();
    expect(panel).to.contain('19.99 EUR');
    expect(panel).to.contain('card, sale');
    expect(panel).to.match(/Customer\s+demo-customer/);
    expect(await historyText()).to.match(/pending → paid\s+applied/);
    expect(await page.locator('#form-message').innerText()).to.equal('Done.');
    expect((await getOrder(t, id)).status).to.equal('paid');
    await screenshot('card-sale-paid');
  });

  it('a 3DS challenge (4000000000003220): the challenge page, Authenticate, the landing, back to the shop: paid', async () => {
    await openShop();
    await page.fill('#amount', '12.34');
    // A row of the test-card table chooses its card.
    await page.locator('tr[data-card="4000000000003220"]').click();
    expect(await page.inputValue('#card')).to.equal('4000000000003220');
    const id = await placeOrder();
    await page.waitForURL(`${t.kit.gatewayUrl}/hosted/3ds/**`);
    await screenshot('3ds-challenge');
    await page.getByRole('button', { name: 'Authenticate' }).click();
    await page.waitForURL(`${t.url}/checkout/3ds-return?**`);
    expect(await page.getAttribute('[data-status]', 'data-status')).to.equal('paid');
    await screenshot('3ds-landing');
    await backToTheShop();
    expect(await orderShown('paid')).to.equal(id);
    expect(await remembered()).to.equal(id);
    expect(await page.locator('#order').innerText()).to.contain('12.34 EUR');
    await asOperator();
    expect(await historyText()).to.match(/pending → requires_action[\s\S]*requires_action → paid/);
    // The form keeps the card chosen before the challenge.
    expect(await page.inputValue('#card')).to.equal('4000000000003220');
    await screenshot('3ds-back-in-shop');
  });

  it('a challenge left open: back in the shop, the order waits and offers its challenge page again (next_action)', async () => {
    await openShop();
    await page.locator('tr[data-card="4000000000003220"]').click();
    const id = await placeOrder();
    await page.waitForURL(`${t.kit.gatewayUrl}/hosted/3ds/**`);
    const challenge = page.url();
    // The shopper comes back to the shop without answering the challenge.
    await page.goto(`${t.url}/`);
    expect(await orderShown('requires_action')).to.equal(id);
    expect(await page.getAttribute('#continue-payment', 'href')).to.equal(challenge);
    await screenshot('3ds-left-open');
    await page.click('#continue-payment');
    await page.waitForURL(challenge);
    await page.getByRole('button', { name: 'Authenticate' }).click();
    await page.waitForURL(`${t.url}/checkout/3ds-return?**`);
    await backToTheShop();
    expect(await orderShown('paid')).to.equal(id);
    expect(await page.locator('#continue-payment').count()).to.equal(0);
  });

  it('a redirect payment with iDEAL: the hosted checkout page, Pay, the landing, back to the shop: paid', async () => {
    await openShop();
    await page.fill('#amount', '49.90');
    await page.selectOption('#currency', 'EUR');
    await page.check('input[name="kind"][value="redirect"]');
    expect(await page.isVisible('#card-fields')).to.equal(false);
    await page.selectOption('#method', 'ideal');
    await page.fill('#country', 'NL');
    await screenshot('ideal-form');
    const id = await placeOrder();
    await page.waitForURL(`${t.kit.gatewayUrl}/hosted/checkout/**`);
    await screenshot('ideal-checkout');
    await page.getByRole('button', { name: 'Pay', exact: true }).click();
    await page.waitForURL(`${t.url}/checkout/return?**`);
    expect(await page.getAttribute('[data-status]', 'data-status')).to.equal('paid');
    await screenshot('ideal-landing');
    await backToTheShop();
    expect(await orderShown('paid')).to.equal(id);
    await asOperator();
    const panel = await page.locator('#order').innerText();
    expect(panel).to.contain('redirect, ideal');
    expect(panel).to.match(/Payment session\s+ps_/);
    expect(await historyText()).to.contain('requires_action → paid');
    expect(await page.isChecked('input[name="kind"][value="redirect"]')).to.equal(true);
    await screenshot('ideal-back-in-shop');
  });

  it('an order still being confirmed: the page checks again by itself until the gateway settles it', async () => {
    await openShop();
    await page.check('input[name="kind"][value="redirect"]');
    await page.selectOption('#method', 'ideal');
    const id = await placeOrder();
    await page.waitForURL(`${t.kit.gatewayUrl}/hosted/checkout/**`);
    const sessionId = new URL(page.url()).pathname.split('/').pop()!;
    await page.getByRole('button', { name: 'Pending' }).click();
    await page.waitForURL(`${t.url}/checkout/return?**`);
    await backToTheShop();
    expect(await orderShown('requires_action')).to.equal(id);
    expect(await page.locator('#order .status').innerText()).to.contain('checking again every 2 s');
    await screenshot('pending-waiting');

    const settled = await fetch(`${t.kit.gatewayUrl}/sandbox/payment-sessions/${sessionId}/settle`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'paid' }),
    });
    expect(settled.status).to.equal(200);
    // No reload: the page asks GET /orders/{id} again while the order is being confirmed.
    await orderShown('paid');
    expect(page.url()).to.equal(`${t.url}/`);
    expect(await page.locator('#order .status').innerText()).to.not.contain('checking again');
    await screenshot('pending-then-paid');
  });

  it('a decline (4000000000000002) says why and shows the order failed', async () => {
    await openShop();
    await page.selectOption('#card', '4000000000000002');
    await page.click('#pay');
    await orderShown('failed');
    // The shopper is told why beside the form; the order's failure code is the operator's to read.
    expect(await page.locator('#form-message').innerText()).to.contain('ERR_CARD_DO_NOT_HONOR');
    expect(await page.locator('#order').innerText()).to.not.contain('Failure');
    await asOperator();
    expect(await page.locator('#order').innerText()).to.match(/Failure\s+ERR_CARD_DO_NOT_HONOR/);
    await screenshot('card-declined');
  });

  it('an auth, then the operator actions with the token: capture, then a partial refund', async () => {
    await openShop();
    await page.fill('#amount', '30.00');
    await page.selectOption('#mode', 'auth');
    await page.click('#pay');
    const id = await orderShown('authorized');
    await page.click('#ops summary');
    await page.click('#capture');
    expect(await page.locator('#ops-message').innerText()).to.contain('Paste the operator token');
    await page.fill('#ops-token', OPS_TOKEN);
    await page.click('#capture');
    await orderShown('paid');
    expect(await page.isVisible('#capture')).to.equal(false);
    await page.fill('#refund-amount', '5.00');
    await page.click('#refund');
    await orderShown('partially_refunded');
    expect(await page.locator('#order').innerText()).to.match(/Refunded\s+5\.00 EUR/);
    expect((await getOrder(t, id)).refunded_amount).to.equal(500);
    await screenshot('operator-refunded');
  });

  it("an operator action's result is said of its order only: another order shown, it is gone", async () => {
    await openShop();
    await page.fill('#amount', '21.00');
    await page.click('#pay');
    const refunded = await orderShown('paid');
    await asOperator();
    await page.fill('#refund-amount', '5.00');
    await page.click('#refund');
    await orderShown('partially_refunded');
    expect(await page.locator('#ops-message').innerText()).to.equal('refund: done.');
    // Another order placed and shown (the token still typed): nothing was done to it yet.
    await page.fill('#amount', '22.00');
    await page.click('#pay');
    const other = await page.waitForSelector(
      `#order .order[data-status="paid"]:not([data-order-id="${refunded}"])`,
      { timeout: 15_000 },
    );
    expect(await other.innerText()).to.contain('22.00 EUR');
    expect(await page.locator('#refund-amount').inputValue()).to.equal('22.00');
    expect(await page.locator('#ops-message').innerText()).to.equal('');
    await screenshot('operator-another-order');
  });

  it('a payment the kit never answers: said so (not "Done."), and the next press pays the same order, not a new one', async () => {
    await openShop();
    await page.fill('#amount', '21.00');
    await page.selectOption('#card', '4242424242424242');
    await page.selectOption('#mode', 'sale');
    const sent: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST') sent.push(new URL(r.url()).pathname);
    });

    // The answer lost after the kit did the work: the page cannot tell, so it says so and shows the order.
    await page.route(
      '**/orders/*/pay/card',
      async (route) => {
        await route.fetch();
        await route.abort('connectionreset');
      },
      { times: 1 },
    );
    const reached = await placeOrder();
    const message = page.locator('#form-message');
    await page.waitForFunction(() =>
      document.getElementById('form-message')!.textContent!.includes('did not answer'),
    );
    expect(await message.innerText()).to.match(
      /^The kit did not answer: the payment may or may not have gone through\. The order below shows where it stands/,
    );
    expect(await message.getAttribute('class')).to.equal('message err');
    expect(await orderShown('paid')).to.equal(reached);
    // Paid: the button places a new order.
    expect(await page.innerText('#pay')).to.equal('Place the order and pay');

    // The answer lost before the kit heard it (a kit down): the order stays pending, for this customer.
    sent.length = 0;
    await page.route('**/orders/*/pay/card', (route) => route.abort('connectionrefused'), { times: 1 });
    const lost = await placeOrder();
    expect(lost).to.not.equal(reached);
    await page.waitForFunction(() =>
      document.getElementById('form-message')!.textContent!.includes('did not answer'),
    );
    expect(await orderShown('pending')).to.equal(lost);
    expect(await page.locator('#order .status').innerText()).to.contain('checking again');
    expect(await page.innerText('#pay')).to.equal('Pay this order again');
    await screenshot('payment-answer-lost');

    // Pressed again: the same order is paid (its reference, so the kit adopts a payment the gateway took).
    await page.click('#pay');
    expect(await orderShown('paid')).to.equal(lost);
    expect(await message.innerText()).to.equal('Done.');
    expect(sent).to.deep.equal(['/orders', `/orders/${lost}/pay/card`, `/orders/${lost}/pay/card`]);
    expect((await getOrder(t, lost)).status).to.equal('paid');
    await screenshot('payment-answer-lost-paid-again');

    // Another amount is another purchase: a new order, as before.
    await page.fill('#amount', '22.00');
    expect(await page.innerText('#pay')).to.equal('Place the order and pay');
  });

  it('a refund whose answer is lost: the next press retries it with the same Idempotency-Key; after an answer, a new press is a new refund', async () => {
    await openShop();
    await page.fill('#amount', '30.00');
    await page.selectOption('#card', '4242424242424242');
    await page.selectOption('#mode', 'sale');
    await page.click('#pay');
    const id = await orderShown('paid');
    await asOperator();
    // Each press reaches the kit; what comes back to the page is set per press: the kit's answer,
    // none (the connection dropped), or a 503 OUTCOME_UNKNOWN.
    const keys: string[] = [];
    const answers: ('answer' | 'none' | '503')[] = [];
    await page.route('**/orders/*/refund', async (route) => {
      keys.push((await route.request().headerValue('idempotency-key'))!);
      const answer = await route.fetch();
      const back = answers[keys.length - 1];
      if (back === 'none') return route.abort('connectionreset');
      if (back === '503')
        return route.fulfill({
          status: 503,
          json: {
            success: false,
            code: 'OUTCOME_UNKNOWN',
            message: 'The gateway did not answer; send the same request with the same Idempotency-Key again.',
            data: null,
          },
        });
      return route.fulfill({ response: answer });
    });
    /** Presses Refund for `amount`, the page getting `back`: what the page says. */
    const press = async (amount: string, back: (typeof answers)[number]) => {
      answers.push(back);
      await page.fill('#refund-amount', amount);
      await page.evaluate(() => {
        document.getElementById('ops-message')!.textContent = '';
      });
      await page.click('#refund');
      await page.waitForFunction(() => document.getElementById('ops-message')!.textContent !== '');
      return page.locator('#ops-message').innerText();
    };
    const refunded = async () => (await getOrder(t, id)).refunded_amount;

    expect(await press('5.00', 'none')).to.match(
      /^refund: The kit did not answer: .*The refund may or may not be done/,
    );
    expect(await page.locator('#ops-message').getAttribute('class')).to.equal('message err');
    await screenshot('refund-answer-lost');
    expect(await press('5.00', 'answer')).to.equal('refund: done.');
    expect(keys[1], 'the retry of a press whose answer was lost').to.equal(keys[0]);
    // One refund for the two presses: the kit answered the retry with the first press's refund.
    expect(await refunded()).to.equal(500);

    // Answered: the next press is a new refund, with a new key; a 503 OUTCOME_UNKNOWN keeps its key too.
    expect(await press('5.00', '503')).to.match(
      /^refund: OUTCOME_UNKNOWN: .*The refund may or may not be done/,
    );
    expect(keys[2]).to.not.equal(keys[1]);
    expect(await press('5.00', 'answer')).to.equal('refund: done.');
    expect(keys[3]).to.equal(keys[2]);
    expect(await refunded()).to.equal(1000);

    // Another amount after a lost answer is another refund.
    await press('1.00', 'none');
    expect(keys[4]).to.not.equal(keys[3]);
    expect(await press('2.00', 'answer')).to.equal('refund: done.');
    expect(keys[5]).to.not.equal(keys[4]);
    expect(await refunded()).to.equal(1300);
    await orderShown('partially_refunded');
    expect(await page.locator('#order').innerText()).to.match(/Refunded\s+13\.00 EUR/);
  });

  it('the operator panel: the review queue, a page at a time; finance resolves one, a viewer may not', async () => {
    const by = { name: 'test', role: 'admin' as const, credential: 'cli' };
    const finance = (await t.kit.store.operators.add({ name: 'shop-fran', role: 'finance', by })).token;
    const viewer = (await t.kit.store.operators.add({ name: 'shop-vera', role: 'viewer', by })).token;
    const flagged: string[] = [];
    for (let i = 1; i <= 6; i++) {
      const created = await t.call('POST', '/orders', {
        ops: true,
        body: { amount: `${i}.00`, currency: 'EUR', reference: `queue-${Date.now()}-${i}` },
      });
      const id = created.body.data.order.id as string;
      await t.kit.store.orders.flagWithoutAttempt(id, {
        reason: `gateway money with no attempt: transaction 90010${i} captured ${i + 1}.00 EUR`,
        source: 'webhook',
        sourceId: `evt_queue_${i}`,
      });
      flagged.unshift(id);
    }
    await openShop();
    await page.click('#queue-load');
    expect(await page.locator('#queue-message').innerText()).to.contain("Paste an operator's token");
    await page.fill('#queue-token', viewer);
    await page.click('#queue-load');
    await page.waitForSelector('#queue tr[data-order-id]');
    const rowIds = () =>
      page
        .locator('#queue tr[data-order-id]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-order-id')));
    expect(await rowIds()).to.deep.equal(flagged.slice(0, 5));
    await page.click('#queue-more');
    await page.waitForFunction(() => document.querySelectorAll('#queue tr[data-order-id]').length === 6);
    expect(await rowIds()).to.deep.equal(flagged);
    expect(await page.locator('#queue-more').count()).to.equal(0);
    expect(await page.locator(`#queue tr[data-order-id="${flagged[0]}"] .reason`).innerText()).to.contain(
      'transaction 900106 captured 7.00 EUR',
    );

    // A viewer reads the queue; resolving needs finance: the page says so, and the order stays flagged.
    await page.click(`#queue tr[data-order-id="${flagged[0]}"] button.resolve`);
    await page.fill(`#queue tr[data-for="${flagged[0]}"] input.note`, 'a test payment');
    await page.click(`#queue tr[data-for="${flagged[0]}"] button.confirm`);
    await page.waitForFunction(() =>
      document.getElementById('queue-message')!.textContent!.includes('FORBIDDEN'),
    );
    expect(await page.locator('#queue-message').innerText()).to.contain(
      'This needs the role finance or admin',
    );
    expect((await getOrder(t, flagged[0]!)).needs_review).to.equal(true);
    await screenshot('review-queue');

    await page.fill('#queue-token', finance);
    await page.selectOption(`#queue tr[data-for="${flagged[0]}"] select.resolution`, 'refunded');
    await page.fill(
      `#queue tr[data-for="${flagged[0]}"] input.note`,
      'refunded at the gateway: a test payment',
    );
    await page.click(`#queue tr[data-for="${flagged[0]}"] button.confirm`);
    await page.waitForFunction(() =>
      document.getElementById('queue-message')!.textContent!.includes('resolved'),
    );
    expect(await rowIds()).to.deep.equal(flagged.slice(1, 6));
    const order = await getOrder(t, flagged[0]!);
    expect(order).to.include({ needs_review: false, review_reason: null });
    expect(order.history.at(-1).detail).to.match(
      /^review resolved \(refunded\) by shop-fran \(finance\): refunded at the gateway: a test payment; cleared: /,
    );
    await screenshot('review-queue-resolved');

    // The order itself shows the line, to an operator (finance reads orders): who and why. The link
    // names the order only: this browser holds no secret of it, so the shopper's read is a 404 until
    // the token is typed.
    await page.goto(`${t.url}/?order=${flagged[0]}`);
    await page.waitForSelector('#order-unknown');
    expect(await page.locator('#order').innerText()).to.contain('was not placed in this browser');
    await asOperator(finance);
    expect(await historyText()).to.contain('review resolved (refunded) by shop-fran (finance)');
  });

  it('saved cards: paid with the consent box ticked, the card is listed; it pays a second order without a challenge; removed, the list is empty', async () => {
    await clearSavedCards();
    await openShop();
    await savedCardsShown(0);
    expect(await page.locator('#saved').innerText()).to.contain('No saved card yet');
    expect(await page.locator('#customer-id').innerText()).to.equal(CUSTOMER);
    await page.fill('#amount', '19.99');
    await page.selectOption('#card', '4242424242424242');
    await page.check('#save-card');
    const [paying] = await Promise.all([
      page.waitForRequest((r) => r.url().endsWith('/pay/card')),
      page.click('#pay'),
    ]);
    // The consent and the customer's token go with the payment; the order names the customer.
    expect(paying.postDataJSON()).to.include({ save_card: true });
    expect(await paying.headerValue('customer-token')).to.match(/^ct1\./);
    const first = await orderShown('paid');
    expect((await getOrder(t, first)).customer).to.deep.equal({ merchant_customer_id: CUSTOMER });
    await savedCardsShown(1);
    const row = page.locator('#saved tr[data-saved-card]');
    expect(await row.innerText()).to.contain('visa •••• 4242');
    const cardId = (await row.getAttribute('data-saved-card'))!;
    expect(cardId).to.match(/^card_/);
    expect((await cardsThroughApi()).map((c) => c.id)).to.deep.equal([cardId]);
    await screenshot('saved-card-kept');

    // "Pay with this card": the order shown is paid, so a new one, paid with the card's token.
    await page.fill('#amount', '7.50');
    await page.click(`#saved tr[data-saved-card="${cardId}"] button.pay-saved`);
    const paidAgain = `#order .order[data-status="paid"]:not([data-order-id="${first}"])`;
    const panel = await page.waitForSelector(paidAgain, { timeout: 15_000 });
    const second = (await panel.getAttribute('data-order-id'))!;
    expect(await remembered()).to.equal(second);
    // No challenge: the browser never left the shop, and the order went from pending to paid.
    expect(page.url()).to.equal(`${t.url}/`);
    await asOperator();
    const history = await historyText();
    expect(history).to.contain(
      `saved card attempt started: visa •••• 4242, 12/${new Date().getFullYear() + 3} (${cardId})`,
    );
    expect(history).to.match(/pending → paid\s+applied/);
    expect(history).to.not.contain('requires_action');
    expect(await page.locator('#order').innerText()).to.contain('7.50 EUR');
    expect(await page.locator('#saved-message').innerText()).to.equal('Done.');
    const paid = await getOrder(t, second);
    expect(paid).to.include({ status: 'paid', amount: 750 });
    expect(paid.customer).to.deep.equal({ merchant_customer_id: CUSTOMER });
    await screenshot('saved-card-paid');

    await page.click(`#saved tr[data-saved-card="${cardId}"] button.remove-saved`);
    await savedCardsShown(0);
    expect(await page.locator('#saved-message').innerText()).to.equal('visa •••• 4242 is removed.');
    expect(await page.locator('#saved').innerText()).to.contain('No saved card yet');
    expect(await cardsThroughApi()).to.deep.equal([]);
    await screenshot('saved-card-removed');
  });

  it('saved cards: a card saved through the 3DS challenge (4000000000003220) is listed back in the shop', async () => {
    await clearSavedCards();
    await openShop();
    await page.locator('tr[data-card="4000000000003220"]').click();
    await page.check('#save-card');
    const id = await placeOrder();
    await page.waitForURL(`${t.kit.gatewayUrl}/hosted/3ds/**`);
    await page.getByRole('button', { name: 'Authenticate' }).click();
    await page.waitForURL(`${t.url}/checkout/3ds-return?**`);
    expect(await page.getAttribute('[data-status]', 'data-status')).to.equal('paid');
    await backToTheShop();
    expect(await orderShown('paid')).to.equal(id);
    await savedCardsShown(1);
    expect(await page.locator('#saved tr[data-saved-card]').innerText()).to.contain('visa •••• 3220');
    expect((await cardsThroughApi()).map((c) => `${c.brand} ${c.last4}`)).to.deep.equal(['visa 3220']);
    // Consent is asked each time: the box is not ticked again by itself.
    expect(await page.isChecked('#save-card')).to.equal(false);
    await screenshot('saved-card-after-challenge');
  });

  it('saved cards: a declined order is paid with a saved card, the same order; a card removed elsewhere is refused, and said so', async () => {
    await clearSavedCards();
    await openShop();
    await page.selectOption('#card', '4000000000003063');
    await page.check('#save-card');
    await page.click('#pay');
    await orderShown('paid');
    await savedCardsShown(1);
    const cardId = (await page.getAttribute('#saved tr[data-saved-card]', 'data-saved-card'))!;

    await page.uncheck('#save-card');
    await page.selectOption('#card', '4000000000000002');
    await page.click('#pay');
    const declined = await orderShown('failed');
    await page.click(`#saved tr[data-saved-card="${cardId}"] button.pay-saved`);
    await page.waitForSelector(`#order .order[data-order-id="${declined}"][data-status="paid"]`, {
      timeout: 15_000,
    });
    await asOperator();
    expect(await historyText()).to.match(/failed → pending[\s\S]*saved card attempt started: visa •••• 3063/);
    // The declined card was not saved: consent was not given for it.
    expect((await cardsThroughApi()).map((c) => c.id)).to.deep.equal([cardId]);
    await screenshot('saved-card-pays-declined-order');

    // Removed behind the page's back: the stale row's payment is refused, charges nothing, and the list catches up.
    const removed = await t.call('DELETE', `/customers/${CUSTOMER}/cards/${cardId}`, {
      headers: customerHeaders(),
    });
    expect(removed.status, removed.text).to.equal(200);
    await page.click(`#saved tr[data-saved-card="${cardId}"] button.pay-saved`);
    await savedCardsShown(0);
    expect(await page.locator('#saved-message').innerText()).to.match(
      /^The payment did not go through: CARD_REVOKED: .*\(card: /,
    );
    const unpaid = await orderShown('pending');
    expect(unpaid).to.not.equal(declined);
    expect((await getOrder(t, unpaid)).payment).to.equal(null);
    await screenshot('saved-card-refused');
  });

  it('shows what the API answers as text, never as markup', async () => {
    const reference = '<img/src=x/onerror=window.hacked=1>';
    const created = await t.call('POST', '/orders', {
      ops: true,
      body: { amount: '1.00', currency: 'EUR', reference },
    });
    expect(created.status, created.text).to.equal(201);
    await holdOrderSecrets(page, t.url, t.secrets);
    await page.goto(`${t.url}/?order=${created.body.data.order.id}`);
    await orderShown('pending');
    expect(await page.locator('#order').innerText()).to.contain(reference);
    // No payment yet: nothing is being confirmed, so the page does not keep asking.
    expect(await page.locator('#order .status').innerText()).to.not.contain('checking again');
    expect(await page.locator('#order img').count()).to.equal(0);
    expect(await page.evaluate(() => (window as unknown as { hacked?: number }).hacked)).to.equal(undefined);
  });

  // Last: it moves the kit's clock (and the sandbox's) on by years, which no test after it expects.
  it('saved cards: an expired card is marked so, and paying with it is refused (422 CARD_EXPIRED), said in the page', async () => {
    await clearSavedCards();
    await openShop();
    await page.check('#save-card');
    await page.click('#pay');
    await orderShown('paid');
    await savedCardsShown(1);
    expect(await page.getAttribute('#saved tr[data-saved-card]', 'data-expired')).to.equal('false');

    // Past the card's expiry (12 of three years on), and past the page's customer token (an hour).
    // The payment's token is minted for its order (as a shop's server does), so the card's expiry
    // refuses it; the list cannot be read again with the page's lapsed token: it stays as it was, the
    // payment's answer stays said, and the page says to reload. Nothing is charged.
    t.sandboxClock.advance(4 * 366 * 24 * 3600_000);
    await page.locator('#saved tr[data-saved-card] button.pay-saved').click();
    await page.waitForFunction(() =>
      document
        .getElementById('saved-message')!
        .textContent!.endsWith('Reload the page for a new customer token.'),
    );
    expect(await page.locator('#saved tr[data-saved-card]').count()).to.equal(1);
    expect(await page.locator('#saved-message').innerText()).to.match(
      /^The payment did not go through: CARD_EXPIRED: .* Reload the page for a new customer token\.$/,
    );
    expect((await getOrder(t, await orderShown('pending'))).payment).to.equal(null);
    await screenshot('saved-card-stale-token');
    // A reload makes a token good at the new time.
    await page.reload();
    await savedCardsShown(1);
    const row = page.locator('#saved tr[data-saved-card]');
    expect(await row.getAttribute('data-expired')).to.equal('true');
    expect(await row.innerText()).to.match(/visa •••• 4242\s+expiry 12\/\d{4} expired/);
    await row.locator('button.pay-saved').click();
    await page.waitForFunction(() =>
      document.getElementById('saved-message')!.textContent!.includes('CARD_EXPIRED'),
    );
    expect(await page.locator('#saved-message').innerText()).to.match(
      /^The payment did not go through: CARD_EXPIRED: .*\(card: /,
    );
    const unpaid = await orderShown('pending');
    expect((await getOrder(t, unpaid)).payment).to.equal(null);
    await screenshot('saved-card-expired');

    await row.locator('button.remove-saved').click();
    await savedCardsShown(0);
    expect(await cardsThroughApi()).to.deep.equal([]);
  });
});

/**
 * The demo shop of a kit that acts for several merchants (platform mode, issue 45): a picker of the
 * merchants, whose payment methods the form offers, and the order placed is for the one picked.
 */
describe('browser: the demo shop of a platform (a merchant picker)', function () {
  this.timeout(60_000);
  let browser: Browser | null;
  let t: TestKit;
  let page: Page;
  let problems: string[];
  let csp: Awaited<ReturnType<typeof watchCsp>>;
  const shots = mkdtempSync(join(tmpdir(), 'demo-shop-platform-screens-'));

  before(async function () {
    browser = await launchChromium(this);
    t = await startTestKit({ seed: platformSeed, env: { ...PLATFORM_ENV } });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });
  beforeEach(async () => {
    page = await browser!.newPage({ viewport: { width: 1200, height: 900 } });
    problems = [];
    csp = await watchCsp(page);
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  });
  afterEach(async () => {
    await page.close();
    expect([...problems, ...csp.list()]).to.deep.equal([]);
  });

  const screenshot = async (name: string) => {
    const path = join(shots, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    console.log(`      screenshot: ${path}`);
  };

  it('offers each merchant; a redirect payment for merchant 1004 placed through the picker is an order of 1004, paid', async () => {
    await page.goto(`${t.url}/`);
    const options = await page
      .locator('#merchant option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(options).to.deep.equal(LINKED.map(String));
    // The first merchant's methods as the page loads; 1004's once it is picked (it has paysafecard only).
    await page.waitForSelector('#methods [data-method="ideal"]');
    await page.selectOption('#merchant', '1004');
    await page.waitForFunction(
      () =>
        !document.querySelector('#methods [data-method="ideal"]') &&
        document.querySelector('#methods [data-method="psc"]'),
    );
    await page.fill('#amount', '25.00');
    await page.selectOption('#currency', 'EUR');
    await page.check('input[name="kind"][value="redirect"]');
    await page.selectOption('#method', 'psc');
    await page.fill('#country', 'DE');
    await screenshot('platform-picker-1004');
    const created = page.waitForResponse(
      (r) => r.url() === `${t.url}/orders` && r.request().method() === 'POST',
    );
    await page.click('#pay');
    const sent = (await created).request().postDataJSON() as { merchant_id?: number };
    expect(sent.merchant_id).to.equal(1004);
    await page.waitForURL(`${t.kit.gatewayUrl}/hosted/checkout/**`);
    await page.getByRole('button', { name: 'Pay', exact: true }).click();
    await page.waitForURL(`${t.url}/checkout/return?**`);
    expect(await page.getAttribute('[data-status]', 'data-status')).to.equal('paid');
    await page.getByRole('link', { name: 'Back to the shop' }).click();
    await page.waitForURL(`${t.url}/`);
    const panel = await page.waitForSelector('#order .order[data-status="paid"]', { timeout: 15_000 });
    expect(await panel.getAttribute('data-merchant-id')).to.equal('1004');
    const id = (await panel.getAttribute('data-order-id'))!;
    // The picker keeps the merchant the order was placed for.
    expect(await page.inputValue('#merchant')).to.equal('1004');
    expect(await page.locator('#order').innerText()).to.match(/Merchant\s+1004/);
    await screenshot('platform-paid-1004');
    const order = await getOrder(t, id);
    expect(order).to.include({ merchant_id: 1004, status: 'paid' });
    expect(order.payment).to.include({ kind: 'redirect', payment_method: 'psc' });
  });

  it("the signed-in customer's saved cards are each merchant's: a card saved at 1001 is listed there, and 1004's list is empty", async () => {
    await page.goto(`${t.url}/`);
    const saved = (count: number) =>
      page.waitForFunction(
        (n) => document.querySelector('#saved')?.getAttribute('data-count') === String(n),
        count,
      );
    await page.selectOption('#merchant', '1001');
    await saved(0);
    await page.fill('#amount', '9.99');
    await page.check('input[name="kind"][value="card"]');
    await page.selectOption('#card', '4242424242424242');
    await page.check('#save-card');
    const [listed] = await Promise.all([
      page.waitForRequest((r) => r.url().includes('/cards?merchant_id=1001') && r.method() === 'GET'),
      page.click('#pay'),
    ]);
    expect(listed.url()).to.contain('/customers/demo-customer/cards?merchant_id=1001');
    await saved(1);
    expect(await page.locator('#saved tr[data-saved-card]').innerText()).to.contain('visa •••• 4242');
    await screenshot('platform-saved-at-1001');
    // The same customer id at 1004 is another customer: none of 1001's cards, and no error.
    await page.selectOption('#merchant', '1004');
    await saved(0);
    expect(await page.locator('#saved-message').innerText()).to.not.match(/could not be read/);
    await screenshot('platform-none-at-1004');
  });
});
