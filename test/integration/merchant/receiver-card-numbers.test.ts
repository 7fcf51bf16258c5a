import { expect } from 'chai';
import { hasCardNumber } from '../../../src/shared/card-numbers.js';
import { cardLikeRuns, cardNumbersIn } from '../../support/card-scan.js';
import { rows } from '../../support/db.js';
import {
  deliveriesOff,
  event,
  inboxRow,
  paidOrder,
  poster,
  processed,
  referenceSettled,
  refundAtGateway,
  sandboxCall,
  storedSecret,
  wire,
} from '../../support/events.js';
import { card } from '../../support/gateway.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * Issue 44, part 1: a gateway event is never refused for what its numbers look like. Ids and codes
 * the gateway defines (gateway-api.md) are kept as sent, whatever their digits read as; a card
 * number anywhere else in an event is truncated to its last four digits before the event is kept,
 * the order's history says where, and the event is applied and answered 200. Signed by the test
 * (deliveries off), and end to end with a sandbox whose acquirer ids are all card-like numbers.
 */

/** 16 digits, a brand's first digit, a valid Luhn check: what a gateway's numeric ids can be. */
const NUMERIC_IDS = ['4539578763621486', '5105105105105100', '6011000990139424'];
const CARD = '4000000000003220';

const historyLine = async (t: TestKit, eventId: string) => {
  const [line] = await rows(t, 'order_history', { source_id: eventId });
  return line!;
};

describe('merchant: no gateway event refused for a number (issue 44, part 1)', () => {
  describe('events signed by the test', () => {
    let t: TestKit;
    let post: ReturnType<typeof poster>;
    let secret: string;

    before(async () => {
      t = await startTestKit();
      await deliveriesOff(t);
      post = poster(t);
      secret = await storedSecret(t);
    });
    after(async () => {
      await t?.close();
    });

    it('numeric 16-digit Luhn-valid acquirer ids and codes: 200, kept as sent (ids are no card data), applied', async () => {
      const { id: orderId, sale } = await paidOrder(t);
      const refund = await refundAtGateway(t, sale.id, 1);
      const [transId, authCode, refNum] = NUMERIC_IDS;
      for (const id of NUMERIC_IDS) expect(hasCardNumber(id), id).to.equal(true);
      const e = event('transaction.refunded', {
        ...wire(refund),
        acquirer_trans_id: transId,
        acquirer_auth_code: authCode,
        acquirer_ref_num: Number(refNum),
      });
      const answer = await post(e.body, { secret });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.message).to.equal('Received.');
      const row = await processed(t, e.id);
      expect(row.outcome).to.equal('applied');
      expect(row.payload, 'kept byte for byte').to.equal(e.body);
      expect(row.masked_fields).to.equal(null);
      expect((await historyLine(t, e.id)).detail ?? '').to.not.contain('truncated');
      expect((await getOrder(t, orderId)).refunded_amount).to.equal(100);
    });

    it('a card number in a free field: 200, kept truncated, the mask in the order history, applied', async () => {
      const { id: orderId, sale } = await paidOrder(t);
      const refund = await refundAtGateway(t, sale.id, 2);
      const e = event('transaction.refunded', {
        ...wire(refund),
        acquirer_trans_id: NUMERIC_IDS[0],
        description: `paid with ${CARD.replace(/(\d{4})(?=\d)/g, '$1 ')}`,
      });
      const answer = await post(e.body, { secret });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.text).to.not.contain('3220');
      const row = await processed(t, e.id);
      expect(row.outcome).to.equal('applied');
      expect(row.masked_fields).to.equal('data.transaction.description');
      const kept = JSON.parse(row.payload);
      expect(kept.data.transaction.description).to.equal('paid with **** **** **** 3220');
      expect(kept.data.transaction.acquirer_trans_id, 'the id kept as sent').to.equal(NUMERIC_IDS[0]);
      expect(kept.id).to.equal(e.id);
      expect(hasCardNumber(row.payload.replace(NUMERIC_IDS[0]!, ''))).to.equal(false);
      const line = await historyLine(t, e.id);
      expect(line).to.include({ outcome: 'applied', source: 'webhook', order_id: orderId });
      expect(line.detail).to.contain('card number truncated').and.contain('data.transaction.description');
      expect((await getOrder(t, orderId)).refunded_amount).to.equal(200);
      // The same event again (the gateway retried it): a duplicate, stored once.
      const again = await post(e.body, { secret, replay: true });
      expect(again.status).to.equal(200);
      expect(again.body.message).to.equal('Already received.');
      expect((await inboxRow(t, e.id))!.repeats).to.equal(1);
    });

    it('the card-data check over the database and the logs finds no card number; only the ids read as one', async () => {
      const dump = await t.dump();
      expect(cardNumbersIn(dump)).to.deep.equal([]);
      expect(dump).to.not.contain(CARD);
      expect(cardLikeRuns(dump)).to.include.members(NUMERIC_IDS);
      const leaks = t.logs.filter((line) => line.includes(CARD) || line.includes('4000 0000 0000 3220'));
      expect(leaks).to.deep.equal([]);
    });
  });

  describe('end to end: a sandbox whose acquirer ids all read as card numbers', () => {
    let t: TestKit;

    before(async () => {
      t = await startTestKit({
        seed: (seed) => {
          seed.settings = { ...seed.settings, card_like_acquirer_ids: 1 };
        },
      });
    });
    after(async () => {
      await t?.close();
    });

    it("every event is delivered (200), kept with its ids as sent, and applied: the order is the gateway's", async () => {
      const created = await t.call('POST', '/orders', { body: { amount: '25.00', currency: 'EUR' } });
      const orderId = created.body.data.order.id as string;
      const pay = await t.call('POST', `/orders/${orderId}/pay/card`, {
        body: { card: card(), mode: 'auth' },
      });
      expect(pay.status, pay.text).to.equal(200);
      for (const [path, body] of [
        ['capture', { amount: '25.00' }],
        ['refund', { amount: '5.00', reason: 'one item back' }],
      ] as const) {
        const done = await t.call('POST', `/orders/${orderId}/${path}`, {
          body,
          ops: true,
          headers: { 'idempotency-key': `e2e-${path}` },
        });
        expect(done.status, done.text).to.be.oneOf([200, 201]);
      }
      const reference = (await getOrder(t, orderId)).reference as string;
      await referenceSettled(t, reference);

      const listed = await sandboxCall(t, 'GET', '/api/v1/webhook/events?per_page=100');
      const events = (
        listed.body.data.events as { id: string; merchant_trans_id: string; event_type: string }[]
      ).filter((e) => e.merchant_trans_id === reference);
      expect(events.map((e) => e.event_type).sort()).to.deep.equal([
        'transaction.captured',
        'transaction.refunded',
      ]);
      for (const e of events) {
        const detail = await sandboxCall(t, 'GET', `/api/v1/webhook/events/${e.id}`);
        const attempts = detail.body.data.delivery_attempts as { status_code: number | null }[];
        expect(
          attempts.map((a) => a.status_code),
          e.id,
        ).to.include(200);
        expect(
          attempts.map((a) => a.status_code),
          e.id,
        ).to.not.include(400);
        const acquirerId = detail.body.data.payload.data.transaction.acquirer_trans_id as string;
        expect(hasCardNumber(acquirerId), acquirerId).to.equal(true);
        const row = (await inboxRow(t, e.id))!;
        expect(row.processed_at, e.id).to.not.equal(null);
        expect(['applied', 'duplicate']).to.include(row.outcome);
        expect(row.masked_fields).to.equal(null);
        expect(JSON.parse(row.payload).data.transaction.acquirer_trans_id).to.equal(acquirerId);
      }
      const order = await getOrder(t, orderId);
      expect(order).to.include({ status: 'partially_refunded', refunded_amount: 500 });
      const dump = await t.dump();
      expect(cardNumbersIn(dump)).to.deep.equal([]);
      expect(cardLikeRuns(dump).length).to.be.at.least(2);
    });
  });
});
