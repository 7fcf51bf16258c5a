import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Transaction } from '../../../src/gateway/domain/transactions.js';
import { RETIRED_SECRET_GRACE_MS } from '../../../src/merchant/store/secrets.js';
import { isoMicros, ManualClock, systemClock, unixSeconds } from '../../../src/shared/clock.js';
import { generateSecret, sign, verify } from '../../../src/shared/signature.js';
import { count, rows } from '../../support/db.js';
import {
  alnum,
  deliveriesOff,
  type Event,
  event,
  inboxRow,
  paidOrder,
  poster,
  processed,
  refundAtGateway,
  spyOnQueue,
  stateOf,
  storedSecret,
  wire,
} from '../../support/events.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { alive, startRedis, stopRedis } from '../../support/private-redis.js';
import { freePort, waitFor } from '../../support/process.js';

/**
 * merchant.md, The receiver: POST /webhooks/gateway reads the raw body (at most 256 KiB), verifies
 * X-Service-Signature (sandbox.md section 8) against every active secret, and only then parses;
 * 401 / 400 / 413 store nothing; a new event is stored once and queued once; a repeat (replays
 * included) is 200 and queued no second time; database down: 503 so the gateway retries; Redis
 * down: stored, 200, and the sweeper queues it later. The events here are signed by the test itself
 * with the secrets the kit holds, on payloads shaped as gateway-api.md's webhook payload.
 */

// ---------------------------------------------------------------------------------------------
// helpers

async function historyOf(t: TestKit, orderId: string) {
  return rows(t, 'order_history', { order_id: orderId }, 'id');
}

async function historyFor(t: TestKit, eventId: string) {
  return rows(t, 'order_history', { source_id: eventId });
}

async function queueTotal(t: TestKit): Promise<number> {
  const counts = await t.kit.queue.getJobCounts();
  return Object.values(counts).reduce((a: number, b) => a + Number(b), 0);
}

// ---------------------------------------------------------------------------------------------

describe('merchant: the webhook receiver (POST /webhooks/gateway)', () => {
  describe('refusals: nothing unverified, oversized or malformed is stored', () => {
    let t: TestKit;
    // The kit's own clock, held still: the timestamp window is checked to the second. Set in before():
    // the time mocha loads the file may be minutes before this runs.
    let clock: ManualClock;
    let post: ReturnType<typeof poster>;
    let secret: string;
    let sale: Transaction;
    let orderId: string;

    before(async () => {
      clock = new ManualClock(Date.now());
      t = await startTestKit({ clock });
      await deliveriesOff(t);
      post = poster(t, clock);
      secret = await storedSecret(t);
      ({ sale, id: orderId } = await paidOrder(t));
    });
    after(async () => {
      await t?.close();
    });

    /** merchant.md: "nothing stored": the inbox has no row and bull holds no job at all. */
    const expectNothingStored = async () => {
      expect(await count(t, 'webhook_inbox'), 'inbox rows').to.equal(0);
      expect(await queueTotal(t), 'bull jobs').to.equal(0);
    };

    const good = () => event('transaction.captured', wire(sale));

    it('a bad signature (well-formed v1, wrong value) is 401 and stores nothing', async () => {
      const e = good();
      const answer = await post(e.body, { header: `t=${unixSeconds(clock.now())},v1=${'ab'.repeat(32)}` });
      expect(answer.status, answer.text).to.equal(401);
      expect(answer.body.success).to.equal(false);
      await expectNothingStored();
    });

    it('a missing X-Service-Signature header is 401 and stores nothing', async () => {
      const answer = await post(good().body, { header: null });
      expect(answer.status, answer.text).to.equal(401);
      await expectNothingStored();
    });

    it('a header that is not t=...,v1=... is 401 and stores nothing', async () => {
      for (const header of ['garbage', `v1=${sign(good().body, secret, 1).slice(-64)}`, 't=abc,v1=00']) {
        const answer = await post(good().body, { header });
        expect(answer.status, header).to.equal(401);
      }
      await expectNothingStored();
    });

    it('a signature made with another secret is 401 and stores nothing', async () => {
      const other = generateSecret((n) => randomBytes(n));
      const answer = await post(good().body, { secret: other });
      expect(answer.status, answer.text).to.equal(401);
      await expectNothingStored();
    });

    it('a correct signature with a timestamp 301 s old is 401 and stores nothing', async () => {
      const answer = await post(good().body, { secret, at: unixSeconds(clock.now()) - 301 });
      expect(answer.status, answer.text).to.equal(401);
      await expectNothingStored();
    });

    it('a correct signature with a timestamp 301 s in the future is 401 and stores nothing', async () => {
      const answer = await post(good().body, { secret, at: unixSeconds(clock.now()) + 301 });
      expect(answer.status, answer.text).to.equal(401);
      await expectNothingStored();
    });

    it('a body re-serialised after signing (parse + stringify) is 401: the raw bytes are what is signed', async () => {
      const e = good();
      const pretty = JSON.stringify(JSON.parse(e.body), null, 2);
      const header = sign(pretty, secret, unixSeconds(clock.now()));
      // The header is right for the bytes that were signed...
      expect(
        verify({ payload: pretty, header, secrets: [secret], nowSeconds: unixSeconds(clock.now()) }).ok,
      ).to.equal(true);
      // ...and the same JSON re-serialised is not those bytes.
      const reserialised = JSON.stringify(JSON.parse(pretty));
      expect(reserialised).to.not.equal(pretty);
      const answer = await post(reserialised, { header });
      expect(answer.status, answer.text).to.equal(401);
      await expectNothingStored();
    });

    it('the signature is checked before parsing: a non-JSON body with a bad signature is 401, not 400', async () => {
      const answer = await post('this is not json', { secret: generateSecret((n) => randomBytes(n)) });
      expect(answer.status, answer.text).to.equal(401);
      await expectNothingStored();
    });

    it('a well-signed body over 256 KiB is 413 and stores nothing', async () => {
      const transaction = { ...wire(sale), description: 'x'.repeat(256 * 1024) };
      const e = event('transaction.captured', transaction);
      expect(Buffer.byteLength(e.body)).to.be.greaterThan(256 * 1024);
      const answer = await post(e.body, { secret });
      expect(answer.status, answer.text.slice(0, 200)).to.equal(413);
      await expectNothingStored();
    });

    it('a well-signed body that is not JSON is 400 and stores nothing', async () => {
      for (const body of ['this is not json', '{"id": "evt_', '']) {
        const answer = await post(body, { secret });
        expect(answer.status, JSON.stringify(body)).to.equal(400);
        expect(answer.body?.success, JSON.stringify(body)).to.equal(false);
      }
      await expectNothingStored();
    });

    it('well-signed JSON without id, type or data.transaction (or not an object) is 400 and stores nothing', async () => {
      const full = JSON.parse(good().body) as Record<string, unknown>;
      const without = (key: string) => {
        const copy: Record<string, unknown> = { ...full };
        delete copy[key];
        return copy;
      };
      const bodies: Record<string, unknown> = {
        'no id': without('id'),
        'no type': without('type'),
        'no data': without('data'),
        'no data.transaction': { ...full, data: {} },
        'data.transaction null': { ...full, data: { transaction: null } },
        'an array': [full],
        null: null,
        'a string': 'evt',
      };
      for (const [name, body] of Object.entries(bodies)) {
        const answer = await post(JSON.stringify(body), { secret });
        expect(answer.status, name).to.equal(400);
      }
      await expectNothingStored();
    });

    it('a well-signed event whose id, type or transaction id the inbox cannot keep as sent is 400 and stores nothing', async () => {
      const e = JSON.parse(good().body);
      const bodies: Record<string, unknown> = {
        // Too long for their columns: a 503 before, so the gateway retried for a day.
        'an id of 65 characters': { ...e, id: `evt_${'x'.repeat(61)}` },
        'a type of 65 characters': { ...e, type: `transaction.${'x'.repeat(53)}` },
        'a transaction id of 65 characters': {
          ...e,
          data: { transaction: { ...e.data.transaction, id: '1'.repeat(65) } },
        },
        // MariaDB compares trailing spaces away: stored as another event's duplicate before.
        'an id with a trailing space': { ...e, id: `${e.id} ` },
        'an id that is not ASCII': { ...e, id: `${e.id}é` },
      };
      for (const [name, body] of Object.entries(bodies)) {
        const answer = await post(JSON.stringify(body), { secret });
        expect(answer.status, `${name}: ${answer.text}`).to.equal(400);
        expect(answer.body.code, name).to.equal('MALFORMED_EVENT');
      }
      await expectNothingStored();
    });

    it('a well-signed body that is not UTF-8 (latin1, a broken sequence) or starts with a BOM is 400 and stores nothing', async () => {
      const text = good().body.replace('"data"', '"note":"Zoë","data"');
      const bodies: Record<string, Buffer> = {
        latin1: Buffer.from(text, 'latin1'),
        'a lone continuation byte': Buffer.concat([
          Buffer.from(text.slice(0, 20)),
          Buffer.from([0x80]),
          Buffer.from(text.slice(20)),
        ]),
        'a UTF-8 BOM': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]),
      };
      for (const [name, body] of Object.entries(bodies)) {
        const answer = await post(body, { secret });
        expect(answer.status, `${name}: ${answer.text}`).to.equal(400);
      }
      await expectNothingStored();
    });

    it('a well-signed webhook.ping is 200 and stores nothing', async () => {
      const ping = JSON.stringify({
        id: `evt_test_${alnum(24)}`,
        type: 'webhook.ping',
        created_at: isoMicros(Date.now()),
        api_version: '2026-11-01',
        data: {},
      });
      const answer = await post(ping, { secret });
      expect(answer.status, answer.text).to.equal(200);
      await expectNothingStored();
    });

    it('the secrets unreadable (their table gone, the cached copy over 30 s old): 503 with Retry-After, nothing stored', async () => {
      clock.advance(31_000);
      await t.kit.sequelize.query('RENAME TABLE webhook_secrets TO webhook_secrets_off');
      try {
        const answer = await post(good().body, { secret });
        expect(answer.status, answer.text).to.equal(503);
        expect(answer.body).to.include({ success: false, code: 'UNAVAILABLE' });
        expect(answer.headers.get('retry-after')).to.equal('30');
      } finally {
        await t.kit.sequelize.query('RENAME TABLE webhook_secrets_off TO webhook_secrets');
      }
      await expectNothingStored();
      const line = t.logs
        .map((l) => JSON.parse(l))
        .findLast((l) => l.msg === 'webhook not verified: secrets unavailable');
      expect(line, 'one line for the operator').to.not.equal(undefined);
      expect(line.request_id).to.match(/^req_/);
    });

    // Last in this block: it stores rows.
    it('a timestamp exactly 300 s old or 300 s ahead is still within the window: 200, stored', async () => {
      const now = unixSeconds(clock.now());
      const old = good();
      const ahead = good();
      expect((await post(old.body, { secret, at: now - 300 })).status).to.equal(200);
      expect((await post(ahead.body, { secret, at: now + 300 })).status).to.equal(200);
      expect(await inboxRow(t, old.id)).to.not.equal(null);
      expect(await inboxRow(t, ahead.id)).to.not.equal(null);
      await processed(t, old.id);
      await processed(t, ahead.id);
      expect((await getOrder(t, orderId)).status).to.equal('paid');
    });
  });

  describe('accepted events: stored once, queued once, applied once', () => {
    let t: TestKit;
    let post: ReturnType<typeof poster>;
    let secret: string;

    before(async () => {
      t = await startTestKit();
      await deliveriesOff(t); // only the test's own events reach the kit
      post = poster(t, systemClock);
      secret = await storedSecret(t);
    });
    after(async () => {
      await t?.close();
    });

    it('a new event: 200, one inbox row, one job whose id is the event id, processed by the worker', async () => {
      const order = await paidOrder(t);
      const refund = await refundAtGateway(t, order.sale.id, 2);
      const e = event('transaction.refunded', wire(refund));
      const rowsBefore = await count(t, 'webhook_inbox');
      const spy = spyOnQueue(t);
      try {
        const answer = await post(e.body, { secret });
        expect(answer.status, answer.text).to.equal(200);
        expect(answer.body.success).to.equal(true);
        expect(spy.queued).to.deep.equal([e.id]);
      } finally {
        spy.restore();
      }
      expect(await count(t, 'webhook_inbox')).to.equal(rowsBefore + 1);
      const row = await inboxRow(t, e.id);
      expect(row, 'stored in the inbox').to.not.equal(null);
      expect(row!.source).to.equal('webhook');
      expect(row!.event_type).to.equal('transaction.refunded');
      const job = await t.kit.queue.getJob(e.id);
      expect(job, 'a bull job with the event id').to.not.equal(null);
      expect(String(job!.id)).to.equal(e.id);

      const done = await processed(t, e.id);
      expect(done.outcome).to.equal('applied');
      const after = await getOrder(t, order.id);
      expect(after.status).to.equal('partially_refunded');
      expect(after.refunded_amount).to.equal(200);
      const entries = (await historyOf(t, order.id)).filter((h) => h.source_id === e.id);
      expect(entries).to.have.length(1);
      expect(entries[0]).to.include({
        source: 'webhook',
        outcome: 'applied',
        status_after: 'partially_refunded',
      });
    });

    it("answers as the app's routes do: their security headers that matter to JSON (not the pages' policy), X-Request-Id (the caller's plain one, else a new one), JSON; a query string too", async () => {
      const health = await fetch(`${t.url}/healthz`);
      const security = [
        'x-frame-options',
        'x-content-type-options',
        'referrer-policy',
        'cross-origin-resource-policy',
      ];
      // A delivery's answer is JSON: what governs a page (its policy, its window's isolation) is not sent.
      const pageOnly = ['content-security-policy', 'cross-origin-opener-policy'];
      const order = await paidOrder(t);
      const e = event('transaction.refunded', wire(await refundAtGateway(t, order.sale.id, 1)));
      const signed = (body: string) => ({
        'content-type': 'application/json',
        'x-service-signature': sign(body, secret, unixSeconds(Date.now())),
      });
      const plain = await fetch(`${t.url}/webhooks/gateway`, {
        method: 'POST',
        headers: signed(e.body),
        body: e.body,
      });
      expect(plain.status).to.equal(200);
      expect(plain.headers.get('content-type')).to.equal('application/json; charset=utf-8');
      expect(await plain.json()).to.deep.equal({ success: true, message: 'Received.', code: '', data: null });
      for (const name of security) {
        expect(health.headers.get(name), name).to.be.a('string');
        expect(plain.headers.get(name), name).to.equal(health.headers.get(name));
      }
      for (const name of pageOnly) {
        expect(health.headers.get(name), name).to.be.a('string');
        expect(plain.headers.get(name), name).to.equal(null);
      }
      expect(plain.headers.get('cache-control')).to.equal('no-store');
      expect(plain.headers.get('x-request-id')).to.match(/^req_[A-Za-z0-9]{20}$/);

      const again = await fetch(`${t.url}/webhooks/gateway?from=lb`, {
        method: 'POST',
        headers: { ...signed(e.body), 'x-request-id': 'lb-7f3a.9:2' },
        body: e.body,
      });
      expect(again.status).to.equal(200);
      expect(await again.json()).to.include({ message: 'Already received.' });
      expect(again.headers.get('x-request-id')).to.equal('lb-7f3a.9:2');
      const carded = await fetch(`${t.url}/webhooks/gateway`, {
        method: 'POST',
        headers: { ...signed(e.body), 'x-request-id': '4242424242424242' },
        body: e.body,
      });
      expect(carded.headers.get('x-request-id')).to.match(/^req_/);
      expect((await processed(t, e.id)).outcome).to.equal('applied');
    });

    it("the path's other spellings (a trailing slash, capitals) reach the same receiver, through the app", async () => {
      const order = await paidOrder(t);
      const refund = await refundAtGateway(t, order.sale.id, 1);
      for (const path of ['/webhooks/gateway/', '/Webhooks/Gateway']) {
        const e = event('transaction.refunded', wire(refund));
        const body = e.body;
        const refused = await fetch(`${t.url}${path}`, { method: 'POST', body });
        expect(refused.status, path).to.equal(401);
        const answer = await fetch(`${t.url}${path}`, {
          method: 'POST',
          headers: { 'x-service-signature': sign(body, secret, unixSeconds(Date.now())) },
          body,
        });
        expect(answer.status, path).to.equal(200);
        expect(answer.headers.get('content-type')).to.equal('application/json; charset=utf-8');
        expect(answer.headers.get('x-frame-options')).to.equal('DENY');
        expect(await answer.json()).to.deep.equal({
          success: true,
          message: 'Received.',
          code: '',
          data: null,
        });
        expect(await inboxRow(t, e.id), path).to.not.equal(null);
      }
    });

    it('the same event again, and as a replay (X-Service-Replay: true): 200, still one row, nothing queued twice, applied once', async () => {
      const order = await paidOrder(t);
      const refund = await refundAtGateway(t, order.sale.id, 3);
      const e = event('transaction.refunded', wire(refund));
      expect((await post(e.body, { secret })).status).to.equal(200);
      const first = await processed(t, e.id);
      const jobBefore = await t.kit.queue.getJob(e.id);

      const spy = spyOnQueue(t);
      try {
        const again = await post(e.body, { secret }); // a retry of the delivery, signed afresh
        expect(again.status, again.text).to.equal(200);
        const replay = await post(e.body, { secret, replay: true });
        expect(replay.status, replay.text).to.equal(200);
        expect(spy.queued, 'the receiver queued a repeat').to.deep.equal([]);
      } finally {
        spy.restore();
      }
      expect(await count(t, 'webhook_inbox', { event_id: e.id })).to.equal(1);
      const row = await inboxRow(t, e.id);
      expect(row!.source).to.equal('webhook');
      expect(row!.processed_at!.getTime()).to.equal(first.processed_at!.getTime());
      const jobAfter = await t.kit.queue.getJob(e.id);
      expect(jobAfter!.timestamp).to.equal(jobBefore!.timestamp);
      expect(jobAfter!.attemptsMade).to.equal(jobBefore!.attemptsMade);

      const entries = (await historyOf(t, order.id)).filter((h) => h.source_id === e.id);
      expect(entries).to.have.length(1);
      expect(entries[0]!.outcome).to.equal('applied');
      const after = await getOrder(t, order.id);
      expect(after.status).to.equal('partially_refunded');
      expect(after.refunded_amount).to.equal(300);
    });

    it('a replay that arrives first is stored with source replay and applied once', async () => {
      const order = await paidOrder(t);
      const refund = await refundAtGateway(t, order.sale.id, 1);
      const e = event('transaction.refunded', wire(refund));
      expect((await post(e.body, { secret, replay: true })).status).to.equal(200);
      expect((await post(e.body, { secret })).status).to.equal(200);
      await processed(t, e.id);
      expect((await inboxRow(t, e.id))!.source).to.equal('replay');
      const entries = await historyFor(t, e.id);
      expect(entries).to.have.length(1);
      expect(entries[0]).to.include({ source: 'replay', outcome: 'applied' });
    });

    it('five simultaneous deliveries of one event: all 200, one row, queued once, applied once', async () => {
      const order = await paidOrder(t);
      const refund = await refundAtGateway(t, order.sale.id, 4);
      const e = event('transaction.refunded', wire(refund));
      const spy = spyOnQueue(t);
      try {
        const answers = await Promise.all([1, 2, 3, 4, 5].map(() => post(e.body, { secret })));
        expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200, 200]);
        expect(spy.queued).to.deep.equal([e.id]);
      } finally {
        spy.restore();
      }
      await processed(t, e.id);
      expect(await count(t, 'webhook_inbox', { event_id: e.id })).to.equal(1);
      const entries = await historyFor(t, e.id);
      expect(entries).to.have.length(1);
      expect(entries[0]!.outcome).to.equal('applied');
      expect((await getOrder(t, order.id)).refunded_amount).to.equal(400);
    });

    it('a body of exactly 256 KiB is accepted (the limit is "at most")', async () => {
      const order = await paidOrder(t);
      const base = event('transaction.captured', { ...wire(order.sale), description: '' });
      const padding = 256 * 1024 - Buffer.byteLength(base.body);
      const e = event(
        'transaction.captured',
        { ...wire(order.sale), description: 'x'.repeat(padding) },
        base.id,
      );
      expect(Buffer.byteLength(e.body)).to.equal(256 * 1024);
      const answer = await post(e.body, { secret });
      expect(answer.status, answer.text).to.equal(200);
      await processed(t, e.id);
      expect(await historyFor(t, e.id)).to.have.length(1);
    });

    it('a header with several v1 values is accepted when one of them matches', async () => {
      const order = await paidOrder(t);
      const e = event('transaction.captured', wire(order.sale));
      const at = unixSeconds(Date.now());
      const right = sign(e.body, secret, at).split(',v1=')[1];
      const header = `t=${at},v1=${'0'.repeat(64)},v1=${right}`;
      const answer = await post(e.body, { header });
      expect(answer.status, answer.text).to.equal(200);
      await processed(t, e.id);
    });

    it('the database down: 503 with Retry-After and nothing queued; sent again once it is back: 200, stored and applied', async () => {
      const order = await paidOrder(t);
      const refund = await refundAtGateway(t, order.sale.id, 5);
      const e = event('transaction.refunded', wire(refund));
      const spy = spyOnQueue(t);
      await t.kit.sequelize.query('RENAME TABLE webhook_inbox TO webhook_inbox_off');
      try {
        const down = await post(e.body, { secret });
        expect(down.status, down.text).to.equal(503);
        expect(down.headers.get('retry-after'), 'Retry-After').to.match(/^\d+$/);
        expect(down.body.success).to.equal(false);
        expect(spy.queued, 'queued without being stored').to.deep.equal([]);
        expect(await t.kit.queue.getJob(e.id)).to.equal(null);
      } finally {
        spy.restore();
        await t.kit.sequelize.query('RENAME TABLE webhook_inbox_off TO webhook_inbox');
      }
      expect(await inboxRow(t, e.id)).to.equal(null);
      expect((await getOrder(t, order.id)).status).to.equal('paid');

      // The gateway's retry (a fresh signature, the same body).
      const again = await post(e.body, { secret });
      expect(again.status, again.text).to.equal(200);
      expect(await inboxRow(t, e.id)).to.not.equal(null);
      await processed(t, e.id);
      const after = await getOrder(t, order.id);
      expect(after.status).to.equal('partially_refunded');
      expect(after.refunded_amount).to.equal(500);
    });
  });

  describe("GATEWAY_WEBHOOK_SECRETS and the gateway's own deliveries", () => {
    let t: TestKit;
    let post: ReturnType<typeof poster>;
    const extra = generateSecret((n) => randomBytes(n));

    before(async () => {
      // Deliveries on: the sandbox delivers to the kit as events happen.
      t = await startTestKit({ env: { GATEWAY_WEBHOOK_SECRETS: extra } });
      post = poster(t, systemClock);
    });
    after(async () => {
      await t?.close();
    });

    /** The sandbox's events about one transaction. */
    const sandboxEvents = (transactionId: number) =>
      [...stateOf(t).webhooks.events.values()].filter((e) => e.transactionId === transactionId);

    /** A paid order whose own captured event the sandbox has delivered and the kit processed. */
    const settledOrder = async () => {
      const order = await paidOrder(t);
      await waitFor('the sandbox captured event processed', async () => {
        const history = await historyOf(t, order.id);
        return history.some((h) => h.source === 'webhook');
      });
      return order;
    };

    it('events signed with a GATEWAY_WEBHOOK_SECRETS secret are accepted beside the stored one', async () => {
      const order = await settledOrder();
      const stored = await storedSecret(t);
      expect(stored).to.not.equal(extra);
      const byExtra = event('transaction.captured', wire(order.sale));
      const byStored = event('transaction.captured', wire(order.sale));
      const a = await post(byExtra.body, { secret: extra });
      expect(a.status, a.text).to.equal(200);
      const b = await post(byStored.body, { secret: stored });
      expect(b.status, b.text).to.equal(200);
      await processed(t, byExtra.id);
      await processed(t, byStored.id);
      expect(await historyFor(t, byExtra.id)).to.have.length(1);
      expect(await historyFor(t, byStored.id)).to.have.length(1);
    });

    it("the gateway's test ping is answered 2xx and stores nothing", async () => {
      const before = await count(t, 'webhook_inbox');
      const ping = await t.kit.client.testWebhook();
      expect(ping.data.success).to.equal(true);
      expect(ping.data.status_code).to.equal(200);
      expect(await count(t, 'webhook_inbox')).to.equal(before);
    });

    it("the database down during a real delivery: 503, and the gateway's retry a minute later lands it", async () => {
      const order = await settledOrder();
      let refund: Transaction;
      await t.kit.sequelize.query('RENAME TABLE webhook_inbox TO webhook_inbox_off');
      try {
        refund = await refundAtGateway(t, order.sale.id, 2.34);
        const first = await waitFor('the first delivery attempt', async () => {
          const e = sandboxEvents(refund.id).find((x) => x.type === 'transaction.refunded');
          return e && e.attempts.length > 0 ? e : null;
        });
        expect(first.attempts[0]!.statusCode).to.equal(503);
        expect(first.status).to.equal('pending');
      } finally {
        await t.kit.sequelize.query('RENAME TABLE webhook_inbox_off TO webhook_inbox');
      }
      const gatewayEvent = sandboxEvents(refund.id).find((x) => x.type === 'transaction.refunded')!;
      expect(await inboxRow(t, gatewayEvent.id)).to.equal(null);

      // sandbox.md section 8: the second attempt is due 1 min after the first.
      t.sandboxClock.advance(60_000);
      await t.kit.sandbox!.controls.tick();
      await waitFor('the retry delivered', async () => gatewayEvent.status === 'delivered');
      expect(gatewayEvent.attempts.at(-1)!.statusCode).to.equal(200);
      await processed(t, gatewayEvent.id);
      const after = await getOrder(t, order.id);
      expect(after.status).to.equal('partially_refunded');
      expect(after.refunded_amount).to.equal(234);
    });
  });

  describe('rotation (rotate at the gateway, then store the secret, as `webhook rotate` does) loses no event', () => {
    let t: TestKit;
    let post: ReturnType<typeof poster>;
    const extra = generateSecret((n) => randomBytes(n));
    // The kit's clock and the sandbox's move together, only when told: "a minute later" is a minute for both.
    // Set when the kit starts, not when mocha loads the file: in a long run that is minutes earlier,
    // past the signature's tolerance.
    let clock: ManualClock;
    const later = (ms: number) => {
      clock.advance(ms);
      t.sandboxClock.advance(ms);
    };

    before(async () => {
      clock = new ManualClock(Date.now());
      t = await startTestKit({ env: { GATEWAY_WEBHOOK_SECRETS: extra }, clock });
      post = poster(t, clock);
    });
    after(async () => {
      await t?.close();
    });

    const refundEvent = (refundId: number) =>
      waitFor('the delivery of the refund event', async () => {
        const x = [...stateOf(t).webhooks.events.values()].find(
          (y) => y.transactionId === refundId && y.type === 'transaction.refunded',
        );
        return x && x.attempts.length > 0 ? x : null;
      });

    const rotate = async () => {
      const rotated = await t.kit.client.rotateWebhookSecret();
      expect(rotated.data.secret).to.match(/^whsec_/);
      return rotated.data.secret as string;
    };
    const store = (secret: string) => t.kit.store.secrets.put(secret, 'embedded-sandbox');

    /** A paid order whose own captured event the sandbox delivered and the kit processed. */
    const settledOrder = async () => {
      const order = await paidOrder(t);
      await waitFor('the sandbox captured event processed', async () =>
        (await historyOf(t, order.id)).some((h) => h.source === 'webhook'),
      );
      return order;
    };

    it('after a rotation, an event signed with the new secret is accepted at once', async () => {
      const order = await settledOrder();
      const oldSecret = await storedSecret(t);
      later(5_000);
      const newSecret = await rotate();
      await store(newSecret);
      // The old secret stays accepted for the grace (a delivery signed just before may be on its way).
      expect(await t.kit.store.secrets.active()).to.deep.equal([newSecret, oldSecret]);
      expect(newSecret).to.not.equal(oldSecret);

      const e = event('transaction.captured', wire(order.sale));
      const answer = await post(e.body, { secret: newSecret });
      expect(answer.status, answer.text).to.equal(200);
      await processed(t, e.id);
    });

    it('a delivery signed with the replaced secret just before the rotation is accepted within the grace, not after', async () => {
      const order = await settledOrder();
      const oldSecret = await storedSecret(t);
      const signedBefore = unixSeconds(clock.now());
      later(1_000);
      const newSecret = await rotate();
      await store(newSecret);
      later(2_000);
      const inFlight = event('transaction.captured', wire(order.sale));
      const accepted = await post(inFlight.body, { secret: oldSecret, at: signedBefore });
      expect(accepted.status, accepted.text).to.equal(200);

      later(RETIRED_SECRET_GRACE_MS);
      expect(await t.kit.store.secrets.active()).to.deep.equal([newSecret]);
      const late = event('transaction.captured', wire(order.sale));
      // Signed now with the retired secret: the receiver re-reads its secrets on a miss, and refuses.
      const refused = await post(late.body, { secret: oldSecret });
      expect(refused.status, refused.text).to.equal(401);
    });

    describe('the gateway delivers while the CLI rotates', () => {
      let order: Awaited<ReturnType<typeof paidOrder>>;
      /** Rotated at the gateway, not yet stored: refused (the kit cannot know it yet). */
      let early: Awaited<ReturnType<typeof refundEvent>>;
      /** Delivered after the CLI stored the new secret, a second after the refused one's re-read. */
      let next: Awaited<ReturnType<typeof refundEvent>>;

      before(async () => {
        order = await settledOrder();
        later(5_000);
        const newSecret = await rotate();
        // Between the gateway's rotation and the CLI's store, the gateway signs with a secret the kit lacks.
        early = await refundEvent((await refundAtGateway(t, order.sale.id, 1)).id);
        await store(newSecret);
        // A miss re-reads the secrets at most once a second (a flood of bad signatures costs nothing):
        // within that second, a delivery signed with the new secret is refused once and retried.
        later(1_000);
        next = await refundEvent((await refundAtGateway(t, order.sale.id, 2)).id);
      });

      it('the delivery before the secret is stored is refused (401), nothing stored', async () => {
        expect(early.attempts[0]!.statusCode).to.equal(401);
        expect(await inboxRow(t, early.id)).to.equal(null);
      });

      it('the next delivery, after the secret is stored, is accepted at its first attempt (200)', async () => {
        expect(next.attempts[0]!.statusCode, 'status of its first attempt').to.equal(200);
      });

      it("the gateway's retries a minute later land whatever was refused: both events stored and applied", async () => {
        later(60_000);
        await t.kit.sandbox!.controls.tick();
        for (const e of [early, next]) {
          await waitFor(`${e.id} delivered`, async () => e.status === 'delivered');
          await processed(t, e.id);
        }
        const after = await getOrder(t, order.id);
        expect(after.status).to.equal('partially_refunded');
        expect(after.refunded_amount).to.equal(300);
      });

      it('the GATEWAY_WEBHOOK_SECRETS secret still verifies after the rotation', async () => {
        const e = event('transaction.captured', wire(order.sale));
        expect((await post(e.body, { secret: extra })).status).to.equal(200);
        await processed(t, e.id);
      });
    });
  });

  describe('Redis down during receipt: stored, 200, and the sweeper queues it later', () => {
    let redis: ChildProcess | null = null;
    let port = 0;
    let t: TestKit | undefined;
    let clock: ManualClock; // set in before(), as the kit starts
    const killOnExit = () => redis?.kill('SIGKILL');

    before(async () => {
      process.once('exit', killOnExit);
      port = await freePort();
      redis = await startRedis(port);
      clock = new ManualClock(Date.now());
      // Redis comes back empty here, which the kit's queue-loss watch answers at once
      // (queue-loss.test.ts): off, so that this is the sweeper's case, a Redis back with its data.
      t = await startTestKit({
        env: { REDIS_URL: `redis://127.0.0.1:${port}` },
        clock,
        queueLossLookMs: null,
      });
      await deliveriesOff(t);
    });
    after(async () => {
      try {
        if (t) {
          if (!alive(redis)) redis = await startRedis(port);
          await waitFor('the kit reconnected', async () => t!.kit.redis.status === 'ready');
          await t.close();
        }
      } finally {
        await stopRedis(redis);
        redis = null;
        process.removeListener('exit', killOnExit);
      }
    });

    it('events posted while Redis is down are answered 200 at once and stored; the sweeper queues them once Redis is back', async () => {
      const kit = t!;
      const post = poster(kit, clock);
      const secret = await storedSecret(kit);

      // Three paid orders and a partial refund of each at the gateway (deliveries are off).
      const cases: { orderId: string; e: Event; refunded: number }[] = [];
      for (const amount of [1, 2.5, 4]) {
        const order = await paidOrder(kit);
        const refund = await refundAtGateway(kit, order.sale.id, amount);
        cases.push({
          orderId: order.id,
          e: event('transaction.refunded', wire(refund)),
          refunded: refund.refundedAmount,
        });
      }

      await stopRedis(redis);
      redis = null;
      await waitFor('the kit to notice Redis is gone', async () => kit.kit.redis.status !== 'ready');

      const spy = spyOnQueue(kit);
      try {
        for (const { e } of cases) {
          const answer = await post(e.body, { secret });
          expect(answer.status, answer.text).to.equal(200);
          expect(answer.ms, 'answered well under a second').to.be.lessThan(750);
          const row = await inboxRow(kit, e.id);
          expect(row, 'stored in the inbox').to.not.equal(null);
          expect(row!.processed_at).to.equal(null);
        }
        // The kit gives up on the queue while Redis stays down (ioredis fails the waiting commands);
        // waited for, so that only the sweeper can queue these events once Redis is back.
        await waitFor('the failed enqueues settled', async () => spy.settled.every(Boolean));
      } finally {
        spy.restore();
      }

      redis = await startRedis(port);
      await waitFor(
        'the kit reconnected to Redis',
        async () => kit.kit.redis.status === 'ready' && (await kit.kit.redis.ping()) === 'PONG',
      );
      await waitFor('the queue reconnected', async () => (await kit.kit.queue.client.ping()) === 'PONG');
      for (const { e, orderId } of cases) {
        expect((await inboxRow(kit, e.id))!.processed_at, 'processed before the sweep').to.equal(null);
        expect((await getOrder(kit, orderId)).status).to.equal('paid');
      }

      // merchant.md: "stored but not processed after a minute are queued again".
      expect(await kit.kit.sweep(), 'rows younger than a minute are left alone').to.equal(0);
      clock.advance(61_000);
      expect(await kit.kit.sweep(), 'rows swept').to.equal(cases.length);

      for (const { e, orderId, refunded } of cases) {
        const row = await processed(kit, e.id);
        expect(row.outcome).to.equal('applied');
        const order = await getOrder(kit, orderId);
        expect(order.status).to.equal('partially_refunded');
        expect(order.refunded_amount).to.equal(refunded);
        expect(await historyFor(kit, e.id)).to.have.length(1);
      }
    });
  });
});
