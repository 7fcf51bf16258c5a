import { createKitClient, type KitClient, type RequestBody } from '@merchant-kit/client';
import { expect } from 'chai';
import type { Middleware } from 'openapi-fetch';
import { merchantApi } from '../../../src/merchant/http/api-document.js';
import { type ApiDocument, apiDocument } from '../../../src/shared/api-document.js';
import { responseChecker } from '../../support/api-document.js';
import { jsonOf } from '../../support/gateway.js';
import { OPS_TOKEN, startTestKit, type TestKit } from '../../support/kit.js';

/** A call's outcome, as openapi-fetch gives it: `data` for a 2xx, `error` otherwise. */
interface Outcome<Data> {
  data?: Data;
  error?: unknown;
  response: Response;
}

/** The 2xx body of a call that must answer `status`. */
function answered<Data>(outcome: Outcome<Data>, status: number): Data {
  const { response, error } = outcome;
  expect(response.status, `${response.url}: ${JSON.stringify(error)}`).to.equal(status);
  expect(outcome.data, response.url).to.not.equal(undefined);
  return outcome.data!;
}

/**
 * The walkthrough of docs/api.md, through @merchant-kit/client alone, against a real kit (its MySQL, Redis
 * and embedded sandbox): the routes, bodies and answers the storefront's types promise are the ones
 * the kit serves. Three ways to drift, three checks: the types against the document (the drift test),
 * this file against the types (`npm run typecheck`), and every answer against the served document
 * (checked by a middleware on each client, as the document test does).
 */
describe('kit client: the walkthrough of docs/api.md through @merchant-kit/client', function () {
  this.timeout(60_000);
  let t: TestKit;
  let checker: Awaited<ReturnType<typeof responseChecker>>;
  let storefront: KitClient;
  let operator: KitClient;

  /** Checks each answer against the document's response for its route and status. */
  const documented: Middleware = {
    async onResponse({ request, response, schemaPath }) {
      const text = await response.clone().text();
      const answer = { status: response.status, headers: response.headers, body: jsonOf(text), text };
      checker.check(answer, request.method, schemaPath);
    },
  };

  before(async () => {
    t = await startTestKit();
    const served = answered(await createKitClient({ baseUrl: t.url }).GET('/openapi.json'), 200);
    // The types were generated from the document built from the code: the one the kit serves.
    expect(served).to.deep.equal(JSON.parse(JSON.stringify(apiDocument(merchantApi))));
    checker = await responseChecker(served as ApiDocument);
    storefront = createKitClient({ baseUrl: t.url });
    operator = createKitClient({ baseUrl: t.url, token: OPS_TOKEN });
    storefront.use(documented);
    operator.use(documented);
  });
  after(async () => {
    await t?.close();
    if (checker) console.log(`      checked against the document: ${[...checker.checked].sort().join('; ')}`);
  });

  it('creates an order, pays it by card (auth), captures, refunds 2.00 and reads it with its history', async () => {
    const created = answered(
      await storefront.POST('/orders', {
        body: { amount: '12.34', currency: 'EUR' } satisfies RequestBody<'createOrder'>,
      }),
      201,
    );
    const id = created.data.order.id;
    expect(created.data.order).to.include({ status: 'pending', amount: 1234, currency: 'EUR' });
    // The order's shopper routes take its client secret, answered this once.
    const secret = created.data.order.client_secret;
    expect(secret).to.match(/^ocs_/);

    const card = { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvv: '123' };
    const paid = answered(
      await storefront.POST('/orders/{id}/pay/card', {
        params: { path: { id }, header: { 'Order-Secret': secret } },
        body: { mode: 'auth', card } satisfies RequestBody<'payByCard'>,
      }),
      200,
    );
    expect(paid.data.order.status).to.equal('authorized');
    expect(paid.data.next_action).to.equal(null);

    const captured = answered(await operator.POST('/orders/{id}/capture', { params: { path: { id } } }), 200);
    expect(captured.data.order).to.include({ status: 'paid', captured_amount: 1234 });

    const refunded = answered(
      await operator.POST('/orders/{id}/refund', {
        params: { path: { id }, header: { 'Idempotency-Key': 'r-1' } },
        body: { amount: '2.00', reason: 'damaged' } satisfies RequestBody<'refundOrder'>,
      }),
      200,
    );
    expect(refunded.data.order).to.include({ status: 'partially_refunded', refunded_amount: 200 });

    // The storefront (no token, the order's secret) reads where the order stands; the operator reads
    // it whole. The id alone reads nothing.
    const stranger = await storefront.GET('/orders/{id}', { params: { path: { id } } });
    expect(stranger.response.status).to.equal(404);
    expect(stranger.error?.code).to.equal('NOT_FOUND');
    const shown = answered(
      await storefront.GET('/orders/{id}', { params: { path: { id }, header: { 'Order-Secret': secret } } }),
      200,
    );
    expect(shown.data.order).to.include({ status: 'partially_refunded', refunded_amount: 200 });
    expect(shown.data.order).to.not.have.property('history');
    const read = answered(await operator.GET('/orders/{id}', { params: { path: { id } } }), 200);
    const { order } = read.data;
    if (!('history' in order))
      throw new Error(`the operator's read has no history: ${JSON.stringify(order)}`);
    expect(order).to.include({ status: 'partially_refunded', captured_amount: 1234, refunded_amount: 200 });
    // Whichever came first for each step, the API's answer or the gateway's webhook, the order went
    // through each status, and the operator's requests are kept with who asked and why.
    const statuses = new Set(order.history.map((h) => h.status_after));
    for (const status of ['authorized', 'paid', 'partially_refunded']) expect(statuses).to.include(status);
    const requested = order.history.filter((h) => h.outcome === 'requested').map((h) => h.detail);
    expect(requested).to.deep.equal([
      'capture of 12.34 EUR by admin (admin)',
      'refund of 2.00 EUR by admin (admin): damaged',
    ]);
  });

  it('answers errors typed by the document: 422 naming the fields, 401 without the token, 404', async () => {
    // @ts-expect-error: the document requires a body here, and the kit refuses a request without one
    const { error: empty } = await storefront.POST('/orders', {});
    expect(empty?.code).to.equal('VALIDATION_FAILED');
    expect(empty?.errors).to.have.keys('amount', 'currency');

    const { error: refused } = await storefront.POST('/orders', {
      body: { amount: '1.234', currency: 'EUR' },
    });
    expect(refused?.code).to.equal('VALIDATION_FAILED');
    expect(refused?.errors).to.have.property('amount');

    const id = answered(await storefront.POST('/orders', { body: { amount: '5.00', currency: 'EUR' } }), 201)
      .data.order.id;
    const anonymous = await storefront.POST('/orders/{id}/capture', { params: { path: { id } } });
    expect(anonymous.response.status).to.equal(401);
    expect(anonymous.error?.code).to.equal('UNAUTHORIZED');

    const missing = await storefront.GET('/orders/{id}', { params: { path: { id: 'ord_nobody' } } });
    expect(missing.response.status).to.equal(404);
    expect(missing.error?.code).to.equal('NOT_FOUND');
  });
});
