import { expect } from 'chai';
import { parseEvent } from '../../../src/merchant/orders/from-gateway.js';

/**
 * The one reading of a gateway event (gateway-api.md, Webhook payload): the receiver, the worker and
 * event recovery all turn bytes into an observation, or a typed refusal, through parseEvent.
 */
const transaction = {
  id: 100001,
  merchant_trans_id: 'order-7',
  related_trans_id: null,
  transaction_type: 'sale',
  status: 'captured',
  amount: 1234,
  currency: 'EUR',
  refunded_amount: 0,
};
const payload = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: 'evt_abc',
    type: 'transaction.captured',
    created_at: '2026-11-01T12:00:00.000000Z',
    data: { transaction },
    ...over,
  });

describe('merchant: parseEvent (bytes to an observation)', () => {
  it('turns a transaction event into an observation whose source id is the event id', () => {
    const parsed = parseEvent(payload(), 'replay', 42);
    expect(parsed.kind).to.equal('observation');
    if (parsed.kind !== 'observation') return;
    expect(parsed).to.include({ id: 'evt_abc', type: 'transaction.captured' });
    expect(parsed.observation).to.deep.equal({
      source: 'replay',
      sourceId: 'evt_abc',
      observedAt: 42,
      transaction: {
        id: '100001',
        relatedId: null,
        type: 'sale',
        status: 'captured',
        amountMinor: 1234,
        currency: 'EUR',
        refundedMinor: 0,
        statusReason: null,
        reference: 'order-7',
      },
    });
  });

  it('accepts the record under data.transaction with unknown fields around it', () => {
    const parsed = parseEvent(
      payload({ extra: true, data: { transaction: { ...transaction, new_field: 1 } } }),
      'webhook',
      0,
    );
    expect(parsed.kind).to.equal('observation');
  });

  it('a ping is a ping, whatever it carries', () => {
    expect(parseEvent(payload({ type: 'webhook.ping', data: {} }), 'webhook', 0)).to.deep.equal({
      kind: 'ping',
      id: 'evt_abc',
    });
  });

  it('refuses, with a reason and a message, what is not an event with a transaction', () => {
    const cases: [string, string][] = [
      ['{"id": "evt_abc"', 'not_json'],
      ['[]', 'bad_shape'],
      [payload({ id: 7 }), 'bad_shape'],
      // Longer than the inbox's columns: it could never be stored, so it is refused, not retried.
      [payload({ id: `evt_${'a'.repeat(61)}` }), 'bad_shape'],
      [payload({ id: '' }), 'bad_shape'],
      [payload({ type: `transaction.${'x'.repeat(53)}` }), 'bad_shape'],
      [payload({ data: { transaction: { ...transaction, amount: '12.34' } } }), 'bad_shape'],
      [payload({ data: {} }), 'no_transaction'],
    ];
    for (const [text, reason] of cases) {
      const parsed = parseEvent(text, 'webhook', 0);
      expect(parsed.kind, text).to.equal('rejected');
      if (parsed.kind === 'rejected') {
        expect(parsed.reason, text).to.equal(reason);
        expect(parsed.message, text).to.match(/^The /);
      }
    }
  });
});
