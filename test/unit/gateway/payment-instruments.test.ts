import { expect } from 'chai';
import { cardBrand, tokenIssuerOutcome } from '../../../src/gateway/domain/cards.js';
import { type InitiationFacts, planInitiation } from '../../../src/gateway/domain/initiation.js';
import {
  instrumentExpired,
  instrumentToKeep,
  instrumentView,
  type PaymentInstrument,
  revoked,
  type SaveFacts,
  usableInstrument,
} from '../../../src/gateway/domain/instruments.js';
import { DECLINES_ONCE_SAVED, luhnNumber } from '../../support/gateway.js';

/** Payment instruments, card on file (sandbox.md section 11), decided without I/O. */

const NOW = Date.UTC(2026, 10, 1, 12);
const LATER = NOW + 60_000;
const CHALLENGE_CARD = '4000000000003220';

function saveFacts(overrides: Partial<SaveFacts> = {}): SaveFacts {
  return {
    merchantId: 1001,
    merchantCustomerId: 'cust-1',
    card: { number: '4242424242424242', expMonth: 12, expYear: 2034, name: 'Ada Lovelace' },
    fingerprint: 'fp-4242',
    existing: undefined,
    newToken: 'vt_AAAAAAAAAAAAAAAAAAAAAAAA',
    now: NOW,
    ...overrides,
  };
}

describe('payment instruments (pure)', () => {
  describe('brand, from the first digits', () => {
    const cases: [string, string][] = [
      [luhnNumber('4'), 'visa'],
      ['4242424242424242', 'visa'],
      [luhnNumber('51'), 'mastercard'],
      [luhnNumber('53'), 'mastercard'],
      [luhnNumber('55'), 'mastercard'],
      [luhnNumber('2221'), 'mastercard'],
      [luhnNumber('2500'), 'mastercard'],
      [luhnNumber('2720'), 'mastercard'],
      [luhnNumber('34', 15), 'amex'],
      [luhnNumber('37', 15), 'amex'],
      [luhnNumber('50'), 'other'],
      [luhnNumber('56'), 'other'],
      [luhnNumber('2220'), 'other'],
      [luhnNumber('2721'), 'other'],
      [luhnNumber('35'), 'other'],
      [luhnNumber('36', 14), 'other'],
      [luhnNumber('6011'), 'other'],
    ];
    for (const [number, brand] of cases) {
      it(`${number.slice(0, 4)}… is ${brand}`, () => {
        expect(cardBrand(number)).to.equal(brand);
      });
    }
  });

  describe('expiry, by the sandbox clock', () => {
    it('is valid through the last moment of the expiry month (UTC), expired from the next month on', () => {
      const nov2026 = { expMonth: 11, expYear: 2026 };
      expect(instrumentExpired(nov2026, Date.UTC(2026, 10, 30, 23, 59, 59, 999))).to.equal(false);
      expect(instrumentExpired(nov2026, Date.UTC(2026, 11, 1))).to.equal(true);
      expect(instrumentExpired({ expMonth: 12, expYear: 2026 }, Date.UTC(2026, 11, 31, 23, 59))).to.equal(
        false,
      );
      expect(instrumentExpired({ expMonth: 12, expYear: 2026 }, Date.UTC(2027, 0, 1))).to.equal(true);
      expect(instrumentExpired({ expMonth: 1, expYear: 2030 }, NOW)).to.equal(false);
    });
  });

  describe('how the issuer answers token payments, decided at save time', () => {
    it('an approved card approves; the 3DS-challenge card approves without 3DS; 0341 declines', () => {
      expect(tokenIssuerOutcome('4242424242424242')).to.deep.equal({ kind: 'approve' });
      expect(tokenIssuerOutcome(luhnNumber('55'))).to.deep.equal({ kind: 'approve' });
      expect(tokenIssuerOutcome(CHALLENGE_CARD)).to.deep.equal({ kind: 'approve' });
      expect(tokenIssuerOutcome(DECLINES_ONCE_SAVED)).to.deep.equal({
        kind: 'decline',
        code: 'ERR_CARD_DO_NOT_HONOR',
        doNotRetryAfter: false,
      });
      // A declining card is never saved (its payment declines), and would decline by token as well.
      expect(tokenIssuerOutcome('4100000000000019')).to.include({ code: 'ERR_CARD_FRAUD_SUSPECTED' });
    });
  });

  describe('saving', () => {
    it('a new card becomes an active instrument with the new token; no number and no CVV are kept', () => {
      const kept = instrumentToKeep(
        saveFacts({ card: { ...saveFacts().card, number: DECLINES_ONCE_SAVED } }),
      );
      expect(kept).to.deep.equal({
        vaultToken: 'vt_AAAAAAAAAAAAAAAAAAAAAAAA',
        merchantId: 1001,
        merchantCustomerId: 'cust-1',
        brand: 'visa',
        last4: '0341',
        expMonth: 12,
        expYear: 2034,
        name: 'Ada Lovelace',
        status: 'active',
        fingerprint: 'fp-4242',
        issuerOnReuse: { kind: 'decline', code: 'ERR_CARD_DO_NOT_HONOR', doNotRetryAfter: false },
        createdAt: NOW,
        revokedAt: null,
      });
      expect(JSON.stringify(kept)).to.not.include(DECLINES_ONCE_SAVED);
    });

    it('the active instrument for the same card keeps its token and creation time, with the latest expiry and name', () => {
      const first = instrumentToKeep(saveFacts());
      const again = instrumentToKeep(
        saveFacts({
          existing: first,
          newToken: 'vt_BBBBBBBBBBBBBBBBBBBBBBBB',
          card: { number: '4242424242424242', expMonth: 3, expYear: 2035, name: null },
          now: LATER,
        }),
      );
      expect(again).to.deep.equal({ ...first, expMonth: 3, expYear: 2035, name: null });
    });

    it('a revoked instrument stays revoked: the card gets a new active one with the new token', () => {
      const gone = revoked(instrumentToKeep(saveFacts()), NOW);
      const again = instrumentToKeep(
        saveFacts({ existing: gone, newToken: 'vt_CCCCCCCCCCCCCCCCCCCCCCCC', now: LATER }),
      );
      expect(again).to.include({
        vaultToken: 'vt_CCCCCCCCCCCCCCCCCCCCCCCC',
        status: 'active',
        createdAt: LATER,
        revokedAt: null,
      });
      expect(gone).to.include({ status: 'revoked', revokedAt: NOW });
    });
  });

  describe('revoking and using', () => {
    const active = instrumentToKeep(saveFacts());

    it('revoking sets revoked_at once; revoking again changes nothing', () => {
      const once = revoked(active, NOW);
      expect(once).to.include({ status: 'revoked', revokedAt: NOW });
      expect(revoked(once, LATER)).to.equal(once);
      expect(active.status).to.equal('active'); // a new record, not a change to the old
    });

    it("only the merchant's own active instrument can pay", () => {
      expect(usableInstrument(active, 1001)).to.equal(active);
      expect(usableInstrument(active, 1002)).to.equal(undefined);
      expect(usableInstrument(revoked(active, NOW), 1001)).to.equal(undefined);
      expect(usableInstrument(undefined, 1001)).to.equal(undefined);
    });

    it('the wire record shows neither the fingerprint nor the issuer answer', () => {
      const view = instrumentView(revoked(active, NOW));
      expect(view).to.deep.equal({
        vault_token: 'vt_AAAAAAAAAAAAAAAAAAAAAAAA',
        merchant_id: 1001,
        merchant_customer_id: 'cust-1',
        brand: 'visa',
        last4: '4242',
        exp_month: 12,
        exp_year: 2034,
        name: 'Ada Lovelace',
        status: 'revoked',
        created_at: '2026-11-01T12:00:00.000000Z',
        revoked_at: '2026-11-01T12:00:00.000000Z',
      });
    });
  });

  describe('paying with a vault token (planInitiation)', () => {
    const instrument = (overrides: Partial<PaymentInstrument> = {}) => ({
      expMonth: 12,
      expYear: 2034,
      issuerOnReuse: { kind: 'approve' as const },
      ...overrides,
    });
    const facts = (overrides: Partial<InitiationFacts> = {}): InitiationFacts => ({
      type: 'sale',
      amount: 1234,
      currency: 'EUR',
      merchantCurrencies: ['EUR'],
      vaultToken: 'vt_AAAAAAAAAAAAAAAAAAAAAAAA',
      instrument: instrument(),
      now: NOW,
      ...overrides,
    });

    it('a usable instrument pays: captured for a sale, auth for an auth', () => {
      expect(planInitiation(facts())).to.include({ ok: true, status: 'captured' });
      expect(planInitiation(facts({ type: 'auth' }))).to.include({ ok: true, status: 'auth' });
    });

    it('no usable instrument: ERR_INVALID_CARD_TOKEN, nothing recorded', () => {
      const plan = planInitiation(facts({ instrument: undefined }));
      expect(plan).to.deep.equal({
        ok: false,
        status: 400,
        code: 'ERR_INVALID_CARD_TOKEN',
        message: 'The vault token is not recognised.',
      });
    });

    it('an instrument past its expiry: ERR_EXPIRED_CARD, nothing recorded', () => {
      const plan = planInitiation(facts({ instrument: instrument({ expMonth: 10, expYear: 2026 }) }));
      expect(plan).to.include({ ok: false, status: 400, code: 'ERR_EXPIRED_CARD' });
      expect(plan).to.not.have.property('record');
      expect(planInitiation(facts({ instrument: instrument({ expMonth: 11, expYear: 2026 }) }))).to.include({
        ok: true,
      });
    });

    it('asks no 3DS: a failed verification is ignored', () => {
      const failed = { ok: false as const, code: 'ERR_3DS_FAILED' as const, message: 'does not exist' };
      expect(planInitiation(facts({ verification: failed }))).to.include({ ok: true });
    });

    it('the saved card declines as stored, recording the payment failed', () => {
      const plan = planInitiation(
        facts({ instrument: instrument({ issuerOnReuse: tokenIssuerOutcome(DECLINES_ONCE_SAVED) }) }),
      );
      expect(plan).to.deep.equal({
        ok: false,
        status: 400,
        code: 'ERR_CARD_DO_NOT_HONOR',
        message: 'The card was declined: do not honor.',
        record: { status: 'failed', event: 'transaction.failed' },
      });
    });

    it('in the order of cards: currency, maximum, duplicate, token, expiry, risk, do-not-retry, issuer', () => {
      let f: InitiationFacts = facts({
        currency: 'USD',
        amount: 100_000_001,
        referenceHeldBy: { transactionId: 100_001 },
        instrument: undefined,
        customerEmail: 'ada@risk.test',
        doNotRetryUntil: NOW + 1,
      });
      const steps: [(f: InitiationFacts) => InitiationFacts, string][] = [
        [(x) => ({ ...x, currency: 'EUR' }), 'ERR_PAYMENT_METHOD_NOT_ENABLED'],
        [(x) => ({ ...x, amount: 1234 }), 'ERR_ADAPTER_INVALID_AMOUNT'],
        [(x) => ({ ...x, referenceHeldBy: undefined }), 'ERR_DUPLICATE'],
        [
          (x) => ({
            ...x,
            instrument: instrument({
              expMonth: 1,
              expYear: 2020,
              issuerOnReuse: tokenIssuerOutcome(DECLINES_ONCE_SAVED),
            }),
          }),
          'ERR_INVALID_CARD_TOKEN',
        ],
        [(x) => ({ ...x, instrument: { ...x.instrument!, expYear: 2034 } }), 'ERR_EXPIRED_CARD'],
        [(x) => ({ ...x, customerEmail: 'ada@example.com' }), 'ERR_RISK_REJECTED'],
        [(x) => ({ ...x, doNotRetryUntil: undefined }), 'ERR_DO_NOT_RETRY'],
        [
          (x) => ({ ...x, instrument: { ...x.instrument!, issuerOnReuse: { kind: 'approve' } } }),
          'ERR_CARD_DO_NOT_HONOR',
        ],
      ];
      for (const [mend, code] of steps) {
        expect(planInitiation(f), code).to.include({ ok: false, code });
        f = mend(f);
      }
      expect(planInitiation(f)).to.include({ ok: true });
    });
  });
});
