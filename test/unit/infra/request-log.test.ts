import { expect } from 'chai';
import { loggedPath } from '../../../src/infra/request-log.js';

describe('infra: the path a request line logs (loggedPath)', () => {
  it('a path without a card number is logged as sent', () => {
    expect(loggedPath('/orders/ord_abc%20x')).to.equal('/orders/ord_abc%20x');
    expect(loggedPath('/orders/%E0%A4%A')).to.equal('/orders/%E0%A4%A');
  });

  it('a card number in the path is masked, however it is escaped', () => {
    expect(loggedPath('/orders/4242424242424242')).to.equal('/orders/[card number]');
    expect(loggedPath('/orders/ref%204000%200000%200000%203220')).to.equal('/orders/ref [card number]');
    expect(loggedPath('/orders/4000-0000-0000-3220')).to.equal('/orders/[card number]');
  });

  it('a stray % elsewhere (which decodeURIComponent refuses) does not hide a card number', () => {
    // Found by the routes' fuzzer: the whole path failed to decode, and was logged as sent.
    const logged = loggedPath('/customers/%/cards/4000%200000%200000%203097');
    expect(logged).to.not.match(/4000/);
    expect(logged).to.equal('/customers/%/cards/[card number]');
  });

  it('escapes beyond ASCII are decoded as UTF-8: their hex never runs into a card number after them', () => {
    expect(loggedPath('/orders/na%C3%AFve%204242424242424242')).to.equal('/orders/naïve [card number]');
    // Found by the routes' fuzzer: U+2008 left escaped read as the digits 884000-0000-0000-0002.
    const logged = loggedPath('/unmatched-money/%E3%89%95%E2%80%884000-0000-0000-0002%20%E1%BE%96/resolve');
    expect(logged).to.equal('/unmatched-money/\u3255\u2008[card number] \u1F96/resolve');
    expect(loggedPath('/orders/%FF%FE4242424242424242')).to.equal('/orders/\uFFFD\uFFFD[card number]');
  });

  it("a payment link's token is never logged, however its path is spelled", () => {
    const token = `plt_${'A'.repeat(43)}`;
    expect(loggedPath(`/pay/${token}`)).to.equal('/pay/[token]');
    expect(loggedPath(`/PAY/${token}`)).to.equal('/pay/[token]');
    expect(loggedPath('/pay/plt_%41%41')).to.equal('/pay/[token]');
    expect(loggedPath(`/pay/${token}/4242424242424242`)).to.equal('/pay/[token]/[card number]');
    expect(loggedPath('/payment-methods')).to.equal('/payment-methods');
  });
});
