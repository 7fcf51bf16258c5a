import { expect } from 'chai';
import {
  CUSTOMER_TOKEN_LIFETIME_MS,
  CustomerTokens,
} from '../../../src/merchant/customers/customer-token.js';
import {
  cardExpired,
  cardLabel,
  cardRefusal,
  customerIdProblem,
} from '../../../src/merchant/customers/saved-card.js';
import { cardBrand } from '../../../src/shared/card-numbers.js';

describe('merchant: saved cards, the pure parts (issue 21)', () => {
  describe('customer tokens', () => {
    const key = new Uint8Array(32).fill(7);
    const tokens = new CustomerTokens(key);
    const now = Date.UTC(2026, 10, 24, 12);

    it('a token is good for its customer until it lapses, and for nobody else', () => {
      const { token, expiresAt } = tokens.issue('cus-1', now);
      expect(token).to.match(/^ct1\.\d+\.[A-Za-z0-9_-]{43}$/);
      expect(expiresAt.getTime()).to.equal(now + CUSTOMER_TOKEN_LIFETIME_MS);
      expect(tokens.verify('cus-1', token, now)).to.equal(true);
      expect(tokens.verify('cus-1', token, now + CUSTOMER_TOKEN_LIFETIME_MS - 1000)).to.equal(true);
      expect(tokens.verify('cus-1', token, now + CUSTOMER_TOKEN_LIFETIME_MS)).to.equal(false);
      expect(tokens.verify('cus-2', token, now)).to.equal(false);
      expect(tokens.verify('cus-10', tokens.issue('cus-1', now).token, now)).to.equal(false);
    });

    it('a token altered anywhere, or made under another key, is refused', () => {
      const { token } = tokens.issue('cus-1', now);
      const [v, exp, mac] = token.split('.') as [string, string, string];
      const later = String(Number(exp) + 3600);
      for (const bad of [
        `${v}.${later}.${mac}`,
        `ct2.${exp}.${mac}`,
        `${v}.${exp}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
        `${v}.${exp}.`,
        `${v}.${exp}`,
        '',
        'garbage',
        `${v}.-1.${mac}`,
      ])
        expect(tokens.verify('cus-1', bad, now), bad).to.equal(false);
      const other = new CustomerTokens(new Uint8Array(32).fill(8));
      expect(other.verify('cus-1', token, now)).to.equal(false);
    });

    it('a token minted for an order grants paying that order, naming the credential that vouched; altered, it grants nothing', () => {
      const { token } = tokens.issue('cus-1', now, { orderId: 'ord_abc', credential: 'opr_shop' });
      expect(token).to.match(/^ct2\.\d+\.ord_abc\.opr_shop\.[A-Za-z0-9_-]{43}$/);
      expect(tokens.grant('cus-1', token, now)).to.deep.equal({ orderId: 'ord_abc', credential: 'opr_shop' });
      expect(tokens.grant('cus-1', tokens.issue('cus-1', now).token, now)).to.deep.equal({ orderId: null });
      const [v, exp, , credential, mac] = token.split('.') as [string, string, string, string, string];
      for (const bad of [
        `${v}.${exp}.ord_xyz.${credential}.${mac}`,
        `${v}.${exp}.ord_abc.bootstrap.${mac}`,
        `ct1.${exp}.${mac}`,
        `${v}.${exp}.ord.abc.${credential}.${mac}`,
      ])
        expect(tokens.grant('cus-1', bad, now), bad).to.equal(null);
      expect(tokens.grant('cus-2', token, now), "another customer's").to.equal(null);
      expect(tokens.grant('cus-1', token, now + CUSTOMER_TOKEN_LIFETIME_MS), 'lapsed').to.equal(null);
    });

    it("after a key rotation, a live token the previous key signed still checks; new ones are the new key's", () => {
      const before = tokens.issue('cus-1', now).token;
      const rotated = new CustomerTokens(new Uint8Array(32).fill(8), [key]);
      expect(rotated.verify('cus-1', before, now)).to.equal(true);
      expect(rotated.verify('cus-2', before, now), 'still its own customer alone').to.equal(false);
      expect(rotated.verify('cus-1', before, now + CUSTOMER_TOKEN_LIFETIME_MS), 'still lapses').to.equal(
        false,
      );
      const after = rotated.issue('cus-1', now).token;
      expect(tokens.verify('cus-1', after, now), 'not under the previous key').to.equal(false);
      expect(new CustomerTokens(new Uint8Array(32).fill(8)).verify('cus-1', after, now)).to.equal(true);
    });
  });

  it('brands as the gateway names them: visa, mastercard (51-55, 2221-2720), amex (34, 37), other', () => {
    const cases: [string, string][] = [
      ['4242424242424242', 'visa'],
      ['5105105105105100', 'mastercard'],
      ['5555555555554444', 'mastercard'],
      ['2221000000000009', 'mastercard'],
      ['2720990000000007', 'mastercard'],
      ['2220990000000008', 'other'],
      ['2721000000000004', 'other'],
      ['5000000000000009', 'other'],
      ['5600000000000003', 'other'],
      ['378282246310005', 'amex'],
      ['341111111111111', 'amex'],
      ['6011111111111117', 'other'],
    ];
    for (const [number, brand] of cases) expect(cardBrand(number), number).to.equal(brand);
  });

  it('a card is good through the last moment of its expiry month (UTC)', () => {
    const card = { exp_month: 11, exp_year: 2026 };
    expect(cardExpired(card, Date.UTC(2026, 10, 30, 23, 59, 59, 999))).to.equal(false);
    expect(cardExpired(card, Date.UTC(2026, 11, 1))).to.equal(true);
    expect(cardExpired({ exp_month: 12, exp_year: 2026 }, Date.UTC(2026, 11, 31, 23))).to.equal(false);
    expect(cardExpired({ exp_month: 12, exp_year: 2026 }, Date.UTC(2027, 0, 1))).to.equal(true);
  });

  it('a card refused: removed before expired; the field message says when it expired', () => {
    const now = Date.UTC(2027, 0, 5);
    expect(cardRefusal({ status: 'active', exp_month: 1, exp_year: 2027 }, now)).to.equal(null);
    expect(cardRefusal({ status: 'revoked', exp_month: 1, exp_year: 2020 }, now)?.code).to.equal(
      'CARD_REVOKED',
    );
    const expired = cardRefusal({ status: 'active', exp_month: 3, exp_year: 2026 }, now);
    expect(expired).to.deep.include({ code: 'CARD_EXPIRED', field: 'expired at the end of 03/2026' });
  });

  it('labels and customer ids', () => {
    expect(cardLabel({ brand: 'visa', last4: '4242', exp_month: 3, exp_year: 2030 })).to.equal(
      'visa •••• 4242, 03/2030',
    );
    for (const good of ['cus-1', 'user@example.com', 'x'.repeat(255)])
      expect(customerIdProblem(good)).to.equal(null);
    for (const bad of ['', 'x'.repeat(256), 'has space', 'tab\t', 'émile'])
      expect(customerIdProblem(bad), bad).to.be.a('string');
    // As an order's customer is: the id is kept, logged and sent to the gateway.
    for (const card of ['4242424242424242', 'cus-4242-4242-4242-4242', '4111111111111111'])
      expect(customerIdProblem(card), card).to.equal('must not hold a card number');
    expect(customerIdProblem('cus-20261127000123')).to.equal(null);
  });
});
