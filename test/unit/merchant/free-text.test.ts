import { expect } from 'chai';
import { HttpError } from '../../../src/merchant/errors/http-error.js';
import { parse } from '../../../src/merchant/http/errors.js';
import {
  createOrderSchema,
  payCardSchema,
  payRedirectSchema,
  refundSchema,
  voidSchema,
} from '../../../src/merchant/http/schemas.js';

/**
 * merchant.md, Card data: the kit keeps no card number. Free text it keeps (a reference, a
 * description, a customer's fields, a reason) is refused with a 422 naming the field when it holds
 * one; `card` is the one place for card data.
 */
describe('merchant: no card number in the free text of a request', () => {
  /** The `errors` of the 422 a body gets, or null when it is accepted. */
  const refusal = (schema: Parameters<typeof parse>[0], body: unknown) => {
    try {
      parse(schema, body);
      return null;
    } catch (error) {
      expect(error).to.be.instanceOf(HttpError);
      expect((error as HttpError).status).to.equal(422);
      return (error as HttpError).extra.errors;
    }
  };
  const NOPE = ['must not hold a card number'];
  const order = { amount: '12.34', currency: 'EUR' };
  const card = { number: '4242424242424242', exp_month: 12, exp_year: 2034, cvv: '123' };

  it('refuses one in a reference, a description, a customer field, a method or a reason, naming the field', () => {
    expect(refusal(createOrderSchema, { ...order, reference: 'ref-4242424242424242' })).to.deep.equal({
      reference: NOPE,
    });
    expect(refusal(createOrderSchema, { ...order, description: 'card 4242 4242 4242 4242' })).to.deep.equal({
      description: NOPE,
    });
    expect(
      refusal(createOrderSchema, {
        ...order,
        customer: { first_name: '4000-0000-0000-3220', email: '4000000000000002@example.com' },
      }),
    ).to.deep.equal({ 'customer.first_name': NOPE, 'customer.email': NOPE });
    expect(refusal(payRedirectSchema, { payment_method: '4242424242424242' })).to.deep.equal({
      payment_method: NOPE,
    });
    expect(refusal(refundSchema, { amount: '1', reason: 'refund 4242424242424242' })).to.deep.equal({
      reason: NOPE,
    });
    expect(refusal(voidSchema, { reason: '4242424242424242' })).to.deep.equal({ reason: NOPE });
    expect(refusal(payCardSchema, { card, customer: { last_name: '4242424242424242' } })).to.deep.equal({
      'customer.last_name': NOPE,
    });
  });

  it('takes the card where it belongs, and free text without one', () => {
    expect(refusal(payCardSchema, { card, customer: { first_name: 'Ada' } })).to.equal(null);
    expect(refusal(payCardSchema, { card, customer: { address: 'Flat 4242, 4 Privet Drive' } })).to.equal(
      null,
    );
    expect(
      refusal(createOrderSchema, { ...order, reference: '20261123000123', description: 'A book' }),
    ).to.equal(null);
  });
});
