import { expect } from 'chai';
import {
  advance,
  expectStatus,
  nowSeconds,
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
 * Test pings and replays (gateway-api.md, Webhook management rules 5 and 6, Limits; sandbox.md
 * section 8), against a real local receiver.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read payloads of every shape
type Json = any;

const RETRY_DELAYS_S = [60, 300, 1800, 7200, 21600, 43200, 86400];
const DAY_S = 24 * 3600;
const DELIVERY_ID = /^whd_[A-Za-z0-9]{24}$/;

describe('gateway: webhook test ping and replay', () => {
  let gw: TestGateway;
  let rx: Receiver;
  let secret: string;
  const closers: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    gw = await startGateway({ seed: allowPrivateUrls });
    closers.push(() => gw.close());
    rx = await startReceiver();
    closers.push(() => rx.close());
    secret = await register(rx.url);
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  async function register(url: string): Promise<string> {
    const answer = await gw.call('PUT', '/api/v1/webhook', { body: { url } });
    expectStatus(answer, 201);
    return answer.body.data.secret as string;
  }

  async function sale() {
    const answer = await gw.call('POST', '/api/v1/transactions', { body: transactionBody() });
    expectStatus(answer, 200);
    return answer.body.data;
  }

  async function endpoint() {
    const answer = await gw.call('GET', '/api/v1/webhook');
    expectStatus(answer, 200);
    return answer.body.data;
  }

  async function eventRows(query = '') {
    const answer = await gw.call('GET', `/api/v1/webhook/events${query}`);
    expectStatus(answer, 200);
    return answer.body.data as { events: Json[]; pagination: Json };
  }

  async function event(id: string) {
    const answer = await gw.call('GET', `/api/v1/webhook/events/${id}`);
    expectStatus(answer, 200);
    return answer.body.data;
  }

  /** A sale whose transaction.captured event is ticked once; returns the event id. */
  async function eventAfterOneTick(): Promise<string> {
    const t = await sale();
    await gw.gateway.controls.tick();
    const rows = (await eventRows(`?transaction_id=${t.id}`)).events;
    expect(rows).to.have.length(1);
    return rows[0].id as string;
  }

  const ping = () => gw.call('POST', '/api/v1/webhook/test', { body: {} });
  const replay = (id: string) => gw.call('POST', `/api/v1/webhook/events/${id}/replay`, { body: {} });

  /** Runs the whole retry schedule against a failing receiver: the event ends `failed`. */
  async function exhaust(id: string): Promise<void> {
    for (const delay of RETRY_DELAYS_S) {
      advance(gw, delay);
      await gw.gateway.controls.tick();
    }
    const stored = await event(id);
    expect(stored.status).to.equal('failed');
    expect(stored.delivery_attempts).to.have.length(8);
  }

  describe('POST /api/v1/webhook/test', () => {
    it('sends a signed webhook.ping shaped like an event and answers what the receiver did', async () => {
      advance(gw, 42);
      const answer = await ping();
      expectStatus(answer, 200);
      expect(answer.body.success).to.equal(true);
      const data = answer.body.data;
      expect(data).to.include({ success: true, status_code: 200, error: null, delivery_status: 'healthy' });
      expect(data.duration_ms).to.be.a('number').and.to.be.at.least(0);
      expect(Number.isInteger(data.duration_ms)).to.equal(true);

      expect(rx.received).to.have.length(1);
      const got = rx.received[0]!;
      expect(got.method).to.equal('POST');
      expect(got.headers['content-type']).to.match(/^application\/json\b/);
      expect(signatureOf(got)).to.match(SIGNATURE_FORMAT);
      expect(tOf(got)).to.equal(nowSeconds(gw));
      expect(verifies(got, secret, nowSeconds(gw))).to.equal(true);
      expect(verifies(got, 'whsec_wrong', nowSeconds(gw))).to.equal(false);
      const body = got.json as Json;
      expect(body).to.have.all.keys('id', 'type', 'created_at', 'api_version', 'data');
      expect(body.id).to.match(/^evt_test_/);
      expect(body.type).to.equal('webhook.ping');
      expect(Date.parse(body.created_at)).to.equal(gw.clock.now());
      expect(body.api_version).to.equal('2026-11-01');
      expect(body.data).to.deep.equal({});
    });

    it('never appears in the event history', async () => {
      expectStatus(await ping(), 200);
      rx.behave({ kind: 'answer', status: 500, body: 'x' });
      expectStatus(await ping(), 200);
      const list = await eventRows();
      expect(list.events).to.have.length(0);
      expect(list.pagination.total).to.equal(0);
      const pingId = (rx.received[0]!.json as Json).id as string;
      expectStatus(await gw.call('GET', `/api/v1/webhook/events/${pingId}`), 404);
      // A real event next to the pings: only it is listed.
      rx.behave({ kind: 'answer', status: 200, body: 'ok' });
      const id = await eventAfterOneTick();
      expect((await eventRows()).events.map((e) => e.id)).to.deep.equal([id]);
    });

    it('a successful ping sets last_success_at and ends the failure streak', async () => {
      rx.behave({ kind: 'answer', status: 500, body: 'down' });
      const id = await eventAfterOneTick();
      advance(gw, 60);
      await gw.gateway.controls.tick();
      const failing = await endpoint();
      expect(failing.consecutive_failures).to.equal(2);
      expect(failing.delivery_status).to.equal('degraded');
      expect(failing.last_success_at).to.equal(null);

      rx.behave({ kind: 'answer', status: 200, body: 'ok' });
      advance(gw, 5);
      const answer = await ping();
      expectStatus(answer, 200);
      expect(answer.body.data.success).to.equal(true);
      expect(answer.body.data.delivery_status).to.equal('healthy');
      const after = await endpoint();
      expect(Date.parse(after.last_success_at)).to.equal(gw.clock.now());
      expect(after.consecutive_failures).to.equal(0);
      expect(after.delivery_status).to.equal('healthy');
      expect(after.last_failure_at, 'the ping touches nothing else').to.equal(failing.last_failure_at);
      const stored = await event(id);
      expect(stored.status, 'a ping delivers no event').to.equal('pending');
      expect(stored.delivery_attempts).to.have.length(2);
    });

    it('against a receiver answering 500: HTTP 200, success false, status_code 500, nothing persisted', async () => {
      rx.behave({ kind: 'answer', status: 500, body: 'boom' });
      const fresh = await endpoint();
      const answer = await ping();
      expectStatus(answer, 200);
      expect(answer.body.data).to.include({ success: false, status_code: 500 });
      expect(rx.received).to.have.length(1);
      const after = await endpoint();
      expect(after.last_failure_at).to.equal(null);
      expect(after.consecutive_failures).to.equal(0);
      expect(after.last_success_at).to.equal(null);
      expect(after.delivery_status).to.equal(fresh.delivery_status);

      // The same with a streak already running: it neither grows nor moves last_failure_at.
      await eventAfterOneTick();
      const streak = await endpoint();
      expect(streak.consecutive_failures).to.equal(1);
      advance(gw, 30);
      expect((await ping()).body.data.success).to.equal(false);
      const later = await endpoint();
      expect(later.consecutive_failures).to.equal(1);
      expect(later.last_failure_at).to.equal(streak.last_failure_at);
      expect(later.delivery_status).to.equal('degraded');
    });

    it('against a closed port: HTTP 200, success false, no status code', async () => {
      const gone = await startReceiver();
      await gone.close();
      expectStatus(await gw.call('PUT', '/api/v1/webhook', { body: { url: gone.url } }), 200);
      const answer = await ping();
      expectStatus(answer, 200);
      expect(answer.body.data.success).to.equal(false);
      expect(answer.body.data.status_code).to.equal(null);
      expect(answer.body.data.error).to.be.a('string').and.not.equal('');
      expect((await endpoint()).last_failure_at).to.equal(null);
    });

    it('the 11th ping within a minute is 429 with Retry-After', async () => {
      for (let i = 0; i < 10; i++) {
        advance(gw, 1);
        expectStatus(await ping(), 200);
      }
      const refused = await ping();
      expectStatus(refused, 429);
      expect(refused.body.code).to.equal('ERR_RATE_LIMITED');
      const retryAfter = refused.headers.get('retry-after');
      expect(retryAfter).to.match(/^\d+$/);
      expect(Number(retryAfter)).to.be.within(1, 60);
      expect(rx.received, 'the refused ping is not sent').to.have.length(10);
      advance(gw, 60);
      expectStatus(await ping(), 200);
      expect(rx.received).to.have.length(11);
    });
  });

  describe('POST /api/v1/webhook/events/{id}/replay', () => {
    it('of a delivered event: same id and bytes, X-Service-Replay, fresh delivery id, signed afresh, recorded', async () => {
      const id = await eventAfterOneTick();
      const first = rx.received[0]!;
      expect(first.headers['x-service-replay']).to.equal(undefined);
      const before = await event(id);
      expect(before.status).to.equal('delivered');

      advance(gw, 3600);
      const answer = await replay(id);
      expectStatus(answer, 200);
      expect(answer.body.data.event).to.include({ id, status: 'delivered', last_attempt: null });
      expect(answer.body.data.event).to.not.have.property('payload');

      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(2);
      const again = rx.received[1]!;
      expect(again.headers['x-service-replay']).to.equal('true');
      expect(Buffer.compare(again.raw, first.raw), 'byte-identical payload').to.equal(0);
      expect(again.raw.toString('utf8')).to.equal(JSON.stringify(before.payload));
      expect((again.json as Json).id).to.equal(id);
      expect(tOf(again)).to.equal(nowSeconds(gw));
      expect(tOf(again)).to.equal(tOf(first) + 3600);
      expect(verifies(again, secret, nowSeconds(gw))).to.equal(true);
      expect(signatureOf(again)).to.not.equal(signatureOf(first));

      const stored = await event(id);
      expect(stored.status).to.equal('delivered');
      expect(stored.delivered_at).to.equal(before.delivered_at);
      expect(stored.delivery_attempts).to.have.length(2);
      const [original, replayed] = stored.delivery_attempts;
      expect(original.is_replay).to.equal(false);
      expect(replayed).to.include({ is_replay: true, status_code: 200, error_reason: null, attempt: 2 });
      expect(replayed.delivery_id).to.match(DELIVERY_ID).and.not.equal(original.delivery_id);
      expect(Date.parse(replayed.created_at)).to.equal(gw.clock.now());
    });

    it('a replay that fails leaves a delivered event delivered', async () => {
      const id = await eventAfterOneTick();
      const before = await event(id);
      rx.behave({ kind: 'answer', status: 500, body: 'nope' });
      expectStatus(await replay(id), 200);
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(2);
      const stored = await event(id);
      expect(stored.status).to.equal('delivered');
      expect(stored.delivered_at).to.equal(before.delivered_at);
      expect(stored.failed_at).to.equal(null);
      expect(stored.delivery_attempts.at(-1)).to.include({
        is_replay: true,
        status_code: 500,
        error_reason: 'http_status',
      });
      const row = (await eventRows('?status=delivered')).events.find((e) => e.id === id);
      expect(row, 'listed as delivered').to.not.equal(undefined);
    });

    it('a failed event (after 8 failures) replayed successfully becomes delivered', async () => {
      rx.behave({ kind: 'answer', status: 500, body: 'down' });
      const id = await eventAfterOneTick();
      await exhaust(id);
      rx.behave({ kind: 'answer', status: 200, body: 'ok' });
      advance(gw, 60);
      const answer = await replay(id);
      expectStatus(answer, 200);
      expect(answer.body.data.event.last_attempt).to.equal(null);
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(9);
      expect(rx.received[8]!.headers['x-service-replay']).to.equal('true');
      const stored = await event(id);
      expect(stored.status).to.equal('delivered');
      expect(Date.parse(stored.delivered_at)).to.equal(gw.clock.now());
      expect(stored.delivery_attempts.at(-1)).to.include({ is_replay: true, status_code: 200 });
    });

    it('a pending event: 409 ERR_REPLAY_NOT_ALLOWED, and nothing is sent', async () => {
      rx.behave({ kind: 'answer', status: 500, body: 'later' });
      const id = await eventAfterOneTick();
      expect((await event(id)).status).to.equal('pending');
      const answer = await replay(id);
      expectStatus(answer, 409);
      expect(answer.body.code).to.equal('ERR_REPLAY_NOT_ALLOWED');
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(1);
    });

    it('no endpoint: 400 ERR_WEBHOOK_NOT_CONFIGURED', async () => {
      const id = await eventAfterOneTick();
      expectStatus(await gw.call('DELETE', '/api/v1/webhook'), 200);
      const answer = await replay(id);
      expectStatus(answer, 400);
      expect(answer.body.code).to.equal('ERR_WEBHOOK_NOT_CONFIGURED');
    });

    it('a paused endpoint: 400 ERR_WEBHOOK_NOT_CONFIGURED, and nothing is sent', async () => {
      const id = await eventAfterOneTick();
      expectStatus(await gw.call('PUT', '/api/v1/webhook', { body: { url: rx.url, is_active: false } }), 200);
      const answer = await replay(id);
      expectStatus(answer, 400);
      expect(answer.body.code).to.equal('ERR_WEBHOOK_NOT_CONFIGURED');
      expectStatus(await gw.call('PUT', '/api/v1/webhook', { body: { url: rx.url, is_active: true } }), 200);
      await gw.gateway.controls.tick();
      expect(rx.received, 'the refused replay was not queued').to.have.length(1);
    });

    it('after DELETE and a new PUT, a replay goes to the new receiver with the new secret', async () => {
      const id = await eventAfterOneTick();
      const oldSecret = secret;
      expectStatus(await gw.call('DELETE', '/api/v1/webhook'), 200);
      const other = await startReceiver('/new-hooks');
      closers.push(() => other.close());
      const newSecret = await register(other.url);
      expect(newSecret).to.not.equal(oldSecret);

      expectStatus(await replay(id), 200);
      await gw.gateway.controls.tick();
      expect(rx.received, 'the old receiver gets nothing more').to.have.length(1);
      expect(other.received).to.have.length(1);
      const got = other.received[0]!;
      expect(got.path).to.equal('/new-hooks');
      expect(got.headers['x-service-replay']).to.equal('true');
      expect((got.json as Json).id).to.equal(id);
      expect(Buffer.compare(got.raw, rx.received[0]!.raw)).to.equal(0);
      expect(verifies(got, newSecret, nowSeconds(gw)), 'new secret').to.equal(true);
      expect(verifies(got, oldSecret, nowSeconds(gw)), 'old secret').to.equal(false);
    });

    it('two replays queued before one tick are both sent by it', async () => {
      const id = await eventAfterOneTick();
      for (let i = 0; i < 2; i++)
        expectStatus(await gw.call('POST', `/api/v1/webhook/events/${id}/replay`), 200);
      const before = rx.received.length;
      await gw.gateway.controls.tick();
      const replays = rx.received.slice(before);
      expect(replays.map((r) => r.headers['x-service-replay'])).to.deep.equal(['true', 'true']);
      expect((await event(id)).delivery_attempts.filter((a: Json) => a.is_replay)).to.have.length(2);
    });

    it('a replay queued before a DELETE is dropped: nothing reaches the endpoint registered after', async () => {
      const id = await eventAfterOneTick();
      expectStatus(await gw.call('POST', `/api/v1/webhook/events/${id}/replay`), 200);
      expectStatus(await gw.call('DELETE', '/api/v1/webhook'), 200);
      const next = await startReceiver();
      closers.push(() => next.close());
      await register(next.url);
      await gw.gateway.controls.tick();
      expect(next.received).to.have.length(0);
    });

    it('more than 30 replays a minute: 429 with Retry-After', async () => {
      const id = await eventAfterOneTick();
      for (let i = 0; i < 30; i++) expectStatus(await replay(id), 200);
      const refused = await replay(id);
      expectStatus(refused, 429);
      expect(refused.body.code).to.equal('ERR_RATE_LIMITED');
      expect(refused.headers.get('retry-after')).to.match(/^[1-9]\d*$/);
      advance(gw, 60);
      expectStatus(await replay(id), 200);
    });

    it('an event older than the 30-day retention: 404', async () => {
      const id = await eventAfterOneTick();
      advance(gw, 29 * DAY_S);
      expectStatus(await replay(id), 200);
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(2);
      advance(gw, DAY_S + 60);
      const answer = await replay(id);
      expectStatus(answer, 404);
      expect(answer.body.code).to.equal('ERR_NOT_FOUND');
      await gw.gateway.controls.tick();
      expect(rx.received).to.have.length(2);
    });
  });
});
