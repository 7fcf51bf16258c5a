import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Script } from 'node:vm';
import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import { type Config, loadConfig } from '../../../src/config.js';
import { testCard } from '../../../src/gateway/domain/cards.js';
import { demoShopFor, renderDemoShop } from '../../../src/merchant/http/demo-shop.js';
import { groupDigits, TEST_CARDS, type TestCard } from '../../../src/merchant/http/demo-test-cards.js';
import { type LandingDeps, landingRoutes } from '../../../src/merchant/http/landing-routes.js';

/** The demo shop at `/`: outside production only; in production `/` stays the small page. */

const settings = { currencies: ['EUR', 'USD', 'GBP', 'JPY'], maxAmount: '1000000.00' };
const config = (env: Record<string, string>) => loadConfig(env, () => 'generated-token-0123456789');
const scriptOf = (html: string) => html.slice(html.indexOf('<script>') + 8, html.indexOf('</script>'));

describe('merchant: the demo shop (renderDemoShop)', () => {
  it('lists every test card: its number, what 3DS and the transaction do, and a choice in the form', () => {
    const html = renderDemoShop(settings);
    expect(TEST_CARDS).to.have.length(14);
    for (const card of TEST_CARDS) {
      expect(html).to.contain(`<td class="number">${groupDigits(card.number)}</td>`);
      expect(html).to.contain(`<tr data-card="${card.number}"`);
      expect(html).to.contain(`<option value="${card.number}">`);
      expect(html).to.contain(card.threeDs);
      expect(html).to.contain(card.transaction);
    }
    expect(html).to.contain('4242 4242 4242 4242: approved, no challenge');
    expect(html).to.contain('4000 0000 0000 3220: 3DS challenge, then approved');
  });

  it("agrees with the sandbox's rules for each card (sandbox.md section 4), without the kit importing them", () => {
    for (const card of TEST_CARDS) {
      const { threeDs, issuer } = testCard(card.number);
      if (threeDs.kind === 'error') expect(card.threeDs, card.number).to.contain(threeDs.code);
      else expect(card.threeDs, card.number).to.match(new RegExp(`^${threeDs.kind}`));
      if (issuer.kind === 'decline') {
        expect(card.transaction, card.number).to.contain(issuer.code);
        expect(card.outcome, card.number).to.match(/^declined/);
      } else {
        expect(card.transaction, card.number).to.match(/^approved/);
        expect(card.outcome, card.number).to.match(threeDs.kind === 'error' ? /^fails/ : /approved/);
      }
    }
  });

  it('offers the currencies the shop takes, and its maximum', () => {
    const html = renderDemoShop({ currencies: ['GBP', 'SEK'], maxAmount: '500.00' });
    expect(html).to.contain('<option value="GBP" selected>GBP</option><option value="SEK">SEK</option>');
    expect(html).to.contain('At most 500.00 in any currency.');
  });

  it('escapes every value it shows', () => {
    const hostile: TestCard = {
      number: '4242"><img src=x onerror=alert(1)>',
      threeDs: '<script>alert("3ds")</script>',
      transaction: "it's <b>approved</b> & done",
      outcome: '</option><script>alert(2)</script>',
    };
    const html = renderDemoShop({ currencies: ['<EUR>'], maxAmount: '"><i>1</i>' }, [hostile]);
    expect(html).to.not.contain('<img');
    expect(html).to.not.contain('<b>');
    expect(html).to.not.contain('<i>');
    expect(html).to.not.contain('<EUR>');
    expect(html).to.not.contain('alert("3ds")');
    expect(html).to.contain('&lt;script&gt;alert(&quot;3ds&quot;)&lt;/script&gt;');
    expect(html).to.contain('it&#39;s &lt;b&gt;approved&lt;/b&gt; &amp; done');
    expect(html).to.contain('&quot;&gt;&lt;i&gt;1&lt;/i&gt;');
    // The page's own script is the only script element, and closes once.
    expect(html.match(/<script/g)).to.have.length(1);
    expect(html.match(/<\/script/g)).to.have.length(1);
  });

  it('carries its script inline, valid JavaScript, and loads nothing from another address', () => {
    const html = renderDemoShop(settings);
    expect(() => new Script(scriptOf(html))).to.not.throw();
    expect(html).to.not.match(/\b(src|href)="(https?:)?\/\//);
    expect(html).to.not.match(/<(script|link)[^>]+src=/);
    // The statuses it waits on are the landing's (pending, requires_action).
    expect(scriptOf(html)).to.contain('"waiting":["pending","requires_action"]');
  });
});

describe('merchant: where `/` is the demo shop', () => {
  it('outside production: the demo shop, with the currencies and maximum of the configuration', () => {
    for (const env of ['development', 'test'] as const) {
      const c = config({ NODE_ENV: env, ORDER_CURRENCIES: 'EUR,GBP', ORDER_MAX_AMOUNT: '250.00' });
      expect(demoShopFor(c)).to.deep.equal({ currencies: ['EUR', 'GBP'], maxAmount: '250.00' });
    }
  });

  it('in production: none, so `/` stays the small page', () => {
    const c: Config = config({
      NODE_ENV: 'production',
      OPS_API_TOKEN: 'production-token-0123456789',
      APP_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
      GATEWAY_BASE_URL: 'https://gateway.example',
      GATEWAY_API_KEY: 'sk_live_0123456789',
    });
    expect(demoShopFor(c)).to.equal(null);
  });

  describe('the route', () => {
    let server: Server;
    const serve = async (demoShop: LandingDeps['demoShop']) => {
      const router = new Router();
      // `/` uses nothing else of the landing's dependencies.
      landingRoutes(router, { shopUrl: 'http://127.0.0.1/', demoShop } as LandingDeps);
      const app = new Koa();
      app.use(router.routes());
      server = createServer(app.callback());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      return { status: res.status, type: res.headers.get('content-type'), html: await res.text() };
    };
    afterEach(() => new Promise((resolve) => server.close(resolve)));

    it('with the demo shop set: the demo shop', async () => {
      const { status, type, html } = await serve(settings);
      expect(status).to.equal(200);
      expect(type).to.match(/^text\/html/);
      expect(html).to.contain('<title>Demo shop</title>');
    });

    for (const demoShop of [null, undefined]) {
      it(`without (${demoShop}): the small page, no form and no script`, async () => {
        const { status, html } = await serve(demoShop);
        expect(status).to.equal(200);
        expect(html).to.contain('Thank you for shopping with us');
        expect(html).to.not.contain('Demo shop');
        expect(html).to.not.contain('<form');
        expect(html).to.not.contain('<script');
      });
    }
  });
});
