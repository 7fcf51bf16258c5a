import { expect } from 'chai';
import {
  ANONYMOUS_SCOPE,
  canonical,
  keyDigest,
  keyExpiresAt,
  keyLive,
  keyProblem,
  keyScope,
  ORDER_KEY_WINDOW_MS,
  requestDigest,
} from '../../../src/merchant/orders/order-requests.js';

/** Issue 43, part 1: whose key a key is, and what "the same body" means, without I/O. */
describe('merchant: the Idempotency-Keys of POST /orders (pure)', () => {
  it('a key belongs to its credential, or to every caller without one', () => {
    expect(keyScope('opr_abc')).to.equal('opr_abc');
    expect(keyScope('bootstrap')).to.equal('bootstrap');
    expect(keyScope(null)).to.equal(ANONYMOUS_SCOPE);
    expect(keyDigest('opr_a', 'k')).to.not.equal(keyDigest('opr_b', 'k'));
    expect(keyDigest('opr_a', 'k')).to.equal(keyDigest('opr_a', 'k'));
    // The scope and the key cannot run into each other.
    expect(keyDigest('opr_a', 'b\nc')).to.not.equal(keyDigest('opr_a\nb', 'c'));
    expect(keyDigest('anonymous', '4242424242424242')).to.match(/^[A-Za-z0-9_-]{43}$/);
  });

  it('a short key is refused only where every caller shares the keys', () => {
    expect(keyProblem(ANONYMOUS_SCOPE, 'cart-1')).to.contain('at least 16 characters');
    expect(keyProblem(ANONYMOUS_SCOPE, '0123456789abcdef')).to.equal(null);
    expect(keyProblem('opr_abc', 'cart-1')).to.equal(null);
  });

  it('the same order asked for in other words is the same request; any other field is another', () => {
    const base = {
      amountMinor: 1250,
      currency: 'EUR',
      reference: 'shop-1',
      description: 'mugs',
      customer: { email: 'ada@example.com', last_name: 'Lovelace', address: { city: 'London', zip: 'N1' } },
    };
    const same = requestDigest(base);
    expect(
      requestDigest({
        customer: { address: { zip: 'N1', city: 'London' }, last_name: 'Lovelace', email: 'ada@example.com' },
        description: 'mugs',
        reference: 'shop-1',
        currency: 'EUR',
        amountMinor: 1250,
      }),
    ).to.equal(same);
    expect(requestDigest({ ...base, customer: { ...base.customer, phone: null } })).to.equal(same);
    for (const other of [
      { amountMinor: 1251 },
      { currency: 'GBP' },
      { reference: 'shop-2' },
      { reference: undefined },
      { description: 'mug' },
      { description: '' },
      { customer: { ...base.customer, email: 'bob@example.com' } },
      { customer: null },
    ])
      expect(requestDigest({ ...base, ...other }), JSON.stringify(other)).to.not.equal(same);
    expect(requestDigest({ amountMinor: 1, currency: 'EUR' })).to.equal(
      requestDigest({ amountMinor: 1, currency: 'EUR', reference: null, description: null, customer: null }),
    );
  });

  it('canonical JSON sorts keys at every depth and leaves out nulls', () => {
    expect(canonical({ b: 1, a: [{ d: null, c: 'x' }], e: undefined })).to.equal('{"a":[{"c":"x"}],"b":1}');
    expect(canonical('x')).to.equal('"x"');
    expect(canonical(null)).to.equal('null');
  });

  it('a key lives 24 hours from when it was stored', () => {
    const at = new Date(Date.UTC(2026, 10, 29, 12));
    const until = keyExpiresAt(at);
    expect(until.getTime() - at.getTime())
      .to.equal(ORDER_KEY_WINDOW_MS)
      .and.equal(24 * 3_600_000);
    expect(keyLive(until, until.getTime() - 1)).to.equal(true);
    expect(keyLive(until, until.getTime())).to.equal(false);
  });
});
