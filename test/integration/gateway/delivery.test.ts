import { expect } from 'chai';
import { verify } from '../../../src/shared/signature.js';
import {
  advance,
  expectStatus,
  MERCHANT_KEY,
  nowSeconds,
  OTHER_MERCHANT_KEY,
  type StartOptions,
  startGateway,
  type TestGateway,
  transactionBody,
} from '../../support/gateway.js';
import {
  allowPrivateUrls,
  type Receiver,
  SIGNATURE_FORMAT,
  signatureOf,
  startReceiver,
  tOf,
  verifies,
} from '../../support/receiver.js';

/**
 * Webhook delivery (gateway-api.md: Webhook event record, Webhook event statuses, Webhook management
 * rules 4-8, Events, Limits; sandbox.md sections 8 and 10), against a real local receiver.
 */

const CARD_NUMBER = '4242424242424242';
/** sandbox.md section 8: immediately, then these delays (seconds) after the previous attempt. */
const RETRY_DELAYS_S = [60, 300, 1800, 7200, 21600, 43200, 86400];
const DAY_S = 24 * 3600;
const EVENT_ID = /^evt_[A-Za-z0-9]{24}$/;
const DELIVERY_ID = /^whd_[A-Za-z0-9]{24}$/;

// biome-ignore lint/suspicious/noExplicitAny: tests read payloads of every shape
type Json = any;

interface Sandbox {
  gw: TestGateway;
  rx: Receiver;
  secret: string;
  /** Everything to close after the test. */
  closers: (() => Promise<void>)[];
}

/** A private-mode sandbox with one receiver registered for MERCHANT_KEY. */
async function privateSandbox(options: StartOptions = {}): Promise<Sandbox> {
  const gw = await startGateway({ seed: allowPrivateUrls, ...options });
  const rx = await startReceiver();
  const closers = [() => gw.close(), () => rx.close()];
  const secret = await register(gw, rx.url);
  return { gw, rx, secret, closers };
}

async function register(gw: TestGateway, url: string, key = MERCHANT_KEY): Promise<string> {
  const answer = await gw.call('PUT', '/api/v1/webhook', { key, body: { url } });
  expectStatus(answer, 201);
  const secret = answer.body.data.secret as string;
  expect(secret).to.match(/^whsec_/);
  return secret;
}

async function sale(gw: TestGateway, key = MERCHANT_KEY, overrides: Record<string, unknown> = {}) {
  const answer = await gw.call('POST', '/api/v1/transactions', { key, body: transactionBody(overrides) });
  expectStatus(answer, 200);
  expect(answer.body.data.status).to.equal('captured');
  return answer.body.data;
}

async function eventRows(gw: TestGateway, query = '', key = MERCHANT_KEY) {
  const answer = await gw.call('GET', `/api/v1/webhook/events${query}`, { key });
  expectStatus(answer, 200);
  return answer.body.data.events as Record<string, unknown>[];
}

/** The one event recorded for a transaction (of a type, if given). */
async function eventIdOf(gw: TestGateway, transactionId: number, type?: string, key = MERCHANT_KEY) {
  const rows = await eventRows(gw, `?transaction_id=${transactionId}`, key);
  const matching = rows.filter((r) => type === undefined || r.event_type === type);
  expect(matching, `events of transaction ${transactionId}`).to.have.length(1);
  return matching[0]!.id as string;
}

async function event(gw: TestGateway, id: string, key = MERCHANT_KEY) {
  const answer = await gw.call('GET', `/api/v1/webhook/events/${id}`, { key });
  expectStatus(answer, 200);
  return answer.body.data;
}

async function endpoint(gw: TestGateway, key = MERCHANT_KEY) {
  const answer = await gw.call('GET', '/api/v1/webhook', { key });
  expectStatus(answer, 200);
  return answer.body.data;
}

/** The received deliveries of one event, in order. */
const deliveriesOf = (rx: Receiver, eventId: string) =>
  rx.received.filter((r) => (r.json as { id?: string } | undefined)?.id === eventId);

/** Every key anywhere in a JSON value. */
function keysDeep(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) keysDeep(v, into);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      into.push(k);
      keysDeep(v, into);
    }
  }
  return into;
}

describe('gateway: webhook delivery', () => {
  let sb: Sandbox;
  const extra: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of [...(sb?.closers ?? []), ...extra.splice(0)]) await close();
    sb = undefined as unknown as Sandbox;
  });

  describe('a delivery', () => {
    beforeEach(async () => {
      sb = await privateSandbox();
    });

    it('is a signed JSON POST; t is the sandbox clock of the attempt; the body is the stored payload byte for byte', async () => {
      const { gw, rx, secret } = sb;
      const t = await sale(gw);
      gw.clock.advance(1_234_567); // away from whole seconds and from the time of the sale
      const attemptAt = gw.clock.now();
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(1);
      const got = rx.received[0]!;
      expect(got.method).to.equal('POST');
      expect(got.path).to.equal('/webhooks');
      expect(got.headers['content-type']).to.match(/^application\/json\b/);
      expect(signatureOf(got)).to.match(SIGNATURE_FORMAT);
      expect(tOf(got)).to.equal(Math.floor(attemptAt / 1000));
      expect(verifies(got, secret, nowSeconds(gw)), 'verifies over the raw bytes').to.equal(true);
      expect(verifies(got, 'whsec_not-the-secret', nowSeconds(gw))).to.equal(false);
      expect(got.headers['x-service-replay']).to.equal(undefined);

      const id = await eventIdOf(gw, t.id);
      const stored = await event(gw, id);
      expect(got.json).to.deep.equal(stored.payload);
      expect(got.raw.toString('utf8')).to.equal(JSON.stringify(stored.payload));
      expect(stored.delivery_attempts).to.have.length(1);
      expect(Date.parse(stored.delivery_attempts[0].created_at)).to.equal(attemptAt);
    });

    it('carries the transaction fields of gateway-api.md, amounts in minor units, api_version 2026-11-01', async () => {
      const { gw, rx } = sb;
      const t = await sale(gw, MERCHANT_KEY, { amount: 12.34, description: 'Blue mug' });
      const createdAt = gw.clock.now();
      advance(gw, 5);
      await gw.gateway.controls.tick();
      const payload = rx.received[0]!.json as Json;
      expect(payload.id).to.match(EVENT_ID);
      expect(payload.id).to.equal(await eventIdOf(gw, t.id));
      expect(payload.type).to.equal('transaction.captured');
      expect(Date.parse(payload.created_at)).to.equal(createdAt);
      expect(payload.api_version).to.equal('2026-11-01');
      const status = (await gw.call('GET', `/api/v1/transactions/${t.id}/status`)).body.data;
      const tx = payload.data.transaction;
      expect(tx).to.include.all.keys(
        'id',
        'merchant_trans_id',
        'related_trans_id',
        'transaction_type',
        'status',
        'amount',
        'currency',
        'acquirer_provider',
        'acquirer_trans_id',
        'acquirer_auth_code',
        'description',
        'created_at',
        'updated_at',
        'refunded_amount',
      );
      expect(tx).to.deep.include({
        id: t.id,
        merchant_trans_id: status.merchant_trans_id,
        related_trans_id: null,
        transaction_type: 'sale',
        status: 'captured',
        amount: 1234,
        currency: 'EUR',
        acquirer_trans_id: status.acquirer_trans_id,
        acquirer_auth_code: status.acquirer_auth_code,
        description: 'Blue mug',
        created_at: status.created_at,
        updated_at: status.updated_at,
        refunded_amount: 0,
      });
      expect(tx.acquirer_provider).to.be.a('string').and.not.equal('');
    });

    it('never carries card data: no card number, no `card` key, no cvv anywhere', async () => {
      const { gw, rx } = sb;
      await sale(gw, MERCHANT_KEY, {
        card: { number: CARD_NUMBER, exp_month: 12, exp_year: 2034, cvv: '987' },
      });
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(1);
      const raw = rx.received[0]!.raw.toString('utf8');
      expect(raw).to.not.include(CARD_NUMBER);
      expect(raw).to.not.include('424242424242');
      const keys = keysDeep(rx.received[0]!.json).map((k) => k.toLowerCase());
      for (const forbidden of ['card', 'cvv', 'cvc', 'number', 'card_number', 'pan', 'exp_month', 'exp_year'])
        expect(keys, `key ${forbidden}`).to.not.include(forbidden);
      expect(raw.toLowerCase()).to.not.include('cvv');
    });

    it('for a refund the transaction is the refund record; refunded_amount is the parent running total', async () => {
      const { gw, rx } = sb;
      const t = await sale(gw, MERCHANT_KEY, { amount: 12.34 });
      const refund = async (amount: number) => {
        const answer = await gw.call('POST', `/api/v1/transactions/${t.id}/refund`, {
          body: { amount, reason: 'customer request' },
        });
        expectStatus(answer, 200);
        return answer.body.data.transaction ?? answer.body.data;
      };
      const first = await refund(5);
      const second = await refund(3);
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(3);
      const refunds = rx.received.map((r) => r.json as Json).filter((p) => p.type === 'transaction.refunded');
      expect(refunds).to.have.length(2);
      const byId = new Map(refunds.map((p) => [p.data.transaction.id, p.data.transaction]));
      expect(byId.get(first.id)).to.deep.include({
        related_trans_id: t.id,
        transaction_type: 'refund',
        status: 'refunded',
        amount: 500,
        currency: 'EUR',
        refunded_amount: 500,
      });
      expect(byId.get(second.id)).to.deep.include({
        related_trans_id: t.id,
        transaction_type: 'refund',
        status: 'refunded',
        amount: 300,
        refunded_amount: 800,
      });
      const raw = rx.received.map((r) => r.raw.toString('utf8')).join('\n');
      expect(raw).to.not.include(CARD_NUMBER);
    });

    it('success: the event is delivered with delivered_at, and the endpoint is healthy', async () => {
      const { gw } = sb;
      const t = await sale(gw);
      advance(gw, 7);
      const at = gw.clock.now();
      await gw.gateway.controls.tick();
      const id = await eventIdOf(gw, t.id);
      const stored = await event(gw, id);
      expect(stored.status).to.equal('delivered');
      expect(Date.parse(stored.delivered_at)).to.equal(at);
      expect(stored.failed_at).to.equal(null);
      expect(stored.delivery_attempts).to.have.length(1);
      expect(stored.delivery_attempts[0]).to.deep.include({
        attempt: 1,
        status_code: 200,
        error_reason: null,
        is_replay: false,
      });
      expect(stored.delivery_attempts[0].delivery_id).to.match(DELIVERY_ID);
      const row = (await eventRows(gw)).find((r) => r.id === id)!;
      expect(row).to.include({ status: 'delivered', attempts: 1 });
      expect(row).to.not.have.property('payload');
      const ep = await endpoint(gw);
      expect(Date.parse(ep.last_success_at)).to.equal(at);
      expect(ep.consecutive_failures).to.equal(0);
      expect(ep.delivery_status).to.equal('healthy');
      // Delivered means done: nothing is sent again.
      advance(gw, 2 * DAY_S);
      await gw.gateway.controls.tick();
      expect(sb.rx.received).to.have.length(1);
    });
  });

  describe('retries', () => {
    beforeEach(async () => {
      sb = await privateSandbox();
    });

    it('follows the schedule (at once, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h) and fails after the 8th failure', async () => {
      const { gw, rx, secret } = sb;
      rx.behave({ kind: 'answer', status: 500, body: 'server exploded' });
      const t = await sale(gw);
      const attemptTimes = [gw.clock.now()];
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(1);
      const id = await eventIdOf(gw, t.id);

      for (const [i, delay] of RETRY_DELAYS_S.entries()) {
        advance(gw, delay - 1);
        await gw.gateway.controls.tick();
        expect(rx.received.length, `${delay - 1} s after attempt ${i + 1}`).to.equal(i + 1);
        const pending = await event(gw, id);
        expect(pending.status).to.equal('pending');
        expect(pending.failed_at).to.equal(null);
        advance(gw, 1);
        attemptTimes.push(gw.clock.now());
        await gw.gateway.controls.tick();
        expect(rx.received.length, `${delay} s after attempt ${i + 1}`).to.equal(i + 2);
        const t = tOf(rx.received.at(-1)!);
        expect(t).to.equal(nowSeconds(gw));
      }

      const failed = await event(gw, id);
      expect(failed.status).to.equal('failed');
      expect(Date.parse(failed.failed_at)).to.equal(attemptTimes.at(-1));
      expect(failed.delivered_at).to.equal(null);
      const attempts = failed.delivery_attempts as Json[];
      expect(attempts.map((a) => a.attempt)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
      for (const [i, a] of attempts.entries()) {
        expect(a, `attempt ${i + 1}`).to.deep.include({
          status_code: 500,
          error_reason: 'http_status',
          response_excerpt: 'server exploded',
          is_replay: false,
        });
        expect(a.delivery_id).to.match(DELIVERY_ID);
        expect(a.duration_ms).to.be.a('number').and.to.be.at.least(0);
        expect(Date.parse(a.created_at), `attempt ${i + 1} time`).to.equal(attemptTimes[i]);
      }
      expect(new Set(attempts.map((a) => a.delivery_id)).size).to.equal(8);

      // Every attempt signed afresh, with its own t, and each verifies at its own moment.
      const ts = rx.received.map(tOf);
      expect(ts).to.deep.equal(attemptTimes.map((ms) => Math.floor(ms / 1000)));
      expect(new Set(ts).size).to.equal(8);
      for (const [i, r] of rx.received.entries())
        expect(verifies(r, secret, ts[i]!), `attempt ${i + 1}`).to.equal(true);
      expect(new Set(rx.received.map(signatureOf)).size).to.equal(8);
      expect(new Set(rx.received.map((r) => r.raw.toString('utf8'))).size, 'same body every time').to.equal(
        1,
      );

      // However far the clock goes, no 9th attempt.
      for (let day = 0; day < 25; day++) {
        advance(gw, DAY_S);
        await gw.gateway.controls.tick();
      }
      expect(rx.received).to.have.length(8);
      const after = await event(gw, id);
      expect(after.status).to.equal('failed');
      expect(after.delivery_attempts).to.have.length(8);
    });

    it('keeps only the first 256 characters of a longer answer as response_excerpt', async () => {
      const { gw, rx } = sb;
      const body = `${'é'.repeat(200)}${'x'.repeat(100)}`; // 300 characters, 500 bytes
      rx.behave({ kind: 'answer', status: 503, body });
      const t = await sale(gw);
      await gw.gateway.controls.tick();
      const [attempt] = (await event(gw, await eventIdOf(gw, t.id))).delivery_attempts;
      expect(attempt.status_code).to.equal(503);
      expect(attempt.error_reason).to.equal('http_status');
      expect(attempt.response_excerpt).to.equal(body.slice(0, 256));
    });

    it('health: degraded for 1-4 consecutive failures, failing from 5, last_failure_at set; one success resets it', async () => {
      const { gw, rx } = sb;
      rx.behave({ kind: 'answer', status: 500, body: 'no' });
      const t = await sale(gw);
      const id = await eventIdOf(gw, t.id);
      const expected = ['degraded', 'degraded', 'degraded', 'degraded', 'failing', 'failing'];
      let lastFailure = 0;
      for (const [i, status] of expected.entries()) {
        if (i > 0) advance(gw, RETRY_DELAYS_S[i - 1]!);
        lastFailure = gw.clock.now();
        await gw.gateway.controls.tick();
        const ep = await endpoint(gw);
        expect(ep.consecutive_failures, `after failure ${i + 1}`).to.equal(i + 1);
        expect(ep.delivery_status, `after failure ${i + 1}`).to.equal(status);
        expect(Date.parse(ep.last_failure_at)).to.equal(lastFailure);
        expect(ep.last_success_at).to.equal(null);
      }
      rx.behave({ kind: 'answer', status: 204 });
      advance(gw, RETRY_DELAYS_S[expected.length - 1]!);
      const successAt = gw.clock.now();
      await gw.gateway.controls.tick();
      const ep = await endpoint(gw);
      expect(ep.consecutive_failures).to.equal(0);
      expect(ep.delivery_status).to.equal('healthy');
      expect(Date.parse(ep.last_success_at)).to.equal(successAt);
      expect(Date.parse(ep.last_failure_at), 'last_failure_at keeps the last failure').to.equal(lastFailure);
      expect((await event(gw, id)).status).to.equal('delivered');
    });

    it('a receiver that recovers mid-schedule gets the next retry, and the event is delivered', async () => {
      const { gw, rx } = sb;
      rx.behave({ kind: 'answer', status: 502, body: 'bad gateway' });
      const t = await sale(gw);
      const id = await eventIdOf(gw, t.id);
      await gw.gateway.controls.tick();
      advance(gw, 60);
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(2);
      rx.behave({ kind: 'answer', status: 200, body: 'ok' });
      advance(gw, 299);
      await gw.gateway.controls.tick();
      expect(rx.received, 'not before the 5 min retry').to.have.length(2);
      advance(gw, 1);
      const at = gw.clock.now();
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(3);
      const stored = await event(gw, id);
      expect(stored.status).to.equal('delivered');
      expect(Date.parse(stored.delivered_at)).to.equal(at);
      expect(stored.delivery_attempts.map((a: Record<string, unknown>) => a.status_code)).to.deep.equal([
        502, 502, 200,
      ]);
      advance(gw, 3 * DAY_S);
      await gw.gateway.controls.tick();
      expect(rx.received, 'no retry after delivery').to.have.length(3);
    });
  });

  describe('error reasons', () => {
    const lastAttempt = async (gw: TestGateway, transactionId: number, key = MERCHANT_KEY) => {
      const stored = await event(gw, await eventIdOf(gw, transactionId, undefined, key), key);
      expect(stored.status).to.equal('pending');
      return stored.delivery_attempts.at(-1) as Record<string, unknown>;
    };

    it('a receiver that hangs: timeout', async () => {
      sb = await privateSandbox({ deliveryTimeoutMs: 300 });
      sb.rx.behave({ kind: 'hang' });
      const t = await sale(sb.gw);
      await sb.gw.gateway.controls.tick();
      expect(sb.rx.received).to.have.length(1);
      expect(await lastAttempt(sb.gw, t.id)).to.deep.include({ error_reason: 'timeout', status_code: null });
    });

    it('a receiver that resets the connection: connection_refused', async () => {
      sb = await privateSandbox({ deliveryTimeoutMs: 300 });
      sb.rx.behave({ kind: 'reset' });
      const t = await sale(sb.gw);
      await sb.gw.gateway.controls.tick();
      expect(sb.rx.received).to.have.length(1);
      expect(await lastAttempt(sb.gw, t.id)).to.deep.include({
        error_reason: 'connection_refused',
        status_code: null,
      });
    });

    it('a redirect (302) is an http_status failure and is not followed', async () => {
      sb = await privateSandbox();
      const target = await startReceiver('/elsewhere');
      extra.push(() => target.close());
      sb.rx.behave({ kind: 'redirect', location: target.url });
      const t = await sale(sb.gw);
      await sb.gw.gateway.controls.tick();
      expect(sb.rx.received).to.have.length(1);
      expect(target.received, 'the Location gets nothing').to.have.length(0);
      expect(await lastAttempt(sb.gw, t.id)).to.deep.include({
        error_reason: 'http_status',
        status_code: 302,
      });
    });

    it('a closed port: connection_refused', async () => {
      sb = await privateSandbox();
      const gone = await startReceiver();
      await gone.close();
      const put = await sb.gw.call('PUT', '/api/v1/webhook', { body: { url: gone.url } });
      expectStatus(put, 200);
      const t = await sale(sb.gw);
      await sb.gw.gateway.controls.tick();
      expect(await lastAttempt(sb.gw, t.id)).to.deep.include({
        error_reason: 'connection_refused',
        status_code: null,
      });
    });

    it('a hanging receiver does not stall others: one tick delivers to the fine one within the timeout', async () => {
      const timeoutMs = 300;
      sb = await privateSandbox({ deliveryTimeoutMs: timeoutMs });
      const fine = await startReceiver();
      extra.push(() => fine.close());
      const otherSecret = await register(sb.gw, fine.url, OTHER_MERCHANT_KEY);
      sb.rx.behave({ kind: 'hang' });
      // Three hanging deliveries: one after another they would cost three timeouts.
      const hung = [await sale(sb.gw), await sale(sb.gw), await sale(sb.gw)];
      const ok = await sale(sb.gw, OTHER_MERCHANT_KEY);
      const started = performance.now();
      await sb.gw.gateway.controls.tick();
      const elapsed = performance.now() - started;
      expect(elapsed, 'tick time (ms)').to.be.below(2 * timeoutMs);
      expect(fine.received).to.have.length(1);
      expect(verifies(fine.received[0]!, otherSecret, nowSeconds(sb.gw))).to.equal(true);
      const okEvent = await event(
        sb.gw,
        await eventIdOf(sb.gw, ok.id, undefined, OTHER_MERCHANT_KEY),
        OTHER_MERCHANT_KEY,
      );
      expect(okEvent.status).to.equal('delivered');
      expect(sb.rx.received).to.have.length(3);
      for (const t of hung)
        expect(await lastAttempt(sb.gw, t.id)).to.deep.include({ error_reason: 'timeout' });
    });
  });

  describe('strict mode: the host is resolved again at delivery time', () => {
    const HOST = 'hooks.merchant-shop.com';
    const privateAnswers: [string, string[]][] = [
      ['a private address', ['10.0.0.7']],
      ['loopback', ['127.0.0.1']],
      ['link-local metadata', ['169.254.169.254']],
      ['IPv6 loopback', ['::1']],
      ['a public and a private address', ['93.184.216.34', '192.168.1.20']],
    ];
    for (const [label, addresses] of privateAnswers) {
      it(`a host that now resolves to ${label} is refused with dns_error, before connecting`, async () => {
        let atDelivery = false;
        const asked: string[] = [];
        const resolve = async (host: string) => {
          if (atDelivery) asked.push(host);
          return atDelivery ? addresses : ['93.184.216.34'];
        };
        const gw = await startGateway({ resolve });
        extra.push(() => gw.close());
        const put = await gw.call('PUT', '/api/v1/webhook', { body: { url: `https://${HOST}/webhooks` } });
        expectStatus(put, 201);
        atDelivery = true;
        const t = await sale(gw);
        await gw.gateway.controls.tick();
        expect(asked, 'resolved again at delivery').to.include(HOST);
        const stored = await event(gw, await eventIdOf(gw, t.id));
        expect(stored.status).to.equal('pending');
        expect(stored.delivery_attempts).to.have.length(1);
        expect(stored.delivery_attempts[0]).to.deep.include({ error_reason: 'dns_error', status_code: null });
      });
    }
  });

  describe('pause (rule 4)', () => {
    beforeEach(async () => {
      sb = await privateSandbox();
    });

    it('while paused events are recorded pending and nothing is delivered or retried; reactivation delivers', async () => {
      const { gw, rx } = sb;
      // One event already waiting for a retry when the pause starts.
      rx.behave({ kind: 'answer', status: 500, body: 'down' });
      const before = await sale(gw);
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(1);
      rx.behave({ kind: 'answer', status: 200, body: 'ok' });

      const pause = await gw.call('PUT', '/api/v1/webhook', { body: { url: rx.url, is_active: false } });
      expectStatus(pause, 200);
      expect(pause.body.data.is_active).to.equal(false);
      expect(pause.body.data.delivery_status).to.equal('paused');
      expect(pause.body.data).to.not.have.property('secret');

      const a = await sale(gw);
      const b = await sale(gw);
      for (let i = 0; i < 10; i++) {
        advance(gw, 3 * 3600);
        await gw.gateway.controls.tick();
      }
      expect(rx.received, 'nothing delivered or retried while paused').to.have.length(1);
      for (const id of [a.id, b.id]) {
        const stored = await event(gw, await eventIdOf(gw, id));
        expect(stored.status).to.equal('pending');
        expect(stored.delivery_attempts).to.have.length(0);
      }
      expect((await event(gw, await eventIdOf(gw, before.id))).delivery_attempts).to.have.length(1);

      const resume = await gw.call('PUT', '/api/v1/webhook', { body: { url: rx.url, is_active: true } });
      expectStatus(resume, 200);
      expect(resume.body.data.delivery_status).to.not.equal('paused');
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(4);
      for (const id of [before.id, a.id, b.id]) {
        expect((await event(gw, await eventIdOf(gw, id))).status, `event of ${id}`).to.equal('delivered');
      }
    });
  });

  describe('rotation (rule 7)', () => {
    beforeEach(async () => {
      sb = await privateSandbox();
    });

    it('after rotate-secret every delivery, retries of older events included, is signed with the new secret only', async () => {
      const { gw, rx, secret: oldSecret } = sb;
      rx.behave({ kind: 'answer', status: 500, body: 'later' });
      const older = await sale(gw);
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(1);
      expect(verifies(rx.received[0]!, oldSecret, nowSeconds(gw))).to.equal(true);

      const rotated = await gw.call('POST', '/api/v1/webhook/rotate-secret', {});
      expectStatus(rotated, 200);
      const newSecret = rotated.body.data.secret as string;
      expect(newSecret)
        .to.match(/^whsec_/)
        .and.not.equal(oldSecret);
      expect(rotated.body.data.endpoint.has_secret).to.equal(true);

      rx.behave({ kind: 'answer', status: 200, body: 'ok' });
      const newer = await sale(gw);
      await gw.gateway.controls.tick();
      const fresh = deliveriesOf(rx, await eventIdOf(gw, newer.id));
      expect(fresh).to.have.length(1);
      expect(verifies(fresh[0]!, newSecret, nowSeconds(gw)), 'new secret').to.equal(true);
      expect(verifies(fresh[0]!, oldSecret, nowSeconds(gw)), 'old secret').to.equal(false);

      advance(gw, 60);
      await gw.gateway.controls.tick();
      const olderId = await eventIdOf(gw, older.id);
      const retries = deliveriesOf(rx, olderId);
      expect(retries).to.have.length(2);
      expect(verifies(retries[1]!, newSecret, nowSeconds(gw)), 'retry with new secret').to.equal(true);
      expect(verifies(retries[1]!, oldSecret, nowSeconds(gw)), 'retry with old secret').to.equal(false);
      expect((await event(gw, olderId)).status).to.equal('delivered');
    });
  });

  describe('delete (rule 8)', () => {
    beforeEach(async () => {
      sb = await privateSandbox();
    });

    it('fails queued events with endpoint_deleted, stops deliveries, keeps history; a new PUT has a new secret', async () => {
      const { gw, rx, secret: oldSecret } = sb;
      const oldEndpoint = await endpoint(gw);
      rx.behave({ kind: 'answer', status: 500, body: 'not yet' });
      const t = await sale(gw);
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(1);
      const id = await eventIdOf(gw, t.id);
      expect((await event(gw, id)).status).to.equal('pending');

      rx.behave({ kind: 'answer', status: 200, body: 'ok' });
      advance(gw, 10);
      const deletedAt = gw.clock.now();
      const del = await gw.call('DELETE', '/api/v1/webhook');
      expectStatus(del, 200);
      expect(del.body.data).to.equal(null);

      const stored = await event(gw, id);
      expect(stored.status).to.equal('failed');
      expect(Date.parse(stored.failed_at)).to.equal(deletedAt);
      expect(stored.delivered_at).to.equal(null);
      const deleted = stored.delivery_attempts.at(-1);
      expect(deleted).to.include({ error_reason: 'endpoint_deleted', status_code: null, is_replay: false });
      expect(deleted.delivery_id).to.match(DELIVERY_ID); // gateway-api.md: delivery_id (`whd_...`)
      expect(stored.payload.id).to.equal(id);

      for (const delay of RETRY_DELAYS_S) {
        advance(gw, delay);
        await gw.gateway.controls.tick();
      }
      expect(rx.received, 'no delivery after delete').to.have.length(1);

      const list = await gw.call('GET', '/api/v1/webhook/events');
      expectStatus(list, 200);
      const row = (list.body.data.events as Record<string, unknown>[]).find((r) => r.id === id);
      expect(row).to.include({ status: 'failed' });
      expectStatus(await gw.call('GET', `/api/v1/webhook/events/${id}`), 200);
      expectStatus(await gw.call('GET', '/api/v1/webhook'), 404);

      const again = await gw.call('PUT', '/api/v1/webhook', { body: { url: rx.url } });
      expectStatus(again, 201);
      expect(again.body.data.secret)
        .to.match(/^whsec_/)
        .and.not.equal(oldSecret);
      expect(again.body.data.endpoint.id).to.not.equal(oldEndpoint.id);
      const newer = await sale(gw);
      await gw.gateway.controls.tick();
      const delivered = deliveriesOf(rx, await eventIdOf(gw, newer.id));
      expect(delivered).to.have.length(1);
      expect(verifies(delivered[0]!, again.body.data.secret, nowSeconds(gw))).to.equal(true);
      expect(verifies(delivered[0]!, oldSecret, nowSeconds(gw))).to.equal(false);
      expect(rx.received, 'the failed event stays failed').to.have.length(2);
      expect((await event(gw, id)).status).to.equal('failed');
    });
  });

  describe('outage (sandbox.md section 10)', () => {
    beforeEach(async () => {
      sb = await privateSandbox();
    });

    it('attempts inside the window fail with connection_refused without reaching the receiver; after it a retry delivers', async () => {
      const { gw, rx } = sb;
      const outage = await gw.call('POST', '/sandbox/webhook/outage', { body: { seconds: 120 } });
      expectStatus(outage, 200);
      advance(gw, 100);
      const t = await sale(gw);
      await gw.gateway.controls.tick(); // clock: +100 s, inside the window
      const id = await eventIdOf(gw, t.id);
      let stored = await event(gw, id);
      expect(stored.status).to.equal('pending');
      expect(stored.delivery_attempts).to.have.length(1);
      expect(stored.delivery_attempts[0]).to.deep.include({
        error_reason: 'connection_refused',
        status_code: null,
      });
      expect(rx.received, 'the receiver was not reached').to.have.length(0);

      advance(gw, 60); // +160 s: past the window, and the 1 min retry is due
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(1);
      stored = await event(gw, id);
      expect(stored.status).to.equal('delivered');
      expect(stored.delivery_attempts).to.have.length(2);
    });

    it("is the key's merchant's only: another merchant keeps receiving", async () => {
      const { gw, rx } = sb;
      const other = await startReceiver();
      extra.push(() => other.close());
      await register(gw, other.url, OTHER_MERCHANT_KEY);
      expectStatus(await gw.call('POST', '/sandbox/webhook/outage', { body: { seconds: 120 } }), 200);
      await sale(gw, MERCHANT_KEY);
      await sale(gw, OTHER_MERCHANT_KEY);
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(0);
      expect(other.received).to.have.length(1);
    });

    const bad: [string, unknown][] = [
      ['zero', 0],
      ['negative', -10],
      ['a string', '120'],
      ['null', null],
      ['missing', undefined],
    ];
    for (const [label, seconds] of bad) {
      it(`422 for seconds ${label}, and no outage starts`, async () => {
        const { gw, rx } = sb;
        const answer = await gw.call('POST', '/sandbox/webhook/outage', {
          body: seconds === undefined ? {} : { seconds },
        });
        expectStatus(answer, 422);
        expect(answer.body.code).to.equal('ERR_VALIDATION_FAILED');
        await sale(gw);
        await gw.gateway.controls.tick();
        expect(rx.received).to.have.length(1);
      });
    }
  });

  describe('chargeback (sandbox.md section 10)', () => {
    beforeEach(async () => {
      sb = await privateSandbox();
    });

    it('a captured sale becomes chargeback and a transaction.chargeback event is delivered', async () => {
      const { gw, rx, secret } = sb;
      const t = await sale(gw);
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(1);
      const answer = await gw.call('POST', `/sandbox/transactions/${t.id}/chargeback`);
      expectStatus(answer, 200);
      expect((answer.body.data.transaction ?? answer.body.data).status).to.equal('chargeback');
      const status = await gw.call('GET', `/api/v1/transactions/${t.id}/status`);
      expect(status.body.data.status).to.equal('chargeback');

      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(2);
      const got = rx.received[1]!;
      const payload = got.json as Json;
      expect(payload.type).to.equal('transaction.chargeback');
      expect(payload.data.transaction).to.deep.include({ id: t.id, status: 'chargeback' });
      expect(verifies(got, secret, nowSeconds(gw))).to.equal(true);
      const id = await eventIdOf(gw, t.id, 'transaction.chargeback');
      expect(payload.id).to.equal(id);
      expect((await event(gw, id)).status).to.equal('delivered');
    });

    it('400 on a transaction that is not captured, and no event', async () => {
      const { gw } = sb;
      const auth = await gw.call('POST', '/api/v1/transactions', {
        body: transactionBody({ transaction_type: 'auth' }),
      });
      expectStatus(auth, 200);
      expect(auth.body.data.status).to.equal('auth');
      expectStatus(await gw.call('POST', `/sandbox/transactions/${auth.body.data.id}/chargeback`), 400);

      const refunded = await sale(gw, MERCHANT_KEY, { amount: 10 });
      expectStatus(
        await gw.call('POST', `/api/v1/transactions/${refunded.id}/refund`, { body: { amount: 10 } }),
        200,
      );
      expectStatus(await gw.call('POST', `/sandbox/transactions/${refunded.id}/chargeback`), 400);

      const twice = await sale(gw);
      expectStatus(await gw.call('POST', `/sandbox/transactions/${twice.id}/chargeback`), 200);
      expectStatus(await gw.call('POST', `/sandbox/transactions/${twice.id}/chargeback`), 400);

      expect(await eventRows(gw, '?event_type=transaction.chargeback')).to.have.length(1);
      expect(
        (await gw.call('GET', `/api/v1/transactions/${auth.body.data.id}/status`)).body.data.status,
      ).to.equal('auth');
    });
  });
  describe('the sender (GatewayOptions.fetch)', () => {
    it('sends pings and attempts through the injected fetch, signed, and records what it answers', async () => {
      const sent: { url: string; init: RequestInit }[] = [];
      const gw = await startGateway({
        fetch: async (input, init) => {
          sent.push({ url: String(input), init: init ?? {} });
          return new Response('accepted', { status: 202 });
        },
      });
      extra.push(() => gw.close());
      const url = 'https://webhooks.acme-shop.com/in';
      const secret = await register(gw, url);

      const ping = await gw.call('POST', '/api/v1/webhook/test', { body: {} });
      expectStatus(ping, 200);
      expect(ping.body.data).to.include({ success: true, status_code: 202 });
      const t = await sale(gw);
      await gw.gateway.controls.tick();

      expect(sent.map((s) => [s.url, s.init.method])).to.deep.equal([
        [url, 'POST'],
        [url, 'POST'],
      ]);
      expect(JSON.parse(String(sent[0]!.init.body)).type).to.equal('webhook.ping');
      const delivery = sent[1]!;
      const payload = String(delivery.init.body);
      expect(JSON.parse(payload).data.transaction.id).to.equal(t.id);
      const header = (delivery.init.headers as Record<string, string>)['X-Service-Signature'];
      expect(verify({ payload, header, secrets: [secret], nowSeconds: nowSeconds(gw) }).ok).to.equal(true);
      const stored = await event(gw, await eventIdOf(gw, t.id));
      expect(stored.status).to.equal('delivered');
      expect(stored.delivery_attempts[0]).to.include({ status_code: 202, response_excerpt: 'accepted' });
    });
  });
});
