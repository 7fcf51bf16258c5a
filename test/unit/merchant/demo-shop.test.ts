import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';
import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import { ownAccount } from '../../../src/client/merchant-gateways.js';
import { type Config, loadConfig } from '../../../src/config.js';
import { testCard } from '../../../src/gateway/domain/cards.js';
import { CustomerTokens } from '../../../src/merchant/customers/customer-token.js';
import {
  DEMO_CUSTOMER_ID,
  type DemoCustomer,
  type DemoShop,
  demoShopFor,
  demoShopOf,
  renderDemoShop,
} from '../../../src/merchant/http/demo-shop.js';
import { demoShopScript, loadDemoShopScript } from '../../../src/merchant/http/demo-shop-script.js';
import { groupDigits, TEST_CARDS, type TestCard } from '../../../src/merchant/http/demo-test-cards.js';
import { type LandingDeps, landingRoutes } from '../../../src/merchant/http/landing-routes.js';

/** The demo shop at `/`: outside production only; in production `/` stays the small page. */

const settings = { currencies: ['EUR', 'USD', 'GBP', 'JPY'], maxAmount: '1000000.00' };
/** The shop with its script, bundled from its sources once for the process (as a kit does as it starts). */
let shop: DemoShop;
const withScript = async () => {
  shop = { ...settings, script: await demoShopScript() };
};
const customer: DemoCustomer = {
  id: DEMO_CUSTOMER_ID,
  token: 'ct1.1795000000.c2lnbmF0dXJl',
  expiresAt: new Date('2026-11-01T13:00:00Z'),
  tokens: {},
};
const config = (env: Record<string, string>) => loadConfig(env, () => 'generated-token-0123456789');
const SETTINGS_ELEMENT = '<script type="application/json" id="demo-settings">';
/** The text of the page's settings element, as the HTML parser ends it: at the first `</script`. */
const settingsTextOf = (html: string) => {
  const start = html.indexOf(SETTINGS_ELEMENT) + SETTINGS_ELEMENT.length;
  return html.slice(start, html.toLowerCase().indexOf('</script', start));
};
/** The settings the page's script starts from, as the script reads them (JSON.parse of the element's text). */
const settingsOf = (html: string) => JSON.parse(settingsTextOf(html));
/** The page's script elements, in order: the settings (data) and the script file of the kit's. */
const scriptTagsOf = (html: string) => html.match(/<script[^>]*>/g) ?? [];
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('merchant: the demo shop (renderDemoShop)', () => {
  before(withScript);

  it('lists every test card: its number, what 3DS and the transaction do, and a choice in the form', () => {
    const html = renderDemoShop(shop, customer);
    expect(TEST_CARDS).to.have.length(15);
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
    const html = renderDemoShop(
      { currencies: ['GBP', 'SEK'], maxAmount: '500.00', script: shop.script },
      customer,
    );
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
    const html = renderDemoShop(
      { currencies: ['<EUR>'], maxAmount: '"><i>1</i>', script: shop.script },
      customer,
      [hostile],
    );
    expect(html).to.not.contain('<img');
    expect(html).to.not.contain('<b>');
    expect(html).to.not.contain('<i>');
    expect(html).to.not.contain('<EUR>');
    expect(html).to.not.contain('alert("3ds")');
    expect(html).to.contain('&lt;script&gt;alert(&quot;3ds&quot;)&lt;/script&gt;');
    expect(html).to.contain('it&#39;s &lt;b&gt;approved&lt;/b&gt; &amp; done');
    expect(html).to.contain('&quot;&gt;&lt;i&gt;1&lt;/i&gt;');
    // The page's own two script elements are the only ones, and each closes once.
    expect(html.match(/<script/g)).to.have.length(2);
    expect(html.match(/<\/script/g)).to.have.length(2);
  });

  it('has no inline script: its settings are data, its script a file of the kit (a constant, valid JavaScript)', () => {
    const html = renderDemoShop(shop, customer);
    const [data, file, ...others] = scriptTagsOf(html);
    expect(others).to.deep.equal([]);
    expect(data).to.equal(SETTINGS_ELEMENT);
    // Named by its content's hash: another script is another URL.
    expect(file).to.equal(`<script src="/assets/demo-shop.js?v=${shop.script.version}">`);
    expect(shop.script.version).to.equal(sha256(shop.script.source).slice(0, 16));
    // One classic script (the modules bundled into one function's scope), reading its settings as data.
    expect(() => new Script(shop.script.source)).to.not.throw();
    expect(shop.script.source).to.match(/^"use strict";\n\(\(\) => \{\n/);
    expect(shop.script.source).to.contain('JSON.parse(\n    document.getElementById("demo-settings")');
    expect(shop.script.source).to.not.match(/\b(eval|Function)\(|\bimport\(/);
    expect(html).to.not.match(/\b(src|href)="(https?:)?\/\//);
    expect(html).to.not.match(/<link[^>]+src=/);
    // The statuses it waits on are the landing's (pending, requires_action).
    expect(settingsOf(html).waiting).to.deep.equal(['pending', 'requires_action']);
  });

  it("acts for its signed-in customer: the id shown, and the token in the script's settings with its header", () => {
    const html = renderDemoShop(shop, customer);
    expect(html).to.contain('Signed in as <code id="customer-id">demo-customer</code>');
    expect(html).to.contain('<code>GET /customers/demo-customer/cards</code>');
    expect(html).to.contain('<input type="checkbox" id="save-card"> Save this card for next time');
    expect(settingsOf(html)).to.deep.include({
      customer: {
        id: 'demo-customer',
        token: customer.token,
        tokens: {},
        expires_at: '2026-11-01T13:00:00.000Z',
      },
      tokenHeader: 'Customer-Token',
      secretHeader: 'Order-Secret',
    });
  });

  it("escapes the customer id and the token it embeds, in the markup and in the script's settings", () => {
    const hostile: DemoCustomer = {
      id: '</script><script>alert("id")</script><b>',
      token: 'ct1.</script><script>alert(1)</script><!--',
      expiresAt: new Date('2026-11-01T13:00:00Z'),
      tokens: { 1004: 'ct1.</script><script>alert(2)</script>' },
    };
    const html = renderDemoShop(shop, hostile);
    expect(html).to.not.contain('<b>');
    expect(html).to.not.contain('<img');
    expect(html).to.not.contain('alert("id")');
    expect(html).to.contain(
      'Signed in as <code id="customer-id">&lt;/script&gt;&lt;script&gt;alert(&quot;id&quot;)',
    );
    expect(html).to.contain(
      '/customers/%3C%2Fscript%3E%3Cscript%3Ealert(%22id%22)%3C%2Fscript%3E%3Cb%3E/cards',
    );
    expect(html).to.not.contain('alert(1)</script>');
    // The page's own two script elements are the only ones, each closes once, and the settings are
    // data: no "<" in them, so nothing inside can end the element or start another...
    expect(scriptTagsOf(html)).to.have.length(2);
    expect(html.match(/<\/script/g)).to.have.length(2);
    expect(settingsTextOf(html)).to.not.contain('<');
    // ...and hand the script the id and token exactly as they were.
    expect(settingsOf(html).customer).to.deep.equal({
      id: hostile.id,
      token: hostile.token,
      tokens: hostile.tokens,
      expires_at: '2026-11-01T13:00:00.000Z',
    });
  });
});

describe('merchant: the demo shop of a platform (several merchants)', () => {
  before(withScript);

  it('a kit of several merchants: a picker of them first in the form, and the list in the script settings', () => {
    const html = renderDemoShop({ ...shop, merchants: [1001, 1004] }, customer);
    expect(html).to.contain(
      '<label>Merchant <select id="merchant" name="merchant"><option value="1001" selected>Merchant 1001</option><option value="1004">Merchant 1004</option></select></label>',
    );
    expect(html.indexOf('id="merchant"')).to.be.below(html.indexOf('id="amount"'));
    expect(settingsOf(html).merchants).to.deep.equal([1001, 1004]);
  });

  it('one merchant: no picker, as ever', () => {
    for (const merchants of [undefined, [1001]]) {
      const html = renderDemoShop({ ...shop, ...(merchants ? { merchants } : {}) }, customer);
      expect(html).to.not.contain('id="merchant"');
      expect(settingsOf(html).merchants).to.deep.equal([]);
    }
  });

  it('demoShopFor: the merchants when GATEWAY_MERCHANTS lists several; nothing more for one', () => {
    const several = config({ NODE_ENV: 'development', GATEWAY_MERCHANTS: '1001,1004' });
    expect(demoShopFor(several)?.merchants).to.deep.equal([1001, 1004]);
    const one = config({ NODE_ENV: 'development', GATEWAY_MERCHANTS: '1001' });
    expect(demoShopFor(one)).to.not.have.property('merchants');
  });
});

describe('merchant: where `/` is the demo shop', () => {
  before(withScript);

  it('outside production: the demo shop, with the currencies and maximum of the configuration', () => {
    for (const env of ['development', 'test'] as const) {
      const c = config({ NODE_ENV: env, ORDER_CURRENCIES: 'EUR,GBP', ORDER_MAX_AMOUNT: '250.00' });
      expect(demoShopFor(c)).to.deep.equal({ currencies: ['EUR', 'GBP'], maxAmount: '250.00' });
    }
  });

  it('outside production, as the kit starts: the demo shop with its script, loaded once for the process', async () => {
    const c = config({ NODE_ENV: 'development', ORDER_CURRENCIES: 'EUR', ORDER_MAX_AMOUNT: '250.00' });
    const started = await demoShopOf(c);
    expect(started).to.deep.equal({ currencies: ['EUR'], maxAmount: '250.00', script: shop.script });
    expect(started!.script).to.equal(shop.script);
  });

  it('in production: none, so `/` stays the small page', () => {
    const c: Config = config({
      NODE_ENV: 'production',
      OPS_API_TOKEN: 'production-token-0123456789abcdefgh',
      APP_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
      METRICS_TOKEN: 'a-metrics-token-0123456789',
      GATEWAY_BASE_URL: 'https://gateway.example',
      GATEWAY_API_KEY: 'sk_live_0123456789',
    });
    expect(demoShopFor(c)).to.equal(null);
  });

  describe("the script's file (demo-shop-script.ts)", () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'demo-shop-script-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));
    const url = (name: string) => pathToFileURL(join(dir, name));

    it('from a checkout: bundled from its sources, the same bundle wherever it is loaded from', async () => {
      const again = await loadDemoShopScript({ bundle: url('none.js') });
      expect(again).to.deep.equal(shop.script);
      expect(again.source).to.contain('// main.ts');
      expect(again.source).to.not.contain('src/merchant');
    });

    it('from a build (no sources beside it): the bundle npm run build wrote, as it is', async () => {
      writeFileSync(join(dir, 'demo-shop-script.bundle.js'), 'console.log("built");\n');
      const built = await loadDemoShopScript({
        sources: url('sources/'),
        bundle: url('demo-shop-script.bundle.js'),
      });
      expect(built).to.deep.equal({
        source: 'console.log("built");\n',
        version: sha256('console.log("built");\n').slice(0, 16),
      });
    });

    it('with neither: an error naming both places', async () => {
      const missing = await loadDemoShopScript({ sources: url('sources/'), bundle: url('missing.js') }).then(
        () => null,
        (error: Error) => error.message,
      );
      expect(missing).to.contain("The demo shop's script is missing");
      expect(missing).to.contain(join(dir, 'sources'));
      expect(missing).to.contain(join(dir, 'missing.js'));
    });
  });

  describe('the route', () => {
    let servers: Server[] = [];
    const serve = async (demoShop: LandingDeps['demoShop'], path = '/') => {
      const router = new Router();
      // `/` uses nothing else of the landing's dependencies: the demo shop, a customer token for its
      // customer (one merchant's: the gateways say which merchants there are).
      const customerTokens = new CustomerTokens(Buffer.alloc(32, 7));
      const clock = { now: () => Date.now() };
      const gateways = ownAccount(null, 1001);
      landingRoutes(router, {
        shopUrl: 'http://127.0.0.1/',
        demoShop,
        customerTokens,
        clock,
        gateways,
      } as unknown as LandingDeps);
      const app = new Koa();
      app.use(router.routes());
      const server = createServer(app.callback());
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
      const type = res.headers.get('content-type');
      return { status: res.status, type, cache: res.headers.get('cache-control'), html: await res.text() };
    };
    afterEach(async () => {
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      servers = [];
    });

    it('with the demo shop set: the demo shop, with a token of an hour good for the demo customer alone', async () => {
      const { status, type, html } = await serve(shop);
      expect(status).to.equal(200);
      expect(type).to.match(/^text\/html/);
      expect(html).to.contain('<title>Demo shop</title>');
      const { id, token, expires_at } = settingsOf(html).customer;
      expect(id).to.equal('demo-customer');
      const tokens = new CustomerTokens(Buffer.alloc(32, 7));
      expect(tokens.verify('demo-customer', token, Date.now())).to.equal(true);
      expect(tokens.verify('another-customer', token, Date.now())).to.equal(false);
      expect(Date.parse(expires_at) - Date.now()).to.be.within(59 * 60_000, 60 * 60_000);
    });

    it('with the demo shop set: the script the page names, as JavaScript that a browser may keep', async () => {
      const src = /<script src="([^"]+)">/.exec((await serve(shop)).html)![1]!;
      const { status, type, cache, html } = await serve(shop, src);
      expect(status).to.equal(200);
      expect(type).to.match(/^text\/javascript/);
      expect(cache).to.equal('public, max-age=86400');
      expect(html).to.equal(shop.script.source);
    });

    for (const demoShop of [null, undefined]) {
      it(`without (${demoShop}): the small page, no form and no script`, async () => {
        const { status, html } = await serve(demoShop);
        expect(status).to.equal(200);
        expect(html).to.contain('Thank you for shopping with us');
        expect(html).to.not.contain('Demo shop');
        expect(html).to.not.contain('<form');
        expect(html).to.not.contain('<script');
        expect((await serve(demoShop, '/assets/demo-shop.js')).status).to.equal(404);
      });
    }
  });
});
