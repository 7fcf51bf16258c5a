import { expect } from 'chai';
import type { SeedInput } from '../../../src/gateway/state/seed.js';
import {
  type Answer,
  expectStatus,
  liftRateLimits,
  startGateway,
  type TestGateway,
  transactionBody,
  uniqueReference,
} from '../../support/gateway.js';

/**
 * sandbox.md section 11, Refunds per method: a seed payment method with `"refunds": false` (psc here,
 * as in sandbox.md section 2) makes a refund of its sessions' payments 400 ERR_REFUND_NOT_SUPPORTED,
 * with nothing recorded. Under the Idempotency contract that answer is a decline (rule 2), not a
 * validation or authorization failure (rule 5): its key is used and it replays.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read records field by field
type Json = any;

function pscRefundsOff(s: SeedInput): void {
  liftRateLimits(s);
  const psc = s.merchants[0]!.payment_methods.find((m) => m.payment_method === 'psc')!;
  psc.refunds = false;
}

describe('gateway: refunds per payment method (sandbox.md section 11)', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ seed: pscRefundsOff });
    // Strict mode with a public resolver: events are recorded (not delivered) for the list below.
    expectStatus(
      await gw.call('PUT', '/api/v1/webhook', { body: { url: 'https://webhooks.acme-shop.com/in' } }),
      201,
    );
  });
  after(async () => {
    await gw.close();
  });

  async function session(method: 'psc' | 'ideal', outcome?: 'paid'): Promise<Json> {
    const created = await gw.call('POST', '/api/v1/payment-sessions', {
      body: {
        amount: 20,
        currency: 'EUR',
        reference: uniqueReference(`refund-${method}`),
        payment_method: method,
        customer: { country_code: 'NL' },
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/cancel',
      },
    });
    expectStatus(created, 201);
    const s = created.body.data.payment_session;
    if (outcome === undefined) return s;
    const settled = await gw.call('POST', `/sandbox/payment-sessions/${s.payment_session_id}/settle`, {
      body: { outcome },
    });
    expectStatus(settled, 200);
    return settled.body.data.payment_session;
  }
  const refund = (id: number, body: unknown = { amount: 5, reason: 'r' }, key?: string): Promise<Answer> =>
    gw.call('POST', `/api/v1/transactions/${id}/refund`, {
      body,
      ...(key === undefined ? {} : { headers: { 'Idempotency-Key': key } }),
    });
  /** Every transaction.refunded event recorded so far. */
  const refundEvents = async (): Promise<Json[]> => {
    const answer = await gw.call(
      'GET',
      '/api/v1/webhook/events?event_type=transaction.refunded&per_page=100',
    );
    expectStatus(answer, 200);
    return answer.body.data.events;
  };

  it('a paid psc session: 400 ERR_REFUND_NOT_SUPPORTED, no refund record, no event, the payment unchanged', async () => {
    const s = await session('psc', 'paid');
    const before = gw.gateway.deps.state.transactions.size;
    const eventsBefore = (await refundEvents()).length;
    for (const amount of [5, 20]) {
      const answer = await refund(s.transaction_id, { amount, reason: 'r' });
      expectStatus(answer, 400);
      expect(answer.body).to.include({ success: false, code: 'ERR_REFUND_NOT_SUPPORTED', data: null });
    }
    expect(gw.gateway.deps.state.transactions.size).to.equal(before);
    expect(await refundEvents()).to.have.length(eventsBefore);
    const status = await gw.call('GET', `/api/v1/transactions/${s.transaction_id}/status`);
    expect(status.body.data).to.include({ status: 'captured', refunded_amount: 0 });
    const after = await gw.call('GET', `/api/v1/payment-sessions/${s.payment_session_id}`);
    expect(after.body.data.payment_session.status).to.equal('paid');
  });

  it('the method is said before the state: a psc payment not yet paid is ERR_REFUND_NOT_SUPPORTED too', async () => {
    const s = await session('psc');
    const answer = await refund(s.transaction_id);
    expectStatus(answer, 400);
    expect(answer.body.code).to.equal('ERR_REFUND_NOT_SUPPORTED');
  });

  it('other methods and card payments refund as before', async () => {
    const ideal = await session('ideal', 'paid');
    const eventsBefore = (await refundEvents()).length;
    const answer = await refund(ideal.transaction_id);
    expectStatus(answer, 200);
    expect(answer.body.data.transaction).to.include({ transaction_type: 'refund', amount: 500 });
    const events = await refundEvents();
    expect(events).to.have.length(eventsBefore + 1);
    expect(events[0].transaction_id).to.equal(answer.body.data.transaction.id);

    const sale = await gw.call('POST', '/api/v1/transactions', { body: transactionBody({ amount: 20 }) });
    expectStatus(await refund(sale.body.data.id), 200);
  });

  it('with an Idempotency-Key the decline is stored: the same request replays it, another body conflicts', async () => {
    const s = await session('psc', 'paid');
    const key = uniqueReference('psc-refund');
    const first = await refund(s.transaction_id, { amount: 5, reason: 'r' }, key);
    expectStatus(first, 400);
    expect(first.headers.get('idempotency-replayed')).to.equal(null);
    const again = await refund(s.transaction_id, { amount: 5, reason: 'r' }, key);
    expectStatus(again, 400);
    expect(again.headers.get('idempotency-replayed')).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    const other = await refund(s.transaction_id, { amount: 6, reason: 'r' }, key);
    expectStatus(other, 409);
    expect(other.body.code).to.equal('ERR_IDEMPOTENCY_CONFLICT');
  });
});

describe('gateway: a seed method without "refunds" refunds (the default)', () => {
  it('a paid psc session of the test seed (no refunds field) is refunded', async () => {
    const gw = await startGateway();
    try {
      const created = await gw.call('POST', '/api/v1/payment-sessions', {
        body: {
          amount: 20,
          currency: 'EUR',
          reference: uniqueReference('psc-default'),
          payment_method: 'psc',
          success_url: 'https://shop.example/ok',
          cancel_url: 'https://shop.example/cancel',
        },
      });
      expectStatus(created, 201);
      const s = created.body.data.payment_session;
      expectStatus(
        await gw.call('POST', `/sandbox/payment-sessions/${s.payment_session_id}/settle`, {
          body: { outcome: 'paid' },
        }),
        200,
      );
      const answer = await gw.call('POST', `/api/v1/transactions/${s.transaction_id}/refund`, {
        body: { amount: 20 },
      });
      expectStatus(answer, 200);
    } finally {
      await gw.close();
    }
  });
});
