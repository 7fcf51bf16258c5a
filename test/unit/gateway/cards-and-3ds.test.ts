import { expect } from 'chai';
import fc from 'fast-check';
import { cardExpired, luhnValid, testCard } from '../../../src/gateway/domain/cards.js';
import {
  CHALLENGE_LIFETIME_MS,
  checkVerification,
  effectiveStatus,
  VERIFICATION_VALIDITY_MS,
  type Verification,
} from '../../../src/gateway/domain/three-ds.js';

describe('cards (pure)', () => {
  it('Luhn accepts the test cards and rejects a changed digit', () => {
    for (const n of ['4242424242424242', '4000000000003220', '4100000000000019', '4000000000009987']) {
      expect(luhnValid(n), n).to.equal(true);
    }
    expect(luhnValid('4242424242424241')).to.equal(false);
    expect(luhnValid('42424242')).to.equal(false);
  });

  it('property: changing any one digit of a valid number breaks Luhn', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 1, max: 9 }), (position, delta) => {
        const digits = '4242424242424242'.split('').map(Number);
        digits[position] = (digits[position]! + delta) % 10;
        expect(luhnValid(digits.join(''))).to.equal(false);
      }),
    );
  });

  it('a card is valid through the last moment of its expiry month', () => {
    expect(cardExpired(11, 2026, Date.UTC(2026, 10, 30, 23, 59, 59))).to.equal(false);
    expect(cardExpired(11, 2026, Date.UTC(2026, 11, 1))).to.equal(true);
    expect(cardExpired(12, 2026, Date.UTC(2026, 11, 31, 23))).to.equal(false);
  });

  it('an unlisted card is frictionless and approved; listed ones follow the table', () => {
    expect(testCard('5555555555554444')).to.deep.equal({
      threeDs: { kind: 'frictionless', eci: '05' },
      issuer: { kind: 'approve' },
    });
    expect(testCard('4000000000003220').issuer).to.deep.equal({ kind: 'requires_3ds' });
    expect(testCard('4100000000000019').issuer).to.deep.equal({
      kind: 'decline',
      code: 'ERR_CARD_FRAUD_SUSPECTED',
      doNotRetryAfter: true,
    });
  });
});

describe('3DS verification rules (pure)', () => {
  const T0 = Date.UTC(2026, 10, 1);
  const v: Verification = {
    id: 1,
    publicId: 'tds_x',
    merchantId: 1001,
    cardFingerprint: 'fp',
    amount: 500,
    currency: 'EUR',
    status: 'full_auth',
    authType: 'frictionless',
    eci: '05',
    cavv: 'c',
    dsTransId: 'd',
    authUrl: 'https://shop.test/r',
    createdAt: T0,
    updatedAt: T0,
  };
  const facts = { merchantId: 1001, cardFingerprint: 'fp', amount: 500, currency: 'EUR' as const };

  it('an open challenge fails at exactly ten minutes', () => {
    const pending = { ...v, status: 'pending' as const, authType: 'challenge' as const };
    expect(effectiveStatus(pending, T0 + CHALLENGE_LIFETIME_MS - 1)).to.equal('pending');
    expect(effectiveStatus(pending, T0 + CHALLENGE_LIFETIME_MS)).to.equal('failed');
  });

  it('is valid for the same merchant, card, amount and currency for 30 minutes', () => {
    expect(checkVerification(v, facts, T0 + VERIFICATION_VALIDITY_MS)).to.deep.equal({ ok: true });
    expect(checkVerification(v, facts, T0 + VERIFICATION_VALIDITY_MS + 1)).to.include({
      code: 'ERR_3DS_TIMEOUT',
    });
    for (const other of [
      { merchantId: 1002 },
      { cardFingerprint: 'other' },
      { amount: 501 },
      { currency: 'USD' as const },
    ]) {
      expect(checkVerification(v, { ...facts, ...other }, T0)).to.include({
        ok: false,
        code: 'ERR_3DS_FAILED',
      });
    }
    expect(checkVerification({ ...v, status: 'failed' }, facts, T0)).to.include({ code: 'ERR_3DS_FAILED' });
  });

  it("a missing record and another merchant's record are refused alike, as not existing", () => {
    const missing = checkVerification(undefined, facts, T0);
    expect(missing).to.deep.equal({
      ok: false,
      code: 'ERR_3DS_FAILED',
      message: 'The card verification does not exist.',
    });
    expect(checkVerification(v, { ...facts, merchantId: 1002 }, T0)).to.deep.equal(missing);
  });
});
