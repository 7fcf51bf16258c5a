import { expect } from 'chai';
import { count } from '../../support/db.js';
import { card } from '../../support/gateway.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * issue 8, part 5: input the gateway refuses before any attempt exists is a 4xx naming the field, and
 * the order stays as it was; orders the merchant cannot take are refused when they are created.
 */
describe('merchant: a typo fails nothing', () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
  });
  after(async () => {
    await t?.close();
  });

  const newOrder = async (amount = '12.34', currency = 'EUR') => {
    const created = await t.call('POST', '/orders', { body: { amount, currency } });
    expect(created.status, created.text).to.equal(201);
    return created.body.data.order as { id: string; reference: string };
  };
  const payRedirect = (id: string, body: unknown) => t.call('POST', `/orders/${id}/pay/redirect`, { body });

  /** What a refused attempt must leave as it was: status, attempt, failure, amounts, history. */
  const essentials = async (id: string) => {
    const o = await getOrder(t, id);
    return {
      status: o.status,
      payment: o.payment,
      failure_code: o.failure_code,
      captured_amount: o.captured_amount,
      refunded_amount: o.refunded_amount,
      history: o.history,
    };
  };

  describe('POST /orders/{id}/pay/card', () => {
    // The gateway's own checks of what was typed (sandbox.md section 4): nothing recorded there.
    const cases: [string, Record<string, unknown>, string[], string][] = [
      [
        'a number failing Luhn (a typo)',
        { number: '4242424242424241' },
        ['card.number'],
        'ERR_INVALID_ACCOUNT_NUMBER',
      ],
      [
        'a past expiry',
        { exp_month: 1, exp_year: 2020 },
        ['card.exp_month', 'card.exp_year'],
        'ERR_EXPIRED_CARD',
      ],
    ];
    for (const [what, typed, fields, code] of cases) {
      it(`${what}: 422 ${code} naming ${fields.join(' and ')}; the order as it was, and no failure counted`, async () => {
        const order = await newOrder();
        const before = await essentials(order.id);
        const bad = { ...card('4242424242424242'), ...typed };
        // More tries than the failed-attempt cap (5): a typo is the shopper's to fix, never a lock-out.
        for (let i = 0; i < 6; i += 1) {
          const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
            body: { mode: 'sale', card: bad },
          });
          expect(pay.status, pay.text).to.equal(422);
          expect(pay.body.code).to.equal(code);
          expect(Object.keys(pay.body.errors).sort()).to.deep.equal(fields);
        }
        expect(await essentials(order.id)).to.deep.equal(before);
        expect(await count(t, 'payment_attempts', { order_id: order.id })).to.equal(0);
        const good = await t.call('POST', `/orders/${order.id}/pay/card`, {
          body: { mode: 'sale', card: card('4242424242424242') },
        });
        expect(good.status, good.text).to.equal(200);
        expect(good.body.data.order.status).to.equal('paid');
      });
    }

    it("the issuer's own 'expired' (4000000000000069, a future expiry) is a decline: 402, the order failed", async () => {
      const order = await newOrder();
      const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { mode: 'sale', card: card('4000000000000069') },
      });
      expect(pay.status, pay.text).to.equal(402);
      expect(pay.body.code).to.equal('ERR_EXPIRED_CARD');
      expect((await getOrder(t, order.id)).status).to.equal('failed');
    });
  });

  describe('POST /orders/{id}/pay/redirect', () => {
    const cases: [string, unknown, string, string][] = [
      ['a method nobody offers (bitcoin)', { payment_method: 'bitcoin' }, 'payment_method', 'EUR'],
      [
        'iDEAL in USD',
        { payment_method: 'ideal', customer: { country_code: 'NL' } },
        'payment_method',
        'USD',
      ],
      [
        'iDEAL for a German customer',
        { payment_method: 'ideal', customer: { country_code: 'DE' } },
        'customer.country_code',
        'EUR',
      ],
    ];
    for (const [what, body, field, currency] of cases) {
      it(`${what}: 422 naming ${field}; the new order stays pending with no attempt and no history`, async () => {
        const order = await newOrder('12.34', currency);
        const before = await essentials(order.id);
        const pay = await payRedirect(order.id, body);
        expect(pay.status, pay.text).to.equal(422);
        expect(pay.body.success).to.equal(false);
        expect(Object.keys(pay.body.errors)).to.deep.equal([field]);
        expect(pay.body.errors[field][0]).to.be.a('string').and.not.equal('');
        expect(pay.body.data.order.status).to.equal('pending');
        expect(await essentials(order.id)).to.deep.equal(before);
        expect(await count(t, 'payment_attempts', { order_id: order.id })).to.equal(0);
      });
    }

    it('after a declined card, a typo leaves the order failed with its decline; a good method then works', async () => {
      const order = await newOrder();
      const declined = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { mode: 'sale', card: card('4000000000000002') },
      });
      expect(declined.status, declined.text).to.equal(402);
      const before = await essentials(order.id);
      expect(before.status).to.equal('failed');

      const typo = await payRedirect(order.id, { payment_method: 'bitcoin' });
      expect(typo.status, typo.text).to.equal(422);
      expect(await essentials(order.id)).to.deep.equal(before);

      const good = await payRedirect(order.id, { payment_method: 'psc' });
      expect(good.status, good.text).to.equal(200);
      expect(good.body.data.next_action.type).to.equal('redirect');
      expect(good.body.data.order.status).to.equal('requires_action');
    });
  });

  describe('POST /orders', () => {
    it('a currency the shop does not take (CHF, a platform currency) is 422 naming currency; nothing stored', async () => {
      const before = await count(t, 'orders');
      const res = await t.call('POST', '/orders', { body: { amount: '10.00', currency: 'CHF' } });
      expect(res.status, res.text).to.equal(422);
      expect(res.body.errors.currency[0]).to.match(/EUR, USD, GBP, JPY/);
      expect(await count(t, 'orders')).to.equal(before);
    });

    it("above the gateway's maximum is 422 naming amount; the maximum itself is taken, in every currency", async () => {
      for (const [amount, currency] of [
        ['1000000.01', 'EUR'],
        ['1000001', 'JPY'],
      ]) {
        const res = await t.call('POST', '/orders', { body: { amount, currency } });
        expect(res.status, `${amount} ${currency}: ${res.text}`).to.equal(422);
        expect(res.body.errors.amount[0]).to.contain(currency);
      }
      await newOrder('1000000.00', 'EUR');
      await newOrder('1000000', 'JPY');
    });

    it('everything wrong at once is named in one answer: the amount for its currency beside the other fields', async () => {
      const before = await count(t, 'orders');
      const res = await t.call('POST', '/orders', {
        body: {
          amount: '12.345',
          currency: 'EUR',
          reference: 'has spaces',
          customer: { email: 'not an email' },
        },
      });
      expect(res.status, res.text).to.equal(422);
      expect(Object.keys(res.body.errors).sort(), res.text).to.deep.equal([
        'amount',
        'customer.email',
        'reference',
      ]);
      expect(res.body.errors.amount[0]).to.contain('EUR');
      // A currency of its own wrong: no amount to judge against it, the currency alone is named for both.
      const badCurrency = await t.call('POST', '/orders', { body: { amount: '12.345', currency: 'euro' } });
      expect(Object.keys(badCurrency.body.errors), badCurrency.text).to.deep.equal(['currency']);
      expect(await count(t, 'orders')).to.equal(before);
    });
  });

  describe('configured: ORDER_CURRENCIES=EUR, ORDER_MAX_AMOUNT=500', () => {
    let small: TestKit;
    before(async () => {
      small = await startTestKit({ env: { ROLES: 'api', ORDER_CURRENCIES: 'EUR', ORDER_MAX_AMOUNT: '500' } });
    });
    after(async () => {
      await small?.close();
    });

    it('USD is refused, 500.01 EUR is refused, 500 EUR is taken', async () => {
      const usd = await small.call('POST', '/orders', { body: { amount: '5.00', currency: 'USD' } });
      expect(usd.status).to.equal(422);
      expect(usd.body.errors.currency[0]).to.contain('(EUR)');
      const over = await small.call('POST', '/orders', { body: { amount: '500.01', currency: 'EUR' } });
      expect(over.status).to.equal(422);
      expect(over.body.errors.amount).to.deep.equal(['must be at most 500.00 EUR']);
      const max = await small.call('POST', '/orders', { body: { amount: '500', currency: 'EUR' } });
      expect(max.status, max.text).to.equal(201);
    });
  });
});
