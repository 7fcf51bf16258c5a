import { expect } from 'chai';
import { pino } from 'pino';
import { createGateway } from '../../../src/gateway/app.js';
import { parseSeed } from '../../../src/gateway/state/seed.js';
import { createMerchantApp } from '../../../src/merchant/http/app.js';
import { card, MERCHANT_KEY, testSeed } from '../../support/gateway.js';
import { OPS_TOKEN, PRODUCTION_ENV, pressButton, startTestKit, type TestKit } from '../../support/kit.js';
import { cspOf } from '../../support/security-headers.js';

/**
 * Every HTML page of the kit and of its sandbox, and their JSON and error answers, carry the security
 * headers (src/infra/security-headers.ts), read from real answers: the policy parsed into directives,
 * nosniff, no-referrer, DENY, and no HSTS over http.
 */

const KIT_POLICY = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'"],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'self'"],
  'frame-ancestors': ["'none'"],
  'form-action': ["'self'"],
};
/** The sandbox's hosted forms are answered with a 303 to the shop, another origin: no form-action. */
const { 'form-action': _, ...SANDBOX_POLICY } = KIT_POLICY;

interface Reply {
  status: number;
  headers: Headers;
  text: string;
}

async function request(url: string, init: RequestInit = {}): Promise<Reply> {
  const res = await fetch(url, { redirect: 'manual', ...init });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
const asBrowser = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
const form = (body: string, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { ...asBrowser, 'content-type': 'application/x-www-form-urlencoded', ...headers },
  body,
});

/** The headers every answer carries; `policy` for the app that sent it. */
function expectHeaders(reply: Reply, policy: Record<string, string[]>, what: string) {
  expect(cspOf(reply.headers), what).to.deep.equal(policy);
  expect(reply.headers.get('x-content-type-options'), what).to.equal('nosniff');
  expect(reply.headers.get('referrer-policy'), what).to.equal('no-referrer');
  expect(reply.headers.get('x-frame-options'), what).to.equal('DENY');
  // Both apps run on http here: no HSTS.
  expect(reply.headers.get('strict-transport-security'), what).to.equal(null);
}
/** An HTML page: its status and type, and the headers. */
function expectPage(reply: Reply, status: number, policy: Record<string, string[]>, what: string) {
  expect(reply.status, `${what}: ${reply.text.slice(0, 200)}`).to.equal(status);
  expect(reply.headers.get('content-type'), what).to.match(/^text\/html/);
  expectHeaders(reply, policy, what);
}
/** A JSON answer: nosniff above all (the same headers as every answer). */
function expectJson(reply: Reply, status: number, policy: Record<string, string[]>, what: string) {
  expect(reply.status, `${what}: ${reply.text.slice(0, 200)}`).to.equal(status);
  expect(reply.headers.get('content-type'), what).to.match(/^application\/json/);
  expectHeaders(reply, policy, what);
}

describe('security headers on every answer of the kit and of its sandbox', function () {
  this.timeout(60_000);
  let t: TestKit;
  let production: TestKit;
  let sandbox: string;

  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
    production = await startTestKit({
      env: { ROLES: 'api', ...PRODUCTION_ENV },
    });
    sandbox = t.kit.gatewayUrl;
  });
  after(async () => {
    await t?.close();
    await production?.close();
  });

  /** An order of the kit, paid by a card that asks for the 3DS challenge: the challenge page's URL. */
  const challengeOrder = async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });
    expect(created.status, created.text).to.equal(201);
    const pay = await t.call('POST', `/orders/${created.body.data.order.id}/pay/card`, {
      body: { card: card('4000000000003220'), mode: 'sale' },
    });
    expect(pay.status, pay.text).to.equal(200);
    return pay.body.data.next_action.url as string;
  };
  /** An order of the kit, paid by a redirect method: the hosted checkout page's URL. */
  const redirectOrder = async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });
    expect(created.status, created.text).to.equal(201);
    const pay = await t.call('POST', `/orders/${created.body.data.order.id}/pay/redirect`, {
      body: { payment_method: 'ideal', customer: { country_code: 'NL' } },
    });
    expect(pay.status, pay.text).to.equal(200);
    return pay.body.data.next_action.url as string;
  };

  describe('the kit', () => {
    it('/: the demo shop, its script file, and the production home page', async () => {
      const shop = await request(`${t.url}/`, { headers: asBrowser });
      expectPage(shop, 200, KIT_POLICY, 'GET / (demo shop)');
      expect(shop.text).to.contain('<title>Demo shop</title>');
      const src = /<script src="([^"]+)">/.exec(shop.text)?.[1];
      const script = await request(`${t.url}${src}`);
      expect(script.status).to.equal(200);
      expect(script.headers.get('content-type')).to.match(/^text\/javascript/);
      expectHeaders(script, KIT_POLICY, `GET ${src}`);
      const home = await request(`${production.url}/`, { headers: asBrowser });
      expectPage(home, 200, KIT_POLICY, 'GET / (production)');
      expect(home.text).to.contain('Thank you for shopping with us');
    });

    it('the checkout landings, found and not found', async () => {
      const challenge = await challengeOrder();
      const back = await pressButton(challenge, 'authenticate');
      expect(new URL(back).pathname).to.equal('/checkout/3ds-return');
      expectPage(await request(back, { headers: asBrowser }), 200, KIT_POLICY, 'GET /checkout/3ds-return');
      const unknown = `${t.url}/checkout/3ds-return?card_verification_id=tds_unknown`;
      expectPage(
        await request(unknown, { headers: asBrowser }),
        404,
        KIT_POLICY,
        'GET /checkout/3ds-return (unknown)',
      );
      for (const [button, landing] of [
        ['pay', 'return'],
        ['cancel', 'cancel'],
      ] as const) {
        const returned = await pressButton(await redirectOrder(), button);
        expect(new URL(returned).pathname).to.equal(`/checkout/${landing}`);
        expectPage(
          await request(returned, { headers: asBrowser }),
          200,
          KIT_POLICY,
          `GET /checkout/${landing}`,
        );
        const none = `${t.url}/checkout/${landing}?payment_session_id=ps_unknown`;
        expectPage(
          await request(none, { headers: asBrowser }),
          404,
          KIT_POLICY,
          `GET /checkout/${landing} (unknown)`,
        );
      }
    });

    it('the operator sign-in, a refused one (401), and the queue board once signed in', async () => {
      expectPage(
        await request(`${t.url}/ops/login`, { headers: asBrowser }),
        200,
        KIT_POLICY,
        'GET /ops/login',
      );
      const refused = await request(`${t.url}/ops/login`, form('token=not-the-token'));
      expectPage(refused, 401, KIT_POLICY, 'POST /ops/login (refused)');
      const away = await request(`${t.url}/ops/queues`, { headers: asBrowser });
      expect(away.status).to.equal(302);
      expectHeaders(away, KIT_POLICY, 'GET /ops/queues (signed out: to the sign-in)');
      const signedIn = await request(`${t.url}/ops/login`, form(`token=${OPS_TOKEN}`));
      expect(signedIn.status).to.equal(303);
      expectHeaders(signedIn, KIT_POLICY, 'POST /ops/login (signed in)');
      const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
      const board = await request(`${t.url}/ops/queues`, { headers: { ...asBrowser, cookie } });
      expectPage(board, 200, KIT_POLICY, 'GET /ops/queues (bull-board)');
      expect(board.text).to.contain('<base href="/ops/queues/"');
      // bull-board's own files and API answers: the right type (nosniff holds the browser to it).
      const js = /<script defer src="([^"]+\.js)"/.exec(board.text)![1]!;
      const file = await request(`${t.url}/ops/queues/${js}`, { headers: { cookie } });
      expect(file.status).to.equal(200);
      expect(file.headers.get('content-type')).to.match(/javascript/);
      expectHeaders(file, KIT_POLICY, `GET /ops/queues/${js}`);
      const api = await request(`${t.url}/ops/queues/api/queues`, { headers: { cookie } });
      expectJson(api, 200, KIT_POLICY, 'GET /ops/queues/api/queues');
    });

    it('/docs and its files', async () => {
      expectPage(await request(`${t.url}/docs`, { headers: asBrowser }), 200, KIT_POLICY, 'GET /docs');
      const start = await request(`${t.url}/docs/assets/start.js`);
      expect(start.headers.get('content-type')).to.match(/javascript/);
      expectHeaders(start, KIT_POLICY, 'GET /docs/assets/start.js');
    });

    it('JSON answers: a success, a 404 and a 401 (the API and the queue board)', async () => {
      expectJson(await request(`${t.url}/healthz`), 200, KIT_POLICY, 'GET /healthz');
      expectJson(await request(`${t.url}/openapi.json`), 200, KIT_POLICY, 'GET /openapi.json');
      expectJson(await request(`${t.url}/no-such-route`), 404, KIT_POLICY, 'GET /no-such-route');
      expectJson(await request(`${t.url}/orders`), 401, KIT_POLICY, 'GET /orders (no token)');
      const board = await request(`${t.url}/ops/queues/api/queues`, {
        headers: { accept: 'application/json' },
      });
      expectJson(board, 401, KIT_POLICY, 'GET /ops/queues/api/queues (no token)');
    });
  });

  describe('the sandbox', () => {
    it('the hosted 3DS challenge: the page, its answer to a press, and the page once decided', async () => {
      const challenge = await challengeOrder();
      expect(challenge.startsWith(`${sandbox}/hosted/3ds/`)).to.equal(true);
      expectPage(
        await request(challenge, { headers: asBrowser }),
        200,
        SANDBOX_POLICY,
        'GET /hosted/3ds/:id',
      );
      const pressed = await request(challenge, form('action=authenticate'));
      expect(pressed.status).to.equal(303);
      expectHeaders(pressed, SANDBOX_POLICY, 'POST /hosted/3ds/:id');
      expectPage(
        await request(challenge, { headers: asBrowser }),
        200,
        SANDBOX_POLICY,
        'GET /hosted/3ds/:id (decided)',
      );
    });

    it('the hosted checkout: the page, its answer to a press, and the page once decided', async () => {
      const page = await redirectOrder();
      expect(page.startsWith(`${sandbox}/hosted/checkout/`)).to.equal(true);
      expectPage(
        await request(page, { headers: asBrowser }),
        200,
        SANDBOX_POLICY,
        'GET /hosted/checkout/:id',
      );
      const pressed = await request(page, form('action=pay'));
      expect(pressed.status).to.equal(303);
      expectHeaders(pressed, SANDBOX_POLICY, 'POST /hosted/checkout/:id');
      expectPage(
        await request(page, { headers: asBrowser }),
        200,
        SANDBOX_POLICY,
        'GET /hosted/checkout/:id (decided)',
      );
    });

    it("the hosted pages' errors: an unknown page (404) and an unknown button (422)", async () => {
      for (const path of ['/hosted/3ds/tds_unknown', '/hosted/checkout/ps_unknown'])
        expectJson(
          await request(`${sandbox}${path}`, { headers: asBrowser }),
          404,
          SANDBOX_POLICY,
          `GET ${path}`,
        );
      const page = await redirectOrder();
      expectJson(
        await request(page, form('action=dance')),
        422,
        SANDBOX_POLICY,
        'POST /hosted/checkout/:id (unknown)',
      );
    });

    it('/docs, and JSON answers: a success, a 404 and a 401', async () => {
      expectPage(
        await request(`${sandbox}/docs`, { headers: asBrowser }),
        200,
        SANDBOX_POLICY,
        'GET /docs (sandbox)',
      );
      const methods = await request(`${sandbox}/api/v1/payment-methods?currency=EUR&country_code=NL`, {
        headers: { authorization: `Bearer ${MERCHANT_KEY}` },
      });
      expectJson(methods, 200, SANDBOX_POLICY, 'GET /api/v1/payment-methods');
      expectJson(
        await request(`${sandbox}/no-such-route`),
        404,
        SANDBOX_POLICY,
        'GET /no-such-route (sandbox)',
      );
      expectJson(
        await request(`${sandbox}/api/v1/payment-methods`),
        401,
        SANDBOX_POLICY,
        'GET /api/v1/payment-methods (no key)',
      );
    });
  });

  describe('HSTS: only where the public URL is https', () => {
    it("the kit's PUBLIC_BASE_URL and the sandbox's public origin", async () => {
      const kit = createMerchantApp({
        logger: pino({ level: 'silent' }),
        readiness: [],
        receiver: async () => {},
        queues: [],
        metrics: { text: async () => '', contentType: 'text/plain', token: null },
        store: {},
        publicBaseUrl: 'https://pay.shop.example',
      } as unknown as Parameters<typeof createMerchantApp>[0]);
      const gateway = createGateway({
        seed: parseSeed(testSeed()),
        publicBaseUrl: 'https://sandbox.example',
      });
      for (const app of [kit, gateway.app]) {
        const server = app.listen(0, '127.0.0.1');
        await new Promise((resolve) => server.once('listening', resolve));
        try {
          const { port } = server.address() as { port: number };
          const reply = await request(`http://127.0.0.1:${port}/docs`);
          expect(reply.headers.get('strict-transport-security')).to.equal(
            'max-age=31536000; includeSubDomains',
          );
        } finally {
          await new Promise((resolve) => server.close(resolve));
        }
      }
    });
  });
});
