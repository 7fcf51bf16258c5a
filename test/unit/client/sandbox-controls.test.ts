import { expect } from 'chai';
import { GatewayError, GatewayNetworkError } from '../../../src/client/errors.js';
import { SandboxControls } from '../../../src/client/sandbox-controls.js';
import { gatewayApi } from '../../../src/gateway/http/api-document.js';
import { apiDocument } from '../../../src/shared/api-document.js';

/** The sandbox controls' client over an injected fetch: what it sends, what it reads, what it refuses. */
describe('client: the sandbox controls', () => {
  const sent: { url: string; method: string; auth: string | null; body: string | null }[] = [];
  const answering =
    (answer: () => Response | Promise<Response>): typeof fetch =>
    async (input, init) => {
      const headers = new Headers(init?.headers);
      sent.push({
        url: String(input),
        method: init?.method ?? 'GET',
        auth: headers.get('authorization'),
        body: typeof init?.body === 'string' ? init.body : null,
      });
      return answer();
    };
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const controls = (fetcher: typeof fetch) =>
    new SandboxControls({
      baseUrl: 'http://gw.test/',
      apiKey: 'sk_test_merchant_1001',
      deps: { fetch: fetcher, sleep: async () => {} },
    });
  beforeEach(() => {
    sent.length = 0;
  });

  describe('probe', () => {
    it("the sandbox's own API document: a sandbox; read with a GET that carries no key", async () => {
      const document = apiDocument(gatewayApi);
      expect(await controls(answering(() => json(200, document))).probe()).to.deep.equal({ sandbox: true });
      expect(sent).to.deep.equal([
        { url: 'http://gw.test/openapi.json', method: 'GET', auth: null, body: null },
      ]);
    });

    it('a document without the sandbox-only controls, or with /sandbox paths not marked so: not a sandbox', async () => {
      const document = apiDocument(gatewayApi) as { paths: Record<string, unknown> };
      const real = {
        ...document,
        paths: Object.fromEntries(Object.entries(document.paths).filter(([p]) => !p.startsWith('/sandbox/'))),
      };
      expect(await controls(answering(() => json(200, real))).probe()).to.deep.equal({
        sandbox: false,
        why: 'its API document lists no sandbox controls',
      });
      const unmarked = { paths: { '/sandbox/tick': { post: { summary: 'tick' } } } };
      expect(await controls(answering(() => json(200, unmarked))).probe()).to.have.property('sandbox', false);
    });

    it('no document (404), or something else than one: not a sandbox, saying what was found', async () => {
      expect(await controls(answering(() => json(404, { success: false }))).probe()).to.deep.equal({
        sandbox: false,
        why: 'GET /openapi.json answers HTTP 404',
      });
      expect(await controls(answering(() => new Response('<html>hello</html>'))).probe()).to.deep.equal({
        sandbox: false,
        why: 'GET /openapi.json is not an API document',
      });
      expect(await controls(answering(() => json(200, { paths: [] }))).probe()).to.have.property(
        'sandbox',
        false,
      );
    });

    it('nothing listening: a connection error, as every gateway call gives', async () => {
      const refused = answering(() => {
        throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
      });
      const error = await controls(refused)
        .probe()
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(error).to.be.instanceOf(GatewayNetworkError);
      expect(error).to.include({
        kind: 'connection',
        message: 'GET /openapi.json: connection failed (ECONNREFUSED)',
      });
    });
  });

  describe('the controls', () => {
    const envelope = (data: unknown) => json(200, { success: true, message: '', code: '', data });

    it('send the bearer key and the body sandbox.md section 10 names', async () => {
      const c = controls(answering(() => envelope({ now: '2026-11-25T04:24:22.174Z' })));
      expect(await c.advance(7200)).to.deep.equal({ now: '2026-11-25T04:24:22.174Z' });
      expect(sent[0]).to.deep.equal({
        url: 'http://gw.test/sandbox/clock/advance',
        method: 'POST',
        auth: 'Bearer sk_test_merchant_1001',
        body: '{"seconds":7200}',
      });
    });

    it('clock: a GET with the key and no body, the time read back', async () => {
      const c = controls(answering(() => envelope({ now: '2026-11-25T06:24:22.174Z' })));
      expect(await c.clock()).to.deep.equal({ now: '2026-11-25T06:24:22.174Z' });
      expect(sent).to.deep.equal([
        {
          url: 'http://gw.test/sandbox/clock',
          method: 'GET',
          auth: 'Bearer sk_test_merchant_1001',
          body: null,
        },
      ]);
    });

    it('chargeback: the amount in major units, or no amount; the record read in either shape', async () => {
      const record = {
        id: 100000,
        amount: 1234,
        currency: 'EUR',
        status: 'chargeback',
        transaction_type: 'sale',
        chargeback_amount: 500,
      };
      const c = controls(answering(() => envelope(record)));
      expect(await c.chargeback('100000', 5)).to.include({
        id: '100000',
        status: 'chargeback',
        chargeback_amount: 500,
      });
      expect(await c.chargeback('100000')).to.include({ id: '100000' });
      expect(sent.map((s) => [s.url, s.body])).to.deep.equal([
        ['http://gw.test/sandbox/transactions/100000/chargeback', '{"amount":5}'],
        ['http://gw.test/sandbox/transactions/100000/chargeback', '{}'],
      ]);
      const nested = controls(answering(() => envelope({ transaction: { ...record, status: 'captured' } })));
      expect(await nested.reverse('100000')).to.include({ status: 'captured' });
    });

    it('settle and outage: their paths and bodies', async () => {
      const session = {
        payment_session: {
          payment_session_id: 'ps_a/b',
          transaction_id: 100001,
          payment_method: 'ideal',
          status: 'paid',
          amount: 999,
          currency: 'EUR',
          checkout_url: 'http://gw.test/hosted/checkout/ps_x',
        },
      };
      expect(await controls(answering(() => envelope(session))).settle('ps_a/b', 'paid')).to.include({
        status: 'paid',
        transaction_id: '100001',
      });
      expect(
        await controls(
          answering(() => envelope({ merchant_id: 1001, until: '2026-11-25T02:34:22.000Z' })),
        ).outage(600),
      ).to.deep.equal({ merchant_id: '1001', until: '2026-11-25T02:34:22.000Z' });
      expect(sent.map((s) => [s.url, s.body])).to.deep.equal([
        ['http://gw.test/sandbox/payment-sessions/ps_a%2Fb/settle', '{"outcome":"paid"}'],
        ['http://gw.test/sandbox/webhook/outage', '{"seconds":600}'],
      ]);
    });

    it('a refusal is a GatewayError with the code; a 500 is not sent again (a control acts once)', async () => {
      const c = controls(
        answering(() =>
          json(500, { success: false, message: 'Unexpected.', code: 'ERR_UNEXPECTED', data: null }),
        ),
      );
      const error = await c.tick().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(GatewayError);
      expect(error).to.include({ status: 500, code: 'ERR_UNEXPECTED' });
      expect(sent).to.have.length(1);
    });
  });
});
