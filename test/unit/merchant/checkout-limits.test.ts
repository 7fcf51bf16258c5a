import { expect } from 'chai';
import { retryAfterOf } from '../../../src/infra/rate-limits.js';
import { orderKey } from '../../../src/merchant/http/limits.js';
import { countsTowardCap } from '../../../src/merchant/orders/attempt-cap.js';
import { addressKey, normalizeAddress } from '../../../src/shared/ip-address.js';

/** The pure parts of checkout's limits (docs/api.md, Limits): addresses, keys, the cap, Retry-After. */
describe('checkout limits: the pure parts', () => {
  describe('normalizeAddress: the client address as it is kept, counted and sent to the gateway', () => {
    const cases: [string | undefined, string | null][] = [
      ['203.0.113.9', '203.0.113.9'],
      [' 203.0.113.9 ', '203.0.113.9'],
      ['::ffff:127.0.0.1', '127.0.0.1'],
      ['::FFFF:192.0.2.1', '192.0.2.1'],
      ['2001:DB8::1', '2001:db8::1'],
      ['[2001:db8::1]', '2001:db8::1'],
      ['fe80::1%eth0', 'fe80::1'],
      ['::1', '::1'],
      ['203.0.113.9:443', null],
      ['999.1.1.1', null],
      ['not-an-address', null],
      ['unknown', null],
      ['', null],
      [undefined, null],
    ];
    for (const [given, expected] of cases)
      it(`${JSON.stringify(given)} -> ${JSON.stringify(expected)}`, () => {
        expect(normalizeAddress(given)).to.equal(expected);
      });
  });

  describe('addressKey: what a per-address limit counts under', () => {
    it('an IPv4 address is its own key', () => {
      expect(addressKey('203.0.113.9')).to.equal('203.0.113.9');
    });

    it('an IPv6 address counts under its /64, however it is written', () => {
      const key = '2001:db8:1:2::/64';
      for (const address of [
        '2001:db8:1:2::1',
        '2001:db8:1:2:ffff:ffff:ffff:ffff',
        '2001:0db8:0001:0002:0000:0000:0000:0009',
        '2001:db8:1:2:a:b:192.0.2.1',
      ])
        expect(addressKey(address), address).to.equal(key);
      expect(addressKey('2001:db8:1:3::1')).to.not.equal(key);
      expect(addressKey('::1')).to.equal('0:0:0:0::/64');
      expect(addressKey('2001:db8::')).to.equal('2001:db8:0:0::/64');
    });
  });

  describe('orderKey: which ids a per-order limit counts', () => {
    it('an order id counts; what cannot be one (a card number in the path, a long or odd one) is not counted', () => {
      expect(orderKey('ord_UhPNUspGPW4Ykvg5wglGzPUo')).to.equal('ord_UhPNUspGPW4Ykvg5wglGzPUo');
      expect(orderKey('4000000000003220')).to.equal(null);
      expect(orderKey(`ord_${'x'.repeat(25)}`)).to.equal(null);
      expect(orderKey('ord_UhPNUspGPW4Ykvg5wglGzP-o')).to.equal(null);
      expect(orderKey(undefined)).to.equal(null);
    });
  });

  describe('countsTowardCap: which failed attempts count toward MAX_FAILED_ATTEMPTS_PER_ORDER', () => {
    it("declines count: they are about the payer's card or money", () => {
      for (const code of [
        'ERR_CARD_DO_NOT_HONOR',
        'ERR_3DS_FAILED',
        'ERR_CARD_FRAUD_SUSPECTED',
        'ERR_3DS_TIMEOUT',
        null,
      ])
        expect(countsTowardCap(code), String(code)).to.equal(true);
    });

    it('a gateway that was down, busy or slow does not: the shopper may simply try again', () => {
      for (const code of [
        'GATEWAY_UNAVAILABLE',
        'GATEWAY_BUSY',
        'ERR_RATE_LIMITED',
        'ERR_GATEWAY_ERROR',
        'ERR_CARD_ISSUER_UNAVAILABLE',
        'HTTP_503',
      ])
        expect(countsTowardCap(code), code).to.equal(false);
      expect(countsTowardCap('HTTP_404')).to.equal(true);
    });
  });

  describe('retryAfterOf: Retry-After from the time left in the window', () => {
    it('whole seconds, rounded up, never 0', () => {
      expect(retryAfterOf(0)).to.equal(1);
      expect(retryAfterOf(1)).to.equal(1);
      expect(retryAfterOf(1000)).to.equal(1);
      expect(retryAfterOf(1001)).to.equal(2);
      expect(retryAfterOf(59_999)).to.equal(60);
    });
  });
});
