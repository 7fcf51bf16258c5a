import { expect } from 'chai';
import fc from 'fast-check';
import { GatewayError } from '../../../src/client/errors.js';
import { GatewayClient, type GatewayClientOptions } from '../../../src/client/gateway-client.js';
import type { CurrencyCode } from '../../../src/shared/money.js';
import { rejection } from '../../support/client.js';
import {
  card,
  MERCHANT_KEY,
  PARTNER_KEY,
  type StartOptions,
  startGateway,
  type TestGateway,
  uniqueReference,
} from '../../support/gateway.js';
import { allowPrivateUrls, type Receiver, startReceiver } from '../../support/receiver.js';

/**
 * The merchant side's typed gateway client against a real sandbox over HTTP: every endpoint of
 * gateway-api.md, the error shapes, idempotency keys, partner keys, exact amounts, and the retries
 * the sandbox can provoke (429 with Retry-After, 409 in progress). Time never really passes: the
 * client's `sleep` records and returns, and its `now` is the sandbox's manual clock.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read raw envelopes and bodies of every shape
type Json = any;

interface Sent {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: Json;
}

interface Seen {
  status: number;
  retryAfter: string | null;
}

interface Harness {
  client: GatewayClient;
  /** What the client's injected sleep was asked to wait, in order. */
  sleeps: number[];
  /** Every request the client put on the wire, and what came back. */
  sent: Sent[];
  seen: Seen[];
}

const AUTH_URL = 'https://shop.example/3ds/return';
const EUR = (amountMinor: number) => ({ amountMinor, currency: 'EUR' as const });

/**
 * A client on the sandbox: a recording fetch around the real one, a recording sleep that returns at
 * once (after `onSleep`, which may advance the sandbox clock), `random` 0.5, `now` the sandbox clock.
 */
function clientOn(
  gw: TestGateway,
  options: Partial<GatewayClientOptions> = {},
  onSleep: (ms: number) => void | Promise<void> = () => {},
): Harness {
  const sleeps: number[] = [];
  const sent: Sent[] = [];
  const seen: Seen[] = [];
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    sent.push({ method: init?.method ?? 'GET', url: new URL(String(input)), headers, body });
    const response = await fetch(input, init);
    seen.push({ status: response.status, retryAfter: response.headers.get('retry-after') });
    return response;
  };
  const client = new GatewayClient({
    baseUrl: gw.url,
    apiKey: MERCHANT_KEY,
    ...options,
    deps: {
      fetch: recordingFetch as typeof fetch,
      sleep: async (ms) => {
        sleeps.push(ms);
        await onSleep(ms);
      },
      random: () => 0.5,
      now: () => gw.clock.now(),
      ...options.deps,
    },
  });
  return { client, sleeps, sent, seen };
}

async function gatewayErrorOf(
  promise: Promise<unknown>,
  status: number,
  code: string,
): Promise<GatewayError> {
  const error = await rejection(promise);
  expect(error, String(error)).to.be.instanceOf(GatewayError);
  const e = error as GatewayError;
  expect(e.status, e.message).to.equal(status);
  expect(e.code, e.message).to.equal(code);
  return e;
}

describe('client against the sandbox', () => {
  let gw: TestGateway;
  const closers: (() => Promise<void>)[] = [];

  async function start(options: StartOptions = {}): Promise<TestGateway> {
    const started = await startGateway(options);
    closers.push(() => started.close());
    return started;
  }

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  describe('card payments', () => {
    let h: Harness;
    beforeEach(async () => {
      gw = await start();
      h = clientOn(gw);
    });

    const sale = (overrides: Record<string, unknown> = {}) =>
      h.client.createTransaction({
        ...EUR(1234),
        type: 'sale',
        reference: uniqueReference('client'),
        card: card(),
        customer: { email: 'ada@example.com', country_code: 'GB' },
        ...overrides,
      });

    it('verify3ds, frictionless: full_auth with a tds_ id that a transaction then uses', async () => {
      const answer = await h.client.verify3ds({ ...EUR(1234), card: card(), authUrl: AUTH_URL });
      const v = answer.data;
      expect(v.status).to.equal('full_auth');
      expect(v.auth_type).to.equal('frictionless');
      expect(v.public_id).to.match(/^tds_[A-Za-z0-9]{24}$/);
      expect(v.amount).to.equal(1234);
      expect(v.currency).to.equal('EUR');
      expect(v.id, 'the deprecated numeric id, as an opaque string').to.be.a('string');
      expect(v.challenge_url ?? null).to.equal(null);
      expect(h.sent[0]!.body).to.deep.include({ amount: 12.34, currency: 'EUR', auth_url: AUTH_URL });

      const paid = await sale({ verificationId: v.public_id });
      expect(paid.data.status).to.equal('captured');
      expect(h.sent[1]!.body.card_verification_data).to.deep.equal({ id: v.public_id });
    });

    it('verify3ds, challenge: not yet authenticated, with the hosted challenge_url', async () => {
      const answer = await h.client.verify3ds({
        ...EUR(1234),
        card: card('4000000000003220'),
        authUrl: AUTH_URL,
      });
      const v = answer.data;
      expect(v.auth_type).to.equal('challenge');
      expect(v.status).to.not.equal('full_auth');
      expect(v.challenge_url).to.equal(`${gw.url}/hosted/3ds/${v.public_id}`);
    });

    it('createTransaction sale: 12.34 EUR goes out in major units, 1234 comes back, the id as a string', async () => {
      const answer = await sale();
      expect(h.sent).to.have.length(1);
      const request = h.sent[0]!;
      expect(request.method).to.equal('POST');
      expect(request.url.pathname).to.equal('/api/v1/transactions');
      expect(request.headers.authorization).to.equal(`Bearer ${MERCHANT_KEY}`);
      expect(request.headers['content-type']).to.equal('application/json');
      expect(request.body).to.deep.include({ amount: 12.34, currency: 'EUR', transaction_type: 'sale' });
      expect(request.body).to.not.have.property('merchant_id');

      const t = answer.data;
      expect(answer.status).to.equal(200);
      expect(answer.replayed).to.equal(false);
      expect(t.amount).to.equal(1234);
      expect(t.currency).to.equal('EUR');
      expect(t.status).to.equal('captured');
      expect(t.transaction_type).to.equal('sale');
      expect(t.id).to.be.a('string');
      expect(gw.gateway.deps.state.transactions.get(Number(t.id))?.amount).to.equal(1234);
      expect(t.merchant_id).to.equal('1001');
      expect(t.related_trans_id).to.equal(null);
      expect(answer.remaining).to.be.a('number');
    });

    it('createTransaction auth: recorded auth; transactionStatus reads it back', async () => {
      const auth = await sale({ type: 'auth' });
      expect(auth.data.status).to.equal('auth');
      expect(auth.data.transaction_type).to.equal('auth');
      const status = await h.client.transactionStatus(auth.data.id);
      expect(status.data).to.deep.equal(auth.data);
      expect(h.sent[1]!.method).to.equal('GET');
      expect(h.sent[1]!.url.pathname).to.equal(`/api/v1/transactions/${auth.data.id}/status`);
    });

    it('a decline is a GatewayError with the code and the failed record in details.data, not retried', async () => {
      const error = await gatewayErrorOf(
        sale({ card: card('4000000000000002') }),
        400,
        'ERR_CARD_DO_NOT_HONOR',
      );
      expect(error.retryable).to.equal(false);
      const data = error.details.data as Json;
      expect(data.status).to.equal('failed');
      expect(data.amount).to.equal(1234);
      expect(gw.gateway.deps.state.transactions.get(data.id)?.status).to.equal('failed');
      expect(h.sent, 'one attempt').to.have.length(1);
      expect(h.sleeps).to.deep.equal([]);
    });

    it('a transient decline (ERR_CARD_SYSTEM_ERROR) is retryable for the caller, but never resent by the client', async () => {
      const error = await gatewayErrorOf(
        sale({ card: card('4000000000000119') }),
        400,
        'ERR_CARD_SYSTEM_ERROR',
      );
      expect(error.retryable).to.equal(true);
      expect(h.sent).to.have.length(1);
    });

    it('a reference in use is 409 ERR_DUPLICATE with details.data.transaction_id, not retried', async () => {
      const reference = uniqueReference('dup');
      const first = await sale({ reference });
      const error = await gatewayErrorOf(sale({ reference }), 409, 'ERR_DUPLICATE');
      expect(String((error.details.data as Json).transaction_id)).to.equal(first.data.id);
      expect(error.retryable).to.equal(false);
      expect(h.sent).to.have.length(2);
    });

    it('a validation failure is 422 ERR_VALIDATION_FAILED with the errors map', async () => {
      const error = await gatewayErrorOf(
        sale({ card: card(undefined, { exp_month: 13 }) }),
        422,
        'ERR_VALIDATION_FAILED',
      );
      const errors = error.details.errors ?? {};
      const fields = Object.keys(errors);
      expect(
        fields.some((f) => f.includes('exp_month')),
        fields.join(', '),
      ).to.equal(true);
      for (const messages of Object.values(errors)) expect(messages).to.be.an('array').that.is.not.empty;
      expect(h.sent).to.have.length(1);
    });

    it('capture with a key: a capture record under data.transaction, and the same key replays it', async () => {
      const auth = await sale({ type: 'auth' });
      const first = await h.client.capture(auth.data.id, EUR(1234), 'capture-key-1');
      expect(first.replayed).to.equal(false);
      expect(first.data.transaction_type).to.equal('capture');
      expect(first.data.status).to.equal('captured');
      expect(first.data.related_trans_id).to.equal(auth.data.id);
      expect(first.data.amount).to.equal(1234);
      const request = h.sent[1]!;
      expect(request.url.pathname).to.equal(`/api/v1/transactions/${auth.data.id}/capture`);
      expect(request.headers['idempotency-key']).to.equal('capture-key-1');
      expect(request.body).to.deep.equal({ amount: 12.34 });

      const again = await h.client.capture(auth.data.id, EUR(1234), 'capture-key-1');
      expect(again.replayed).to.equal(true);
      expect(again.data).to.deep.equal(first.data);
      expect(h.sent[2]!.headers['idempotency-key']).to.equal('capture-key-1');

      const status = await h.client.transactionStatus(auth.data.id);
      expect(status.data.status).to.equal('captured');
    });

    it('capture of more than was authorised: the decline, replayed under the same key as a 400 again', async () => {
      const auth = await sale({ type: 'auth' });
      await gatewayErrorOf(
        h.client.capture(auth.data.id, EUR(9999), 'too-much'),
        400,
        'ERR_ADAPTER_INVALID_AMOUNT',
      );
      await gatewayErrorOf(
        h.client.capture(auth.data.id, EUR(9999), 'too-much'),
        400,
        'ERR_ADAPTER_INVALID_AMOUNT',
      );
      expect(h.sent).to.have.length(3);
    });

    it('reusing a key with another body is 409 ERR_IDEMPOTENCY_CONFLICT, not retried', async () => {
      const auth = await sale({ type: 'auth' });
      await h.client.capture(auth.data.id, EUR(1000), 'capture-conflict');
      await gatewayErrorOf(
        h.client.capture(auth.data.id, EUR(1234), 'capture-conflict'),
        409,
        'ERR_IDEMPOTENCY_CONFLICT',
      );
      expect(h.sent).to.have.length(3);
    });

    it('refund with a key: a refund record; partial refunds keep the sale captured', async () => {
      const paid = await sale();
      const refund = await h.client.refund(paid.data.id, EUR(234), 'customer request', 'refund-key-1');
      expect(refund.data.transaction_type).to.equal('refund');
      expect(refund.data.status).to.equal('refunded');
      expect(refund.data.amount).to.equal(234);
      expect(refund.data.related_trans_id).to.equal(paid.data.id);
      expect(h.sent[1]!.headers['idempotency-key']).to.equal('refund-key-1');
      expect(h.sent[1]!.body).to.deep.equal({ amount: 2.34, reason: 'customer request' });
      const replay = await h.client.refund(paid.data.id, EUR(234), 'customer request', 'refund-key-1');
      expect(replay.replayed).to.equal(true);
      expect(replay.data.id).to.equal(refund.data.id);
      const status = await h.client.transactionStatus(paid.data.id);
      expect(status.data.status).to.equal('captured');
      expect(status.data.refunded_amount).to.equal(234);
    });

    it('void with a key: a void record; the auth becomes voided', async () => {
      const auth = await sale({ type: 'auth' });
      const voided = await h.client.void(auth.data.id, EUR(1234), 'order cancelled', 'void-key-1');
      expect(voided.data.transaction_type).to.equal('void');
      expect(voided.data.status).to.equal('voided');
      expect(voided.data.related_trans_id).to.equal(auth.data.id);
      expect(h.sent[1]!.headers['idempotency-key']).to.equal('void-key-1');
      expect(
        (await h.client.void(auth.data.id, EUR(1234), 'order cancelled', 'void-key-1')).replayed,
      ).to.equal(true);
      expect((await h.client.transactionStatus(auth.data.id)).data.status).to.equal('voided');
    });

    it('an unknown transaction is 404 ERR_NOT_FOUND (a GET is not retried on a 4xx)', async () => {
      await gatewayErrorOf(h.client.transactionStatus('999999'), 404, 'ERR_NOT_FOUND');
      expect(h.sent).to.have.length(1);
    });
  });

  describe('payment sessions and methods', () => {
    let h: Harness;
    beforeEach(async () => {
      gw = await start();
      h = clientOn(gw);
    });

    it('createPaymentSession then getPaymentSession: the same session, amounts in minor units', async () => {
      const reference = uniqueReference('ps');
      const created = await h.client.createPaymentSession({
        ...EUR(2999),
        reference,
        paymentMethod: 'ideal',
        customer: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', country_code: 'NL' },
        customerReference: 'cust-1',
        successUrl: 'https://shop.example/ok',
        cancelUrl: 'https://shop.example/cancel',
      });
      const s = created.data;
      expect(h.sent[0]!.body).to.deep.include({
        amount: 29.99,
        currency: 'EUR',
        payment_method: 'ideal',
        reference,
      });
      expect(s.payment_session_id).to.match(/^ps_/);
      expect(s.status).to.equal('pending_redirect');
      expect(s.amount).to.equal(2999);
      expect(s.currency).to.equal('EUR');
      expect(s.transaction_id).to.be.a('string');
      expect(s.merchant_reference).to.equal(reference);
      expect(s.checkout_url).to.equal(`${gw.url}/hosted/checkout/${s.payment_session_id}`);

      const read = await h.client.getPaymentSession(s.payment_session_id);
      expect(read.data).to.deep.equal(s);
      const linked = await h.client.transactionStatus(s.transaction_id);
      expect(linked.data.amount).to.equal(2999);
    });

    it('a provider refusal is 400 ERR_PROVIDER_REJECTED', async () => {
      await gatewayErrorOf(
        h.client.createPaymentSession({
          ...EUR(1000),
          reference: uniqueReference('ps'),
          paymentMethod: 'psc',
          customer: { last_name: 'PROVIDER_REJECT' },
          successUrl: 'https://shop.example/ok',
          cancelUrl: 'https://shop.example/cancel',
        }),
        400,
        'ERR_PROVIDER_REJECTED',
      );
    });

    it('paymentMethods with filters: sends country and currency, reads availability and reasons', async () => {
      const nl = await h.client.paymentMethods({ country: 'NL', currency: 'EUR' });
      expect(h.sent[0]!.url.searchParams.get('country')).to.equal('NL');
      expect(h.sent[0]!.url.searchParams.get('currency')).to.equal('EUR');
      expect(h.sent[0]!.url.searchParams.has('merchant_id')).to.equal(false);
      expect(nl.data.merchant_id).to.equal('1001');
      const byName = (list: typeof nl.data.payment_methods, name: string) =>
        list.find((m) => m.payment_method === name)!;
      expect(byName(nl.data.payment_methods, 'ideal').available).to.equal(true);
      expect(byName(nl.data.payment_methods, 'psc').available).to.equal(true);

      const de = await h.client.paymentMethods({ country: 'DE', currency: 'USD' });
      const ideal = byName(de.data.payment_methods, 'ideal');
      expect(ideal.available).to.equal(false);
      expect(ideal.unavailable_reasons).to.include.members([
        'country_not_supported',
        'currency_not_supported',
      ]);
      expect(ideal.supported_countries).to.deep.equal(['NL']);
      expect(byName(de.data.payment_methods, 'psc').available).to.equal(true);
    });
  });

  describe('webhook management', () => {
    let h: Harness;
    let rx: Receiver;
    beforeEach(async () => {
      gw = await start({ seed: allowPrivateUrls });
      rx = await startReceiver();
      closers.push(() => rx.close());
      h = clientOn(gw);
    });

    it('every endpoint: put (create, update), get, test, events, event, replay, rotate, delete', async () => {
      await gatewayErrorOf(h.client.getWebhook(), 404, 'ERR_NOT_FOUND');

      const created = await h.client.putWebhook({ url: rx.url });
      expect(created.status).to.equal(201);
      expect(created.data.secret).to.match(/^whsec_/);
      expect(created.data.endpoint.url).to.equal(rx.url);
      expect(created.data.endpoint.id).to.be.a('string');
      expect(created.data.endpoint.is_active).to.equal(true);

      const updated = await h.client.putWebhook({ url: rx.url, events: ['transaction.captured'] });
      expect(updated.status).to.equal(200);
      expect(updated.data.secret).to.equal(null);
      expect(updated.data.endpoint.events).to.deep.equal(['transaction.captured']);
      expect(updated.data.endpoint.id).to.equal(created.data.endpoint.id);

      const read = await h.client.getWebhook();
      expect(read.data.url).to.equal(rx.url);
      expect(read.data.delivery_status).to.equal('healthy');
      expect(read.data.events).to.deep.equal(['transaction.captured']);

      const ping = await h.client.testWebhook();
      expect(ping.data.success).to.equal(true);
      expect(ping.data.status_code).to.equal(200);
      expect(rx.received).to.have.length(1);
      expect((rx.received[0]!.json as Json).type).to.equal('webhook.ping');

      const paid = await h.client.createTransaction({
        ...EUR(1234),
        type: 'sale',
        reference: uniqueReference('wh'),
        card: card(),
      });
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(2);

      const list = await h.client.listEvents({
        status: 'delivered',
        eventType: 'transaction.captured',
        perPage: 10,
      });
      expect(h.sent.at(-1)!.url.searchParams.get('per_page')).to.equal('10');
      expect(h.sent.at(-1)!.url.searchParams.get('event_type')).to.equal('transaction.captured');
      expect(list.data.pagination).to.deep.equal({ current_page: 1, last_page: 1, per_page: 10, total: 1 });
      const row = list.data.events[0]!;
      expect(row.id).to.match(/^evt_/);
      expect(row.transaction_id).to.equal(paid.data.id);
      expect(row.status).to.equal('delivered');
      expect(row.last_attempt?.status_code).to.equal(200);

      const byTransaction = await h.client.listEvents({ transactionId: paid.data.id });
      expect(byTransaction.data.events.map((e) => e.id)).to.deep.equal([row.id]);

      const detail = await h.client.getEvent(row.id);
      expect(detail.data.payload.id).to.equal(row.id);
      expect(detail.data.payload.type).to.equal('transaction.captured');
      expect(detail.data.payload.data.transaction?.amount).to.equal(1234);
      expect(detail.data.payload.data.transaction?.id).to.equal(paid.data.id);
      expect(detail.data.delivery_attempts).to.have.length(1);

      const replay = await h.client.replayEvent(row.id);
      expect(replay.data.event.id).to.equal(row.id);
      expect(replay.data.event.last_attempt).to.equal(null);
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(3);
      expect(rx.received[2]!.headers['x-service-replay']).to.equal('true');

      const rotated = await h.client.rotateWebhookSecret();
      expect(rotated.data.secret).to.match(/^whsec_/);
      expect(rotated.data.secret).to.not.equal(created.data.secret);
      expect(rotated.data.endpoint.id).to.equal(created.data.endpoint.id);

      const deleted = await h.client.deleteWebhook();
      expect(deleted.data).to.equal(null);
      expect(h.sent.at(-1)!.method).to.equal('DELETE');
      await gatewayErrorOf(h.client.getWebhook(), 404, 'ERR_NOT_FOUND');
      await gatewayErrorOf(h.client.deleteWebhook(), 404, 'ERR_NOT_FOUND');
      // history stays readable after the delete
      expect((await h.client.getEvent(row.id)).data.id).to.equal(row.id);
    });

    it('a private URL without the sandbox setting is 422 with errors.url', async () => {
      const strict = await start();
      const client = clientOn(strict).client;
      const error = await gatewayErrorOf(client.putWebhook({ url: rx.url }), 422, 'ERR_VALIDATION_FAILED');
      expect(error.details.errors).to.have.property('url');
    });
  });

  describe('partner keys', () => {
    let partner: Harness;
    let rx: Receiver;
    beforeEach(async () => {
      gw = await start({ seed: allowPrivateUrls });
      rx = await startReceiver();
      closers.push(() => rx.close());
      partner = clientOn(gw, { apiKey: PARTNER_KEY, merchantId: 1001 });
    });

    it('creates a transaction for the linked merchant: merchant_id in the body', async () => {
      const answer = await partner.client.createTransaction({
        ...EUR(1234),
        type: 'auth',
        reference: uniqueReference('partner'),
        card: card(),
      });
      expect(partner.sent[0]!.headers.authorization).to.equal(`Bearer ${PARTNER_KEY}`);
      expect(partner.sent[0]!.body.merchant_id).to.equal(1001);
      expect(answer.data.merchant_id).to.equal('1001');
      expect(answer.data.amount).to.equal(1234);
      expect((await partner.client.transactionStatus(answer.data.id)).data.status).to.equal('auth');
      // capture is merchant-only (gateway-api.md, Authentication rule 2)
      await gatewayErrorOf(
        partner.client.capture(answer.data.id, EUR(1234), 'partner-capture'),
        403,
        'ERR_AUTH_FAILED',
      );
    });

    it('reads payment methods for the linked merchant: merchant_id in the query', async () => {
      const answer = await partner.client.paymentMethods({ country: 'NL' });
      expect(partner.sent[0]!.url.searchParams.get('merchant_id')).to.equal('1001');
      expect(partner.sent[0]!.url.searchParams.get('country')).to.equal('NL');
      expect(answer.data.merchant_id).to.equal('1001');
      expect(answer.data.payment_methods.map((m) => m.payment_method)).to.have.members(['ideal', 'psc']);
    });

    it('opens a payment session for the linked merchant: merchant_id in the body', async () => {
      const answer = await partner.client.createPaymentSession({
        ...EUR(500),
        reference: uniqueReference('partner-ps'),
        paymentMethod: 'psc',
        successUrl: 'https://shop.example/ok',
        cancelUrl: 'https://shop.example/cancel',
      });
      expect(partner.sent[0]!.body.merchant_id).to.equal(1001);
      expect(answer.data.amount).to.equal(500);
    });

    it('without merchantId a partner key cannot initiate: 400 ERR_AUTH_FAILED', async () => {
      const bare = clientOn(gw, { apiKey: PARTNER_KEY });
      await gatewayErrorOf(
        bare.client.createTransaction({
          ...EUR(1234),
          type: 'sale',
          reference: uniqueReference('p'),
          card: card(),
        }),
        400,
        'ERR_AUTH_FAILED',
      );
      await gatewayErrorOf(bare.client.getWebhook(), 400, 'ERR_AUTH_FAILED');
    });

    it('manages the webhook of the linked merchant: merchant_id in every write body and GET/DELETE query', async () => {
      const created = await partner.client.putWebhook({ url: rx.url });
      expect(created.data.secret).to.match(/^whsec_/);
      await partner.client.getWebhook();
      await partner.client.testWebhook();
      await partner.client.createTransaction({
        ...EUR(100),
        type: 'sale',
        reference: uniqueReference('p'),
        card: card(),
      });
      await gw.gateway.controls.tick();
      const list = await partner.client.listEvents();
      expect(list.data.events).to.have.length(1);
      await partner.client.getEvent(list.data.events[0]!.id);
      await partner.client.replayEvent(list.data.events[0]!.id);
      await partner.client.rotateWebhookSecret();
      await partner.client.deleteWebhook();

      const where = partner.sent.map((s) => `${s.method} ${s.url.pathname}`);
      const expectInBody = (path: string) => {
        const request = partner.sent.find((s) => s.url.pathname === path && s.method !== 'GET')!;
        expect(request.body?.merchant_id, `${path} body`).to.equal(1001);
      };
      const expectInQuery = (method: string, path: string) => {
        const request = partner.sent.find((s) => s.url.pathname === path && s.method === method)!;
        expect(request.url.searchParams.get('merchant_id'), `${method} ${path} query`).to.equal('1001');
      };
      expect(where).to.include('PUT /api/v1/webhook');
      expectInBody('/api/v1/webhook');
      expectInBody('/api/v1/webhook/test');
      expectInBody('/api/v1/webhook/rotate-secret');
      expectInBody(`/api/v1/webhook/events/${list.data.events[0]!.id}/replay`);
      expectInQuery('GET', '/api/v1/webhook');
      expectInQuery('DELETE', '/api/v1/webhook');
      expectInQuery('GET', '/api/v1/webhook/events');
      expect(
        partner.seen.every((s) => s.status < 300),
        JSON.stringify(partner.seen),
      ).to.equal(true);
    });
  });

  describe('currencies with 0 and 3 decimals', () => {
    let h: Harness;
    beforeEach(async () => {
      gw = await start({
        seed: (seed) => {
          seed.merchants[0]!.currencies.push('KWD');
        },
      });
      h = clientOn(gw);
    });

    const pay = (amountMinor: number, currency: CurrencyCode) =>
      h.client.createTransaction({
        amountMinor,
        currency,
        type: 'sale',
        reference: uniqueReference('fx'),
        card: card(),
      });

    it('500 JPY goes out as 500 and comes back 500', async () => {
      const answer = await pay(500, 'JPY');
      expect(h.sent[0]!.body.amount).to.equal(500);
      expect(answer.data.amount).to.equal(500);
      expect(answer.data.currency).to.equal('JPY');
    });

    it('1234 fils goes out as 1.234 KWD and comes back 1234', async () => {
      const answer = await pay(1234, 'KWD');
      expect(h.sent[0]!.body.amount).to.equal(1.234);
      expect(answer.data.amount).to.equal(1234);
      expect(answer.data.currency).to.equal('KWD');
    });

    it('any minor amount up to 1,000,000.00 round-trips exactly in EUR, JPY and KWD, capture included', async () => {
      const maxMinor = { EUR: 100_000_000, JPY: 1_000_000, KWD: 1_000_000_000 } as const;
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom('EUR', 'JPY', 'KWD')
            .chain((currency) =>
              fc.tuple(fc.constant(currency), fc.integer({ min: 1, max: maxMinor[currency] })),
            ),
          async ([currency, amountMinor]) => {
            const auth = await h.client.createTransaction({
              amountMinor,
              currency,
              type: 'auth',
              reference: uniqueReference('fx'),
              card: card(),
            });
            expect(auth.data.amount).to.equal(amountMinor);
            const captured = await h.client.capture(
              auth.data.id,
              { amountMinor, currency },
              `fx-${auth.data.id}`,
            );
            expect(captured.data.amount).to.equal(amountMinor);
          },
        ),
        {
          numRuns: 40,
          examples: [[['EUR', 29]], [['KWD', 1]], [['EUR', 100_000_000]], [['KWD', 1_000_000_000]]],
        },
      );
    });
  });

  describe('retries the sandbox provokes', () => {
    it('a 429 is retried after Retry-After seconds (the sandbox clock moves in the sleep) and succeeds', async () => {
      gw = await start({
        seed: (seed) => {
          seed.settings = { ...seed.settings, rate_limit: { limit: 2, window_s: 60, slowdown: [] } };
        },
      });
      const h = clientOn(gw, {}, (ms) => gw.clock.advance(ms));
      await h.client.paymentMethods();
      gw.clock.advance(15_000);
      await h.client.paymentMethods();
      const third = await h.client.paymentMethods({ country: 'NL' });

      expect(h.seen.map((s) => s.status)).to.deep.equal([200, 200, 429, 200]);
      const retryAfter = Number(h.seen[2]!.retryAfter);
      expect(retryAfter).to.equal(45);
      expect(h.sleeps).to.deep.equal([retryAfter * 1000]);
      expect(third.data.country).to.equal('NL');
      expect(h.sent[3]!.url.search).to.equal(h.sent[2]!.url.search);
    });

    it('a 429 on POST /transactions is retried too: the gateway refused before acting', async () => {
      gw = await start({
        seed: (seed) => {
          seed.settings = { ...seed.settings, rate_limit: { limit: 2, window_s: 60, slowdown: [] } };
        },
      });
      const h = clientOn(gw, {}, (ms) => gw.clock.advance(ms));
      await h.client.paymentMethods();
      await h.client.paymentMethods();
      const reference = uniqueReference('rl');
      const paid = await h.client.createTransaction({ ...EUR(1234), type: 'sale', reference, card: card() });
      expect(h.seen.map((s) => s.status)).to.deep.equal([200, 200, 429, 200]);
      expect(h.sleeps).to.deep.equal([60_000]);
      const sales = [...gw.gateway.deps.state.transactions.values()].filter((t) => t.reference === reference);
      expect(sales.map((t) => String(t.id))).to.deep.equal([paid.data.id]);
    });

    it('a 429 that outlasts the attempts is a GatewayError 429 after 4 attempts', async () => {
      gw = await start({
        seed: (seed) => {
          seed.settings = { ...seed.settings, rate_limit: { limit: 1, window_s: 60, slowdown: [] } };
        },
      });
      // The client's clock moves with its sleeps, so its budget lets each retry go once the Retry-After
      // has passed; the gateway's clock does not move, so its window never ends.
      let clientNow = gw.clock.now();
      const h = clientOn(gw, { deps: { now: () => clientNow } }, (ms) => {
        clientNow += ms;
      });
      await h.client.paymentMethods();
      const error = await gatewayErrorOf(h.client.paymentMethods(), 429, 'ERR_RATE_LIMITED');
      expect(error.details.retryAfterSeconds).to.equal(60);
      expect(error.retryable).to.equal(true);
      expect(h.seen.map((s) => s.status)).to.deep.equal([200, 429, 429, 429, 429]);
    });

    it('409 in progress: a second call with the same key is retried until the first finishes; one capture', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let entered!: () => void;
      const inCapture = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const gatewaySleeps: number[] = [];
      gw = await start({
        sleep: async (ms) => {
          gatewaySleeps.push(ms);
          entered();
          await held;
        },
      });
      const setup = clientOn(gw);
      const auth = await setup.client.createTransaction({
        ...EUR(1234),
        type: 'auth',
        reference: uniqueReference('inflight'),
        card: card(),
      });
      gw.gateway.controls.setLatency('capture', 1000);

      let first!: Promise<Awaited<ReturnType<GatewayClient['capture']>>>;
      // The second caller's sleeps: the first time nothing changes (so it meets 409 again); the
      // second time the original is let go and finishes before the retry goes out.
      const second = clientOn(gw, {}, async () => {
        if (second.sleeps.length < 2) return;
        release();
        await first;
      });
      const firstCaller = clientOn(gw);
      first = firstCaller.client.capture(auth.data.id, EUR(1234), 'same-key');
      await inCapture;
      const repeated = await second.client.capture(auth.data.id, EUR(1234), 'same-key');
      const original = await first;

      expect(gatewaySleeps).to.deep.equal([1000]);
      expect(second.seen.map((s) => s.status)).to.deep.equal([409, 409, 200]);
      expect(second.sent.map((s) => s.headers['idempotency-key'])).to.deep.equal([
        'same-key',
        'same-key',
        'same-key',
      ]);
      expect(second.sleeps).to.deep.equal([100, 200]); // backoff at random 0.5: 200 * 2^(n-1) / 2
      expect(original.replayed).to.equal(false);
      expect(repeated.replayed).to.equal(true);
      expect(repeated.data).to.deep.equal(original.data);
      const captures = [...gw.gateway.deps.state.transactions.values()].filter(
        (t) => t.type === 'capture' && String(t.relatedId) === auth.data.id,
      );
      expect(captures, 'only one capture').to.have.length(1);
      expect(firstCaller.sent).to.have.length(1);
    });
  });
});
