import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { inspect } from 'node:util';
import { expect } from 'chai';
import nock from 'nock';
import { DEFAULT_BUDGET, MemoryBudget } from '../../../src/client/budget.js';
import { GatewayBudgetExceeded, GatewayError, GatewayNetworkError } from '../../../src/client/errors.js';
import { GatewayClient, type GatewayClientOptions } from '../../../src/client/gateway-client.js';
import { rejection } from '../../support/client.js';

/**
 * The client against a scripted gateway (nock on a fake host): the faults a real sandbox cannot
 * produce on demand. Time is fake: the injected sleep records and moves the injected clock.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests script raw bodies of every shape
type Json = any;

const HOST = 'https://gateway.test';
const KEY = 'sk_test_merchant_1001';
const CARD_NUMBER = '4000000000000002';
const card = { number: CARD_NUMBER, exp_month: 12, exp_year: 2034, cvv: '123', name: 'Ada Lovelace' };

const ok = (data: unknown, extra: Record<string, unknown> = {}) => ({
  success: true,
  message: 'OK',
  code: '',
  data,
  ...extra,
});
const failed = (
  code: string,
  message = 'Refused.',
  data: unknown = null,
  errors?: Record<string, string[]>,
) => ({
  success: false,
  message,
  code,
  data,
  ...(errors ? { errors } : {}),
});

/** A transaction record as the gateway sends it (integer ids, minor units). */
function record(overrides: Record<string, unknown> = {}) {
  return {
    id: 100123,
    related_trans_id: null,
    merchant_id: 1001,
    cardholder_id: 7,
    amount: 1234,
    amount_formatted: '12.34',
    currency: 'EUR',
    status: 'captured',
    transaction_type: 'sale',
    merchant_trans_id: 'order-1',
    acquirer_trans_id: 'acq-1',
    acquirer_auth_code: '123456',
    acquirer_ref_num: 'ref-1',
    ip_address: '203.0.113.9',
    refunded_amount: 0,
    created_at: '2026-11-01T12:00:00.000000Z',
    updated_at: '2026-11-01T12:00:00.000000Z',
    ...overrides,
  };
}

interface Harness {
  client: GatewayClient;
  sleeps: number[];
  now(): number;
}

function clientFor(options: Partial<GatewayClientOptions> = {}): Harness {
  let t = Date.UTC(2026, 10, 1, 12);
  const sleeps: number[] = [];
  const client = new GatewayClient({
    baseUrl: HOST,
    apiKey: KEY,
    ...options,
    deps: {
      sleep: async (ms) => {
        sleeps.push(ms);
        t += ms;
      },
      now: () => t,
      random: () => 0.5,
      ...options.deps,
    },
  });
  return { client, sleeps, now: () => t };
}

const sale = (client: GatewayClient, reference = 'order-1') =>
  client.createTransaction({ amountMinor: 1234, currency: 'EUR', type: 'sale', reference, card });

async function networkErrorOf(promise: Promise<unknown>, kind: GatewayNetworkError['kind']) {
  const error = await rejection(promise);
  expect(error, String(error)).to.be.instanceOf(GatewayNetworkError);
  expect((error as GatewayNetworkError).kind, String(error)).to.equal(kind);
  return error as GatewayNetworkError;
}

async function gatewayErrorOf(promise: Promise<unknown>, status: number, code: string) {
  const error = await rejection(promise);
  expect(error, String(error)).to.be.instanceOf(GatewayError);
  expect((error as GatewayError).status).to.equal(status);
  expect((error as GatewayError).code).to.equal(code);
  return error as GatewayError;
}

/** Every way an error can end up in a log: none may carry the card number. */
function expectNoCardData(error: unknown): void {
  const e = error as Error;
  for (const text of [String(e), e.message, e.stack ?? '', inspect(e, { depth: 10 }), JSON.stringify(e)]) {
    expect(text).to.not.include(CARD_NUMBER);
  }
}

/** A test that also fails when a scripted answer was never asked for (the client sent too few requests). */
function scripted(title: string, body: () => Promise<void>): void {
  it(title, async () => {
    await body();
    expect(nock.pendingMocks(), 'every scripted answer was asked for').to.deep.equal([]);
  });
}

describe('client against scripted faults (nock)', () => {
  before(() => {
    // nock intercepts once imported; restored after, it must be switched on again for a second run.
    if (!nock.isActive()) nock.activate();
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
  });
  after(() => {
    nock.cleanAll();
    nock.enableNetConnect();
    // Give http back as it was: later files in the same mocha process must not go through nock's
    // interceptor (it left a request whose answer was a 431 and a closed socket waiting forever).
    nock.restore();
  });
  afterEach(() => {
    nock.cleanAll();
  });

  describe('5xx answers', () => {
    scripted('500 then 200 on a GET: success after one retry, with the first backoff', async () => {
      nock(HOST).get('/api/v1/transactions/100123/status').reply(500, failed('ERR_UNEXPECTED', 'Oops.'));
      nock(HOST).get('/api/v1/transactions/100123/status').reply(200, ok(record()));
      const h = clientFor();
      const answer = await h.client.transactionStatus('100123');
      expect(answer.data.id).to.equal('100123');
      expect(h.sleeps).to.deep.equal([100]); // min(5000, 200 * 2^0) * 0.5
    });

    scripted('500 four times: GatewayError 500 after exactly 4 attempts and 3 growing backoffs', async () => {
      nock(HOST).get('/api/v1/transactions/100123/status').times(4).reply(500, failed('ERR_UNEXPECTED'));
      const fifth = nock(HOST).get('/api/v1/transactions/100123/status').reply(200, ok(record()));
      const h = clientFor();
      const error = await gatewayErrorOf(h.client.transactionStatus('100123'), 500, 'ERR_UNEXPECTED');
      expect(error.retryable).to.equal(true);
      expect(h.sleeps).to.deep.equal([100, 200, 400]);
      expect(fifth.isDone(), 'no fifth attempt').to.equal(false);
      nock.cleanAll();
    });

    scripted('maxAttempts is configurable: 2 attempts, one backoff', async () => {
      nock(HOST).get('/api/v1/transactions/100123/status').times(2).reply(500, failed('ERR_UNEXPECTED'));
      const h = clientFor({ retry: { maxAttempts: 2 } });
      await gatewayErrorOf(h.client.transactionStatus('100123'), 500, 'ERR_UNEXPECTED');
      expect(h.sleeps).to.deep.equal([100]);
    });

    scripted(
      '500 on POST /transactions without a key IS retried (gateway-api.md: 500 is safe to retry)',
      async () => {
        const bodies: Json[] = [];
        nock(HOST)
          .post('/api/v1/transactions', (body) => {
            bodies.push(body);
            return true;
          })
          .reply(500, failed('ERR_UNEXPECTED'));
        nock(HOST)
          .post('/api/v1/transactions', (body) => {
            bodies.push(body);
            return true;
          })
          .reply(200, ok(record()));
        const h = clientFor();
        const answer = await sale(h.client);
        expect(answer.data.amount).to.equal(1234);
        expect(bodies).to.have.length(2);
        expect(bodies[1]).to.deep.equal(bodies[0]);
        expect(bodies[0]).to.not.have.property('idempotency_key');
        expect(h.sleeps).to.deep.equal([100]);
      },
    );

    scripted(
      'a 500 whose sale was in fact recorded: the retry meets ERR_DUPLICATE naming the transaction',
      async () => {
        // What retrying an unkeyed POST after a 500 can cost: the reference protects against a second
        // charge, and the caller learns the id to look up instead of the record.
        nock(HOST).post('/api/v1/transactions').reply(500, failed('ERR_UNEXPECTED'));
        nock(HOST)
          .post('/api/v1/transactions')
          .reply(409, failed('ERR_DUPLICATE', 'Reference in use.', { transaction_id: 100123 }));
        const h = clientFor();
        const error = await gatewayErrorOf(sale(h.client), 409, 'ERR_DUPLICATE');
        expect((error.details.data as Json).transaction_id).to.equal(100123);
        expect(h.sleeps).to.deep.equal([100]);
      },
    );

    scripted(
      '502 ERR_GATEWAY_ERROR on POST /payment-sessions (no key) is not retried: only 500 is called safe',
      async () => {
        nock(HOST).post('/api/v1/payment-sessions').reply(502, failed('ERR_GATEWAY_ERROR', 'Provider down.'));
        const h = clientFor();
        const error = await gatewayErrorOf(
          h.client.createPaymentSession({
            amountMinor: 1000,
            currency: 'EUR',
            reference: 'ps-1',
            paymentMethod: 'psc',
            successUrl: 'https://shop.example/ok',
            cancelUrl: 'https://shop.example/cancel',
          }),
          502,
          'ERR_GATEWAY_ERROR',
        );
        expect(error.retryable).to.equal(true);
        expect(h.sleeps).to.deep.equal([]);
      },
    );
  });

  describe('timeouts', () => {
    scripted(
      'a timeout on capture WITH a key is retried, with the same Idempotency-Key every time',
      async () => {
        const keys: unknown[] = [];
        const scope = nock(HOST);
        for (let i = 0; i < 2; i++) {
          scope
            .post('/api/v1/transactions/100123/capture')
            .delay(500)
            .reply(function () {
              keys.push(this.req.headers['idempotency-key']);
              return [200, ok({ transaction: record({ id: 100124 }) })];
            });
        }
        scope.post('/api/v1/transactions/100123/capture').reply(function () {
          keys.push(this.req.headers['idempotency-key']);
          return [200, ok({ transaction: record({ id: 100124, transaction_type: 'capture' }) })];
        });
        const h = clientFor({ timeoutMs: 50 });
        const answer = await h.client.capture('100123', { amountMinor: 1234, currency: 'EUR' }, 'cap-key-7');
        expect(answer.data.transaction_type).to.equal('capture');
        expect(keys).to.deep.equal(['cap-key-7', 'cap-key-7', 'cap-key-7']);
        expect(h.sleeps).to.deep.equal([100, 200]);
      },
    );

    scripted('a timeout on POST /transactions is NOT retried: timeout, sentNothing false', async () => {
      nock(HOST).post('/api/v1/transactions').delay(500).reply(200, ok(record()));
      const second = nock(HOST).post('/api/v1/transactions').reply(200, ok(record()));
      const h = clientFor({ timeoutMs: 50 });
      const error = await networkErrorOf(sale(h.client), 'timeout');
      expect(error.sentNothing).to.equal(false);
      expect(error.message).to.include('POST /api/v1/transactions');
      expect(h.sleeps).to.deep.equal([]);
      expect(second.isDone(), 'never repeated').to.equal(false);
      nock.cleanAll();
    });

    scripted('a timeout on a GET is retried', async () => {
      nock(HOST).get('/api/v1/payment-sessions/ps_1').delay(500).reply(200, ok({}));
      nock(HOST)
        .get('/api/v1/payment-sessions/ps_1')
        .reply(
          200,
          ok({
            payment_session: {
              payment_session_id: 'ps_1',
              transaction_id: 100200,
              payment_method: 'psc',
              status: 'pending_redirect',
              amount: 1000,
              currency: 'EUR',
              checkout_url: `${HOST}/hosted/checkout/ps_1`,
            },
          }),
        );
      const h = clientFor({ timeoutMs: 50 });
      const answer = await h.client.getPaymentSession('ps_1');
      expect(answer.data.transaction_id).to.equal('100200');
      expect(h.sleeps).to.deep.equal([100]);
    });
  });

  describe('connection failures', () => {
    scripted('a connection reset on a GET is retried', async () => {
      nock(HOST)
        .get('/api/v1/payment-methods')
        .replyWithError({ code: 'ECONNRESET', message: 'socket hang up' });
      nock(HOST)
        .get('/api/v1/payment-methods')
        .reply(200, ok({ merchant_id: 1001, country: null, currency: null, payment_methods: [] }));
      const h = clientFor();
      const answer = await h.client.paymentMethods();
      expect(answer.data.payment_methods).to.deep.equal([]);
      expect(h.sleeps).to.deep.equal([100]);
    });

    scripted(
      'a connection reset on POST /transactions is not retried: it may have been applied',
      async () => {
        nock(HOST)
          .post('/api/v1/transactions')
          .replyWithError({ code: 'ECONNRESET', message: 'socket hang up' });
        const h = clientFor();
        const error = await networkErrorOf(sale(h.client), 'connection');
        expect(error.sentNothing).to.equal(false);
        expect(error.message).to.include('ECONNRESET');
        expect(h.sleeps).to.deep.equal([]);
      },
    );

    scripted('ECONNREFUSED on POST /transactions is retried: nothing was sent', async () => {
      nock(HOST).post('/api/v1/transactions').replyWithError({ code: 'ECONNREFUSED', message: 'refused' });
      nock(HOST).post('/api/v1/transactions').reply(200, ok(record()));
      const h = clientFor();
      const answer = await sale(h.client);
      expect(answer.data.id).to.equal('100123');
      expect(h.sleeps).to.deep.equal([100]);
    });

    scripted(
      'ECONNREFUSED every time: GatewayNetworkError connection, sentNothing true, after 4 attempts',
      async () => {
        nock(HOST)
          .post('/api/v1/transactions')
          .times(4)
          .replyWithError({ code: 'ECONNREFUSED', message: 'refused' });
        const h = clientFor();
        const error = await networkErrorOf(sale(h.client), 'connection');
        expect(error.sentNothing).to.equal(true);
        expect(h.sleeps).to.have.length(3);
      },
    );

    scripted(
      'a real refused connection (undici wraps the code in `cause`) is recognised as nothing sent',
      async () => {
        const server = createServer();
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const { port } = server.address() as AddressInfo;
        await new Promise<void>((resolve) => server.close(() => resolve()));
        const h = clientFor({ baseUrl: `http://127.0.0.1:${port}`, retry: { maxAttempts: 2 } });
        const error = await networkErrorOf(sale(h.client), 'connection');
        expect(error.sentNothing).to.equal(true);
        expect(error.message).to.include('ECONNREFUSED');
        expect(h.sleeps, 'retried once').to.deep.equal([100]);
        expectNoCardData(error);
      },
    );

    scripted(
      'a real server that never answers: timeout on the unkeyed POST, and only one request arrives',
      async () => {
        let arrived = 0;
        const sockets = new Set<Socket>();
        const server: Server = createServer(() => {
          arrived++; // never answers
        });
        server.on('connection', (s) => sockets.add(s));
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        try {
          const { port } = server.address() as AddressInfo;
          const h = clientFor({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 50 });
          const error = await networkErrorOf(sale(h.client), 'timeout');
          expect(error.sentNothing).to.equal(false);
          expect(arrived).to.equal(1);
          expectNoCardData(error);
        } finally {
          for (const s of sockets) s.destroy();
          await new Promise<void>((resolve) => server.close(() => resolve()));
        }
      },
    );
  });

  describe('answers that are not the envelope', () => {
    scripted(
      'an HTML 502 page on POST /transactions: GatewayNetworkError malformed, not retried',
      async () => {
        nock(HOST)
          .post('/api/v1/transactions')
          .reply(502, `<html><body><h1>502 Bad Gateway</h1><pre>card=${CARD_NUMBER}</pre></body></html>`, {
            'Content-Type': 'text/html',
          });
        const h = clientFor();
        const error = await networkErrorOf(sale(h.client), 'malformed');
        expect(error.sentNothing).to.equal(false);
        expect(error.message).to.include('502');
        expect(h.sleeps).to.deep.equal([]);
        expectNoCardData(error);
      },
    );

    scripted('JSON without `success`: malformed (a GET is retried, then gives up)', async () => {
      nock(HOST)
        .get('/api/v1/transactions/100123/status')
        .times(4)
        .reply(200, { message: 'OK', code: '', data: record() });
      const h = clientFor();
      await networkErrorOf(h.client.transactionStatus('100123'), 'malformed');
      expect(h.sleeps).to.have.length(3);
    });

    scripted(
      'a 2xx envelope whose data is not a transaction: malformed, naming where, not what',
      async () => {
        nock(HOST)
          .post('/api/v1/transactions')
          .reply(
            200,
            ok({
              id: 100123,
              amount: '12.34',
              currency: 'EUR',
              status: 'captured',
              transaction_type: 'sale',
            }),
          );
        const h = clientFor();
        const error = await networkErrorOf(sale(h.client), 'malformed');
        expect(error.message).to.include('POST /api/v1/transactions');
        expect(error.message).to.not.include('12.34');
      },
    );

    scripted('a non-2xx answer with a well-formed envelope but success true is still an error', async () => {
      nock(HOST)
        .get('/api/v1/transactions/1/status')
        .reply(404, { success: true, message: '', code: '', data: null });
      const h = clientFor();
      const error = await gatewayErrorOf(h.client.transactionStatus('1'), 404, 'HTTP_404');
      expect(error.retryable).to.equal(false);
    });
  });

  describe('429 and 409 in progress', () => {
    scripted('429 with Retry-After: 3 sleeps 3000 ms, then retries and succeeds', async () => {
      nock(HOST).post('/api/v1/transactions').reply(429, failed('ERR_RATE_LIMITED', 'Slow down.'), {
        'Retry-After': '3',
        'X-RateLimit-Remaining': '0',
      });
      nock(HOST).post('/api/v1/transactions').reply(200, ok(record()), { 'X-RateLimit-Remaining': '999' });
      const h = clientFor();
      const answer = await sale(h.client);
      expect(answer.remaining).to.equal(999);
      expect(h.sleeps).to.deep.equal([3000]);
    });

    scripted('429 without Retry-After waits one second', async () => {
      nock(HOST).get('/api/v1/webhook').reply(429, failed('ERR_RATE_LIMITED'));
      nock(HOST)
        .get('/api/v1/webhook')
        .reply(200, ok({ id: 5, url: 'https://shop.example/wh', is_active: true, events: null }));
      const h = clientFor();
      const answer = await h.client.getWebhook();
      expect(answer.data.id).to.equal('5');
      expect(h.sleeps).to.deep.equal([1000]);
    });

    scripted(
      "after a 429 that was not retried, the next foreground call waits out the rest of the gateway's Retry-After",
      async () => {
        nock(HOST).get('/api/v1/webhook').reply(429, failed('ERR_RATE_LIMITED'), { 'Retry-After': '30' });
        nock(HOST)
          .get('/api/v1/webhook')
          .reply(200, ok({ id: 5, url: 'https://shop.example/wh', is_active: true, events: null }));
        const h = clientFor({ retry: { maxAttempts: 1 } });
        const error = await gatewayErrorOf(h.client.getWebhook(), 429, 'ERR_RATE_LIMITED');
        expect(error.details.retryAfterSeconds).to.equal(30);
        expect(h.sleeps).to.deep.equal([]);
        await h.client.getWebhook();
        expect(h.sleeps).to.deep.equal([30_000]);
      },
    );

    scripted(
      'a 429 with budget left (a per-endpoint limit such as test pings) holds back no other call',
      async () => {
        nock(HOST)
          .post('/api/v1/webhook/test')
          .reply(429, failed('ERR_RATE_LIMITED'), { 'Retry-After': '30', 'X-RateLimit-Remaining': '900' });
        nock(HOST)
          .get('/api/v1/webhook')
          .reply(200, ok({ id: 5, url: 'https://shop.example/wh', is_active: true, events: null }));
        const h = clientFor({ retry: { maxAttempts: 1 } });
        await gatewayErrorOf(h.client.testWebhook(), 429, 'ERR_RATE_LIMITED');
        await h.client.getWebhook();
        expect(h.sleeps).to.deep.equal([]);
      },
    );

    scripted('409 ERR_IDEMPOTENT_REQUEST_IN_PROGRESS on a refund is retried with the same key', async () => {
      const keys: unknown[] = [];
      const answers: [number, Json][] = [
        [409, failed('ERR_IDEMPOTENT_REQUEST_IN_PROGRESS', 'Still running.')],
        [409, failed('ERR_IDEMPOTENT_REQUEST_IN_PROGRESS', 'Still running.')],
        [200, ok({ transaction: record({ id: 100125, transaction_type: 'refund', status: 'refunded' }) })],
      ];
      for (const [status, body] of answers) {
        nock(HOST)
          .post('/api/v1/transactions/100123/refund', { amount: 12.34, reason: 'customer request' })
          .reply(function () {
            keys.push(this.req.headers['idempotency-key']);
            return [status, body, status === 200 ? { 'Idempotency-Replayed': 'true' } : {}];
          });
      }
      const h = clientFor();
      const answer = await h.client.refund(
        '100123',
        { amountMinor: 1234, currency: 'EUR' },
        'customer request',
        'refund-key-1',
      );
      expect(answer.data.status).to.equal('refunded');
      expect(answer.replayed).to.equal(true);
      expect(keys).to.deep.equal(['refund-key-1', 'refund-key-1', 'refund-key-1']);
      expect(h.sleeps).to.deep.equal([100, 200]);
    });

    scripted(
      '409 ERR_IDEMPOTENCY_CONFLICT and ERR_DUPLICATE are not retried; ERR_DUPLICATE carries data.transaction_id',
      async () => {
        nock(HOST).post('/api/v1/transactions/100123/void').reply(409, failed('ERR_IDEMPOTENCY_CONFLICT'));
        nock(HOST)
          .post('/api/v1/transactions')
          .reply(409, failed('ERR_DUPLICATE', 'Reference in use.', { transaction_id: 100100 }));
        const h = clientFor();
        await gatewayErrorOf(
          h.client.void('100123', { amountMinor: 1234, currency: 'EUR' }, 'cancel', 'void-1'),
          409,
          'ERR_IDEMPOTENCY_CONFLICT',
        );
        const duplicate = await gatewayErrorOf(sale(h.client), 409, 'ERR_DUPLICATE');
        expect(duplicate.details.data).to.deep.equal({ transaction_id: 100100 });
        expect(h.sleeps).to.deep.equal([]);
      },
    );

    scripted('422 keeps the validation errors map', async () => {
      nock(HOST)
        .post('/api/v1/transactions')
        .reply(
          422,
          failed('ERR_VALIDATION_FAILED', 'Invalid.', null, { 'card.exp_month': ['must be 1 to 12'] }),
          { 'X-Request-Id': 'req-42' },
        );
      const h = clientFor();
      const error = await gatewayErrorOf(sale(h.client), 422, 'ERR_VALIDATION_FAILED');
      expect(error.details.errors).to.deep.equal({ 'card.exp_month': ['must be 1 to 12'] });
      expect(error.details.requestId).to.equal('req-42');
      expect(h.sleeps).to.deep.equal([]);
    });
  });

  describe('parsing answers', () => {
    scripted('unknown fields, in the envelope and in data, are ignored', async () => {
      nock(HOST)
        .get('/api/v1/transactions/100123/status')
        .reply(
          200,
          ok(record({ brand_new_field: { nested: true }, risk_score: 12 }), { trace: 'abc', meta: { v: 2 } }),
        );
      const h = clientFor();
      const answer = await h.client.transactionStatus('100123');
      expect(answer.data.amount).to.equal(1234);
      expect(answer.data.related_trans_id).to.equal(null);
      expect(answer.data).to.not.have.property('brand_new_field');
      expect(answer.data).to.not.have.property('risk_score');
    });

    scripted(
      'the transaction record parses directly in `data` and under `data.transaction`, for every operation',
      async () => {
        const direct = record();
        const nested = { transaction: record(), other: 'ignored' };
        for (const data of [direct, nested]) {
          nock(HOST).post('/api/v1/transactions').reply(200, ok(data));
          nock(HOST).get('/api/v1/transactions/100123/status').reply(200, ok(data));
          nock(HOST).post('/api/v1/transactions/100123/capture').reply(200, ok(data));
          nock(HOST).post('/api/v1/transactions/100123/refund').reply(200, ok(data));
          nock(HOST).post('/api/v1/transactions/100123/void').reply(200, ok(data));
        }
        const h = clientFor();
        const money = { amountMinor: 1234, currency: 'EUR' as const };
        for (let i = 0; i < 2; i++) {
          const results = [
            await sale(h.client, `order-${i}`),
            await h.client.transactionStatus('100123'),
            await h.client.capture('100123', money, `c-${i}`),
            await h.client.refund('100123', money, undefined, `r-${i}`),
            await h.client.void('100123', money, undefined, `v-${i}`),
          ];
          for (const r of results) {
            expect(r.data.id).to.equal('100123');
            expect(r.data.amount).to.equal(1234);
            expect(r.data.status).to.equal('captured');
          }
        }
      },
    );

    scripted('numeric and string ids both come out as strings; a null related id stays null', async () => {
      nock(HOST)
        .get('/api/v1/transactions/100124/status')
        .reply(200, ok(record({ id: 100124, related_trans_id: 100123, merchant_id: 1001 })));
      nock(HOST)
        .get('/api/v1/transactions/txn_9f8e/status')
        .reply(
          200,
          ok({ transaction: record({ id: 'txn_9f8e', related_trans_id: 'txn_1a2b', merchant_id: 'm_1' }) }),
        );
      nock(HOST)
        .get('/api/v1/webhook/events')
        .reply(
          200,
          ok({
            events: [
              {
                id: 'evt_1',
                event_type: 'transaction.captured',
                transaction_id: 100124,
                status: 'delivered',
                attempts: 1,
                created_at: 'x',
              },
              {
                id: 'evt_2',
                event_type: 'transaction.captured',
                transaction_id: 'txn_9f8e',
                status: 'pending',
                attempts: 0,
                created_at: 'x',
              },
            ],
            pagination: { current_page: 1, last_page: 1, per_page: 25, total: 2 },
          }),
        );
      const h = clientFor();
      const numeric = await h.client.transactionStatus('100124');
      expect(numeric.data.id).to.equal('100124');
      expect(numeric.data.related_trans_id).to.equal('100123');
      expect(numeric.data.merchant_id).to.equal('1001');
      const opaque = await h.client.transactionStatus('txn_9f8e');
      expect(opaque.data.id).to.equal('txn_9f8e');
      expect(opaque.data.related_trans_id).to.equal('txn_1a2b');
      const events = await h.client.listEvents();
      expect(events.data.events.map((e) => e.transaction_id)).to.deep.equal(['100124', 'txn_9f8e']);
    });

    scripted('ids with reserved characters are escaped in the path', async () => {
      nock(HOST)
        .get('/api/v1/transactions/a%2Fb%3Fc/status')
        .reply(200, ok(record({ id: 'a/b?c' })));
      const h = clientFor();
      expect((await h.client.transactionStatus('a/b?c')).data.id).to.equal('a/b?c');
    });

    scripted(
      'PUT /webhook: creation gives {endpoint, secret}; an update gives the bare record and secret null',
      async () => {
        const endpoint = {
          id: 9,
          merchant_id: 1001,
          url: 'https://shop.example/wh',
          is_active: true,
          events: null,
          has_secret: true,
        };
        nock(HOST)
          .put('/api/v1/webhook')
          .reply(201, ok({ endpoint, secret: 'whsec_abc' }));
        nock(HOST).put('/api/v1/webhook').reply(200, ok(endpoint));
        const h = clientFor();
        const created = await h.client.putWebhook({ url: endpoint.url });
        expect(created.data.secret).to.equal('whsec_abc');
        expect(created.data.endpoint.id).to.equal('9');
        const updated = await h.client.putWebhook({ url: endpoint.url, isActive: false });
        expect(updated.data.secret).to.equal(null);
        expect(updated.data.endpoint.id).to.equal('9');
      },
    );
  });

  describe('the request itself', () => {
    scripted('auth, JSON headers, amounts in major units, and no body or content type on a GET', async () => {
      let postHeaders: Record<string, unknown> = {};
      let postBody: Json;
      let getHeaders: Record<string, unknown> = {};
      nock(HOST)
        .post('/api/v1/transactions')
        .reply(function (_uri, body) {
          postHeaders = this.req.headers;
          postBody = body;
          return [200, ok(record())];
        });
      nock(HOST)
        .get('/api/v1/transactions/100123/status')
        .reply(function () {
          getHeaders = this.req.headers;
          return [200, ok(record())];
        });
      const h = clientFor();
      await sale(h.client);
      await h.client.transactionStatus('100123');
      expect(postHeaders.authorization).to.equal(`Bearer ${KEY}`);
      expect(postHeaders['content-type']).to.equal('application/json');
      expect(postHeaders.accept).to.equal('application/json');
      expect(postHeaders).to.not.have.property('idempotency-key');
      expect(postBody).to.deep.include({
        amount: 12.34,
        currency: 'EUR',
        transaction_type: 'sale',
        reference: 'order-1',
      });
      expect(getHeaders.authorization).to.equal(`Bearer ${KEY}`);
      expect(getHeaders).to.not.have.property('content-type');
    });

    scripted('a trailing slash on baseUrl is harmless', async () => {
      nock(HOST)
        .get('/api/v1/transactions/1/status')
        .reply(200, ok(record({ id: 1 })));
      const h = clientFor({ baseUrl: `${HOST}/` });
      expect((await h.client.transactionStatus('1')).data.id).to.equal('1');
    });
  });

  describe('the rate budget inside the client', () => {
    const status = () => nock(HOST).get('/api/v1/transactions/1/status');

    scripted(
      'background calls beyond their reserved share wait while the last X-RateLimit-Remaining was at or below 500; foreground calls do not',
      async () => {
        status().reply(200, ok(record({ id: 1 })), { 'X-RateLimit-Remaining': '500' });
        status()
          .times(2)
          .reply(200, ok(record({ id: 1 })), { 'X-RateLimit-Remaining': '499' });
        const budget = new MemoryBudget(() => h.now(), { ...DEFAULT_BUDGET, backgroundReserved: 0 });
        const h = clientFor({ budget });
        await h.client.transactionStatus('1', 'checkout');
        await h.client.transactionStatus('1', 'checkout');
        expect(h.sleeps).to.deep.equal([]);
        await h.client.transactionStatus('1', 'poller');
        expect(h.sleeps).to.deep.equal([60_000]);
      },
    );

    scripted(
      'a checkout call the budget would hold past 5 s gives up at once: GatewayBudgetExceeded, nothing sent, not retried',
      async () => {
        const budget = new MemoryBudget(() => h.now(), {
          ...DEFAULT_BUDGET,
          keyPerMinute: 3,
          backgroundPerMinute: 1,
          backgroundReserved: 1,
        });
        const h = clientFor({ budget });
        status()
          .times(2)
          .reply(200, ok(record({ id: 1 })));
        await h.client.transactionStatus('1', 'checkout');
        await h.client.transactionStatus('1', 'landing');
        // Checkout traffic's share (3 - 1) is spent for the minute: the next would wait 60 s.
        const error = await rejection(h.client.transactionStatus('1', 'checkout'));
        expect(error).to.be.instanceOf(GatewayBudgetExceeded);
        expect((error as GatewayBudgetExceeded).retryAfterSeconds).to.equal(60);
        expect((error as GatewayBudgetExceeded).sentNothing).to.equal(true);
        expect(h.sleeps, 'never slept: the wait was longer than a shopper may wait').to.deep.equal([]);
        expect(nock.pendingMocks()).to.deep.equal([]);
        // The background share is the poller's still.
        status().reply(200, ok(record({ id: 1 })));
        await h.client.transactionStatus('1', 'poller');
        expect(h.sleeps).to.deep.equal([]);
      },
    );

    scripted('a checkout call waits for the budget when the wait is short (at most 5 s)', async () => {
      const budget = new MemoryBudget(() => h.now());
      const h = clientFor({ budget });
      await budget.observe(null, 4); // a 429's Retry-After of 4 s
      status().reply(200, ok(record({ id: 1 })));
      await h.client.transactionStatus('1', 'checkout');
      expect(h.sleeps).to.deep.equal([4000]);
    });

    scripted('background calls past the burst are paced at 400 a minute', async () => {
      status()
        .times(70)
        .reply(200, ok(record({ id: 1 })));
      const h = clientFor();
      const start = h.now();
      for (let i = 0; i < 70; i++) await h.client.transactionStatus('1', 'poller');
      // 66 go in the burst (a sixth of 400); each of the other 4 waits one emission interval, 150 ms
      expect(h.sleeps).to.deep.equal([150, 150, 150, 150]);
      expect(h.now() - start).to.equal(600);
    });

    scripted(
      'every attempt of a background request, retries included, waits until the budget admits it',
      async () => {
        status().reply(500, failed('ERR_UNEXPECTED'));
        status().reply(200, ok(record({ id: 1 })));
        // Six a minute: one at once, then one every 10 s.
        const budget = new MemoryBudget(() => h.now(), {
          ...DEFAULT_BUDGET,
          backgroundPerMinute: 6,
          backgroundReserved: 0,
        });
        const h = clientFor({ budget });
        await h.client.transactionStatus('1', 'poller');
        // The backoff (100 ms), then the rest of the 10 s until the budget admits the second attempt.
        expect(h.sleeps).to.deep.equal([100, 9900]);
        const spent = await budget.spending(1);
        expect(spent[0]!.byCaller).to.deep.equal({ poller: 2 });
      },
    );
  });

  describe('card data never appears in an error', () => {
    scripted('not in a decline', async () => {
      nock(HOST)
        .post('/api/v1/transactions')
        .reply(
          400,
          failed(
            'ERR_CARD_DO_NOT_HONOR',
            'Do not honour.',
            record({ status: 'failed', status_reason: 'do_not_honor' }),
          ),
        );
      const h = clientFor();
      const error = await gatewayErrorOf(sale(h.client), 400, 'ERR_CARD_DO_NOT_HONOR');
      expect((error.details.data as Json).status).to.equal('failed');
      expectNoCardData(error);
    });

    scripted(
      'not in a network error, nor in a timeout, nor in a 422 on a request carrying the card',
      async () => {
        nock(HOST)
          .post('/api/v1/transactions')
          .replyWithError({ code: 'ECONNRESET', message: 'socket hang up' });
        const h = clientFor();
        expectNoCardData(await networkErrorOf(sale(h.client), 'connection'));

        nock(HOST).post('/api/v1/3ds/verify').delay(500).reply(200, ok({}));
        const slow = clientFor({ timeoutMs: 50 });
        expectNoCardData(
          await networkErrorOf(
            slow.client.verify3ds({
              amountMinor: 1234,
              currency: 'EUR',
              card,
              authUrl: 'https://shop.example/3ds',
            }),
            'timeout',
          ),
        );

        nock(HOST)
          .post('/api/v1/transactions')
          .reply(422, failed('ERR_VALIDATION_FAILED', 'Invalid.', null, { 'card.number': ['is not valid'] }));
        expectNoCardData(await gatewayErrorOf(sale(h.client), 422, 'ERR_VALIDATION_FAILED'));
      },
    );
  });
});
