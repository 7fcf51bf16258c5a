import { expect } from 'chai';
import { GatewayError } from '../../../src/client/errors.js';
import { inputRefusal } from '../../../src/merchant/checkout/input-refusal.js';
import { orderRuleErrors } from '../../../src/merchant/orders/order-rules.js';

describe('merchant: input the gateway would refuse (pure)', () => {
  describe('orderRuleErrors', () => {
    const rules = { currencies: ['EUR', 'JPY', 'KWD'] as const, maxAmount: '1000000.00' };
    it('takes a listed currency up to the maximum, exactly', () => {
      expect(orderRuleErrors(rules, 'EUR', 100_000_000)).to.equal(null);
      expect(orderRuleErrors(rules, 'JPY', 1_000_000)).to.equal(null);
      expect(orderRuleErrors(rules, 'KWD', 1_000_000_000)).to.equal(null);
    });
    it('refuses one minor unit above the maximum, in the currency of the order', () => {
      expect(orderRuleErrors(rules, 'EUR', 100_000_001)).to.deep.equal({
        amount: ['must be at most 1000000.00 EUR'],
      });
      expect(orderRuleErrors(rules, 'JPY', 1_000_001)?.amount?.[0]).to.contain('JPY');
      expect(orderRuleErrors(rules, 'KWD', 1_000_000_001)?.amount?.[0]).to.contain('KWD');
    });
    it('refuses a platform currency that is not listed, and names the ones that are', () => {
      expect(orderRuleErrors(rules, 'CHF', 100)).to.deep.equal({
        currency: ['is not a currency this shop takes (EUR, JPY, KWD)'],
      });
    });
  });

  describe('inputRefusal', () => {
    const error = (status: number, code: string, errors?: Record<string, string[]>) =>
      new GatewayError(status, code, `message of ${code}`, { errors });
    it('names the field of each refusal that happens before anything exists at the gateway', () => {
      expect(inputRefusal(error(400, 'ERR_PAYMENT_METHOD_NOT_ENABLED'), 'redirect')).to.deep.equal({
        payment_method: ['message of ERR_PAYMENT_METHOD_NOT_ENABLED'],
      });
      expect(inputRefusal(error(400, 'ERR_PAYMENT_METHOD_NOT_ENABLED'), 'card')).to.have.keys('currency');
      expect(
        inputRefusal(error(400, 'ERR_PAYMENT_METHOD_NOT_AVAILABLE_IN_COUNTRY'), 'redirect'),
      ).to.have.keys('customer.country_code');
      expect(inputRefusal(error(400, 'ERR_ADAPTER_INVALID_AMOUNT'), 'card')).to.have.keys('amount');
      expect(
        inputRefusal(error(422, 'ERR_VALIDATION', { 'customer.email': ['bad'] }), 'redirect'),
      ).to.deep.equal({ 'customer.email': ['bad'] });
    });
    it('is not a refusal of input when the card or the gateway said no', () => {
      for (const e of [
        error(402, 'ERR_CARD_DO_NOT_HONOR'),
        error(400, 'ERR_3DS_FAILED'),
        error(502, 'ERR_GATEWAY_ERROR'),
        error(409, 'ERR_DUPLICATE'),
        error(422, 'ERR_VALIDATION'),
      ])
        expect(inputRefusal(e, 'card'), e.code).to.equal(null);
    });
  });
});
