import { expect } from 'chai';
import { withoutCustomer } from '../../../src/merchant/checkout/hold.js';
import { CustomerTokens } from '../../../src/merchant/customers/customer-token.js';
import {
  detailWithout,
  ERASED,
  erasedCustomer,
  erasureDetail,
  isErased,
  personalValues,
  scrubJson,
  withoutValues,
} from '../../../src/merchant/customers/erasure.js';

/** Issue 43, part 4: the pure rules of forgetting a customer. */
describe('merchant: erasure rules (issue 43, part 4)', () => {
  const ada = {
    merchant_customer_id: 'cus-42',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: 'ada@example.com',
    ip_address: '203.0.113.9',
    country_code: 'GB',
  };
  const values = personalValues(ada, 'cus-42');

  it('the marker says erased and when; it is recognised, a customer is not', () => {
    const marker = erasedCustomer(new Date('2026-11-30T10:00:00Z'));
    expect(marker).to.deep.equal({ erased: true, erased_at: '2026-11-30T10:00:00.000Z' });
    expect(isErased({ ...marker })).to.equal(true);
    expect(isErased(ada)).to.equal(false);
    expect(isErased(null)).to.equal(false);
  });

  it("the person's values are every text but the country, and their id", () => {
    expect(values).to.have.members(['cus-42', 'Ada', 'Lovelace', 'ada@example.com', '203.0.113.9']);
    expect(personalValues(null, 'c1')).to.deep.equal(['c1']);
  });

  it('a text loses each value, in any case; a short value only as the whole text', () => {
    expect(withoutValues('Order for ADA@example.com', values)).to.equal(`Order for ${ERASED}`);
    expect(withoutValues('ada', values)).to.equal(ERASED);
    expect(withoutValues('Adamant', values)).to.equal(`${ERASED}mant`);
    expect(withoutValues('nothing here', values)).to.equal('nothing here');
    expect(withoutValues('Al', ['Al'])).to.equal(ERASED);
    expect(withoutValues('Also', ['Al'])).to.equal('Also');
  });

  it('a payload loses personal keys at any depth and personal values in other texts; the money stays byte for byte', () => {
    const payload = {
      id: 'evt_1',
      type: 'transaction.captured',
      data: {
        transaction: {
          id: 100001,
          merchant_trans_id: 'ada@example.com',
          status: 'captured',
          amount: 1234,
          currency: 'EUR',
          description: 'for Lovelace',
          ip_address: '203.0.113.9',
          customer: { email: 'ada@example.com', nested: [{ first_name: 'Ada' }] },
          notes: ['cus-42 asked', 7, null],
        },
      },
    };
    const scrubbed = JSON.parse(scrubJson(JSON.stringify(payload), values));
    expect(scrubbed.data.transaction).to.deep.equal({
      ...payload.data.transaction,
      description: `for ${ERASED}`,
      ip_address: ERASED,
      customer: ERASED,
      notes: [`${ERASED} asked`, 7, null],
    });
    // The reference is the money's: kept even when a shop made it of an email address.
    expect(scrubbed.data.transaction.merchant_trans_id).to.equal('ada@example.com');
    const clean = JSON.stringify({ id: 'evt_2', data: { transaction: { id: 1, amount: 5 } } });
    expect(scrubJson(clean, values)).to.equal(clean);
    expect(scrubJson('not json ada@example.com', values)).to.equal(`not json ${ERASED}`);
    // A key spelt __proto__ is a value like any other.
    const proto = '{"__proto__":{"email":"ada@example.com"}}';
    expect(JSON.parse(scrubJson(proto, values))).to.deep.equal(
      JSON.parse(`{"__proto__":{"email":"${ERASED}"}}`),
    );
  });

  it('an audit detail loses the id where it names the customer, and only there', () => {
    expect(detailWithout('customer cus-42', 'cus-42', 'cer_x')).to.equal('customer cer_x');
    expect(detailWithout('customer cus-42: lists cards', 'cus-42', 'cer_x')).to.equal(
      'customer cer_x: lists cards',
    );
    expect(detailWithout('customer cus-42, the same key again', 'cus-42', 'cer_x')).to.equal(
      'customer cer_x, the same key again',
    );
    expect(detailWithout('customer cus-420: lists cards', 'cus-42', 'cer_x')).to.equal(
      'customer cus-420: lists cards',
    );
    expect(detailWithout('customer cus:1: pays', 'cus', 'cer_x')).to.equal('customer cus:1: pays');
    expect(detailWithout('customer a.b*: pays', 'a.b*', 'cer_x')).to.equal('customer cer_x: pays');
  });

  it("a held payment keeps its card and mode, nothing of the customer's", () => {
    const hold = {
      card: { number: '4242424242424242', exp_month: 12, exp_year: 2034, cvv: '123' },
      mode: 'sale' as const,
      customer: { email: 'ada@example.com' },
      browserIp: '203.0.113.9',
      saveFor: 'cus-42',
    };
    expect(withoutCustomer(hold)).to.deep.equal({ card: hold.card, mode: 'sale' });
  });

  it("a customer's reference: cer_ and 32 hex, the same for the same id and key, never the id", () => {
    const key = Buffer.alloc(32, 9);
    const tokens = new CustomerTokens(key);
    const a = tokens.erasureReference('cus-42');
    expect(a).to.match(/^cer_[0-9a-f]{32}$/);
    expect(new CustomerTokens(key).erasureReference('cus-42')).to.equal(a);
    expect(tokens.erasureReference('cus-43')).to.not.equal(a);
    expect(new CustomerTokens(Buffer.alloc(32, 8)).erasureReference('cus-42')).to.not.equal(a);
    expect(a).to.not.contain('cus');
  });

  it('the audit line says what the erasure did, in numbers', () => {
    expect(
      erasureDetail({
        reference: 'cer_x',
        erasedAt: new Date(0),
        orders: 3,
        cardsRevoked: 1,
        cardsRemoved: 2,
        webhookEvents: 4,
        orderEvents: 5,
        heldPayments: 0,
        auditLines: 6,
      }),
    ).to.equal(
      'orders 3, saved cards 2 (1 revoked at the gateway), webhook events 4, order events 5, held payments 0, audit lines 6',
    );
  });
});
