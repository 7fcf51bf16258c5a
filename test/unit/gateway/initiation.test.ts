import { expect } from 'chai';
import { DECLINE_MESSAGES } from '../../../src/gateway/domain/cards.js';
import {
  DO_NOT_RETRY_MS,
  type InitiationFacts,
  planInitiation,
} from '../../../src/gateway/domain/initiation.js';
import { amountRefusal, duplicateRefusal } from '../../../src/gateway/domain/payment-checks.js';
import { DECLINING_CARDS } from '../../support/gateway.js';

/** POST /api/v1/transactions decided without I/O (sandbox.md sections 3 to 6). */

const NOW = Date.UTC(2026, 10, 1, 12);
const GOOD_CARD = '4242424242424242';
const CHALLENGE_CARD = '4000000000003220';
const FRAUD_CARD = '4100000000000019';
const DO_NOT_HONOR_CARD = '4000000000000002';

function facts(overrides: Partial<InitiationFacts> = {}): InitiationFacts {
  return {
    type: 'sale',
    amount: 1234,
    currency: 'EUR',
    merchantCurrencies: ['EUR', 'USD', 'GBP', 'JPY'],
    card: { number: GOOD_CARD, expMonth: 12, expYear: 2034 },
    now: NOW,
    ...overrides,
  };
}

const withCard = (f: InitiationFacts, card: Partial<NonNullable<InitiationFacts['card']>>) => ({
  ...f,
  card: { ...f.card!, ...card },
});

describe('transaction initiation rules (pure)', () => {
  it('approves a sale as captured and an auth as authorised, each with its event', () => {
    expect(planInitiation(facts())).to.deep.equal({
      ok: true,
      status: 'captured',
      event: 'transaction.captured',
      message: 'Payment captured.',
    });
    expect(planInitiation(facts({ type: 'auth' }))).to.deep.equal({
      ok: true,
      status: 'auth',
      event: 'transaction.pending',
      message: 'Payment authorised.',
    });
  });

  it('refuses in the order of the spec: with every rule broken, mending one at a time shows the next', () => {
    // Each step mends the rule that refused at the step before; every later rule is still broken.
    let f: InitiationFacts = facts({
      currency: 'CHF',
      amount: 100_000_001,
      referenceHeldBy: { transactionId: 100_007 },
      vaultToken: 'vt_123',
      card: { number: '4242424242424241', expMonth: 1, expYear: 2020 },
      customerEmail: 'ada@risk.test',
      verification: { ok: false, code: 'ERR_3DS_FAILED', message: 'The card verification does not exist.' },
      doNotRetryUntil: NOW + 1,
    });
    const steps: [string, (f: InitiationFacts) => InitiationFacts, string][] = [
      ['currency enabled', (x) => ({ ...x, currency: 'EUR' }), 'ERR_PAYMENT_METHOD_NOT_ENABLED'],
      ['platform maximum', (x) => ({ ...x, amount: 1234 }), 'ERR_ADAPTER_INVALID_AMOUNT'],
      ['duplicate reference', (x) => ({ ...x, referenceHeldBy: undefined }), 'ERR_DUPLICATE'],
      ['vault token', (x) => ({ ...x, vaultToken: undefined }), 'ERR_INVALID_CARD_TOKEN'],
      ['Luhn', (x) => withCard(x, { number: CHALLENGE_CARD }), 'ERR_INVALID_ACCOUNT_NUMBER'],
      ['expiry', (x) => withCard(x, { expYear: 2034 }), 'ERR_EXPIRED_CARD'],
      ['risk rule', (x) => ({ ...x, customerEmail: 'ada@example.com' }), 'ERR_RISK_REJECTED'],
      ['3DS verification check', (x) => ({ ...x, verification: undefined }), 'ERR_3DS_FAILED'],
      [
        '3DS requirement',
        (x) => withCard({ ...x, verification: { ok: true } }, { number: DO_NOT_HONOR_CARD }),
        'ERR_3DS_REQUIRED',
      ],
      ['do-not-retry', (x) => ({ ...x, doNotRetryUntil: undefined }), 'ERR_DO_NOT_RETRY'],
      ['issuer decline', (x) => withCard(x, { number: GOOD_CARD }), 'ERR_CARD_DO_NOT_HONOR'],
    ];
    for (const [rule, mend, code] of steps) {
      const plan = planInitiation(f);
      expect(plan, rule).to.include({ ok: false, code });
      f = mend(f);
    }
    expect(planInitiation(f)).to.include({ ok: true, status: 'captured' });
  });

  it('refusals up to the 3DS checks record nothing; the risk rule records the payment cancelled', () => {
    const unrecorded = [
      facts({ merchantCurrencies: ['USD'] }),
      facts({ amount: 100_000_001 }),
      facts({ vaultToken: 'vt_1', card: undefined }),
      facts({ card: { number: '4242424242424241', expMonth: 12, expYear: 2034 } }),
      facts({ card: { number: GOOD_CARD, expMonth: 10, expYear: 2026 } }),
      facts({ verification: { ok: false, code: 'ERR_3DS_TIMEOUT', message: 'too old' } }),
      facts({ card: { number: CHALLENGE_CARD, expMonth: 12, expYear: 2034 } }),
    ];
    for (const f of unrecorded) {
      const plan = planInitiation(f);
      expect(plan.ok).to.equal(false);
      expect(plan, JSON.stringify(plan)).to.not.have.property('record');
      expect(plan).to.not.have.property('doNotRetryUntil');
      expect(plan).to.include({ status: 400 });
    }
    expect(planInitiation(facts({ customerEmail: 'Ada@Risk.Test' }))).to.deep.equal({
      ok: false,
      status: 400,
      code: 'ERR_RISK_REJECTED',
      message: 'The payment was blocked by risk rules.',
      record: { status: 'cancelled', event: 'transaction.cancelled' },
    });
  });

  it('a reference held by a card transaction is a 409 naming the transaction, and no session', () => {
    expect(planInitiation(facts({ referenceHeldBy: { transactionId: 100_042 } }))).to.deep.equal({
      ok: false,
      status: 409,
      code: 'ERR_DUPLICATE',
      message: 'An active transaction already uses this reference.',
      data: { transaction_id: 100_042 },
    });
  });

  it("a reference held by a session's transaction is a 409 naming the transaction and the session (sandbox.md section 11)", () => {
    const heldBy = { transactionId: 100_043, paymentSessionId: 'ps_4fP2kQ9sVx1Lm7Zc3Ba8Ny0R' };
    expect(planInitiation(facts({ referenceHeldBy: heldBy }))).to.deep.equal({
      ok: false,
      status: 409,
      code: 'ERR_DUPLICATE',
      message: 'An active transaction already uses this reference.',
      data: { transaction_id: 100_043, payment_session_id: 'ps_4fP2kQ9sVx1Lm7Zc3Ba8Ny0R' },
    });
    // Payment sessions ask the same check directly, and get the same answer.
    expect(duplicateRefusal(heldBy)).to.deep.equal({
      status: 409,
      code: 'ERR_DUPLICATE',
      message: 'An active transaction already uses this reference.',
      data: { transaction_id: 100_043, payment_session_id: 'ps_4fP2kQ9sVx1Lm7Zc3Ba8Ny0R' },
    });
    expect(duplicateRefusal(undefined)).to.equal(null);
  });

  it('the platform maximum is 1,000,000.00 in major units of each currency', () => {
    expect(amountRefusal(['EUR'], 100_000_000, 'EUR')).to.equal(null);
    expect(amountRefusal(['EUR'], 100_000_001, 'EUR')).to.include({ code: 'ERR_ADAPTER_INVALID_AMOUNT' });
    expect(amountRefusal(['JPY'], 1_000_000, 'JPY')).to.equal(null);
    expect(amountRefusal(['JPY'], 1_000_001, 'JPY')).to.include({ code: 'ERR_ADAPTER_INVALID_AMOUNT' });
    expect(amountRefusal(['KWD'], 1_000_000_001, 'KWD')).to.include({ code: 'ERR_ADAPTER_INVALID_AMOUNT' });
  });

  it('a card that requires 3DS is approved with a passed verification, and any card is refused with a failed one', () => {
    const challenge = facts({ card: { number: CHALLENGE_CARD, expMonth: 12, expYear: 2034 } });
    expect(planInitiation({ ...challenge, verification: { ok: true } })).to.include({ ok: true });
    const failed = { ok: false as const, code: 'ERR_3DS_TIMEOUT' as const, message: 'older than 30 minutes' };
    expect(planInitiation(facts({ verification: failed }))).to.deep.equal({
      ok: false,
      status: 400,
      code: 'ERR_3DS_TIMEOUT',
      message: 'older than 30 minutes',
    });
  });

  it('every declining test card records the payment failed with its code and message', () => {
    for (const number of DECLINING_CARDS) {
      const plan = planInitiation(facts({ card: { number, expMonth: 12, expYear: 2034 } }));
      expect(plan, number).to.include({ ok: false, status: 400 });
      if (plan.ok) continue;
      expect(plan.message, number).to.equal(DECLINE_MESSAGES[plan.code]);
      expect(plan.record, number).to.deep.equal({ status: 'failed', event: 'transaction.failed' });
    }
  });

  it('only a do-not-retry decline bars the card details, for 24 hours from now', () => {
    const fraud = planInitiation(facts({ card: { number: FRAUD_CARD, expMonth: 12, expYear: 2034 } }));
    expect(fraud).to.include({ code: 'ERR_CARD_FRAUD_SUSPECTED', doNotRetryUntil: NOW + DO_NOT_RETRY_MS });
    const plain = planInitiation(facts({ card: { number: DO_NOT_HONOR_CARD, expMonth: 12, expYear: 2034 } }));
    expect(plain).to.include({ code: 'ERR_CARD_DO_NOT_HONOR' });
    expect(plain).to.not.have.property('doNotRetryUntil');
  });

  it('a bar refuses until the moment it ends, recording the payment failed, and not after', () => {
    expect(planInitiation(facts({ doNotRetryUntil: NOW + 1 }))).to.deep.equal({
      ok: false,
      status: 400,
      code: 'ERR_DO_NOT_RETRY',
      message: DECLINE_MESSAGES.ERR_DO_NOT_RETRY,
      record: { status: 'failed', event: 'transaction.failed' },
    });
    expect(planInitiation(facts({ doNotRetryUntil: NOW }))).to.include({ ok: true });
  });
});
