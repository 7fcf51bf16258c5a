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
  updated_at: '2026-11-01T11:59:59.123456Z',
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
        captureBefore: null,
        chargebackMinor: null,
        updatedAt: Date.UTC(2026, 10, 1, 11, 59, 59, 123),
      },
      // A reversal is told from any other captured record by its event alone (orders/disputes.ts).
      eventType: 'transaction.captured',
    });
  });

  it("reads an auth's deadline (capture_before), and none where it is absent or unreadable", () => {
    const auth = { ...transaction, transaction_type: 'auth', status: 'cancelled' };
    const read = (t: Record<string, unknown>) => {
      const parsed = parseEvent(payload({ data: { transaction: t } }), 'webhook', 0);
      return parsed.kind === 'observation' ? parsed.observation.transaction.captureBefore : 'refused';
    };
    expect(read({ ...auth, capture_before: '2026-12-01T10:00:00.000000Z' })).to.equal(
      Date.UTC(2026, 11, 1, 10),
    );
    expect(read(auth)).to.equal(null);
    expect(read({ ...auth, capture_before: null })).to.equal(null);
    expect(read({ ...auth, capture_before: 'soon' })).to.equal(null);
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

  it('refuses an event id, type or transaction id the inbox cannot keep as sent (bad_id)', () => {
    const tx = (id: unknown) => ({ data: { transaction: { ...transaction, id } } });
    const cases: [string, Record<string, unknown>][] = [
      ['an id over 64 characters', { id: `evt_${'x'.repeat(61)}` }],
      ['an empty id', { id: '' }],
      ['an id with a trailing space (MariaDB compares it away)', { id: 'evt_abc ' }],
      ['an id that is not ASCII', { id: 'evt_\u00e9' }],
      ['a type over 64 characters', { type: `transaction.${'x'.repeat(60)}` }],
      ['a transaction id over 64 characters', tx('1'.repeat(65))],
      ['a transaction id with a space', tx('100 001')],
    ];
    for (const [what, over] of cases) {
      const parsed = parseEvent(payload(over), 'webhook', 0);
      expect(parsed, what).to.include({ kind: 'rejected', reason: 'bad_id' });
    }
    expect(parseEvent(payload({ id: `evt_${'x'.repeat(60)}` }), 'webhook', 0).kind).to.equal('observation');
  });

  it('refuses an event that carries a card number anywhere (card_data): gateway events carry none', () => {
    const cases: [string, string][] = [
      [
        'in a description',
        payload({ data: { transaction: { ...transaction, description: 'for 4242424242424242' } } }),
      ],
      ['as a key', payload({ data: { transaction, '4000 0000 0000 3220': true } })],
      ['as a number', payload({ data: { transaction, metadata: 4242424242424242 } })],
      [
        'in \\u escapes',
        payload({ data: { transaction } }).replace('"data"', '"note":"\\u0034242424242424242","data"'),
      ],
      [
        'under a key the same key repeated hides',
        payload().replace('{"id"', '{"x":"4242424242424242","x":1,"id"'),
      ],
      ['in a ping', payload({ type: 'webhook.ping', data: { note: '4242-4242-4242-4242' } })],
    ];
    for (const [where, text] of cases) {
      expect(JSON.parse(text), where).to.be.an('object');
      expect(parseEvent(text, 'webhook', 0), where).to.include({ kind: 'rejected', reason: 'card_data' });
    }
  });
});
