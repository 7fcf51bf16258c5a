import { expect } from 'chai';
import type { SeedInput } from '../../../src/gateway/state/seed.js';
import {
  type Answer,
  expectStatus,
  liftRateLimits,
  nowSeconds,
  OTHER_MERCHANT_KEY,
  startGateway,
  type TestGateway,
  transactionBody,
  uniqueReference,
} from '../../support/gateway.js';
import { allowPrivateUrls, type Receiver, startReceiver, verifies } from '../../support/receiver.js';

/**
 * sandbox.md sections 10 and 11: POST /sandbox/transactions/{id}/chargeback with an optional amount,
 * `chargeback_amount` on the record and in payloads, no refund while charged back, and
 * POST /sandbox/transactions/{id}/chargeback/reverse (the merchant won the dispute).
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read records field by field
type Json = any;

const seed = (s: SeedInput) => {
  allowPrivateUrls(s);
  liftRateLimits(s);
};

describe('gateway: chargebacks and their reversal (sandbox.md section 11)', () => {
  let gw: TestGateway;
  let rx: Receiver;
  let secret: string;
  /** How many deliveries `delivered` has already handed out. */
  let seen = 0;

  beforeEach(async () => {
    seen = 0;
    rx = await startReceiver();
    gw = await startGateway({ seed });
    // The default event set (events omitted): what a merchant gets without choosing.
    const put = await gw.call('PUT', '/api/v1/webhook', { body: { url: rx.url } });
    expectStatus(put, 201);
    expect(put.body.data.endpoint.events).to.equal(null);
    secret = put.body.data.secret;
  });
  afterEach(async () => {
    await gw.close();
    await rx.close();
  });

  const pay = async (overrides: Record<string, unknown> = {}): Promise<Json> => {
    const answer = await gw.call('POST', '/api/v1/transactions', { body: transactionBody(overrides) });
    expectStatus(answer, 200);
    return answer.body.data;
  };
  const chargeback = (id: number, body?: unknown, key?: string): Promise<Answer> =>
    gw.call('POST', `/sandbox/transactions/${id}/chargeback`, {
      ...(body === undefined ? {} : { body }),
      ...(key === undefined ? {} : { key }),
    });
  const reverse = (id: number, key?: string): Promise<Answer> =>
    gw.call('POST', `/sandbox/transactions/${id}/chargeback/reverse`, key === undefined ? {} : { key });
  const refund = (id: number, amount: number) =>
    gw.call('POST', `/api/v1/transactions/${id}/refund`, { body: { amount, reason: 'r' } });
  const statusOf = async (id: number): Promise<Json> => {
    const answer = await gw.call('GET', `/api/v1/transactions/${id}/status`);
    expectStatus(answer, 200);
    return answer.body.data;
  };
  /** The payloads delivered on a tick since the last look, each signed with the endpoint's secret. */
  const delivered = async (): Promise<Json[]> => {
    await gw.gateway.controls.tick();
    const fresh = rx.received.slice(seen);
    seen = rx.received.length;
    for (const r of fresh) expect(verifies(r, secret, nowSeconds(gw))).to.equal(true);
    return fresh.map((r) => r.json);
  };
  const typesOf = (payloads: Json[]) => payloads.map((p) => p.type);

  describe('POST /sandbox/transactions/{id}/chargeback', () => {
    it('without a body takes all that was captured: status chargeback, chargeback_amount in the answer, status and payload', async () => {
      const sale = await pay({ amount: 12.34 });
      expect(sale.chargeback_amount).to.equal(0);
      await delivered();
      const answer = await chargeback(sale.id);
      expectStatus(answer, 200);
      expect(answer.body.data).to.include({ id: sale.id, status: 'chargeback', chargeback_amount: 1234 });
      expect(await statusOf(sale.id)).to.include({ status: 'chargeback', chargeback_amount: 1234 });
      const [payload, ...rest] = await delivered();
      expect(rest).to.deep.equal([]);
      expect(payload.type).to.equal('transaction.chargeback');
      expect(payload.data.transaction).to.include({
        id: sale.id,
        status: 'chargeback',
        chargeback_amount: 1234,
        refunded_amount: 0,
      });
    });

    it('after a partial refund the default is captured minus refunded', async () => {
      const sale = await pay({ amount: 20 });
      expectStatus(await refund(sale.id, 5.5), 200);
      const answer = await chargeback(sale.id, {});
      expectStatus(answer, 200);
      expect(answer.body.data).to.include({ refunded_amount: 550, chargeback_amount: 1450 });
    });

    it('an amount in major units charges back that part, exactly in minor units, per currency', async () => {
      const cases: [number, string, number | string, number][] = [
        [20, 'EUR', 0.29, 29],
        [20, 'EUR', '12.34', 1234],
        [500, 'JPY', 499, 499],
        [20, 'EUR', 20, 2000],
      ];
      for (const [paid, currency, amount, minor] of cases) {
        const sale = await pay({ amount: paid, currency });
        const answer = await chargeback(sale.id, { amount });
        expectStatus(answer, 200);
        expect(answer.body.data.chargeback_amount, `${amount} ${currency}`).to.equal(minor);
        expect(answer.body.data.amount).to.equal(sale.amount);
      }
    });

    it('more than captured minus refunded: 422 on errors.amount, and nothing changes', async () => {
      const sale = await pay({ amount: 20 });
      expectStatus(await refund(sale.id, 5), 200);
      await delivered();
      for (const amount of [15.01, 20, 1000]) {
        const answer = await chargeback(sale.id, { amount });
        expectStatus(answer, 422);
        expect(answer.body.code).to.equal('ERR_VALIDATION_FAILED');
        expect(answer.body.errors.amount, String(amount)).to.be.an('array').that.is.not.empty;
      }
      expect(await statusOf(sale.id)).to.include({ status: 'captured', chargeback_amount: 0 });
      expect(await delivered()).to.deep.equal([]);
      expectStatus(await chargeback(sale.id, { amount: 15 }), 200);
    });

    it('a malformed amount: 422 on errors.amount (too many decimals, not positive, not a number)', async () => {
      const sale = await pay({ amount: 20 });
      const jpy = await pay({ amount: 500, currency: 'JPY' });
      const bad: [number, unknown][] = [
        [sale.id, 1.234],
        [sale.id, 0],
        [sale.id, -1],
        [sale.id, 'ten'],
        [sale.id, null],
        [sale.id, true],
        [jpy.id, 1.5],
      ];
      for (const [id, amount] of bad) {
        const answer = await chargeback(id, { amount });
        expectStatus(answer, 422);
        expect(answer.body.errors.amount, JSON.stringify(amount)).to.be.an('array').that.is.not.empty;
      }
      expect((await statusOf(sale.id)).status).to.equal('captured');
      expect((await statusOf(jpy.id)).status).to.equal('captured');
    });

    it('a captured auth is charged back through its capture record: auth and capture both', async () => {
      const auth = await pay({ transaction_type: 'auth', amount: 30 });
      const captured = await gw.call('POST', `/api/v1/transactions/${auth.id}/capture`, {
        body: { amount: 25 },
      });
      expectStatus(captured, 200);
      const capture = captured.body.data.transaction;
      const answer = await chargeback(capture.id, { amount: 10 });
      expectStatus(answer, 200);
      expect(answer.body.data).to.include({ id: capture.id, status: 'chargeback', chargeback_amount: 1000 });
      expect(await statusOf(auth.id)).to.include({ status: 'chargeback', chargeback_amount: 1000 });
    });

    it('a refund while charged back: 400 ERR_INVALID_TRANSACTION, no refund record, no event', async () => {
      const sale = await pay({ amount: 20 });
      expectStatus(await chargeback(sale.id, { amount: 5 }), 200);
      await delivered();
      const count = gw.gateway.deps.state.transactions.size;
      const answer = await refund(sale.id, 1);
      expectStatus(answer, 400);
      expect(answer.body.code).to.equal('ERR_INVALID_TRANSACTION');
      expect(gw.gateway.deps.state.transactions.size).to.equal(count);
      expect(await statusOf(sale.id)).to.include({ status: 'chargeback', refunded_amount: 0 });
      expect(await delivered()).to.deep.equal([]);
    });

    it('another merchant: 404, and the payment is untouched', async () => {
      const sale = await pay();
      const answer = await chargeback(sale.id, undefined, OTHER_MERCHANT_KEY);
      expectStatus(answer, 404);
      expect(answer.body.code).to.equal('ERR_NOT_FOUND');
      expectStatus(await reverse(sale.id, OTHER_MERCHANT_KEY), 404);
      expect((await statusOf(sale.id)).status).to.equal('captured');
    });
  });

  describe('POST /sandbox/transactions/{id}/chargeback/reverse', () => {
    it('the dispute is won: captured again, chargeback_amount 0, and transaction.chargeback_reversed is delivered by default', async () => {
      const sale = await pay({ amount: 20 });
      expectStatus(await refund(sale.id, 2), 200);
      expectStatus(await chargeback(sale.id), 200);
      expect(typesOf(await delivered())).to.deep.equal([
        'transaction.captured',
        'transaction.refunded',
        'transaction.chargeback',
      ]);
      const answer = await reverse(sale.id);
      expectStatus(answer, 200);
      expect(answer.body.data).to.include({
        id: sale.id,
        status: 'captured',
        chargeback_amount: 0,
        refunded_amount: 200,
      });
      expect(await statusOf(sale.id)).to.include({ status: 'captured', chargeback_amount: 0 });
      const payloads = await delivered();
      expect(typesOf(payloads)).to.deep.equal(['transaction.chargeback_reversed']);
      expect(payloads[0].data.transaction).to.include({
        id: sale.id,
        status: 'captured',
        chargeback_amount: 0,
        refunded_amount: 200,
      });
      const listed = await gw.call(
        'GET',
        '/api/v1/webhook/events?event_type=transaction.chargeback_reversed',
      );
      expectStatus(listed, 200);
      expect(listed.body.data.events.map((e: Json) => e.transaction_id)).to.deep.equal([sale.id]);
    });

    it('after the reversal the payment is refundable again, up to what is left', async () => {
      const sale = await pay({ amount: 20 });
      expectStatus(await chargeback(sale.id), 200);
      expectStatus(await reverse(sale.id), 200);
      expectStatus(await refund(sale.id, 20.01), 400);
      const answer = await refund(sale.id, 20);
      expectStatus(answer, 200);
      expect((await statusOf(sale.id)).status).to.equal('refunded');
    });

    it('a captured auth charged back through its capture is reversed through the auth: both captured again', async () => {
      const auth = await pay({ transaction_type: 'auth', amount: 30 });
      const capture = (
        await gw.call('POST', `/api/v1/transactions/${auth.id}/capture`, { body: { amount: 30 } })
      ).body.data.transaction;
      expectStatus(await chargeback(capture.id), 200);
      expectStatus(await reverse(auth.id), 200);
      expect(await statusOf(auth.id)).to.include({ status: 'captured', chargeback_amount: 0 });
      expect(await statusOf(capture.id)).to.include({ status: 'captured', chargeback_amount: 0 });
    });

    it('a payment not charged back: 400 ERR_INVALID_TRANSACTION, as the chargeback control answers a wrong state; no event', async () => {
      const sale = await pay();
      const auth = await pay({ transaction_type: 'auth' });
      await delivered();
      for (const id of [sale.id, auth.id]) {
        const answer = await reverse(id);
        expectStatus(answer, 400);
        expect(answer.body.code).to.equal('ERR_INVALID_TRANSACTION');
      }
      expectStatus(await chargeback(sale.id), 200);
      expectStatus(await reverse(sale.id), 200);
      expectStatus(await reverse(sale.id), 400); // once: it is captured again
      expect(typesOf(await delivered())).to.deep.equal([
        'transaction.chargeback',
        'transaction.chargeback_reversed',
      ]);
    });

    it('401 without a key, 404 for an unknown transaction', async () => {
      expectStatus(
        await gw.call('POST', '/sandbox/transactions/100000/chargeback/reverse', { key: null }),
        401,
      );
      expectStatus(await reverse(999_999), 404);
    });
  });

  describe('on a payment session', () => {
    const open = async (): Promise<Json> => {
      const created = await gw.call('POST', '/api/v1/payment-sessions', {
        body: {
          amount: 12.34,
          currency: 'EUR',
          reference: uniqueReference('ps-cb'),
          payment_method: 'ideal',
          customer: { country_code: 'NL' },
          success_url: 'https://shop.example/return',
          cancel_url: 'https://shop.example/cancel',
        },
      });
      expectStatus(created, 201);
      const s = created.body.data.payment_session;
      const paid = await gw.call('POST', `/sandbox/payment-sessions/${s.payment_session_id}/settle`, {
        body: { outcome: 'paid' },
      });
      expectStatus(paid, 200);
      return paid.body.data.payment_session;
    };
    const sessionOf = async (s: Json): Promise<Json> =>
      (await gw.call('GET', `/api/v1/payment-sessions/${s.payment_session_id}`)).body.data.payment_session;

    it('a charged-back session is chargeback; reversed, it is paid again with the same provider id and finalisation', async () => {
      const s = await open();
      await delivered();
      expectStatus(await chargeback(s.transaction_id, { amount: 2 }), 200);
      expect(await sessionOf(s)).to.include({ status: 'chargeback' });
      expect(await statusOf(s.transaction_id)).to.include({ status: 'chargeback', chargeback_amount: 200 });

      expectStatus(await reverse(s.transaction_id), 200);
      const after = await sessionOf(s);
      expect(after).to.include({
        status: 'paid',
        provider_transaction_id: s.provider_transaction_id,
        finalised_at: s.finalised_at,
      });
      expect(await statusOf(s.transaction_id)).to.include({ status: 'captured', chargeback_amount: 0 });
      const payloads = await delivered();
      expect(typesOf(payloads)).to.deep.equal(['transaction.chargeback', 'transaction.chargeback_reversed']);
      expect(payloads.map((p) => p.data.transaction.acquirer_provider)).to.deep.equal([
        'sandbox-ideal',
        'sandbox-ideal',
      ]);
    });

    it('a paid session that was not charged back cannot be reversed, and stays paid', async () => {
      const s = await open();
      expectStatus(await reverse(s.transaction_id), 400);
      expect((await sessionOf(s)).status).to.equal('paid');
    });
  });
});
