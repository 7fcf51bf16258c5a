import { expect } from 'chai';
import fc from 'fast-check';
import { eventPayloadSchema } from '../../../src/client/schemas.js';
import { hasEventShape } from '../../../src/merchant/orders/event-shape.js';

/**
 * The receiver's compiled check of an event's shape (ajv, from the zod schema's JSON Schema) answers
 * exactly as the zod schema does, on events sound and broken in every field.
 */
describe('merchant: the compiled event shape check', () => {
  const zodSays = (json: unknown) => eventPayloadSchema.safeParse(json).success;

  const transaction = {
    id: 4711,
    related_trans_id: null,
    merchant_id: '1004',
    amount: 1234,
    currency: 'EUR',
    status: 'captured',
    transaction_type: 'sale',
    merchant_trans_id: 'order-1',
    refunded_amount: 0,
    chargeback_amount: 0,
    capture_before: null,
    vault_token: null,
    status_reason: null,
    created_at: '2026-11-27T12:00:00Z',
    updated_at: '2026-11-27T12:00:00Z',
  };
  const event = {
    id: 'evt_1',
    type: 'transaction.captured',
    created_at: '2026-11-27T12:00:00Z',
    api_version: '2026-11-01',
    data: { transaction },
  };

  /** Any JSON value, and the ones JSON.parse makes that a generator of JSON does not: Infinity, -0. */
  const anyValue = fc.oneof(
    fc.constantFrom(
      null,
      '',
      'x',
      0,
      -0,
      1.5,
      2 ** 53,
      2 ** 53 - 1,
      -(2 ** 53) + 1,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      true,
      [],
      {},
      [1],
      { id: 1 },
    ),
    fc.string(),
    fc.integer(),
    fc.double(),
    fc.jsonValue({ maxDepth: 2 }),
  );

  /** The event with some of its fields (at any of its three levels) replaced by anything, or taken away. */
  const variant = fc
    .record({
      top: fc.dictionary(fc.constantFrom(...Object.keys(event), 'extra'), fc.option(anyValue), {
        maxKeys: 2,
      }),
      data: fc.dictionary(fc.constantFrom('transaction', 'extra', '__proto__'), fc.option(anyValue), {
        maxKeys: 1,
      }),
      transaction: fc.dictionary(fc.constantFrom(...Object.keys(transaction), 'extra'), fc.option(anyValue), {
        maxKeys: 2,
      }),
      // Now and then not an event at all.
      whole: fc.oneof({ arbitrary: fc.constant(null), weight: 9 }, { arbitrary: anyValue, weight: 1 }),
    })
    .map(({ top, data, transaction: tx, whole }) => {
      if (whole !== null) return whole;
      const change = (base: Record<string, unknown>, changes: Record<string, unknown>) => {
        const out: Record<string, unknown> = { ...base };
        for (const [key, value] of Object.entries(changes)) {
          if (value === null) delete out[key];
          else
            Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
        }
        return out;
      };
      const changedData = change({ transaction: change(transaction, tx) }, data);
      return change({ ...event, data: changedData }, top);
    });

  it('answers as the zod schema does: sound events, and events broken in any field', () => {
    expect(hasEventShape(event)).to.equal(true);
    fc.assert(
      fc.property(variant, (json) => {
        expect(hasEventShape(json), JSON.stringify(json)).to.equal(zodSays(json));
      }),
      { numRuns: 5000 },
    );
  });

  it('and on what only JSON.parse makes: 1e400, -0, __proto__ as a key, a key repeated', () => {
    const texts = [
      JSON.stringify(event),
      JSON.stringify(event).replace('"amount":1234', '"amount":1e400'),
      JSON.stringify(event).replace('"amount":1234', '"amount":-0'),
      JSON.stringify(event).replace('"amount":1234', '"amount":9007199254740993'),
      JSON.stringify(event).replace('"id":4711', '"id":1e400'),
      JSON.stringify(event).replace('"id":4711', '"id":""'),
      JSON.stringify(event).replace('"id":4711', '"id":"\\ud800"'),
      JSON.stringify(event).replace('{"id":"evt_1"', '{"__proto__":{"id":"evt_1"}'),
      JSON.stringify(event).replace('"data":{', '"data":{"__proto__":{"transaction":null},'),
      JSON.stringify(event).replace('"data":{"transaction":', '"data":{"transaction":null,"transaction":'),
      JSON.stringify(event).replace('"data":{"transaction":', '"data":{"transaction":'.concat('[],"x":')),
      JSON.stringify({ ...event, data: [] }),
      JSON.stringify({ ...event, data: {} }),
      JSON.stringify({ ...event, data: { transaction: null } }),
      '[]',
      'null',
      '"event"',
    ];
    for (const text of texts) {
      const json: unknown = JSON.parse(text);
      expect(hasEventShape(json), text).to.equal(zodSays(json));
    }
  });
});
