import { expect } from 'chai';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import type { Transaction } from '../../../src/gateway/domain/transactions.js';
import { ORDER_STATUSES } from '../../../src/merchant/orders/status.js';
import { enqueueEvents, eventIdsOf } from '../../../src/merchant/reconciler/queue.js';
import { count, rows } from '../../support/db.js';
import {
  deliveriesOff,
  type Event,
  event,
  inboxRow,
  newOrder,
  paidOrder,
  post,
  processed,
  refundAtGateway,
  sandboxCall,
  spyOnQueue,
  stateOf,
  storedSecret,
  wire,
} from '../../support/events.js';
import { getOrder, pressButton, startTestKit, type TestKit } from '../../support/kit.js';
import { waitFor } from '../../support/process.js';

/**
 * merchant.md, Orders (the reconciler's rules) and Background work (the reconciler): observations
 * that arrive through the gateway's webhooks, in any order, duplicated, concurrently; money that does
 * not match; events no order owns; and a shutdown that finishes the job in hand. Against the embedded
 * sandbox; some events are the sandbox's own deliveries, the rest are crafted from the sandbox's
 * records and signed by the test with the secret the kit stored.
 */

// ---------------------------------------------------------------------------------------------
// helpers

const waitForOrder = (
  t: TestKit,
  id: string,
  ok: (order: { status: string; [k: string]: unknown }) => boolean,
) =>
  waitFor(`order ${id} to reach the expected state`, async () => {
    const order = await getOrder(t, id);
    return ok(order) ? order : null;
  });

interface HistoryEntry {
  source: string;
  source_id: string;
  status_before: string;
  status_after: string;
  outcome: string;
  detail: string | null;
}

/** A seeded shuffle, so a failing order of deliveries can be reproduced. */
function shuffle<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  const next = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

describe('merchant: the reconciler', () => {
  describe("through the gateway's own webhook deliveries", () => {
    let t: TestKit;
    before(async () => {
      t = await startTestKit(); // the sandbox delivers to the kit as events happen
    });
    after(async () => {
      await t?.close();
    });

    it('a redirect payment paid on the hosted page becomes paid through the webhook alone', async () => {
      const id = await newOrder(t);
      const pay = await t.call('POST', `/orders/${id}/pay/redirect`, {
        body: { payment_method: 'ideal', customer: { country_code: 'NL' } },
      });
      expect(pay.status, pay.text).to.equal(200);
      expect(pay.body.data.order.status, 'the API answer').to.equal('requires_action');

      // The customer pays; the browser's return is never followed: only the gateway's event can tell.
      await pressButton(pay.body.data.next_action.url, 'pay');
      const order = await waitForOrder(t, id, (o) => o.status === 'paid');
      expect(order.captured_amount).to.equal(1234);
      expect(order.needs_review).to.equal(false);
      const history = order.history as HistoryEntry[];
      const fromWebhook = history.filter((h) => h.source === 'webhook');
      expect(fromWebhook).to.have.length(1);
      expect(fromWebhook[0]).to.include({
        status_before: 'requires_action',
        status_after: 'paid',
        outcome: 'applied',
      });
      expect(fromWebhook[0]!.source_id).to.match(/^evt_[A-Za-z0-9]{24}$/);
      expect(history.filter((h) => h.status_after === 'paid').map((h) => h.source)).to.deep.equal([
        'webhook',
      ]);
      const row = await inboxRow(t, fromWebhook[0]!.source_id);
      expect(row).to.include({ event_type: 'transaction.captured', outcome: 'applied' });
    });

    it("a refund made at the gateway directly arrives by webhook: partially_refunded with the gateway's running total, then refunded", async () => {
      const { id, sale } = await paidOrder(t);
      await refundAtGateway(t, sale.id, 3);
      const gatewaySale = () => stateOf(t).transactions.get(sale.id)!;
      expect(gatewaySale().refundedAmount).to.equal(300);
      const partial = await waitForOrder(t, id, (o) => o.status === 'partially_refunded');
      expect(partial.refunded_amount).to.equal(gatewaySale().refundedAmount);
      expect(partial.captured_amount).to.equal(1234);
      const first = (partial.history as HistoryEntry[]).filter(
        (h) => h.source === 'webhook' && h.status_after === 'partially_refunded',
      );
      expect(first).to.have.length(1);
      expect(first[0]).to.include({ status_before: 'paid', outcome: 'applied' });

      await refundAtGateway(t, sale.id, 9.34);
      expect(gatewaySale().refundedAmount).to.equal(1234);
      expect(gatewaySale().status).to.equal('refunded');
      const full = await waitForOrder(t, id, (o) => o.status === 'refunded');
      expect(full.refunded_amount).to.equal(1234);
      expect(full.needs_review).to.equal(false);
      const last = (full.history as HistoryEntry[]).at(-1)!;
      expect(last).to.include({
        source: 'webhook',
        status_before: 'partially_refunded',
        status_after: 'refunded',
        outcome: 'applied',
      });
    });

    it('a chargeback at the gateway arrives by webhook: the order is disputed', async () => {
      const { id, sale } = await paidOrder(t);
      const chargeback = await sandboxCall(t, 'POST', `/sandbox/transactions/${sale.id}/chargeback`);
      expect(chargeback.status, JSON.stringify(chargeback.body)).to.equal(200);
      const order = await waitForOrder(t, id, (o) => o.status === 'disputed');
      const last = (order.history as HistoryEntry[]).at(-1)!;
      expect(last).to.include({
        source: 'webhook',
        status_before: 'paid',
        status_after: 'disputed',
        outcome: 'applied',
      });
      const row = await inboxRow(t, last.source_id);
      expect(row!.event_type).to.equal('transaction.chargeback');
    });
  });

  describe('events crafted by the test (the sandbox delivers nothing)', () => {
    let t: TestKit;
    let secret: string;
    before(async () => {
      t = await startTestKit();
      await deliveriesOff(t);
      secret = await storedSecret(t);
    });
    after(async () => {
      await t?.close();
    });

    it('concurrency: 50 orders, two events each, every event delivered 4 times at once in shuffled order: stored once, applied once, every order the gateway truth', async function () {
      this.timeout(120_000);
      const ORDERS = 50;
      const orders: { id: string; sale: Transaction; events: Event[] }[] = [];
      for (let batch = 0; batch < ORDERS; batch += 10) {
        const made = await Promise.all(
          Array.from({ length: Math.min(10, ORDERS - batch) }, async (_, k) => {
            const i = batch + k;
            const { id, sale } = await paidOrder(t);
            // Two partial refunds at the gateway: the event carries only the second, whose record
            // amount differs from the running total the order must show.
            await refundAtGateway(t, sale.id, 1 + (i % 3));
            const second = await refundAtGateway(t, sale.id, 0.5 + (i % 5));
            return {
              id,
              sale,
              events: [
                event('transaction.refunded', wire(second)),
                // The sale as it was when captured: old news once the refund is known.
                event('transaction.captured', wire(sale)),
              ],
            };
          }),
        );
        orders.push(...made);
      }
      const allEvents = orders.flatMap((o) => o.events);
      expect(allEvents).to.have.length(2 * ORDERS);

      const deliveries = shuffle(
        allEvents.flatMap((e) => [e, e, e, e]),
        20261101,
      );
      const spy = spyOnQueue(t);
      let answers: Awaited<ReturnType<typeof post>>[];
      try {
        answers = await Promise.all(deliveries.map((e) => post(t, e.body, secret)));
      } finally {
        spy.restore();
      }
      // Queued once each: the receiver asked bull for exactly one job per event.
      expect([...spy.queued].sort()).to.deep.equal(allEvents.map((e) => e.id).sort());
      const bad = answers.filter((a) => a.status !== 200);
      expect(bad, JSON.stringify(bad.slice(0, 3))).to.have.length(0);
      expect(answers).to.have.length(4 * allEvents.length);

      // Stored once each.
      const ids = allEvents.map((e) => e.id);
      expect(await count(t, 'webhook_inbox', { event_id: ids })).to.equal(allEvents.length);
      await waitFor(
        'every event processed',
        async () => (await count(t, 'webhook_inbox', { event_id: ids, processed_at: null })) === 0,
        30_000,
      );

      // Processed once each: one history entry per event, on its own order, never applied twice.
      const history = await rows(t, 'order_history', { source_id: ids });
      expect(history).to.have.length(allEvents.length);
      for (const o of orders) {
        for (const e of o.events) {
          const entries = history.filter((h) => h.source_id === e.id);
          expect(entries, e.id).to.have.length(1);
          expect(entries[0]!.order_id).to.equal(o.id);
          expect(['applied', 'duplicate', 'stale']).to.include(entries[0]!.outcome);
          expect(entries[0]!.source).to.equal('webhook');
        }
      }
      const failed = await t.kit.queue.getFailed();
      expect(failed.filter((j) => eventIdsOf(j.data).some((id) => ids.includes(id)))).to.have.length(0);

      // Every order ends in the gateway's truth.
      for (const o of orders) {
        const truth = stateOf(t).transactions.get(o.sale.id)!;
        const order = await getOrder(t, o.id);
        expect(order.status, o.id).to.equal('partially_refunded');
        expect(order.refunded_amount, o.id).to.equal(truth.refundedAmount);
        expect(order.captured_amount, o.id).to.equal(truth.capturedAmount);
        expect(order.needs_review, o.id).to.equal(false);
        const refundEntry = history.find((h) => h.source_id === o.events[0]!.id)!;
        expect(refundEntry.outcome, 'the refund is news').to.equal('applied');
      }
    });

    describe('money that does not match sets needs_review with a reason', () => {
      /** A redirect order still waiting on the hosted page, with its session's transaction record. */
      const openRedirect = async () => {
        const id = await newOrder(t);
        const pay = await t.call('POST', `/orders/${id}/pay/redirect`, {
          body: { payment_method: 'psc', customer: { country_code: 'DE' } },
        });
        expect(pay.status, pay.text).to.equal(200);
        const txId = Number((await getOrder(t, id)).payment.gateway_transaction_id);
        return { id, tx: { ...stateOf(t).transactions.get(txId)! } };
      };
      /** The session's sale as the gateway would report it captured. */
      const captured = (tx: Transaction) => ({ ...wire(tx), status: 'captured' });

      const expectFlagged = async (orderId: string, e: Event) => {
        const row = await processed(t, e.id);
        expect(row.outcome).to.equal('flagged');
        const order = await getOrder(t, orderId);
        expect(order.needs_review, 'needs_review').to.equal(true);
        expect(order.review_reason, 'review_reason').to.be.a('string').and.not.equal('');
        const entries = (order.history as HistoryEntry[]).filter((h) => h.source_id === e.id);
        expect(entries).to.have.length(1);
        expect(entries[0]!.outcome).to.equal('flagged');
        return order;
      };

      it('a capture of another amount on an open order', async () => {
        const { id, tx } = await openRedirect();
        const e = event('transaction.captured', { ...captured(tx), amount: 999 });
        expect((await post(t, e.body, secret)).status).to.equal(200);
        const order = await expectFlagged(id, e);
        expect(order.review_reason).to.contain('999');
      });

      it('a capture in another currency on an open order', async () => {
        const { id, tx } = await openRedirect();
        const e = event('transaction.captured', { ...captured(tx), currency: 'USD' });
        expect((await post(t, e.body, secret)).status).to.equal(200);
        const order = await expectFlagged(id, e);
        expect(order.review_reason).to.contain('USD');
      });

      it('a capture of a larger amount on a paid order', async () => {
        const { id, sale } = await paidOrder(t);
        const e = event('transaction.captured', { ...wire(sale), amount: 2000 });
        expect((await post(t, e.body, secret)).status).to.equal(200);
        const order = await expectFlagged(id, e);
        expect(order.review_reason).to.contain('2000');
      });

      it('a capture of a smaller amount on a paid order', async () => {
        const { id, sale } = await paidOrder(t);
        const e = event('transaction.captured', { ...wire(sale), amount: 1000 });
        expect((await post(t, e.body, secret)).status).to.equal(200);
        const order = await expectFlagged(id, e);
        expect(order.review_reason).to.contain('1000');
      });

      it('a capture in another currency on a paid order', async () => {
        const { id, sale } = await paidOrder(t);
        const e = event('transaction.captured', { ...wire(sale), currency: 'USD' });
        expect((await post(t, e.body, secret)).status).to.equal(200);
        const order = await expectFlagged(id, e);
        expect(order.review_reason).to.contain('USD');
      });

      it("an unknown status ('settled') is recorded as flagged and never becomes the order's status", async () => {
        const { id, sale } = await paidOrder(t);
        const e = event('transaction.captured', { ...wire(sale), status: 'settled' });
        expect((await post(t, e.body, secret)).status).to.equal(200);
        const row = await processed(t, e.id);
        expect(row.outcome).to.equal('flagged');
        const order = await getOrder(t, id);
        expect(order.status).to.equal('paid');
        const entries = (order.history as HistoryEntry[]).filter((h) => h.source_id === e.id);
        expect(entries).to.have.length(1);
        expect(entries[0]).to.include({ source: 'webhook', outcome: 'flagged', status_after: 'paid' });
        const statuses = [
          ...(await rows(t, 'orders')).map((o) => o.status),
          ...(await rows(t, 'payment_attempts')).map((a) => a.status),
        ];
        expect(statuses).to.not.include('settled');
        for (const s of statuses) expect(ORDER_STATUSES as readonly string[]).to.include(s);
      });
    });

    it('an event for a transaction no order has: retried, then kept as gateway money with no order; the inbox row is processed as unmatched, no job is left failed', async () => {
      const orphan = { ...wire((await paidOrder(t)).sale), id: 987654321, merchant_trans_id: 'nobody' };
      const e = event('transaction.captured', orphan);
      expect((await post(t, e.body, secret)).status).to.equal(200);
      const row = await processed(t, e.id);
      expect(row.outcome).to.equal('unmatched');
      expect(row.attempts, 'the attempts before the last (the kit default here: 3 in all)').to.equal(2);
      expect(row.last_error).to.equal(null);
      // The inbox row is marked in the apply's transaction; bull marks the job just after.
      await waitFor(
        'the job completed',
        async () => (await (await t.kit.queue.getJob(e.id))!.getState()) === 'completed',
      );
      expect((await t.kit.queue.getFailed()).map((j) => String(j.id))).to.not.include(e.id);
      expect(
        await count(t, 'unmatched_money', { transaction_id: '987654321', reference: 'nobody' }),
      ).to.equal(1);
      expect(await count(t, 'order_history', { source_id: e.id })).to.equal(0);
    });

    it('an inbox row that no longer reads as an event goes to the failed set at once, not retried', async () => {
      // Only the receiver stores rows, after reading them: a damaged one is what this guards against.
      const id = `evt_damaged${Date.now()}`;
      await t.kit.store.inbox.store({
        id,
        type: 'transaction.captured',
        transactionId: '1',
        source: 'webhook',
        payload: '{"id": "evt_damaged", "type": "transaction.captured"',
        now: new Date(),
      });
      await t.kit.enqueue(id);
      const job = await waitFor('the job in the failed set', async () =>
        (await t.kit.queue.getFailed()).find((j) => String(j.id) === id),
      );
      expect(job.attemptsMade, 'one attempt: retrying cannot help').to.equal(1);
      expect(job.failedReason).to.contain('unreadable');
      const row = await inboxRow(t, id);
      expect(row!.processed_at).to.equal(null);
      expect(row!.last_error).to.equal('unreadable: The body is not JSON.');
    });

    it("a batch's job (events the receiver stored together): what applies is applied in it; an unmatched and an unreadable event each get a job of their own and end as alone", async () => {
      const { id: orderId, sale } = await paidOrder(t);
      const refund = event('transaction.refunded', wire(await refundAtGateway(t, sale.id, 2)));
      const orphan = event('transaction.captured', {
        ...wire(sale),
        id: 987654322,
        merchant_trans_id: 'nobody-in-a-batch',
      });
      const damaged = `evt_damaged_batch${Date.now()}`;
      for (const e of [refund, orphan])
        await t.kit.store.inbox.store({
          id: e.id,
          type: 'transaction.captured',
          transactionId: String(JSON.parse(e.body).data.transaction.id),
          source: 'webhook',
          payload: e.body,
          now: new Date(),
        });
      await t.kit.store.inbox.store({
        id: damaged,
        type: 'transaction.captured',
        transactionId: '1',
        source: 'webhook',
        payload: '{"id": "evt_damaged"',
        now: new Date(),
      });
      const waiting = await t.kit.queue.getJobCounts();
      await enqueueEvents(t.kit.queue, [refund.id, orphan.id, damaged]);

      expect((await processed(t, refund.id)).outcome).to.equal('applied');
      expect((await getOrder(t, orderId)).status).to.equal('partially_refunded');
      // The batch's job itself completes, saying what came of it. Its own: the receiver's batches of the
      // tests before are in the completed set too, and one of them is found first until this one is there.
      const batch = await waitFor('the batch job completed', async () =>
        (await t.kit.queue.getCompleted()).find(
          (j) => 'eventIds' in j.data && j.data.eventIds.includes(refund.id),
        ),
      );
      expect(batch.data).to.deep.equal({ eventIds: [refund.id, orphan.id, damaged] });
      expect(batch.returnvalue).to.equal('applied 1, retried alone 2');
      // The orphan: its own job (id = event id), retried, then kept as money with no order.
      const orphanRow = await processed(t, orphan.id);
      expect(orphanRow.outcome).to.equal('unmatched');
      expect(orphanRow.attempts, 'as many attempts as an event alone: the batch run was the first').to.equal(
        2,
      );
      const own = await t.kit.queue.getJob(orphan.id);
      expect(own!.opts.attempts, 'its own job: the attempts left').to.equal(2);
      expect(await count(t, 'unmatched_money', { reference: 'nobody-in-a-batch' })).to.equal(1);
      // The damaged row: its own job, in the failed set for operators after one attempt.
      const failed = await waitFor('the damaged event failed alone', async () =>
        (await t.kit.queue.getFailed()).find((j) => String(j.id) === damaged),
      );
      expect(failed.data).to.deep.equal({ eventId: damaged });
      expect(failed.failedReason).to.contain('unreadable');
      expect((await t.kit.queue.getFailed()).filter((j) => 'eventIds' in j.data)).to.deep.equal([]);
      expect((await t.kit.queue.getJobCounts()).failed).to.equal(waiting.failed + 1);
    });
  });

  describe('shutdown (SIGTERM-style) finishes the job in hand', () => {
    let t: TestKit | undefined;
    let closed = false;

    before(async () => {
      t = await startTestKit();
      await deliveriesOff(t);
    });
    after(async () => {
      if (!t) return;
      if (!closed) {
        await t.close();
        return;
      }
      // close() was called by the test: clean the Redis keys and drop the database here.
      const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
      try {
        const keys = await redis.keys(`test-${t.database}:*`);
        if (keys.length > 0) await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
      const connection = await mysql.createConnection('mysql://root@127.0.0.1:3306');
      try {
        await connection.query(`DROP DATABASE IF EXISTS \`${t.database}\``);
      } finally {
        await connection.end();
      }
    });

    it('close() waits for the worker job blocked on an order lock, and the inbox row ends processed', async () => {
      const kit = t!;
      const secret = await storedSecret(kit);
      const { id, sale } = await paidOrder(kit);
      const refund = await refundAtGateway(kit, sale.id, 2);
      const e = event('transaction.refunded', wire(refund));

      // Our own transaction holds the order's row lock: the worker's applyObservation must wait on it.
      const tx = await kit.kit.sequelize.transaction();
      let released = false;
      try {
        await kit.kit.sequelize.query('SELECT id FROM orders WHERE id = ? FOR UPDATE', {
          replacements: [id],
          transaction: tx,
        });
        expect((await post(kit, e.body, secret)).status).to.equal(200);
        await waitFor('the job active', async () => {
          const job = await kit.kit.queue.getJob(e.id);
          return job ? await job.isActive() : false;
        });

        const closing = kit.kit.close();
        closed = true;
        let resolved = false;
        void closing.then(() => {
          resolved = true;
        });
        // A short bounded watch: while the lock is held, close() must not resolve.
        const until = Date.now() + 750;
        while (Date.now() < until) {
          expect(resolved, 'close() resolved while the job in hand was still blocked').to.equal(false);
          await new Promise((r) => setTimeout(r, 10));
        }
        expect((await inboxRow(kit, e.id))!.processed_at).to.equal(null);

        await tx.commit();
        released = true;
        await Promise.race([
          closing,
          new Promise((_, reject) =>
            setTimeout(() => reject(new Error('close() did not resolve in 15 s')), 15_000),
          ),
        ]);
      } finally {
        if (!released) await tx.rollback().catch(() => undefined);
      }

      // The kit's connections are closed: read what it left behind directly.
      const connection = await mysql.createConnection(`mysql://root@127.0.0.1:3306/${kit.database}`);
      try {
        const [rows] = await connection.query<mysql.RowDataPacket[]>(
          'SELECT processed_at, outcome FROM webhook_inbox WHERE event_id = ?',
          [e.id],
        );
        expect(rows).to.have.length(1);
        expect(rows[0]!.processed_at, 'the job in hand finished').to.not.equal(null);
        expect(rows[0]!.outcome).to.equal('applied');
        const [orders] = await connection.query<mysql.RowDataPacket[]>(
          'SELECT status, refunded_minor FROM orders WHERE id = ?',
          [id],
        );
        expect(orders[0]).to.deep.include({ status: 'partially_refunded' });
        expect(Number(orders[0]!.refunded_minor)).to.equal(200);
      } finally {
        await connection.end();
      }
    });
  });
});
