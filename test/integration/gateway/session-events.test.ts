import { expect } from 'chai';
import type { SeedInput } from '../../../src/gateway/state/seed.js';
import {
  type Answer,
  liftRateLimits,
  startGateway,
  type TestGateway,
  uniqueReference,
} from '../../support/gateway.js';
import { allowPrivateUrls, type Receiver, startReceiver } from '../../support/receiver.js';

/**
 * Webhook events of payment sessions (gateway-api.md "Events" and the transaction rows for sessions;
 * sandbox.md sections 7, 8 and 10), as a real receiver gets them.
 */

const LIFETIME_MS = 15 * 60 * 1000;
const SESSION_EVENTS = [
  'transaction.pending',
  'transaction.captured',
  'transaction.failed',
  'transaction.cancelled',
  'transaction.chargeback',
];

interface Payload {
  id: string;
  type: string;
  created_at: string;
  api_version: string;
  data: {
    transaction: {
      id: number;
      status: string;
      amount: number;
      currency: string;
      transaction_type: string;
      merchant_trans_id: string;
      acquirer_provider: string;
    };
  };
}

function seed(s: SeedInput): void {
  allowPrivateUrls(s);
  liftRateLimits(s);
}

function sessionBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: 12.34,
    currency: 'EUR',
    reference: uniqueReference('ps-evt'),
    payment_method: 'ideal',
    customer: { first_name: 'Ada', last_name: 'Lovelace', country_code: 'NL' },
    success_url: 'https://shop.example/return',
    cancel_url: 'https://shop.example/cancel',
    ...overrides,
  };
}

interface Session {
  payment_session_id: string;
  transaction_id: number;
  provider: string;
  amount: number;
  currency: string;
  merchant_reference: string;
}

/** The session helpers every block below shares, bound to one gateway and one receiver. */
function helpers(get: () => { t: TestGateway; receiver: Receiver }) {
  let seen = 0;
  return {
    async open(overrides: Record<string, unknown> = {}): Promise<Session> {
      const res = await get().t.call('POST', '/api/v1/payment-sessions', { body: sessionBody(overrides) });
      expect(res.status, res.text).to.equal(201);
      return res.body.data.payment_session;
    },
    async click(s: Session, action: string): Promise<void> {
      const res = await get().t.call('POST', `/hosted/checkout/${s.payment_session_id}`, {
        key: null,
        rawBody: `action=${action}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(res.status, res.text).to.equal(303);
    },
    async sessionStatus(s: Session): Promise<string> {
      const res = await get().t.call('GET', `/api/v1/payment-sessions/${s.payment_session_id}`);
      expect(res.status, res.text).to.equal(200);
      return res.body.data.payment_session.status;
    },
    /** Ticks, then returns what the receiver got since the last call (pings excluded). */
    async deliveredAfterTick(): Promise<Payload[]> {
      await get().t.gateway.controls.tick();
      const { received } = get().receiver;
      const fresh = received.slice(seen).map((r) => r.json as Payload);
      seen = received.length;
      return fresh.filter((p) => p.type !== 'webhook.ping');
    },
  };
}

/** The payload carries the linked transaction as it is now (sandbox.md section 8). */
function expectTransactionPayload(p: Payload, type: string, s: Session, status: string): void {
  expect(p.type).to.equal(type);
  expect(p.id).to.match(/^evt_[A-Za-z0-9]{24}$/);
  expect(p.api_version).to.equal('2026-11-01');
  const tx = p.data.transaction;
  expect(tx.id).to.equal(s.transaction_id);
  expect(tx.status).to.equal(status);
  expect(tx.amount).to.equal(s.amount);
  expect(Number.isInteger(tx.amount)).to.equal(true);
  expect(tx.currency).to.equal(s.currency);
  expect(tx.transaction_type).to.equal('sale');
  expect(tx.merchant_trans_id).to.equal(s.merchant_reference);
  expect(tx.acquirer_provider).to.equal(s.provider);
}

describe('gateway: payment session events, subscribed to every session event type', () => {
  let t: TestGateway;
  let receiver: Receiver;
  const h = helpers(() => ({ t, receiver }));

  before(async () => {
    receiver = await startReceiver();
    t = await startGateway({ seed });
    const put = await t.call('PUT', '/api/v1/webhook', {
      body: { url: receiver.url, events: SESSION_EVENTS },
    });
    expect(put.status, put.text).to.equal(201);
    expect(put.body.data.endpoint.events).to.deep.equal(SESSION_EVENTS);
  });

  after(async () => {
    await t.close();
    await receiver.close();
  });

  /** Exactly one event was delivered since the last look, for this session's transaction. */
  async function expectOnly(s: Session, type: string, status: string): Promise<Payload> {
    const got = await h.deliveredAfterTick();
    expect(
      got.map((p) => `${p.type}#${p.data.transaction.id}`),
      'delivered since the last tick',
    ).to.deep.equal([`${type}#${s.transaction_id}`]);
    expectTransactionPayload(got[0]!, type, s, status);
    return got[0]!;
  }

  it('delivers nothing before a tick (deliveries run on tick)', async () => {
    const s = await h.open();
    await h.click(s, 'cancel');
    expect(receiver.received).to.have.length(0);
    const got = await h.deliveredAfterTick();
    expect(got.map((p) => p.type)).to.deep.equal(['transaction.pending', 'transaction.cancelled']);
  });

  it('create -> transaction.pending, with the pending transaction and the provider', async () => {
    const s = await h.open();
    await expectOnly(s, 'transaction.pending', 'pending');
    await h.click(s, 'cancel'); // finished, so later clock moves expire nothing of this test
    await h.deliveredAfterTick();
  });

  it('Pay -> transaction.captured, once; a second click sends nothing', async () => {
    const s = await h.open({ payment_method: 'psc', currency: 'GBP', amount: 7.5 });
    await expectOnly(s, 'transaction.pending', 'pending');
    expect(s.provider).to.equal('sandbox-psc');
    await h.click(s, 'pay');
    await expectOnly(s, 'transaction.captured', 'captured');
    await h.click(s, 'fail');
    await h.click(s, 'cancel');
    expect(await h.deliveredAfterTick()).to.deep.equal([]);
  });

  it('Fail -> transaction.failed', async () => {
    const s = await h.open();
    await expectOnly(s, 'transaction.pending', 'pending');
    await h.click(s, 'fail');
    await expectOnly(s, 'transaction.failed', 'failed');
  });

  it('Cancel -> transaction.cancelled', async () => {
    const s = await h.open();
    await expectOnly(s, 'transaction.pending', 'pending');
    await h.click(s, 'cancel');
    await expectOnly(s, 'transaction.cancelled', 'cancelled');
  });

  it('Pending -> transaction.pending again (sandbox.md section 8), then settle paid -> transaction.captured', async () => {
    const s = await h.open();
    await expectOnly(s, 'transaction.pending', 'pending');
    await h.click(s, 'pending');
    await expectOnly(s, 'transaction.pending', 'pending');
    const settled = await t.call('POST', `/sandbox/payment-sessions/${s.payment_session_id}/settle`, {
      body: { outcome: 'paid' },
    });
    expect(settled.status, settled.text).to.equal(200);
    await expectOnly(s, 'transaction.captured', 'captured');
  });

  it('expiry -> transaction.cancelled, on the tick that finds the session expired', async () => {
    const s = await h.open();
    await expectOnly(s, 'transaction.pending', 'pending');
    t.clock.advance(LIFETIME_MS - 1000);
    expect(await h.deliveredAfterTick()).to.deep.equal([]);
    t.clock.advance(1000);
    await expectOnly(s, 'transaction.cancelled', 'cancelled');
    expect(await h.sessionStatus(s)).to.equal('expired');
  });

  it('chargeback -> transaction.chargeback', async () => {
    const s = await h.open();
    await expectOnly(s, 'transaction.pending', 'pending');
    await h.click(s, 'pay');
    await expectOnly(s, 'transaction.captured', 'captured');
    const res = await t.call('POST', `/sandbox/transactions/${s.transaction_id}/chargeback`);
    expect(res.status, res.text).to.equal(200);
    await expectOnly(s, 'transaction.chargeback', 'chargeback');
    expect(await h.sessionStatus(s)).to.equal('chargeback');
  });

  it('records each delivered event in history against the linked transaction', async () => {
    const s = await h.open();
    await h.click(s, 'pay');
    await h.deliveredAfterTick();
    const res = await t.call('GET', `/api/v1/webhook/events?transaction_id=${s.transaction_id}`);
    expect(res.status, res.text).to.equal(200);
    const rows = res.body.data.events as { event_type: string; status: string; merchant_trans_id: string }[];
    expect(rows.map((r) => r.event_type)).to.have.members(['transaction.pending', 'transaction.captured']);
    for (const row of rows) {
      expect(row.status).to.equal('delivered');
      expect(row.merchant_trans_id).to.equal(s.merchant_reference);
    }
  });
});

describe('gateway: payment session events, default subscription', () => {
  let t: TestGateway;
  let receiver: Receiver;
  const h = helpers(() => ({ t, receiver }));

  before(async () => {
    receiver = await startReceiver();
    t = await startGateway({ seed });
    const put = await t.call('PUT', '/api/v1/webhook', { body: { url: receiver.url } });
    expect(put.status, put.text).to.equal(201);
    expect(put.body.data.endpoint.events).to.equal(null);
  });

  after(async () => {
    await t.close();
    await receiver.close();
  });

  const history = (query: string): Promise<Answer> => t.call('GET', `/api/v1/webhook/events?${query}`);

  it('records no transaction.pending for a new session, delivers the capture', async () => {
    const s = await h.open();
    expect(await h.deliveredAfterTick()).to.deep.equal([]);
    const pending = await history('event_type=transaction.pending');
    expect(pending.status, pending.text).to.equal(200);
    expect(pending.body.data.events).to.deep.equal([]);
    expect(pending.body.data.pagination.total).to.equal(0);
    expect((await history(`transaction_id=${s.transaction_id}`)).body.data.events).to.deep.equal([]);

    await h.click(s, 'pay');
    const got = await h.deliveredAfterTick();
    expect(got.map((p) => p.type)).to.deep.equal(['transaction.captured']);
    expectTransactionPayload(got[0]!, 'transaction.captured', s, 'captured');
  });

  it('records no transaction.pending when a session goes pending_provider either', async () => {
    const s = await h.open();
    await h.click(s, 'pending');
    expect(await h.deliveredAfterTick()).to.deep.equal([]);
    const all = await history(`transaction_id=${s.transaction_id}`);
    expect(all.body.data.events).to.deep.equal([]);
    expect((await history('event_type=transaction.pending')).body.data.pagination.total).to.equal(0);
  });
});
