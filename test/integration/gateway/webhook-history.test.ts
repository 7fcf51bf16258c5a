import { expect } from 'chai';
import { isoMicros, unixSeconds } from '../../../src/shared/clock.js';
import { verify } from '../../../src/shared/signature.js';
import {
  type Answer,
  card,
  MERCHANT_KEY,
  OTHER_MERCHANT_KEY,
  PARTNER_KEY,
  startGateway,
  type TestGateway,
  transactionBody,
} from '../../support/gateway.js';
import { allowPrivateUrls, type Receiver, startReceiver } from '../../support/receiver.js';

/**
 * gateway-api.md, Webhook event record, Webhook management (events endpoints, rules 3 and 8),
 * Events and Limits (retention, page size); sandbox.md section 8. Private mode: the sandbox delivers
 * to a real local receiver, and only when the test ticks it.
 */

const EVENT_ID = /^evt_[A-Za-z0-9]{24}$/;
const DELIVERY_ID = /^whd_[A-Za-z0-9]{24}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const DAY_MS = 24 * 60 * 60 * 1000;
const ROW_KEYS = [
  'id',
  'event_type',
  'transaction_id',
  'merchant_trans_id',
  'status',
  'attempts',
  'created_at',
  'delivered_at',
  'failed_at',
  'last_attempt',
];
const ATTEMPT_KEYS = [
  'delivery_id',
  'attempt',
  'status_code',
  'error_reason',
  'response_excerpt',
  'duration_ms',
  'is_replay',
  'created_at',
];

function expectOk(answer: Answer, status = 200): void {
  expect(answer.status, answer.text).to.equal(status);
  expect(answer.body?.success, answer.text).to.equal(true);
}

function expectNotFound(answer: Answer): void {
  expect(answer.status, answer.text).to.equal(404);
  expect(answer.body?.success, answer.text).to.equal(false);
  expect(answer.body?.code, answer.text).to.equal('ERR_NOT_FOUND');
}

// biome-ignore lint/suspicious/noExplicitAny: event rows are read as JSON
function expectAttemptShape(attempt: any): void {
  expect(attempt).to.include.all.keys(...ATTEMPT_KEYS);
  expect(attempt.delivery_id).to.match(DELIVERY_ID);
  expect(Number.isInteger(attempt.attempt)).to.equal(true);
  expect(attempt.attempt).to.be.at.least(1);
  expect(attempt.status_code === null || Number.isInteger(attempt.status_code)).to.equal(true);
  expect(attempt.error_reason === null || typeof attempt.error_reason === 'string').to.equal(true);
  expect(attempt.response_excerpt === null || typeof attempt.response_excerpt === 'string').to.equal(true);
  expect(Number.isInteger(attempt.duration_ms)).to.equal(true);
  expect(attempt.duration_ms).to.be.at.least(0);
  expect(attempt.is_replay).to.be.a('boolean');
  expect(attempt.created_at).to.match(TIMESTAMP);
}

// biome-ignore lint/suspicious/noExplicitAny: event rows are read as JSON
function expectRowShape(row: any): void {
  expect(row).to.include.all.keys(...ROW_KEYS);
  expect(row).to.not.have.any.keys('payload', 'delivery_attempts', 'body');
  expect(row.id).to.match(EVENT_ID);
  expect(row.event_type).to.match(/^transaction\.[a-z]+$/);
  expect(Number.isInteger(row.transaction_id)).to.equal(true);
  expect(row.merchant_trans_id).to.be.a('string');
  expect(row.status).to.be.oneOf(['pending', 'delivered', 'failed']);
  expect(Number.isInteger(row.attempts)).to.equal(true);
  expect(row.created_at).to.match(TIMESTAMP);
  if (row.last_attempt !== null) expectAttemptShape(row.last_attempt);
}

describe('gateway: webhook event history (private mode, real receiver)', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  let secret: string;

  const register = async (body: Record<string, unknown> = {}, key = MERCHANT_KEY) => {
    const answer = await gw.call('PUT', '/api/v1/webhook', { key, body: { url: receiver.url, ...body } });
    expectOk(answer, 201);
    secret = answer.body.data.secret;
    return answer.body.data;
  };
  const update = async (body: Record<string, unknown>) => {
    const answer = await gw.call('PUT', '/api/v1/webhook', { body: { url: receiver.url, ...body } });
    expectOk(answer);
    return answer.body.data;
  };
  const list = async (query = '', key = MERCHANT_KEY) => {
    const answer = await gw.call('GET', `/api/v1/webhook/events${query}`, { key });
    expectOk(answer);
    return answer.body.data as {
      // biome-ignore lint/suspicious/noExplicitAny: event rows are read as JSON
      events: any[];
      pagination: { current_page: number; last_page: number; per_page: number; total: number };
    };
  };
  const ids = async (query = '') => (await list(query)).events.map((e) => e.id as string);
  const recorded = () => [...gw.gateway.deps.state.webhooks.events.values()];

  /** A sale with the approving card: event transaction.captured. */
  const sale = async (key = MERCHANT_KEY) => {
    const answer = await gw.call('POST', '/api/v1/transactions', { key, body: transactionBody() });
    expect(answer.status, answer.text).to.equal(200);
    return answer.body.data as { id: number; merchant_trans_id: string };
  };
  /** A sale with the do-not-honor card: 400, recorded failed, event transaction.failed. */
  const declined = async () => {
    const answer = await gw.call('POST', '/api/v1/transactions', {
      body: transactionBody({ card: card('4000000000000002') }),
    });
    expect(answer.status, answer.text).to.equal(400);
    expect(answer.body.code).to.equal('ERR_CARD_DO_NOT_HONOR');
    return answer.body.data as { id: number; merchant_trans_id: string };
  };
  const auth = async () => {
    const answer = await gw.call('POST', '/api/v1/transactions', {
      body: transactionBody({ transaction_type: 'auth' }),
    });
    expect(answer.status, answer.text).to.equal(200);
    return answer.body.data as { id: number; merchant_trans_id: string };
  };
  /** Refund, void or capture: returns the record the operation created. */
  const operate = async (op: 'refund' | 'void' | 'capture', id: number, amount = 12.34) => {
    const answer = await gw.call('POST', `/api/v1/transactions/${id}/${op}`, {
      body: op === 'capture' ? { amount } : { amount, reason: 'test' },
    });
    expect(answer.status, answer.text).to.equal(200);
    return answer.body.data.transaction as {
      id: number;
      merchant_trans_id: string;
      related_trans_id: number;
    };
  };
  const tick = () => gw.gateway.controls.tick();

  beforeEach(async () => {
    receiver = await startReceiver();
    gw = await startGateway({ seed: allowPrivateUrls });
  });
  afterEach(async () => {
    await gw.close();
    await receiver.close();
  });

  describe('what is recorded, and how it is listed', () => {
    it('sale, decline, refund and auth+void record captured, failed, refunded and voided; listed newest first', async () => {
      await register();
      const t0 = gw.clock.now();
      const s = await sale();
      gw.clock.advance(1_000);
      const d = await declined();
      gw.clock.advance(1_000);
      const r = await operate('refund', s.id);
      gw.clock.advance(1_000);
      const a = await auth();
      const v = await operate('void', a.id);
      const report = await tick();
      expect(report.delivered).to.equal(4);

      const { events, pagination } = await list();
      expect(events.map((e) => e.event_type)).to.deep.equal([
        'transaction.voided',
        'transaction.refunded',
        'transaction.failed',
        'transaction.captured',
      ]);
      // data.transaction is the record the change created (sandbox.md section 8): the refund and void records.
      expect(events.map((e) => e.transaction_id)).to.deep.equal([v.id, r.id, d.id, s.id]);
      expect(r.related_trans_id).to.equal(s.id);
      expect(events.map((e) => e.merchant_trans_id)).to.deep.equal([
        a.merchant_trans_id,
        s.merchant_trans_id,
        d.merchant_trans_id,
        s.merchant_trans_id,
      ]);
      expect(events.map((e) => e.created_at)).to.deep.equal([
        isoMicros(t0 + 3_000),
        isoMicros(t0 + 2_000),
        isoMicros(t0 + 1_000),
        isoMicros(t0),
      ]);
      expect(new Set(events.map((e) => e.id)).size).to.equal(4);
      expect(pagination).to.deep.equal({ current_page: 1, last_page: 1, per_page: 25, total: 4 });
      expect(receiver.received).to.have.length(4);
      for (const row of events) {
        expectRowShape(row);
        expect(row).to.include({ status: 'delivered', attempts: 1, failed_at: null });
        expect(row.delivered_at).to.equal(isoMicros(gw.clock.now()));
        expect(row.last_attempt).to.include({
          attempt: 1,
          status_code: 200,
          error_reason: null,
          response_excerpt: 'ok',
          is_replay: false,
          created_at: isoMicros(gw.clock.now()),
        });
      }
      expect(new Set(events.map((e) => e.last_attempt.delivery_id)).size).to.equal(4);
    });

    it('a row before any delivery is pending with no attempt; a failed attempt is reported on last_attempt', async () => {
      await register();
      const s = await sale();
      const [pending] = (await list()).events;
      expectRowShape(pending);
      expect(pending).to.include({
        transaction_id: s.id,
        status: 'pending',
        attempts: 0,
        delivered_at: null,
        failed_at: null,
        last_attempt: null,
      });
      receiver.behave({ kind: 'answer', status: 500, body: 'boom' });
      await tick();
      const [after] = (await list()).events;
      expectRowShape(after);
      expect(after).to.include({ status: 'pending', attempts: 1, delivered_at: null, failed_at: null });
      expect(after.last_attempt).to.include({
        attempt: 1,
        status_code: 500,
        error_reason: 'http_status',
        response_excerpt: 'boom',
        is_replay: false,
      });
    });

    it('single event: payload is exactly what the receiver got, delivery_attempts replaces last_attempt', async () => {
      await register();
      const s = await sale();
      await declined();
      const r = await operate('refund', s.id, 5);
      receiver.behave({ kind: 'answer', status: 503, body: 'later' });
      await tick();
      receiver.behave({ kind: 'answer', status: 200, body: 'ok' });
      gw.clock.advance(60_000);
      await tick();
      expect(receiver.received).to.have.length(6);

      const { events } = await list();
      expect(events).to.have.length(3);
      for (const row of events) {
        const answer = await gw.call('GET', `/api/v1/webhook/events/${row.id}`);
        expectOk(answer);
        const detail = answer.body.data;
        expect(detail).to.include.all.keys(
          ...ROW_KEYS.filter((k) => k !== 'last_attempt'),
          'payload',
          'delivery_attempts',
        );
        expect(detail).to.not.have.any.keys('last_attempt');
        const { payload, delivery_attempts: attempts, ...rest } = detail;
        const { last_attempt: last, ...rowRest } = row;
        expect(rest).to.deep.equal(rowRest);

        // Chronological attempts; the last one is the row's last_attempt.
        expect(attempts).to.have.length(2);
        for (const attempt of attempts) expectAttemptShape(attempt);
        expect(attempts.map((x: { attempt: number }) => x.attempt)).to.deep.equal([1, 2]);
        expect(attempts[0]).to.include({
          status_code: 503,
          error_reason: 'http_status',
          response_excerpt: 'later',
        });
        expect(attempts[1]).to.deep.equal(last);
        expect(attempts[0].delivery_id).to.not.equal(attempts[1].delivery_id);

        // The payload is exactly what was sent (and signed), both times.
        const deliveries = receiver.received.filter((x) => (x.json as { id?: string }).id === row.id);
        expect(deliveries).to.have.length(2);
        for (const delivery of deliveries) {
          expect(JSON.parse(delivery.raw.toString('utf8'))).to.deep.equal(payload);
          const check = verify({
            payload: delivery.raw,
            header: delivery.headers['x-service-signature'] as string | undefined,
            secrets: [secret],
            nowSeconds: unixSeconds(gw.clock.now()),
          });
          expect(check.ok, JSON.stringify(check)).to.equal(true);
        }
        expect(deliveries[0]!.raw.equals(deliveries[1]!.raw)).to.equal(true);
        expect(payload).to.include({
          id: row.id,
          type: row.event_type,
          created_at: row.created_at,
          api_version: '2026-11-01',
        });
        expect(payload.data.transaction).to.include({
          id: row.transaction_id,
          merchant_trans_id: row.merchant_trans_id,
        });
        expect(JSON.stringify(payload)).to.not.include('4242424242424242');
        expect(JSON.stringify(payload)).to.not.include('4000000000000002');
      }
      const refundEvent = events.find((e) => e.event_type === 'transaction.refunded');
      const refundDetail = (await gw.call('GET', `/api/v1/webhook/events/${refundEvent.id}`)).body.data;
      expect(refundDetail.payload.data.transaction).to.include({
        id: r.id,
        related_trans_id: s.id,
        transaction_type: 'refund',
        amount: 500,
        refunded_amount: 500,
      });
    });

    it('an event failed by DELETE reports its attempts in the attempt shape (delivery_id whd_...)', async () => {
      await register();
      await sale();
      expectOk(await gw.call('DELETE', '/api/v1/webhook'));
      const [row] = (await list()).events;
      expect(row).to.include({ status: 'failed', delivered_at: null });
      expect(row.failed_at).to.equal(isoMicros(gw.clock.now()));
      // Whatever the sandbox records about the deletion must still be a well-formed delivery attempt.
      const detail = (await gw.call('GET', `/api/v1/webhook/events/${row.id}`)).body.data;
      for (const attempt of detail.delivery_attempts) expectAttemptShape(attempt);
      expectRowShape(row);
    });
  });

  describe('filters', () => {
    it('status: delivered, pending and failed each list only their events', async () => {
      await register();
      const delivered = await sale();
      await tick();
      receiver.behave({ kind: 'answer', status: 500 });
      const failed = await sale();
      await tick();
      // Deleting fails what is still queued (rule 8); the new endpoint gets a fresh pending event.
      expectOk(await gw.call('DELETE', '/api/v1/webhook'));
      await register();
      const pending = await sale();
      await tick();

      const byStatus = async (status: string) =>
        (await list(`?status=${status}`)).events.map((e) => e.transaction_id);
      expect(await byStatus('delivered')).to.deep.equal([delivered.id]);
      expect(await byStatus('failed')).to.deep.equal([failed.id]);
      expect(await byStatus('pending')).to.deep.equal([pending.id]);
      expect((await list('?status=failed')).pagination.total).to.equal(1);
      expect((await list()).pagination.total).to.equal(3);
    });

    it('event_type and transaction_id', async () => {
      await register();
      const s1 = await sale();
      const s2 = await sale();
      const r1 = await operate('refund', s1.id, 1);
      const r2 = await operate('refund', s1.id, 2);
      const d = await declined();
      await tick();

      const captured = await list('?event_type=transaction.captured');
      expect(captured.events.map((e) => e.transaction_id)).to.deep.equal([s2.id, s1.id]);
      expect(captured.pagination.total).to.equal(2);
      const refunded = await list('?event_type=transaction.refunded');
      expect(refunded.events.map((e) => e.transaction_id)).to.deep.equal([r2.id, r1.id]);
      expect(
        (await list('?event_type=transaction.failed')).events.map((e) => e.transaction_id),
      ).to.deep.equal([d.id]);
      expect((await list('?event_type=transaction.voided')).events).to.deep.equal([]);

      const ofSale = await list(`?transaction_id=${s1.id}`);
      expect(ofSale.events.map((e) => e.event_type)).to.deep.equal(['transaction.captured']);
      expect(ofSale.events[0].transaction_id).to.equal(s1.id);
      expect((await list(`?transaction_id=${r2.id}`)).events.map((e) => e.transaction_id)).to.deep.equal([
        r2.id,
      ]);
      expect((await list('?transaction_id=999999')).events).to.deep.equal([]);
      // Filters combine.
      expect((await list(`?transaction_id=${s1.id}&event_type=transaction.refunded`)).events).to.deep.equal(
        [],
      );
      expect(
        (await list(`?status=delivered&event_type=transaction.refunded&transaction_id=${r1.id}`)).events.map(
          (e) => e.transaction_id,
        ),
      ).to.deep.equal([r1.id]);
    });

    it('from and to are inclusive bounds on created_at', async () => {
      await register();
      const t0 = gw.clock.now();
      const made: number[] = [];
      for (let i = 0; i < 4; i++) {
        if (i > 0) gw.clock.advance(10_000);
        made.push((await sale()).id);
      }
      await tick();
      const at = (i: number) => encodeURIComponent(isoMicros(t0 + i * 10_000));
      const txOf = async (query: string) => (await list(query)).events.map((e) => e.transaction_id);
      const [a, b, c, d] = made as [number, number, number, number];

      expect(await txOf(`?from=${at(1)}`)).to.deep.equal([d, c, b]);
      expect(await txOf(`?to=${at(2)}`)).to.deep.equal([c, b, a]);
      expect(await txOf(`?from=${at(1)}&to=${at(2)}`)).to.deep.equal([c, b]);
      expect(await txOf(`?from=${at(1)}&to=${at(1)}`)).to.deep.equal([b]);
      // One millisecond past a bound excludes the event on it.
      const just = (ms: number) => encodeURIComponent(isoMicros(ms));
      expect(await txOf(`?from=${just(t0 + 10_001)}`)).to.deep.equal([d, c]);
      expect(await txOf(`?to=${just(t0 + 19_999)}`)).to.deep.equal([b, a]);
      // A bound written without fractional seconds means the same instant.
      expect(
        await txOf(`?from=${encodeURIComponent(new Date(t0 + 30_000).toISOString().replace('.000', ''))}`),
      ).to.deep.equal([d]);
      expect((await list(`?from=${at(2)}&to=${at(1)}`)).events).to.deep.equal([]);
      expect((await list(`?from=${at(1)}&to=${at(2)}`)).pagination.total).to.equal(2);
    });
  });

  describe('pagination', () => {
    it('per_page 2 over 5 events: pages 1-3 with pagination {current_page, last_page, per_page, total}', async () => {
      await register();
      for (let i = 0; i < 5; i++) {
        await sale();
        gw.clock.advance(1_000);
      }
      await tick();
      const all = await ids();
      expect(all).to.have.length(5);
      const pages = [];
      for (const page of [1, 2, 3]) {
        const { events, pagination } = await list(`?per_page=2&page=${page}`);
        expect(pagination).to.deep.equal({ current_page: page, last_page: 3, per_page: 2, total: 5 });
        for (const row of events) expectRowShape(row);
        pages.push(events.map((e) => e.id));
      }
      expect(pages.map((p) => p.length)).to.deep.equal([2, 2, 1]);
      expect(pages.flat()).to.deep.equal(all);
      // Page 1 is the default page.
      expect(await ids('?per_page=2')).to.deep.equal(pages[0]);
    });

    it('per_page defaults to 25', async () => {
      await register();
      for (let i = 0; i < 26; i++) await sale();
      const first = await list();
      expect(first.pagination).to.deep.equal({ current_page: 1, last_page: 2, per_page: 25, total: 26 });
      expect(first.events).to.have.length(25);
      const second = await list('?page=2');
      expect(second.pagination).to.deep.equal({ current_page: 2, last_page: 2, per_page: 25, total: 26 });
      expect(second.events).to.have.length(1);
      expect(first.events.map((e) => e.id)).to.not.include(second.events[0].id);
      expect((await list('?per_page=100')).events).to.have.length(26);
    });
  });

  describe('visibility', () => {
    it("another merchant's event id -> 404 on GET and replay; an unknown id -> 404", async () => {
      await register();
      await sale();
      await tick();
      const [row] = (await list()).events;
      // Merchant 1002, with its own endpoint and its own event, still cannot see 1001's.
      await register({}, OTHER_MERCHANT_KEY);
      const theirs = await sale(OTHER_MERCHANT_KEY);
      const other = await list('', OTHER_MERCHANT_KEY);
      expect(other.events.map((e) => e.transaction_id)).to.deep.equal([theirs.id]);
      expectNotFound(await gw.call('GET', `/api/v1/webhook/events/${row.id}`, { key: OTHER_MERCHANT_KEY }));
      expectNotFound(
        await gw.call('POST', `/api/v1/webhook/events/${row.id}/replay`, {
          key: OTHER_MERCHANT_KEY,
          body: {},
        }),
      );
      expectNotFound(await gw.call('GET', `/api/v1/webhook/events/${other.events[0].id}`));
      for (const id of ['evt_AAAAAAAAAAAAAAAAAAAAAAAA', 'nope', row.id.toLowerCase()]) {
        if (id === row.id) continue;
        expectNotFound(await gw.call('GET', `/api/v1/webhook/events/${id}`));
        expectNotFound(await gw.call('POST', `/api/v1/webhook/events/${id}/replay`, { body: {} }));
      }
      // The owner and a linked partner can.
      expectOk(await gw.call('GET', `/api/v1/webhook/events/${row.id}`));
      expectOk(
        await gw.call('GET', `/api/v1/webhook/events/${row.id}?merchant_id=1001`, { key: PARTNER_KEY }),
      );
      expect(recorded().find((e) => e.id === row.id)!.queuedReplays).to.equal(0);
    });
  });

  describe('recording rules (rule 3, sandbox.md section 8)', () => {
    it('events of an unsubscribed type are not recorded at all', async () => {
      await register({ events: ['transaction.refunded'] });
      const s = await sale();
      await declined();
      const a = await auth();
      await operate('void', a.id);
      await tick();
      expect((await list()).events).to.deep.equal([]);
      expect(recorded()).to.have.length(0);
      expect(receiver.received).to.have.length(0);
      // The subscribed type is.
      const r = await operate('refund', s.id);
      await tick();
      const { events } = await list();
      expect(events.map((e) => [e.event_type, e.transaction_id])).to.deep.equal([
        ['transaction.refunded', r.id],
      ]);
      expect(receiver.received).to.have.length(1);
    });

    it('transaction.pending only when listed explicitly: none with events null, one with ["transaction.pending"]', async () => {
      await register(); // events null: the default set
      const first = await auth();
      await tick();
      expect((await list()).events).to.deep.equal([]);
      expect(recorded()).to.have.length(0);
      // The default set still covers the capture of that auth.
      const capture = await operate('capture', first.id);
      expect((await list()).events.map((e) => [e.event_type, e.transaction_id])).to.deep.equal([
        ['transaction.captured', capture.id],
      ]);

      await update({ events: ['transaction.pending'] });
      const second = await auth();
      await tick();
      const { events } = await list('?event_type=transaction.pending');
      expect(events.map((e) => [e.event_type, e.transaction_id])).to.deep.equal([
        ['transaction.pending', second.id],
      ]);
      // ...and now nothing else is recorded.
      await operate('void', second.id);
      expect((await list()).pagination.total).to.equal(2);
      const delivered = receiver.received.map((x) => (x.json as { type: string }).type);
      expect(delivered).to.include('transaction.pending');
    });

    it('no event is recorded while no endpoint exists (before the first PUT, after DELETE)', async () => {
      await sale();
      await declined();
      expect(recorded()).to.have.length(0);
      await register();
      await tick();
      expect((await list()).events).to.deep.equal([]);
      expect(receiver.received).to.have.length(0);

      const kept = await sale();
      await tick();
      expectOk(await gw.call('DELETE', '/api/v1/webhook'));
      await sale();
      const a = await auth();
      await operate('void', a.id);
      await tick();
      // History stays readable and holds only the event recorded while the endpoint existed.
      const { events } = await list();
      expect(events.map((e) => e.transaction_id)).to.deep.equal([kept.id]);
      expect(recorded()).to.have.length(1);
      expect(receiver.received).to.have.length(1);
    });
  });

  describe('retention (Limits: 30 days)', () => {
    it('after 30 days an event is gone from the list, its GET is 404 and its replay is 404', async () => {
      await register();
      const old = await sale();
      await tick();
      const [row] = (await list()).events;
      expect(row.transaction_id).to.equal(old.id);

      gw.clock.advance(29 * DAY_MS);
      const newer = await sale();
      await tick();
      // Still inside the window on day 29.
      expect((await list()).events.map((e) => e.transaction_id)).to.deep.equal([newer.id, old.id]);
      expectOk(await gw.call('GET', `/api/v1/webhook/events/${row.id}`));

      gw.clock.advance(DAY_MS);
      const { events, pagination } = await list();
      expect(events.map((e) => e.transaction_id)).to.deep.equal([newer.id]);
      expect(pagination.total).to.equal(1);
      expect((await list(`?transaction_id=${old.id}`)).events).to.deep.equal([]);
      expectNotFound(await gw.call('GET', `/api/v1/webhook/events/${row.id}`));
      const replay = await gw.call('POST', `/api/v1/webhook/events/${row.id}/replay`, { body: {} });
      expectNotFound(replay);
      const before = receiver.received.length;
      const report = await tick();
      expect(report.attempted).to.equal(0);
      expect(receiver.received).to.have.length(before);
      expect(recorded().map((e) => e.id)).to.not.include(row.id);
      expectNotFound(await gw.call('GET', `/api/v1/webhook/events/${row.id}`));
      expectOk(await gw.call('GET', `/api/v1/webhook/events/${events[0].id}`));
    });
  });
});
