import { expect } from 'chai';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { getOrder, landingStatus, pressButton, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * issue 8, part 4: the landings show the truth, in words. Before rendering an order still being
 * confirmed, a landing asks the gateway (a `poll` observation through the one apply path), then
 * reloads itself until the status is final or a cap is reached. The kit runs the api role only and
 * the sandbox is never ticked, so no webhook moves an order here: only the landing's poll does.
 */

const SHOP_URL = 'https://shop.example/basket?from=checkout&lang=en';
const CHALLENGE = '4000000000003220';

describe('merchant: the checkout landings ask the gateway before they render', function () {
  this.timeout(30_000);
  let t: TestKit;
  /** While set, every status read the kit sends to the gateway fails (the connection drops). */
  let gatewayDown = false;

  before(async () => {
    t = await startTestKit({
      env: { ROLES: 'api', SHOP_URL },
      clientDeps: {
        fetch: async (input, init) => {
          const reading =
            (init?.method ?? 'GET') === 'GET' && /\/(payment-sessions\/|status$)/.test(String(input));
          if (gatewayDown && reading) throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
          return fetch(input, init);
        },
      },
    });
  });
  after(async () => {
    await t?.close();
  });
  afterEach(() => {
    gatewayDown = false;
  });

  const landing = async (url: string) => {
    const res = await fetch(url, { redirect: 'manual' });
    return { status: res.status, html: await res.text(), cache: res.headers.get('cache-control') };
  };
  const headline = (html: string) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1];
  const metaRefresh = (html: string) => /<meta http-equiv="refresh" content="([^"]*)">/.exec(html)?.[1];
  const historyOf = async (id: string) =>
    (await getOrder(t, id)).history as {
      source: string;
      source_id: string;
      outcome: string;
      status_after: string;
    }[];

  /** An order and its redirect payment: the hosted checkout page and its session id. */
  const startRedirect = async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });
    expect(created.status, created.text).to.equal(201);
    const order = created.body.data.order as { id: string; reference: string };
    const pay = await t.call('POST', `/orders/${order.id}/pay/redirect`, {
      body: { payment_method: 'ideal', customer: { country_code: 'NL' } },
    });
    expect(pay.status, pay.text).to.equal(200);
    expect(pay.body.data.order.status).to.equal('requires_action');
    const pageUrl = pay.body.data.next_action.url as string;
    return { order, pageUrl, sessionId: pageUrl.split('/').pop()! };
  };

  const settle = async (sessionId: string, outcome: 'paid' | 'failed' | 'cancelled') => {
    const res = await fetch(`${t.kit.gatewayUrl}/sandbox/payment-sessions/${sessionId}/settle`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ outcome }),
    });
    expect(res.status, await res.text()).to.equal(200);
  };

  it('after Pay, the return landing shows paid on its first render, without a tick, and stops reloading', async () => {
    const { order, pageUrl } = await startRedirect();
    const back = await pressButton(pageUrl, 'pay');
    expect(back.startsWith(`${t.kit.publicBaseUrl}/checkout/return?`), back).to.equal(true);
    const page = await landing(back);
    expect(page.status).to.equal(200);
    expect(landingStatus(page.html)).to.equal('paid');
    expect(headline(page.html)).to.equal('Thank you: your payment was received');
    expect(page.html).to.not.contain('being confirmed');
    expect(page.html).to.contain(order.reference);
    expect(page.html).to.contain('12.34 EUR');
    expect(metaRefresh(page.html), 'a final status does not reload').to.equal(undefined);
    expect(page.cache).to.equal('no-store');
    expect((await getOrder(t, order.id)).status).to.equal('paid');

    // The order's history says where the news came from: the landing's poll, applied.
    const polls = (await historyOf(order.id)).filter((h) => h.source === 'poll');
    expect(polls).to.have.length(1);
    expect(polls[0]).to.include({ outcome: 'applied', status_after: 'paid' });
    expect(polls[0]!.source_id).to.match(/^poll:att_[A-Za-z0-9]+:\d+$/);

    // A reload of a paid order asks the gateway nothing more.
    expect(landingStatus((await landing(back)).html)).to.equal('paid');
    expect((await historyOf(order.id)).filter((h) => h.source === 'poll')).to.have.length(1);
  });

  it('after Cancel, the cancel landing shows cancelled, with no money taken', async () => {
    const { order, pageUrl } = await startRedirect();
    const back = await pressButton(pageUrl, 'cancel');
    expect(back.startsWith(`${t.kit.publicBaseUrl}/checkout/cancel?`), back).to.equal(true);
    const page = await landing(back);
    expect(page.status).to.equal(200);
    expect(landingStatus(page.html)).to.equal('cancelled');
    expect(headline(page.html)).to.equal('Your payment was cancelled');
    expect(page.html).to.contain('No money was taken');
    expect(metaRefresh(page.html)).to.equal(undefined);
    expect((await getOrder(t, order.id)).status).to.equal('cancelled');
  });

  it('after Fail, the return landing says the payment did not go through, no money was taken, try again', async () => {
    const { order, pageUrl } = await startRedirect();
    const page = await landing(await pressButton(pageUrl, 'fail'));
    expect(landingStatus(page.html)).to.equal('failed');
    expect(page.html).to.contain('No money was taken');
    expect(page.html).to.contain('try again');
    expect((await getOrder(t, order.id)).status).to.equal('failed');
  });

  it('after Pending, the landing reloads itself, keeping the session id; at the cap it stops and says it takes longer', async () => {
    const { order, pageUrl, sessionId } = await startRedirect();
    const back = await pressButton(pageUrl, 'pending');
    const first = await landing(back);
    expect(first.status).to.equal(200);
    expect(landingStatus(first.html)).to.equal('requires_action');
    expect(first.html).to.not.contain('requires_action<');
    expect(first.html).to.not.contain('Status:');
    expect(metaRefresh(first.html)).to.equal(`3;url=?payment_session_id=${sessionId}&amp;n=1`);

    const third = await landing(`${t.kit.publicBaseUrl}/checkout/return?payment_session_id=${sessionId}&n=3`);
    expect(metaRefresh(third.html)).to.equal(`3;url=?payment_session_id=${sessionId}&amp;n=4`);

    const capped = await landing(
      `${t.kit.publicBaseUrl}/checkout/return?payment_session_id=${sessionId}&n=10`,
    );
    expect(capped.status).to.equal(200);
    expect(landingStatus(capped.html)).to.equal('requires_action');
    expect(metaRefresh(capped.html), 'no reload after the cap').to.equal(undefined);
    expect(capped.html).to.contain('taking longer than usual');
    expect(capped.html).to.contain('we will tell you by email');
    expect(capped.html).to.contain('close this page');

    // Each look asked the gateway and learnt nothing new: a look that changes nothing leaves no line.
    const polls = (await historyOf(order.id)).filter((h) => h.source === 'poll');
    expect(polls).to.deep.equal([]);

    // The provider confirms later: the next reload shows it.
    await settle(sessionId, 'paid');
    const next = await landing(`${t.kit.publicBaseUrl}/checkout/return?payment_session_id=${sessionId}&n=4`);
    expect(landingStatus(next.html)).to.equal('paid');
    expect(metaRefresh(next.html)).to.equal(undefined);
  });

  it('a session that times out at the gateway shows expired, in words', async () => {
    const { order, sessionId } = await startRedirect();
    t.sandboxClock.advance(16 * 60_000);
    const page = await landing(`${t.kit.publicBaseUrl}/checkout/return?payment_session_id=${sessionId}`);
    expect(landingStatus(page.html)).to.equal('expired');
    expect(headline(page.html)).to.equal('Your payment was not completed in time');
    expect((await getOrder(t, order.id)).status).to.equal('expired');
  });

  it('the browser still decides nothing: a forged status=paid on an unpaid session shows the gateway’s truth', async () => {
    const { order, sessionId } = await startRedirect();
    const forged = `${t.kit.publicBaseUrl}/checkout/return?payment_session_id=${sessionId}&reference=${encodeURIComponent(order.reference)}&status=paid`;
    const page = await landing(forged);
    expect(landingStatus(page.html)).to.equal('requires_action');
    expect(metaRefresh(page.html), 'the reload drops the forged query').to.equal(
      `3;url=?payment_session_id=${sessionId}&amp;n=1`,
    );
    expect((await getOrder(t, order.id)).status).to.equal('requires_action');
  });

  it('a gateway error during the poll still renders 200 with the stored status, and logs a warning naming the order', async () => {
    const { order, pageUrl } = await startRedirect();
    const back = await pressButton(pageUrl, 'pay');
    gatewayDown = true;
    const page = await landing(back);
    expect(page.status).to.equal(200);
    expect(landingStatus(page.html)).to.equal('requires_action');
    expect(metaRefresh(page.html)).to.contain('n=1');
    const warning = t.logs.find((l) => l.includes('status poll failed') && l.includes(order.id));
    expect(warning, 'a warning names the order').to.not.equal(undefined);
    expect(JSON.parse(warning!).level).to.equal(40);
    expect((await getOrder(t, order.id)).status).to.equal('requires_action');

    gatewayDown = false;
    expect(landingStatus((await landing(back)).html)).to.equal('paid');
  });

  it('the 3DS return pays once, shows paid, and a reload (the page’s own refresh) does not pay again', async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });
    const order = created.body.data.order as { id: string; reference: string };
    const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
      body: { card: card(CHALLENGE), mode: 'sale' },
    });
    expect(pay.status, pay.text).to.equal(200);
    const back = await pressButton(pay.body.data.next_action.url, 'authenticate');
    expect(back.startsWith(`${t.kit.publicBaseUrl}/checkout/3ds-return?`), back).to.equal(true);
    const page = await landing(back);
    expect(page.status).to.equal(200);
    expect(landingStatus(page.html)).to.equal('paid');
    expect(headline(page.html)).to.equal('Thank you: your payment was received');
    const verification = new URL(back).searchParams.get('card_verification_id')!;
    const reload = await landing(
      `${t.kit.publicBaseUrl}/checkout/3ds-return?card_verification_id=${verification}&n=1`,
    );
    expect(landingStatus(reload.html)).to.equal('paid');
    const charged = [...t.kit.sandbox!.deps.state.transactions.values()].filter(
      (x) => x.reference === order.reference,
    );
    expect(charged).to.have.length(1);
    expect(page.html + reload.html).to.not.contain(CHALLENGE);
  });

  it('links back to the shop: SHOP_URL, escaped', async () => {
    const { pageUrl } = await startRedirect();
    const page = await landing(await pressButton(pageUrl, 'pay'));
    expect(page.html).to.contain(
      '<a href="https://shop.example/basket?from=checkout&amp;lang=en">Back to the shop</a>',
    );
  });

  it('an unknown session or verification id is a 404 page in words, with no reload and no status', async () => {
    for (const path of [
      '/checkout/return?payment_session_id=ps_000000000000000000000000&status=paid',
      '/checkout/cancel?payment_session_id=ps_000000000000000000000000',
      '/checkout/return',
      '/checkout/3ds-return?card_verification_id=tds_nope',
      '/checkout/3ds-return',
    ]) {
      const page = await landing(t.url + path);
      expect(page.status, path).to.equal(404);
      expect(page.html, path).to.contain('We could not find this payment');
      expect(page.html, path).to.not.contain('data-status=');
      expect(metaRefresh(page.html), path).to.equal(undefined);
      expect(page.html, path).to.contain('Back to the shop');
      expect(page.html, path).to.not.match(/<script/i);
    }
  });
});
