import { expect } from 'chai';
import fc from 'fast-check';
import {
  BYTES_ONLY,
  GATEWAY_ID_FIELDS,
  jsonText,
  maskEvent,
  maskNote,
} from '../../../src/merchant/orders/event-masking.js';
import { cardNumberRuns, hasCardNumber } from '../../../src/shared/card-numbers.js';

/**
 * Issue 44, part 1: a gateway event is never refused for what its numbers look like. The gateway's ids
 * and codes (gateway-api.md) are kept as sent whatever their digits read as; a card number anywhere
 * else is truncated to its last four digits before the event is kept, and where is said.
 */

/** Numeric acquirer ids that read as card numbers: 16 digits, a brand's first digit, a valid Luhn check. */
const NUMERIC_IDS = ['4539578763621486', '5105105105105100', '6011000990139424', '3530111333300000'];

function sandboxEvent(transaction: Record<string, unknown> = {}) {
  return {
    id: 'evt_8htPov2t6rpVnXkMAXTd4huZ',
    type: 'transaction.captured',
    created_at: '2026-11-23T10:00:00.000000Z',
    api_version: '2026-11-01',
    data: {
      transaction: {
        id: 100001,
        merchant_trans_id: 'ord-1001',
        related_trans_id: null,
        transaction_type: 'sale',
        status: 'captured',
        amount: 1999,
        currency: 'EUR',
        acquirer_provider: 'sandbox-acquirer',
        acquirer_trans_id: '0a1b2c3d4e5f6071',
        acquirer_auth_code: 'A1B2C3',
        description: 'Order 1001',
        created_at: '2026-11-23T10:00:00.000000Z',
        updated_at: '2026-11-23T10:00:00.000000Z',
        refunded_amount: 0,
        ...transaction,
      },
    },
  };
}

const masking = (text: string) => {
  const json = JSON.parse(text);
  return { result: maskEvent(text, json), json };
};

describe('merchant: card numbers in gateway events (maskEvent)', () => {
  it('keeps an event with nothing that reads as a card number byte for byte, without reading its values', () => {
    const text = JSON.stringify(sandboxEvent());
    expect(masking(text).result).to.equal(null);
    // A value read would have to be a getter's: none is, and none is called.
    const trap = {
      get description() {
        throw new Error('read');
      },
    };
    expect(maskEvent('{"n":1}', trap)).to.equal(null);
  });

  it('keeps ids and codes as sent, however much they read as card numbers: never a reason to change the event', () => {
    for (const id of NUMERIC_IDS) {
      expect(hasCardNumber(id), id).to.equal(true);
      const text = JSON.stringify(
        sandboxEvent({
          acquirer_trans_id: id,
          acquirer_auth_code: id.slice(0, 13),
          acquirer_ref_num: id,
          id: Number(id),
          related_trans_id: id,
          cardholder_id: Number(id),
          status_reason: id,
        }),
      );
      expect(masking(text).result, id).to.equal(null);
    }
  });

  it('truncates a card number in a free field, writes the event again, and names where', () => {
    const text = JSON.stringify(
      sandboxEvent({ description: 'paid with 4242 4242 4242 4242', acquirer_trans_id: NUMERIC_IDS[0] }),
    );
    const { result, json } = masking(text);
    expect(result!.masked).to.deep.equal(['data.transaction.description']);
    expect(json.data.transaction.description).to.equal('paid with **** **** **** 4242');
    expect(result!.text).to.equal(JSON.stringify(json));
    expect(JSON.parse(result!.text).data.transaction.acquirer_trans_id, 'the id kept').to.equal(
      NUMERIC_IDS[0],
    );
    expect(cardNumberRuns(result!.text), 'only the id reads as one').to.equal(1);
    expect(maskNote(result!.masked)).to.contain('data.transaction.description');
  });

  it('masks the merchant reference and fields the document does not name: they are text, not the gateway ids', () => {
    const text = JSON.stringify({
      ...sandboxEvent({ merchant_trans_id: '4000000000003220', network_trans_id: 4242424242424242 }),
      metadata: ['x', '5555555555554444'],
    });
    const { result, json } = masking(text);
    expect(result!.masked.sort()).to.deep.equal([
      'data.transaction.merchant_trans_id',
      'data.transaction.network_trans_id',
      'metadata.1',
    ]);
    expect(json.data.transaction.merchant_trans_id).to.equal('************3220');
    expect(json.data.transaction.network_trans_id).to.equal('************4242');
    expect(hasCardNumber(result!.text)).to.equal(false);
  });

  it('reads the values as well as the bytes: escapes, exponents, a key, a value a repeated key hides', () => {
    const base = JSON.stringify(sandboxEvent());
    const cases: [string, string, string][] = [
      [
        'an escaped value',
        base.replace('"Order 1001"', '"\\u0034242424242424242"'),
        'data.transaction.description',
      ],
      ['a number with an exponent', base.replace('"data"', '"n":4.242424242424242e15,"data"'), 'n'],
      ['a key', base.replace('"data"', '"4242 4242 4242 4242":true,"data"'), '**** **** **** 4242'],
      ['a hidden value', base.replace('{"id"', '{"x":"4242424242424242","x":1,"id"'), BYTES_ONLY],
      [
        'a hidden id',
        base.replace('"acquirer_trans_id"', '"acquirer_trans_id":"4242424242424242","acquirer_trans_id"'),
        BYTES_ONLY,
      ],
    ];
    for (const [what, text, where] of cases) {
      const { result } = masking(text);
      expect(result?.masked, what).to.deep.equal([where]);
      expect(hasCardNumber(result!.text), what).to.equal(false);
    }
  });

  it('never names a card number where it says it masked one', () => {
    const text = '{"4242424242424242":{"5555555555554444":"4000000000003220"}}';
    const { result } = masking(text);
    expect(result!.masked).to.deep.equal(['************4242', '************4242.************4444']);
    expect(hasCardNumber(result!.masked.join(' '))).to.equal(false);
    expect(hasCardNumber(result!.text)).to.equal(false);
  });

  it('names at most ten places, each by its last six keys, and walks and writes any depth without recursion', () => {
    const many = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}`, '4242424242424242']));
    expect(masking(JSON.stringify(many)).result!.masked)
      .to.have.length(11)
      .and.include('…');
    const deep = (n: number) => `${'{"a":'.repeat(n)}"4242424242424242"${'}'.repeat(n)}`;
    const started = performance.now();
    const { result } = masking(deep(1_000));
    expect(performance.now() - started).to.be.below(500);
    expect(result!.masked).to.deep.equal(['….a.a.a.a.a.a']);
    // Deeper than JSON.stringify can write (it overflows the stack): written all the same.
    const { result: deepest } = masking(deep(100_000));
    expect(deepest!.text).to.equal(deep(100_000).replace('4242424242424242', '************4242'));
  });

  it('writes parsed JSON as JSON.stringify does, at any depth (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonText(value)).to.equal(JSON.stringify(value));
      }),
      { numRuns: 2000 },
    );
    const proto = JSON.parse('{"__proto__":{"a":[1,-0,"\\ud800"]},"10":1,"b":null}');
    expect(jsonText(proto)).to.equal(JSON.stringify(proto));
  });

  it('whatever the event holds where, the kept text holds card numbers only in id fields, ids unchanged (property)', () => {
    const card = fc.constantFrom(
      '4242424242424242',
      '4000 0000 0000 3220',
      '378282246310005',
      ...NUMERIC_IDS,
    );
    const value = fc.oneof(
      card,
      card.map((c) => `ref ${c} x`),
      card.map((c) => Number(c.replace(/\D/g, ''))),
      fc.string({ maxLength: 8 }),
      fc.integer(),
    );
    const field = fc.oneof(
      fc.constantFrom(...GATEWAY_ID_FIELDS),
      fc.constantFrom('description', 'merchant_trans_id', 'note'),
    );
    fc.assert(
      fc.property(fc.dictionary(field, value, { maxKeys: 6 }), (extra) => {
        const text = JSON.stringify(sandboxEvent(extra));
        const { result, json } = masking(text);
        const kept = result?.text ?? text;
        const tx = JSON.parse(kept).data.transaction as Record<string, unknown>;
        let idCards = 0;
        for (const [key, v] of Object.entries(tx)) {
          if (GATEWAY_ID_FIELDS.has(key)) {
            expect(v, key).to.equal(key in extra ? extra[key] : sandboxEvent().data.transaction[key as 'id']);
            if (hasCardNumber(String(v))) idCards += 1;
          } else expect(hasCardNumber(String(v)), `${key}: ${String(v)}`).to.equal(false);
        }
        expect(cardNumberRuns(kept), kept).to.equal(idCards);
        expect(result === null).to.equal(
          Object.entries(extra).every(([k, v]) => GATEWAY_ID_FIELDS.has(k) || !hasCardNumber(String(v))),
        );
        if (result) expect(json).to.deep.equal(JSON.parse(result.text));
      }),
      { numRuns: 2000 },
    );
  });
});
