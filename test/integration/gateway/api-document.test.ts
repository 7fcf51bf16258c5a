import { expect } from 'chai';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { documentProblems, responseChecker } from '../../support/api-document.js';
import {
  type CallOptions,
  card,
  liftRateLimits,
  PARTNER_KEY,
  startGateway,
  type TestGateway,
  transactionBody,
  uniqueReference,
} from '../../support/gateway.js';
import { allowPrivateUrls, type Receiver, startReceiver } from '../../support/receiver.js';

/**
 * issue, part 4: the sandbox's answers are what its document says. Real requests to a sandbox on a
 * local port (delivering webhooks to a local receiver), each answer checked against the response its
 * served /openapi.json documents for the route and status.
 */
describe('sandbox gateway: real answers match GET /openapi.json', function () {
  this.timeout(30_000);
  let gw: TestGateway;
  let receiver: Receiver;
  let checker: Awaited<ReturnType<typeof responseChecker>>;

  const call = async (
    method: string,
    path: string,
    template: string,
    status: number,
    o: CallOptions = {},
  ) => {
    const answer = await gw.call(method, path, o);
    expect(answer.status, `${method} ${path}: ${answer.text.slice(0, 500)}`).to.equal(status);
    checker.check(answer, method, template);
    return answer;
  };
  const pathOf = (url: string) => new URL(url).pathname;

  before(async () => {
    gw = await startGateway({
      seed: (seed) => {
        allowPrivateUrls(seed);
        liftRateLimits(seed);
        seed.merchants[0]!.payment_methods.find((m) => m.payment_method === 'psc')!.refunds = false;
      },
    });
    receiver = await startReceiver();
    const served = await gw.call('GET', '/openapi.json', { key: null });
    expect(served.status).to.equal(200);
    expect(await documentProblems(served.body as ApiDocument)).to.equal('');
    checker = await responseChecker(served.body as ApiDocument);
    checker.check(served, 'GET', '/openapi.json');
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
    if (checker) console.log(`      checked against the document: ${[...checker.checked].sort().join('; ')}`);
  });

  it('webhook endpoint: 404 before one exists, created (201), read, updated, rotated, pinged', async () => {
    await call('GET', '/api/v1/webhook', '/api/v1/webhook', 404);
    await call('PUT', '/api/v1/webhook', '/api/v1/webhook', 201, { body: { url: receiver.url } });
    await call('GET', '/api/v1/webhook', '/api/v1/webhook', 200);
    await call('PUT', '/api/v1/webhook', '/api/v1/webhook', 200, {
      body: { url: receiver.url, events: null, is_active: true },
    });
    await call('PUT', '/api/v1/webhook', '/api/v1/webhook', 422, { body: { url: 'ftp://nowhere' } });
    await call('GET', '/api/v1/webhook', '/api/v1/webhook', 400, { key: PARTNER_KEY });
    await call('POST', '/api/v1/webhook/test', '/api/v1/webhook/test', 200);
    await call('POST', '/api/v1/webhook/rotate-secret', '/api/v1/webhook/rotate-secret', 200);
  });

  it('3DS: frictionless, a challenge and its page, a 3DS error (400), refused input (422), keys (401, 403)', async () => {
    const verify = (number: string, o: CallOptions = {}) => ({
      body: { amount: 12.34, currency: 'EUR', card: card(number), auth_url: 'https://shop.example/3ds' },
      ...o,
    });
    await call('POST', '/api/v1/3ds/verify', '/api/v1/3ds/verify', 200, verify('4242424242424242'));
    const challenge = await call(
      'POST',
      '/api/v1/3ds/verify',
      '/api/v1/3ds/verify',
      200,
      verify('4000000000003220'),
    );
    await call('POST', '/api/v1/3ds/verify', '/api/v1/3ds/verify', 400, verify('4000000000003097'));
    await call('POST', '/api/v1/3ds/verify', '/api/v1/3ds/verify', 400, verify('4242424242424241'));
    await call('POST', '/api/v1/3ds/verify', '/api/v1/3ds/verify', 422, { body: { amount: 'x' } });
    await call(
      'POST',
      '/api/v1/3ds/verify',
      '/api/v1/3ds/verify',
      401,
      verify('4242424242424242', { key: null }),
    );
    await call(
      'POST',
      '/api/v1/3ds/verify',
      '/api/v1/3ds/verify',
      403,
      verify('4242424242424242', { key: PARTNER_KEY }),
    );

    const page = pathOf(challenge.body.data.challenge_url);
    await call('GET', page, '/hosted/3ds/{publicId}', 200, { key: null });
    await call('POST', page, '/hosted/3ds/{publicId}', 422, {
      key: null,
      rawBody: 'action=maybe',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    await call('POST', page, '/hosted/3ds/{publicId}', 303, {
      key: null,
      rawBody: 'action=authenticate',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    await call('GET', '/hosted/3ds/tds_unknown', '/hosted/3ds/{publicId}', 404, { key: null });
  });

  it('transactions: sale, auth, declines (400), a duplicate (409), status, capture, refund, void, idempotency', async () => {
    const sale = await call('POST', '/api/v1/transactions', '/api/v1/transactions', 200, {
      body: transactionBody(),
    });
    const saleId = sale.body.data.id as number;
    await call('POST', '/api/v1/transactions', '/api/v1/transactions', 409, {
      body: transactionBody({ reference: sale.body.data.merchant_trans_id }),
    });
    await call('POST', '/api/v1/transactions', '/api/v1/transactions', 400, {
      body: transactionBody({ card: card('4000000000000002') }),
    });
    await call('POST', '/api/v1/transactions', '/api/v1/transactions', 400, {
      body: transactionBody({ card: card('4000000000003220') }),
    });
    await call('POST', '/api/v1/transactions', '/api/v1/transactions', 422, { body: { amount: 1 } });
    await call('GET', `/api/v1/transactions/${saleId}/status`, '/api/v1/transactions/{id}/status', 200);
    await call('GET', '/api/v1/transactions/999999/status', '/api/v1/transactions/{id}/status', 404);

    const auth = await call('POST', '/api/v1/transactions', '/api/v1/transactions', 200, {
      body: transactionBody({ transaction_type: 'auth' }),
    });
    const capture = `/api/v1/transactions/${auth.body.data.id}/capture`;
    const key = { 'Idempotency-Key': uniqueReference('capture') };
    await call('POST', capture, '/api/v1/transactions/{id}/capture', 403, {
      key: PARTNER_KEY,
      body: { amount: 12.34 },
    });
    await call('POST', capture, '/api/v1/transactions/{id}/capture', 422, {
      body: { amount: 12.34 },
      headers: { 'Idempotency-Key': ' ' },
    });
    const captured = await call('POST', capture, '/api/v1/transactions/{id}/capture', 200, {
      body: { amount: 12.34 },
      headers: key,
    });
    const replayed = await call('POST', capture, '/api/v1/transactions/{id}/capture', 200, {
      body: { amount: 12.34 },
      headers: key,
    });
    expect(replayed.headers.get('idempotency-replayed')).to.equal('true');
    await call('POST', capture, '/api/v1/transactions/{id}/capture', 409, {
      body: { amount: 1 },
      headers: key,
    });
    await call('POST', capture, '/api/v1/transactions/{id}/capture', 400, { body: { amount: 12.34 } });
    const captureId = captured.body.data.transaction.id as number;
    await call('POST', `/api/v1/transactions/${captureId}/refund`, '/api/v1/transactions/{id}/refund', 200, {
      body: { amount: 2, reason: 'damaged' },
    });

    const another = await call('POST', '/api/v1/transactions', '/api/v1/transactions', 200, {
      body: transactionBody({ transaction_type: 'auth' }),
    });
    const voidPath = `/api/v1/transactions/${another.body.data.id}/void`;
    await call('POST', voidPath, '/api/v1/transactions/{id}/void', 200, {
      body: { amount: 12.34, reason: 'cancelled' },
    });
    await call('POST', `/api/v1/transactions/${saleId}/void`, '/api/v1/transactions/{id}/void', 400, {
      body: { amount: 12.34 },
    });

    await call(
      'POST',
      `/sandbox/transactions/${saleId}/chargeback`,
      '/sandbox/transactions/{id}/chargeback',
      200,
    );
    await call(
      'POST',
      `/sandbox/transactions/${another.body.data.id}/chargeback`,
      '/sandbox/transactions/{id}/chargeback',
      400,
    );
    const reverse = `/sandbox/transactions/${saleId}/chargeback/reverse`;
    await call('POST', reverse, '/sandbox/transactions/{id}/chargeback/reverse', 200);
    await call('POST', reverse, '/sandbox/transactions/{id}/chargeback/reverse', 400);
    await call(
      'POST',
      '/sandbox/transactions/999999/chargeback/reverse',
      '/sandbox/transactions/{id}/chargeback/reverse',
      404,
    );
    await call(
      'POST',
      `/sandbox/transactions/${saleId}/chargeback`,
      '/sandbox/transactions/{id}/chargeback',
      422,
      {
        body: { amount: 1000 },
      },
    );
    await call(
      'POST',
      `/sandbox/transactions/${saleId}/chargeback`,
      '/sandbox/transactions/{id}/chargeback',
      200,
      {
        body: { amount: 1.5 },
      },
    );
  });

  it('payment instruments: saved by a payment, listed, paid with, revoked; their refusals', async () => {
    const customer = uniqueReference('cust');
    const saving = await call('POST', '/api/v1/transactions', '/api/v1/transactions', 200, {
      body: transactionBody({
        save_payment_instrument: true,
        customer: { merchant_customer_id: customer, email: 'ada@example.com' },
      }),
    });
    const token = saving.body.data.vault_token as string;
    expect(token).to.match(/^vt_/);
    await call('POST', '/api/v1/transactions', '/api/v1/transactions', 422, {
      body: transactionBody({ save_payment_instrument: true }),
    });
    const byToken = (o: Record<string, unknown> = {}) => {
      const body: Record<string, unknown> = transactionBody({ vault_token: token, ...o });
      delete body.card;
      return { body };
    };
    await call('POST', '/api/v1/transactions', '/api/v1/transactions', 200, byToken());
    await call(
      'GET',
      `/api/v1/transactions/${saving.body.data.id}/status`,
      '/api/v1/transactions/{id}/status',
      200,
    );
    const list = `/api/v1/payment-instruments?merchant_customer_id=${customer}`;
    const listed = await call('GET', list, '/api/v1/payment-instruments', 200);
    expect(listed.body.data.payment_instruments).to.have.length(1);
    await call('GET', '/api/v1/payment-instruments', '/api/v1/payment-instruments', 422);
    await call('GET', list, '/api/v1/payment-instruments', 400, { key: PARTNER_KEY });
    await call('GET', list, '/api/v1/payment-instruments', 401, { key: null });
    const revoke = `/api/v1/payment-instruments/${token}`;
    await call('DELETE', revoke, '/api/v1/payment-instruments/{vaultToken}', 200);
    await call('DELETE', revoke, '/api/v1/payment-instruments/{vaultToken}', 200);
    await call(
      'DELETE',
      '/api/v1/payment-instruments/vt_unknown',
      '/api/v1/payment-instruments/{vaultToken}',
      404,
    );
    await call('POST', '/api/v1/transactions', '/api/v1/transactions', 400, byToken());
  });

  it('payment sessions, their checkout page, and the methods on offer', async () => {
    const session = (o: Record<string, unknown> = {}) => ({
      body: {
        amount: 10,
        currency: 'EUR',
        reference: uniqueReference('session'),
        payment_method: 'ideal',
        customer: { country_code: 'NL', last_name: 'Tester' },
        success_url: 'https://shop.example/return',
        cancel_url: 'https://shop.example/cancel',
        ...o,
      },
    });
    const created = await call(
      'POST',
      '/api/v1/payment-sessions',
      '/api/v1/payment-sessions',
      201,
      session(),
    );
    const { payment_session_id: id, checkout_url: url } = created.body.data.payment_session;
    await call('GET', `/api/v1/payment-sessions/${id}`, '/api/v1/payment-sessions/{sessionId}', 200);
    await call('GET', '/api/v1/payment-sessions/ps_unknown', '/api/v1/payment-sessions/{sessionId}', 404);
    await call(
      'POST',
      '/api/v1/payment-sessions',
      '/api/v1/payment-sessions',
      409,
      session({
        reference: created.body.data.payment_session.merchant_reference,
      }),
    );
    // A card payment reusing the session's reference: its 409 names the session too (sandbox.md section 11).
    await call('POST', '/api/v1/transactions', '/api/v1/transactions', 409, {
      body: transactionBody({ reference: created.body.data.payment_session.merchant_reference }),
    });
    await call(
      'POST',
      '/api/v1/payment-sessions',
      '/api/v1/payment-sessions',
      400,
      session({
        customer: { country_code: 'DE' },
      }),
    );
    await call(
      'POST',
      '/api/v1/payment-sessions',
      '/api/v1/payment-sessions',
      400,
      session({
        customer: { country_code: 'NL', last_name: 'PROVIDER_REJECT' },
      }),
    );
    await call(
      'POST',
      '/api/v1/payment-sessions',
      '/api/v1/payment-sessions',
      502,
      session({
        customer: { country_code: 'NL', last_name: 'PROVIDER_DOWN' },
      }),
    );
    await call(
      'POST',
      '/api/v1/payment-sessions',
      '/api/v1/payment-sessions',
      422,
      session({ card: card() }),
    );

    await call('GET', pathOf(url), '/hosted/checkout/{sessionId}', 200, { key: null });
    const form = { key: null, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    await call('POST', pathOf(url), '/hosted/checkout/{sessionId}', 422, {
      ...form,
      rawBody: 'action=later',
    });
    await call('POST', pathOf(url), '/hosted/checkout/{sessionId}', 303, { ...form, rawBody: 'action=pay' });
    await call('GET', pathOf(url), '/hosted/checkout/{sessionId}', 200, { key: null });
    await call('GET', '/hosted/checkout/ps_unknown', '/hosted/checkout/{sessionId}', 404, { key: null });

    const open = await call('POST', '/api/v1/payment-sessions', '/api/v1/payment-sessions', 201, session());
    const settle = `/sandbox/payment-sessions/${open.body.data.payment_session.payment_session_id}/settle`;
    await call('POST', settle, '/sandbox/payment-sessions/{sessionId}/settle', 200, {
      body: { outcome: 'paid' },
    });
    await call('POST', settle, '/sandbox/payment-sessions/{sessionId}/settle', 409, {
      body: { outcome: 'paid' },
    });
    await call('POST', settle, '/sandbox/payment-sessions/{sessionId}/settle', 422, {
      body: { outcome: 'maybe' },
    });

    const psc = await call(
      'POST',
      '/api/v1/payment-sessions',
      '/api/v1/payment-sessions',
      201,
      session({ payment_method: 'psc' }),
    );
    const pscSession = psc.body.data.payment_session;
    await call(
      'POST',
      `/sandbox/payment-sessions/${pscSession.payment_session_id}/settle`,
      '/sandbox/payment-sessions/{sessionId}/settle',
      200,
      {
        body: { outcome: 'paid' },
      },
    );
    await call(
      'POST',
      `/api/v1/transactions/${pscSession.transaction_id}/refund`,
      '/api/v1/transactions/{id}/refund',
      400,
      {
        body: { amount: 1 },
      },
    );

    await call('GET', '/api/v1/payment-methods', '/api/v1/payment-methods', 200);
    await call('GET', '/api/v1/payment-methods?country=DE&currency=USD', '/api/v1/payment-methods', 200);
    await call('GET', '/api/v1/payment-methods?country=de', '/api/v1/payment-methods', 422);
  });

  it('webhook events: delivered on tick, listed, read, replayed; then the endpoint deleted', async () => {
    await call('POST', '/sandbox/clock/advance', '/sandbox/clock/advance', 200, { body: { seconds: 60 } });
    await call('POST', '/sandbox/clock/advance', '/sandbox/clock/advance', 422, { body: { seconds: -1 } });
    await call('POST', '/sandbox/tick', '/sandbox/tick', 200);
    await call('POST', '/sandbox/tick', '/sandbox/tick', 401, { key: null });
    expect(receiver.received.length).to.be.greaterThan(0);

    const list = await call('GET', '/api/v1/webhook/events?per_page=5', '/api/v1/webhook/events', 200);
    await call('GET', '/api/v1/webhook/events?per_page=0', '/api/v1/webhook/events', 422);
    const delivered = (list.body.data.events as { id: string; status: string }[]).find(
      (e) => e.status === 'delivered',
    );
    expect(delivered, list.text).to.not.equal(undefined);
    const eventPath = `/api/v1/webhook/events/${delivered!.id}`;
    await call('GET', eventPath, '/api/v1/webhook/events/{eventId}', 200);
    await call('GET', '/api/v1/webhook/events/evt_unknown', '/api/v1/webhook/events/{eventId}', 404);
    await call('POST', `${eventPath}/replay`, '/api/v1/webhook/events/{eventId}/replay', 200);

    await call('POST', '/sandbox/webhook/outage', '/sandbox/webhook/outage', 200, { body: { seconds: 60 } });
    await call('DELETE', '/api/v1/webhook', '/api/v1/webhook', 200);
    await call('DELETE', '/api/v1/webhook', '/api/v1/webhook', 404);
    await call('POST', `${eventPath}/replay`, '/api/v1/webhook/events/{eventId}/replay', 400);
    await call('POST', '/api/v1/webhook/test', '/api/v1/webhook/test', 404);
  });

  it('key information: a merchant key, a partner key, no key', async () => {
    await call('GET', '/api/v1/api-key', '/api/v1/api-key', 200);
    await call('GET', '/api/v1/api-key', '/api/v1/api-key', 200, { key: PARTNER_KEY });
    await call('GET', '/api/v1/api-key', '/api/v1/api-key', 401, { key: null });
  });

  it('the reference page', async () => {
    await call('GET', '/docs', '/docs', 200, { key: null });
    const script = await gw.call('GET', '/docs/assets/swagger-ui-bundle.js', { key: null });
    expect(script.status).to.equal(200);
    expect(script.headers.get('content-type')).to.match(/javascript/);
    expect((await gw.call('GET', '/docs/assets/package.json', { key: null })).status).to.equal(404);
    expect((await gw.call('GET', '/docs/assets/..%2Fpackage.json', { key: null })).status).to.equal(404);
  });
});
