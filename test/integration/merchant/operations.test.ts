import { createHash } from 'node:crypto';
import { expect } from 'chai';
import type { Transaction } from '../../../src/gateway/domain/transactions.js';
import { count, row, rows } from '../../support/db.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { OPS_TOKEN, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * merchant.md, HTTP interface: the operator's capture, refund and void (bearer OPS_API_TOKEN; "safe to
 * retry: each operation carries an Idempotency-Key that is stored before the call"), against the
 * embedded sandbox (sandbox.md section 6). Webhook deliveries are held back by a sandbox outage and the
 * kit runs the api role only: every change an order sees here comes from the request under test.
 */

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
describe('merchant: operator capture, refund and void', () => {
  let t: TestKit;
  /** While on, every capture request reaches the gateway but its answer is lost on the way back. */
  let loseCaptureAnswers = false;
  let loseRefundAnswers = false;
  /** The Idempotency-Key of every capture request the kit sent to the gateway, in order. */
  const captureKeys: string[] = [];

  const flakyFetch: typeof fetch = async (input, init) => {
    const res = await globalThis.fetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    if (url.endsWith('/capture')) {
      captureKeys.push(new Headers(init?.headers).get('idempotency-key') ?? '');
      if (loseCaptureAnswers) {
        await res.text();
        throw new TypeError('fetch failed');
      }
    }
    if (url.endsWith('/refund') && loseRefundAnswers) {
      await res.text();
      throw new TypeError('fetch failed');
    }
    return res;
  };

  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' }, clientDeps: { fetch: flakyFetch } });
    const outage = await fetch(`${t.kit.gatewayUrl}/sandbox/webhook/outage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ seconds: 86400 }),
    });
    expect(outage.status).to.equal(200);
  });
  afterEach(() => {
    loseCaptureAnswers = false;
    loseRefundAnswers = false;
  });
  after(async () => {
    await t?.close();
  });

  interface OrderView {
    id: string;
    reference: string;
    status: string;
    captured_amount: number | null;
    refunded_amount: number;
    payment: { attempt_id: string; gateway_transaction_id: string } | null;
  }

  const newOrder = async (amount = '12.34'): Promise<OrderView> => {
    const created = await t.call('POST', '/orders', { body: { amount, currency: 'EUR' } });
    expect(created.status).to.equal(201);
    return created.body.data.order;
  };

  /** An order paid by card: `auth` leaves it authorized, `sale` paid. */
  const paidOrder = async (mode: 'auth' | 'sale', amount = '12.34'): Promise<OrderView> => {
    const order = await newOrder(amount);
    const pay = await t.call('POST', `/orders/${order.id}/pay/card`, { body: { card: card(), mode } });
    expect(pay.status, pay.text).to.equal(200);
    expect(pay.body.data.order.status).to.equal(mode === 'auth' ? 'authorized' : 'paid');
    // The payment's answer is the public view: the operator's names the payment.
    return getOrder(order.id);
  };

  const op = (
    id: string,
    operation: 'capture' | 'refund' | 'void',
    body: unknown = {},
    o: { key?: string; ops?: boolean; headers?: Record<string, string> } = {},
  ) =>
    t.call('POST', `/orders/${id}/${operation}`, {
      body,
      ops: o.ops ?? true,
      headers: { ...(o.key ? { 'Idempotency-Key': o.key } : {}), ...o.headers },
    });

  const getOrder = async (id: string) =>
    (await t.call('GET', `/orders/${id}`, { ops: true })).body.data.order;

  /** The gateway's records made by an operation on the order's transaction (sandbox.md section 6). */
  const children = (order: OrderView, type: 'capture' | 'refund' | 'void'): Transaction[] => {
    const parent = Number(order.payment!.gateway_transaction_id);
    return [...t.kit.sandbox!.deps.state.transactions.values()].filter(
      (x) => x.type === type && x.relatedId === parent,
    );
  };
  const gatewayParent = (order: OrderView): Transaction =>
    t.kit.sandbox!.deps.state.transactions.get(Number(order.payment!.gateway_transaction_id))!;

  const operationRows = (orderId: string) =>
    rows(t, 'gateway_operations', { order_id: orderId }, 'created_at');

  const snapshot = async (id: string) => ({
    row: await row(t, 'orders', { id }),
    history: await count(t, 'order_history', { order_id: id }),
    operations: await count(t, 'gateway_operations', { order_id: id }),
  });

  /** The last history row: an `api` observation that moved the order from `before` to `after`. */
  const expectApiHistory = async (id: string, before: string, after: string) => {
    const history = (await getOrder(id)).history as {
      source: string;
      source_id: string;
      status_before: string;
      status_after: string;
      outcome: string;
    }[];
    const last = history.at(-1)!;
    expect(last.source).to.equal('api');
    expect(last.source_id).to.be.a('string').and.not.equal('');
    expect(last.status_before).to.equal(before);
    expect(last.status_after).to.equal(after);
    expect(last.outcome).to.equal('applied');
  };

  describe('the operator token', () => {
    it('no token, a wrong token or another scheme: 401 on capture, refund and void, and nothing changes', async () => {
      const order = await paidOrder('auth');
      const before = await snapshot(order.id);
      const variants: Record<string, string>[] = [
        {},
        { authorization: 'Bearer wrong-token-0123456789abc' },
        { authorization: `Bearer ${OPS_TOKEN}x` },
        { authorization: `Basic ${OPS_TOKEN}` },
        { authorization: OPS_TOKEN },
      ];
      for (const headers of variants) {
        for (const [operation, body] of [
          ['capture', {}],
          ['refund', { amount: '1.00' }],
          ['void', {}],
        ] as const) {
          const answer = await op(order.id, operation, body, { ops: false, key: 'k-401', headers });
          expect(answer.status, `${operation} ${JSON.stringify(headers)}`).to.equal(401);
          expect(answer.body.success).to.equal(false);
        }
      }
      expect(await snapshot(order.id)).to.deep.equal(before);
      expect(children(order, 'capture')).to.have.length(0);
      expect(children(order, 'void')).to.have.length(0);
      expect(gatewayParent(order).status).to.equal('auth');
    });
  });

  describe('capture', () => {
    it('captures an authorized order in full: paid with captured_amount, a capture record at the gateway, an api history row', async () => {
      const order = await paidOrder('auth');
      const answer = await op(order.id, 'capture');
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.success).to.equal(true);
      expect(answer.body.data.order.status).to.equal('paid');
      expect(answer.body.data.order.captured_amount).to.equal(1234);
      const captures = children(order, 'capture');
      expect(captures).to.have.length(1);
      expect(captures[0]!.amount).to.equal(1234);
      expect(gatewayParent(order).status).to.equal('captured');
      const stored = await getOrder(order.id);
      expect(stored.status).to.equal('paid');
      expect(stored.captured_amount).to.equal(1234);
      await expectApiHistory(order.id, 'authorized', 'paid');
    });

    it('a partial capture of 5.00 on a 12.34 order captures 500', async () => {
      const order = await paidOrder('auth');
      const answer = await op(order.id, 'capture', { amount: '5.00' });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.data.order.status).to.equal('paid');
      expect(answer.body.data.order.captured_amount).to.equal(500);
      expect(answer.body.data.order.needs_review).to.equal(false);
      const captures = children(order, 'capture');
      expect(captures.map((c) => c.amount)).to.deep.equal([500]);
      expect((await getOrder(order.id)).captured_amount).to.equal(500);
      await expectApiHistory(order.id, 'authorized', 'paid');
    });

    it('a capture over the authorised amount is 422 ERR_ADAPTER_INVALID_AMOUNT and the order stays authorized', async () => {
      const order = await paidOrder('auth');
      const answer = await op(order.id, 'capture', { amount: '20.00' });
      expect(answer.status, answer.text).to.equal(422);
      expect(answer.body.code).to.equal('ERR_ADAPTER_INVALID_AMOUNT');
      expect(answer.body.errors).to.have.property('amount');
      expect((await getOrder(order.id)).status).to.equal('authorized');
      expect(children(order, 'capture')).to.have.length(0);
    });

    it('a capture of a pending order is 409 INVALID_STATE naming pending and the allowed statuses', async () => {
      const order = await newOrder();
      const before = await snapshot(order.id);
      const answer = await op(order.id, 'capture');
      expect(answer.status, answer.text).to.equal(409);
      expect(answer.body.success).to.equal(false);
      expect(answer.body.code).to.equal('INVALID_STATE');
      expect(answer.body.data.status).to.equal('pending');
      expect(answer.body.data.allowed).to.deep.equal(['authorized']);
      expect(answer.body.message).to.contain('pending').and.contain('authorized');
      expect(await snapshot(order.id)).to.deep.equal(before);
    });

    it('a capture of a paid (sale) order is 409 INVALID_STATE naming paid, and the gateway is not asked', async () => {
      const order = await paidOrder('sale');
      const before = await snapshot(order.id);
      const answer = await op(order.id, 'capture');
      expect(answer.status, answer.text).to.equal(409);
      expect(answer.body.code).to.equal('INVALID_STATE');
      expect(answer.body.data.status).to.equal('paid');
      expect(answer.body.data.allowed).to.deep.equal(['authorized']);
      expect(answer.body.message).to.contain('paid').and.contain('authorized');
      expect(children(order, 'capture')).to.have.length(0);
      expect(await snapshot(order.id)).to.deep.equal(before);
    });

    it('a bad capture amount is 422 naming amount', async () => {
      const order = await paidOrder('auth');
      for (const amount of ['abc', '1.234', '-5', '0']) {
        const answer = await op(order.id, 'capture', { amount });
        expect(answer.status, `${amount}: ${answer.text}`).to.equal(422);
        expect(answer.body.errors, amount).to.have.property('amount');
      }
      expect(children(order, 'capture')).to.have.length(0);
      expect((await getOrder(order.id)).status).to.equal('authorized');
    });
  });

  describe('refund', () => {
    it('needs an Idempotency-Key: 422 naming it without one, and the gateway is not asked', async () => {
      const order = await paidOrder('sale');
      const before = await snapshot(order.id);
      const answer = await op(order.id, 'refund', { amount: '1.00', reason: 'customer request' });
      expect(answer.status, answer.text).to.equal(422);
      expect(answer.body.success).to.equal(false);
      expect(Object.keys(answer.body.errors ?? {}).map((k) => k.toLowerCase())).to.include('idempotency-key');
      // A body that is wrong too: both in one answer.
      const both = await op(order.id, 'refund', { amount: '1.001' });
      expect(both.status, both.text).to.equal(422);
      expect(Object.keys(both.body.errors ?? {}).sort()).to.deep.equal(['Idempotency-Key', 'amount']);
      expect(children(order, 'refund')).to.have.length(0);
      expect(await snapshot(order.id)).to.deep.equal(before);
    });

    it('partial refunds make it partially_refunded with the running total, the last one refunded', async () => {
      const order = await paidOrder('sale');
      const first = await op(order.id, 'refund', { amount: '2.00', reason: 'damaged' }, { key: 'r1' });
      expect(first.status, first.text).to.equal(200);
      expect(first.body.data.order.status).to.equal('partially_refunded');
      expect(first.body.data.order.refunded_amount).to.equal(200);
      await expectApiHistory(order.id, 'paid', 'partially_refunded');

      const second = await op(order.id, 'refund', { amount: '3.00', reason: 'damaged' }, { key: 'r2' });
      expect(second.status, second.text).to.equal(200);
      expect(second.body.data.order.status).to.equal('partially_refunded');
      expect(second.body.data.order.refunded_amount).to.equal(500);
      await expectApiHistory(order.id, 'partially_refunded', 'partially_refunded');

      const last = await op(order.id, 'refund', { amount: '7.34', reason: 'damaged' }, { key: 'r3' });
      expect(last.status, last.text).to.equal(200);
      expect(last.body.data.order.status).to.equal('refunded');
      expect(last.body.data.order.refunded_amount).to.equal(1234);
      await expectApiHistory(order.id, 'partially_refunded', 'refunded');

      expect(children(order, 'refund').map((r) => r.amount)).to.deep.equal([200, 300, 734]);
      expect(gatewayParent(order).refundedAmount).to.equal(1234);
      const stored = await getOrder(order.id);
      expect(stored.status).to.equal('refunded');
      expect(stored.refunded_amount).to.equal(1234);
    });

    it("refunded_amount is the gateway's running total, counting a refund made outside the kit", async () => {
      const order = await paidOrder('sale');
      // A refund made at the gateway directly (a dashboard, another tool): the kit never saw it.
      const outside = await fetch(
        `${t.kit.gatewayUrl}/api/v1/transactions/${order.payment!.gateway_transaction_id}/refund`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${MERCHANT_KEY}`,
            'content-type': 'application/json',
            'idempotency-key': `outside-${order.id}`,
          },
          body: JSON.stringify({ amount: 1, reason: 'goodwill' }),
        },
      );
      expect(outside.status).to.equal(200);
      const answer = await op(order.id, 'refund', { amount: '2.00' }, { key: 'after-outside' });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.data.order.status).to.equal('partially_refunded');
      expect(answer.body.data.order.refunded_amount).to.equal(300);
    });

    it('a full refund in one go makes it refunded', async () => {
      const order = await paidOrder('sale');
      const answer = await op(order.id, 'refund', { amount: '12.34', reason: 'cancelled' }, { key: 'full' });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.data.order.status).to.equal('refunded');
      expect(answer.body.data.order.refunded_amount).to.equal(1234);
      await expectApiHistory(order.id, 'paid', 'refunded');
    });

    it('refunds a captured auth (the capture, then the refund)', async () => {
      const order = await paidOrder('auth');
      expect((await op(order.id, 'capture')).status).to.equal(200);
      const answer = await op(order.id, 'refund', { amount: '4.00' }, { key: 'after-capture' });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.data.order.status).to.equal('partially_refunded');
      expect(answer.body.data.order.refunded_amount).to.equal(400);
      expect(answer.body.data.order.captured_amount).to.equal(1234);
    });

    it('a refund over what is left is 422 ERR_ADAPTER_INVALID_AMOUNT naming amount, and the order stays as it was', async () => {
      const order = await paidOrder('sale');
      expect((await op(order.id, 'refund', { amount: '10.00' }, { key: 'most' })).status).to.equal(200);
      const answer = await op(order.id, 'refund', { amount: '2.35' }, { key: 'too-much' });
      expect(answer.status, answer.text).to.equal(422);
      expect(answer.body.success).to.equal(false);
      expect(answer.body.code).to.equal('ERR_ADAPTER_INVALID_AMOUNT');
      expect(answer.body.errors).to.have.property('amount');
      const stored = await getOrder(order.id);
      expect(stored.status).to.equal('partially_refunded');
      expect(stored.refunded_amount).to.equal(1000);
      expect(children(order, 'refund')).to.have.length(1);
    });

    it('a refund of an order that is not paid is 409 INVALID_STATE', async () => {
      const order = await paidOrder('auth');
      const answer = await op(order.id, 'refund', { amount: '1.00' }, { key: 'not-paid' });
      expect(answer.status, answer.text).to.equal(409);
      expect(answer.body.code).to.equal('INVALID_STATE');
      expect(answer.body.data.status).to.equal('authorized');
      expect(children(order, 'refund')).to.have.length(0);
    });

    it('the same refund twice with the same Idempotency-Key: one refund at the gateway, the same answer', async () => {
      const order = await paidOrder('sale');
      const first = await op(order.id, 'refund', { amount: '1.50', reason: 'late' }, { key: 'same-key' });
      const second = await op(order.id, 'refund', { amount: '1.50', reason: 'late' }, { key: 'same-key' });
      expect(first.status, first.text).to.equal(200);
      expect(second.status, second.text).to.equal(200);
      expect(second.body).to.deep.equal(first.body);
      expect(children(order, 'refund')).to.have.length(1);
      expect(gatewayParent(order).refundedAmount).to.equal(150);
      const stored = await getOrder(order.id);
      expect(stored.refunded_amount).to.equal(150);
      expect(await operationRows(order.id)).to.have.length(1);
    });

    it('two refunds of the same amount with different keys are two refunds', async () => {
      const order = await paidOrder('sale');
      const first = await op(order.id, 'refund', { amount: '1.50', reason: 'late' }, { key: 'key-a' });
      const second = await op(order.id, 'refund', { amount: '1.50', reason: 'late' }, { key: 'key-b' });
      expect(first.status, first.text).to.equal(200);
      expect(second.status, second.text).to.equal(200);
      expect(children(order, 'refund')).to.have.length(2);
      expect(second.body.data.order.refunded_amount).to.equal(300);
      expect(second.body.data.order.status).to.equal('partially_refunded');
    });

    it('an Idempotency-Key is kept as its SHA-256, never as sent; a retry with it finds the refund', async () => {
      const order = await paidOrder('sale');
      // A random hex key that holds a card number's digits (about one in 1,400 does): refused before.
      const key = '9f3c4242424242424242e07d5a1b33c8';
      for (const _ of ['first', 'again']) {
        const answer = await op(order.id, 'refund', { amount: '1.00' }, { key });
        expect(answer.status, answer.text).to.equal(200);
      }
      expect(children(order, 'refund')).to.have.length(1);
      expect((await operationRows(order.id)).map((r) => r.request_key)).to.deep.equal([sha256(key)]);
    });

    it('the same key with a different amount is 409 IDEMPOTENCY_CONFLICT and refunds nothing more', async () => {
      const order = await paidOrder('sale');
      expect((await op(order.id, 'refund', { amount: '1.50' }, { key: 'conflict' })).status).to.equal(200);
      const before = await snapshot(order.id);
      const answer = await op(order.id, 'refund', { amount: '2.50' }, { key: 'conflict' });
      expect(answer.status, answer.text).to.equal(409);
      expect(answer.body.success).to.equal(false);
      expect(answer.body.code).to.equal('IDEMPOTENCY_CONFLICT');
      expect(children(order, 'refund')).to.have.length(1);
      expect(await snapshot(order.id)).to.deep.equal(before);
    });

    it('the same key with two amounts at once: the other amount is 409 too, never told the first one succeeded', async () => {
      // Both find no operation, both store one; the loser of the unique key used to take the
      // winner's row and answer 200 for a refund it did not ask for.
      const order = await paidOrder('sale');
      const refund = (amount: string) => op(order.id, 'refund', { amount }, { key: 'racing' });
      const answers = await Promise.all([refund('1.50'), refund('2.50'), refund('1.50'), refund('2.50')]);
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses, answers.map((a) => a.text).join('\n')).to.deep.equal([200, 200, 409, 409]);
      const won = answers.filter((a) => a.status === 200);
      const refunded = won[0]!.body.data.order.refunded_amount;
      expect(refunded === 150 || refunded === 250, String(refunded)).to.equal(true);
      for (const a of won) expect(a.body.data.operation.amount).to.equal(refunded);
      for (const a of answers.filter((x) => x.status === 409))
        expect(a.body.code).to.equal('IDEMPOTENCY_CONFLICT');
      expect(children(order, 'refund')).to.have.length(1);
      expect(gatewayParent(order).refundedAmount).to.equal(refunded);
    });
  });

  describe('void', () => {
    it('voids an authorized order: voided, a void record at the gateway, an api history row', async () => {
      const order = await paidOrder('auth');
      const answer = await op(order.id, 'void', { reason: 'out of stock' });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.data.order.status).to.equal('voided');
      expect(children(order, 'void')).to.have.length(1);
      expect(gatewayParent(order).status).to.equal('voided');
      expect((await getOrder(order.id)).status).to.equal('voided');
      await expectApiHistory(order.id, 'authorized', 'voided');
    });

    it('a void of a paid order is 409 INVALID_STATE and the gateway is not asked', async () => {
      const order = await paidOrder('sale');
      const before = await snapshot(order.id);
      const answer = await op(order.id, 'void');
      expect(answer.status, answer.text).to.equal(409);
      expect(answer.body.code).to.equal('INVALID_STATE');
      expect(answer.body.data.status).to.equal('paid');
      expect(children(order, 'void')).to.have.length(0);
      expect(await snapshot(order.id)).to.deep.equal(before);
    });
  });

  describe('retries after an unknown outcome', () => {
    it('a refund whose answer was lost, pressed again with a new key: settled first, not made twice (409 EARLIER_REQUEST_SETTLED)', async () => {
      const order = await paidOrder('sale', '20.00');
      loseRefundAnswers = true;
      const lost = await op(order.id, 'refund', { amount: '5.00', reason: 'damaged' }, { key: 'press-1' });
      expect(lost.status, lost.text).to.equal(503);
      expect(lost.body.code).to.equal('OUTCOME_UNKNOWN');
      expect(children(order, 'refund'), 'the gateway did refund').to.have.length(1);
      loseRefundAnswers = false;

      // The operator saw no answer and pressed again: a new key (the demo shop, a hand-written client).
      // At once, the first may still be in flight in its own request: it is not sent again, nor this one.
      const soon = await op(order.id, 'refund', { amount: '5.00', reason: 'damaged' }, { key: 'press-2' });
      expect(soon.status, soon.text).to.equal(409);
      expect(soon.body.code).to.equal('EARLIER_REQUEST_SETTLED');
      expect(soon.body.message).to.contain('it has no answer yet');
      expect(children(order, 'refund')).to.have.length(1);
      // A minute on, it is settled with its own stored key: the gateway's answer replayed.
      t.sandboxClock.advance(61_000);
      const again = await op(order.id, 'refund', { amount: '5.00', reason: 'damaged' }, { key: 'press-3' });
      expect(again.status, again.text).to.equal(409);
      expect(again.body.code).to.equal('EARLIER_REQUEST_SETTLED');
      expect(again.body.message).to.contain('5.00').and.contain('it is made now');
      expect(again.body.data.order).to.include({ status: 'partially_refunded', refunded_amount: 500 });
      expect(again.body.data.operation).to.include({ status: 'succeeded', amount: 500 });
      expect(children(order, 'refund'), 'one refund at the gateway').to.have.length(1);
      expect((await operationRows(order.id)).map((r) => r.status)).to.deep.equal(['succeeded']);

      // Told so, an operator who means another refund sends it again: now it is made.
      const another = await op(order.id, 'refund', { amount: '5.00', reason: 'damaged' }, { key: 'press-3' });
      expect(another.status, another.text).to.equal(200);
      expect(another.body.data.order.refunded_amount).to.equal(1000);
      expect(children(order, 'refund')).to.have.length(2);
    });

    it('a void asked again without a key, with another reason: the same void, answered as it stands', async () => {
      const order = await paidOrder('auth');
      const first = await op(order.id, 'void', { reason: 'customer cancelled' });
      expect(first.status, first.text).to.equal(200);
      const again = await op(order.id, 'void', { reason: 'again' });
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.operation.id).to.equal(first.body.data.operation.id);
      expect(again.body.data.order.status).to.equal('voided');
      expect(children(order, 'void')).to.have.length(1);
    });

    it("a capture whose answer is lost is 503 OUTCOME_UNKNOWN with the key stored; the operator's retry finishes it once", async () => {
      const order = await paidOrder('auth');
      captureKeys.length = 0;
      loseCaptureAnswers = true;
      const lost = await op(order.id, 'capture', {}, { key: 'ops-capture-1' });
      expect(lost.status, lost.text).to.equal(503);
      expect(lost.body.success).to.equal(false);
      expect(lost.body.code).to.equal('OUTCOME_UNKNOWN');
      // The gateway did capture; the kit does not know it yet.
      expect(children(order, 'capture')).to.have.length(1);
      expect((await getOrder(order.id)).status).to.equal('authorized');
      const pending = await operationRows(order.id);
      expect(pending).to.have.length(1);
      expect(pending[0]!.operation).to.equal('capture');
      expect(pending[0]!.status).to.equal('pending');
      const key = pending[0]!.idempotency_key;
      expect(key).to.be.a('string').and.not.equal('');
      expect(captureKeys.length).to.be.greaterThan(0);
      expect(new Set(captureKeys)).to.deep.equal(new Set([key]));

      loseCaptureAnswers = false;
      const retried = await op(order.id, 'capture', {}, { key: 'ops-capture-1' });
      expect(retried.status, retried.text).to.equal(200);
      expect(retried.body.data.order.status).to.equal('paid');
      expect(retried.body.data.order.captured_amount).to.equal(1234);
      // The same gateway key was sent again, so the gateway replayed its capture instead of refusing a second.
      expect(children(order, 'capture')).to.have.length(1);
      expect(new Set(captureKeys)).to.deep.equal(new Set([key]));
      const done = await operationRows(order.id);
      expect(done).to.have.length(1);
      expect(done[0]!.status).to.equal('succeeded');
      expect(done[0]!.idempotency_key).to.equal(key);
      expect(done[0]!.result_transaction_id).to.equal(String(children(order, 'capture')[0]!.id));
      await expectApiHistory(order.id, 'authorized', 'paid');
    });

    it('without an operator key, a repeated capture of the same amount is recognised (capture:<attempt>:<amount>)', async () => {
      const order = await paidOrder('auth');
      captureKeys.length = 0;
      loseCaptureAnswers = true;
      const lost = await op(order.id, 'capture');
      expect(lost.status, lost.text).to.equal(503);
      expect(lost.body.code).to.equal('OUTCOME_UNKNOWN');
      const rows = await operationRows(order.id);
      expect(rows).to.have.length(1);
      expect(rows[0]!.status).to.equal('pending');
      expect(rows[0]!.request_key).to.equal(sha256(`capture:${order.payment!.attempt_id}:1234`));

      loseCaptureAnswers = false;
      const retried = await op(order.id, 'capture', { amount: '12.34' });
      expect(retried.status, retried.text).to.equal(200);
      expect(retried.body.data.order.status).to.equal('paid');
      expect(children(order, 'capture')).to.have.length(1);
      expect(new Set(captureKeys)).to.deep.equal(new Set([rows[0]!.idempotency_key]));

      // Once more after it succeeded: the same capture, answered again, not a 409 and not a second capture.
      const again = await op(order.id, 'capture');
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.order.status).to.equal('paid');
      expect(again.body.data.operation.id).to.equal(retried.body.data.operation.id);
      expect(children(order, 'capture')).to.have.length(1);
      const after = await operationRows(order.id);
      expect(after).to.have.length(1);
      expect(after[0]!.status).to.equal('succeeded');
    });
  });
});
