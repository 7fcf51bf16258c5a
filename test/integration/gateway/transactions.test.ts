import { expect } from 'chai';
import {
  type Answer,
  card,
  OTHER_MERCHANT_KEY,
  PARTNER_KEY,
  startGateway,
  type TestGateway,
  transactionBody,
  uniqueReference,
} from '../../support/gateway.js';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe('gateway: POST /api/v1/transactions', () => {
  let t: TestGateway;

  before(async () => {
    t = await startGateway();
  });

  after(async () => {
    await t.close();
  });

  const transactionCount = () => t.gateway.deps.state.transactions.size;
  const stored = (id: number) => t.gateway.deps.state.transactions.get(id);

  function create(body: Record<string, unknown>, key?: string): Promise<Answer> {
    return t.call('POST', '/api/v1/transactions', { body, ...(key === undefined ? {} : { key }) });
  }

  function expectError(res: Answer, status: number, code: string): void {
    expect(res.status, `${res.status} ${res.text}`).to.equal(status);
    expect(res.body.success).to.equal(false);
    expect(res.body.code).to.equal(code);
  }

  function expectValidation(res: Answer, field: string): void {
    expectError(res, 422, 'ERR_VALIDATION_FAILED');
    expect(res.body.errors, res.text).to.be.an('object').that.has.property(field);
    expect(res.body.errors[field]).to.be.an('array').that.is.not.empty;
    for (const message of res.body.errors[field]) expect(message).to.be.a('string').and.not.equal('');
  }

  /** The reference is free: a plain approved sale with the default card takes it. */
  async function expectReferenceFree(reference: string, key?: string): Promise<void> {
    const res = await create(transactionBody({ reference }), key);
    expect(res.status, `reference ${reference} should be free: ${res.text}`).to.equal(200);
    expect(res.body.data.merchant_trans_id).to.equal(reference);
    expect(res.body.data.status).to.equal('captured');
  }

  /** A card expiring in the given month of the sandbox clock's calendar, `offset` months from now. */
  function expiryMonthsFromNow(offset: number): { exp_month: number; exp_year: number } {
    const now = new Date(t.clock.now());
    const total = now.getUTCFullYear() * 12 + now.getUTCMonth() + offset;
    return { exp_month: (total % 12) + 1, exp_year: Math.floor(total / 12) };
  }

  describe('approved payments', () => {
    it('records a sale as captured, with every field of the transaction record', async () => {
      const reference = uniqueReference('sale');
      const before = transactionCount();
      const res = await create(transactionBody({ reference, amount: 12.34, currency: 'EUR' }));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.code).to.equal('');
      const d = res.body.data;
      expect(d.id).to.be.a('number');
      expect(Number.isInteger(d.id)).to.equal(true);
      expect(d.id).to.be.at.least(100000);
      expect(d.related_trans_id).to.equal(null);
      expect(d.merchant_id).to.equal(1001);
      expect(Number.isInteger(d.cardholder_id)).to.equal(true);
      expect(d.amount).to.equal(1234);
      expect(d.currency).to.equal('EUR');
      expect(d.status).to.equal('captured');
      expect(d.transaction_type).to.equal('sale');
      expect(d.merchant_trans_id).to.equal(reference);
      expect(d.acquirer_trans_id).to.be.a('string').and.not.equal('');
      expect(d.acquirer_auth_code).to.be.a('string').and.not.equal('');
      expect(d.acquirer_ref_num).to.be.a('string').and.not.equal('');
      expect(d.ip_address).to.be.a('string');
      expect(d.created_at).to.match(ISO_MICROS);
      expect(d.updated_at).to.match(ISO_MICROS);
      expect(transactionCount()).to.equal(before + 1);
      expect(stored(d.id)?.status).to.equal('captured');
    });

    it('records an auth as auth', async () => {
      const res = await create(transactionBody({ transaction_type: 'auth', amount: 50 }));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.status).to.equal('auth');
      expect(res.body.data.transaction_type).to.equal('auth');
      expect(res.body.data.amount).to.equal(5000);
      expect(stored(res.body.data.id)?.status).to.equal('auth');
    });

    it('gives amounts as exact integer minor units (12.34 EUR, 0.29 EUR, 500 JPY, 1.234 KWD)', async () => {
      const cases: [number, string, number, string?][] = [
        [12.34, 'EUR', 1234],
        [0.29, 'EUR', 29],
        [1.1, 'USD', 110],
        [500, 'JPY', 500],
        [1.234, 'KWD', 1234, OTHER_MERCHANT_KEY],
      ];
      for (const [amount, currency, minor, key] of cases) {
        const res = await create(transactionBody({ amount, currency }), key);
        expect(res.status, `${amount} ${currency}: ${res.text}`).to.equal(200);
        expect(res.body.data.amount, `${amount} ${currency}`).to.equal(minor);
        expect(Number.isInteger(res.body.data.amount)).to.equal(true);
        expect(res.body.data.currency).to.equal(currency);
      }
    });

    it('accepts exp_month as 1, "1" and "01", and exp_year as a string', async () => {
      for (const expMonth of [1, '1', '01']) {
        const res = await create(
          transactionBody({ card: card('4242424242424242', { exp_month: expMonth }) }),
        );
        expect(res.status, `exp_month ${JSON.stringify(expMonth)}: ${res.text}`).to.equal(200);
        expect(res.body.data.status).to.equal('captured');
      }
      const res = await create(
        transactionBody({ card: card('4242424242424242', { exp_month: '01', exp_year: '2034' }) }),
      );
      expect(res.status, res.text).to.equal(200);
    });
  });

  describe('test cards (sandbox.md section 4, transaction column)', () => {
    const approvedCards = [
      '4242424242424242',
      '4000000000003063',
      '4000000000003097',
      '4000000000003089',
      '4000000000003055',
    ];
    for (const number of approvedCards) {
      it(`approves ${number}`, async () => {
        const res = await create(transactionBody({ card: card(number) }));
        expect(res.status, res.text).to.equal(200);
        expect(res.body.data.status).to.equal('captured');
      });
    }

    it('approves any other Luhn-valid number without 3D Secure', async () => {
      const res = await create(transactionBody({ card: card('5555555555554444'), transaction_type: 'auth' }));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.status).to.equal('auth');
    });

    const declines: [string, string][] = [
      ['4000000000000002', 'ERR_CARD_DO_NOT_HONOR'],
      ['4000000000009995', 'ERR_CARD_INSUFFICIENT_FUNDS'],
      ['4000000000000069', 'ERR_EXPIRED_CARD'],
      ['4000000000000127', 'ERR_CARD_SECURITY_VIOLATION'],
      ['4000000000000119', 'ERR_CARD_SYSTEM_ERROR'],
      ['4000000000000259', 'ERR_CARD_ISSUER_UNAVAILABLE'],
    ];
    for (const [number, code] of declines) {
      it(`declines ${number} with 400 ${code}, records it failed and releases the reference`, async () => {
        const reference = uniqueReference('decline');
        const before = transactionCount();
        const res = await create(transactionBody({ reference, card: card(number) }));
        expectError(res, 400, code);
        const d = res.body.data;
        expect(d, res.text).to.be.an('object');
        expect(d.status).to.equal('failed');
        expect(d.merchant_trans_id).to.equal(reference);
        expect(d.amount).to.equal(1234);
        expect(d.transaction_type).to.equal('sale');
        expect(transactionCount()).to.equal(before + 1);
        expect(stored(d.id)?.status).to.equal('failed');
        await expectReferenceFree(reference);
      });
    }

    it('declines an auth the same way (failed record, reference released)', async () => {
      const reference = uniqueReference('decline-auth');
      const res = await create(
        transactionBody({ reference, transaction_type: 'auth', card: card('4000000000009995') }),
      );
      expectError(res, 400, 'ERR_CARD_INSUFFICIENT_FUNDS');
      expect(res.body.data.status).to.equal('failed');
      expect(res.body.data.transaction_type).to.equal('auth');
      await expectReferenceFree(reference);
    });

    it('answers 4000000000003220 without card_verification_data with 400 ERR_3DS_REQUIRED', async () => {
      const reference = uniqueReference('3ds-required');
      const res = await create(transactionBody({ reference, card: card('4000000000003220') }));
      expectError(res, 400, 'ERR_3DS_REQUIRED');
      await expectReferenceFree(reference);
    });

    const noRetry: [string, string][] = [
      ['4100000000000019', 'ERR_CARD_FRAUD_SUSPECTED'],
      ['4000000000009987', 'ERR_CARD_LOST_OR_STOLEN'],
    ];
    for (const [number, code] of noRetry) {
      it(`declines ${number} with ${code}, then ERR_DO_NOT_RETRY on that card for 24 h only`, async () => {
        // Any earlier use of this card in this file is more than 24 h ago from here on.
        t.clock.advance(DAY_MS + 1000);
        const reference = uniqueReference('no-retry');
        const first = await create(transactionBody({ reference, card: card(number) }));
        expectError(first, 400, code);
        expect(first.body.data.status).to.equal('failed');
        expect(first.body.data.merchant_trans_id).to.equal(reference);
        await expectReferenceFree(reference);

        const again = await create(transactionBody({ card: card(number) }));
        expectError(again, 400, 'ERR_DO_NOT_RETRY');

        // Another card of the same merchant is not blocked.
        const other = await create(transactionBody({ card: card('4242424242424242') }));
        expect(other.status, other.text).to.equal(200);

        t.clock.advance(DAY_MS - 60_000); // 23 h 59 min after the decline
        const stillBlocked = await create(transactionBody({ card: card(number) }));
        expectError(stillBlocked, 400, 'ERR_DO_NOT_RETRY');

        t.clock.advance(2 * 60_000); // 24 h 1 min after the decline
        const later = await create(transactionBody({ card: card(number) }));
        expectError(later, 400, code);
      });
    }
  });

  describe('card checks', () => {
    it('answers a number failing Luhn with 400 ERR_INVALID_ACCOUNT_NUMBER and keeps the reference free', async () => {
      const reference = uniqueReference('luhn');
      const res = await create(transactionBody({ reference, card: card('4242424242424241') }));
      expectError(res, 400, 'ERR_INVALID_ACCOUNT_NUMBER');
      await expectReferenceFree(reference);
    });

    it('answers a past expiry (by the sandbox clock) with 400 ERR_EXPIRED_CARD; the current month is still valid', async () => {
      expect(new Date(t.clock.now()).toISOString() >= '2026-11-01').to.equal(true);
      const reference = uniqueReference('expired');
      const lastMonth = await create(
        transactionBody({ reference, card: card('4242424242424242', expiryMonthsFromNow(-1)) }),
      );
      expectError(lastMonth, 400, 'ERR_EXPIRED_CARD');
      await expectReferenceFree(reference);

      const october2026 = await create(
        transactionBody({ card: card('4242424242424242', { exp_month: 10, exp_year: 2026 }) }),
      );
      expectError(october2026, 400, 'ERR_EXPIRED_CARD');

      const thisMonth = await create(
        transactionBody({ card: card('4242424242424242', expiryMonthsFromNow(0)) }),
      );
      expect(thisMonth.status, thisMonth.text).to.equal(200);
    });

    it('follows the sandbox clock: a card valid this month is expired once the clock moves into the next', async () => {
      const expiry = expiryMonthsFromNow(0);
      const valid = await create(transactionBody({ card: card('4242424242424242', expiry) }));
      expect(valid.status, valid.text).to.equal(200);
      t.clock.advance(32 * DAY_MS);
      const expired = await create(transactionBody({ card: card('4242424242424242', expiry) }));
      expectError(expired, 400, 'ERR_EXPIRED_CARD');
    });
  });

  describe('risk rules', () => {
    it('blocks a customer email ending in @risk.test: 400 ERR_RISK_REJECTED, recorded cancelled, reference released', async () => {
      const reference = uniqueReference('risk');
      const before = transactionCount();
      const res = await create(transactionBody({ reference, customer: { email: 'mallory@risk.test' } }));
      expectError(res, 400, 'ERR_RISK_REJECTED');
      expect(transactionCount()).to.equal(before + 1);
      const record = [...t.gateway.deps.state.transactions.values()].find((x) => x.reference === reference);
      expect(record?.status).to.equal('cancelled');
      if (res.body.data) expect(res.body.data.status).to.equal('cancelled');
      await expectReferenceFree(reference);
    });
  });

  describe('duplicate references', () => {
    for (const type of ['sale', 'auth']) {
      it(`answers a reference held by a ${type} with 409 ERR_DUPLICATE and data.transaction_id`, async () => {
        const reference = uniqueReference(`dup-${type}`);
        const first = await create(transactionBody({ reference, transaction_type: type }));
        expect(first.status, first.text).to.equal(200);
        const before = transactionCount();
        for (const secondType of ['sale', 'auth']) {
          const second = await create(
            transactionBody({ reference, transaction_type: secondType, amount: 1 }),
          );
          expectError(second, 409, 'ERR_DUPLICATE');
          expect(second.body.data.transaction_id).to.equal(first.body.data.id);
        }
        expect(transactionCount()).to.equal(before);
        expect(stored(first.body.data.id)?.status).to.equal(type === 'sale' ? 'captured' : 'auth');
      });
    }
  });

  describe('validation (422 ERR_VALIDATION_FAILED)', () => {
    const without = (field: string) => {
      const body: Record<string, unknown> = transactionBody();
      delete body[field];
      return body;
    };
    const cases: [string, () => Record<string, unknown>, string][] = [
      ['a missing amount', () => without('amount'), 'amount'],
      ['EUR 1.005 (too many decimals)', () => transactionBody({ amount: 1.005 }), 'amount'],
      ['JPY 1.5 (too many decimals)', () => transactionBody({ amount: 1.5, currency: 'JPY' }), 'amount'],
      ['a zero amount', () => transactionBody({ amount: 0 }), 'amount'],
      ['a negative amount', () => transactionBody({ amount: -5 }), 'amount'],
      ['a lowercase currency', () => transactionBody({ currency: 'eur' }), 'currency'],
      ['a four-letter currency', () => transactionBody({ currency: 'EURO' }), 'currency'],
      ['an unsupported currency (XYZ)', () => transactionBody({ currency: 'XYZ' }), 'currency'],
      ['a missing transaction_type', () => without('transaction_type'), 'transaction_type'],
      ['a bad transaction_type', () => transactionBody({ transaction_type: 'refund' }), 'transaction_type'],
      ['a missing reference', () => without('reference'), 'reference'],
      [
        'exp_month 13',
        () => transactionBody({ card: card('4242424242424242', { exp_month: 13 }) }),
        'card.exp_month',
      ],
      [
        'exp_year "30"',
        () => transactionBody({ card: card('4242424242424242', { exp_year: '30' }) }),
        'card.exp_year',
      ],
      [
        'a non-numeric cvv',
        () => transactionBody({ card: card('4242424242424242', { cvv: 'abc' }) }),
        'card.cvv',
      ],
      [
        'a two-digit cvv',
        () => transactionBody({ card: card('4242424242424242', { cvv: '12' }) }),
        'card.cvv',
      ],
      [
        'a bad customer.email',
        () => transactionBody({ customer: { email: 'not-an-email' } }),
        'customer.email',
      ],
      [
        'a bad customer.ip_address',
        () => transactionBody({ customer: { email: 'a@example.com', ip_address: '999.1.1.1' } }),
        'customer.ip_address',
      ],
      [
        'a bad browser_data.ip_address',
        () => transactionBody({ browser_data: { ip_address: 'not-an-ip' } }),
        'browser_data.ip_address',
      ],
      ['a bad success_url', () => transactionBody({ success_url: 'not a url' }), 'success_url'],
    ];
    for (const [name, makeBody, field] of cases) {
      it(`rejects ${name} with errors.${field} and changes nothing`, async () => {
        const body = makeBody();
        const before = transactionCount();
        const res = await create(body);
        expectValidation(res, field);
        expect(transactionCount()).to.equal(before);
        if (typeof body.reference === 'string') await expectReferenceFree(body.reference);
      });
    }

    for (const [name, makeBody] of [
      ['neither card nor vault_token', () => without('card')],
      ['both card and vault_token', () => transactionBody({ vault_token: 'tok_123' })],
    ] as [string, () => Record<string, unknown>][]) {
      it(`rejects ${name} with errors on card or vault_token and changes nothing`, async () => {
        const body = makeBody();
        const before = transactionCount();
        const res = await create(body);
        expectError(res, 422, 'ERR_VALIDATION_FAILED');
        const fields = Object.keys(res.body.errors ?? {});
        expect(fields, res.text).to.satisfy((f: string[]) => f.includes('card') || f.includes('vault_token'));
        expect(transactionCount()).to.equal(before);
        await expectReferenceFree(body.reference as string);
      });
    }
  });

  describe('currencies, limits and tokens', () => {
    it('answers a platform currency the merchant lacks (CHF) with 400 ERR_PAYMENT_METHOD_NOT_ENABLED', async () => {
      const reference = uniqueReference('chf');
      const before = transactionCount();
      const res = await create(transactionBody({ reference, currency: 'CHF' }));
      expectError(res, 400, 'ERR_PAYMENT_METHOD_NOT_ENABLED');
      expect(transactionCount()).to.equal(before);
      await expectReferenceFree(reference);
    });

    it('answers an amount above 1,000,000.00 with 400 ERR_ADAPTER_INVALID_AMOUNT', async () => {
      for (const [amount, currency] of [
        [1000000.01, 'EUR'],
        [1000001, 'JPY'],
      ] as const) {
        const reference = uniqueReference('too-much');
        const res = await create(transactionBody({ reference, amount, currency }));
        expectError(res, 400, 'ERR_ADAPTER_INVALID_AMOUNT');
        await expectReferenceFree(reference);
      }
    });

    it('accepts exactly 1,000,000.00 (EUR and JPY)', async () => {
      const eur = await create(transactionBody({ amount: 1000000.0 }));
      expect(eur.status, eur.text).to.equal(200);
      expect(eur.body.data.amount).to.equal(100000000);
      const jpy = await create(transactionBody({ amount: 1000000, currency: 'JPY' }));
      expect(jpy.status, jpy.text).to.equal(200);
      expect(jpy.body.data.amount).to.equal(1000000);
    });

    it('answers a vault_token with 400 ERR_INVALID_CARD_TOKEN and keeps the reference free', async () => {
      const reference = uniqueReference('vault');
      const body: Record<string, unknown> = transactionBody({ reference, vault_token: 'vt_unknown_123' });
      delete body.card;
      const res = await create(body);
      expectError(res, 400, 'ERR_INVALID_CARD_TOKEN');
      await expectReferenceFree(reference);
    });
  });

  describe('ip_address', () => {
    it('takes browser_data.ip_address over customer.ip_address', async () => {
      const res = await create(
        transactionBody({
          customer: { email: 'a@example.com', ip_address: '198.51.100.7' },
          browser_data: { ip_address: '203.0.113.9' },
        }),
      );
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.ip_address).to.equal('203.0.113.9');
    });

    it('falls back to customer.ip_address (IPv4 or IPv6)', async () => {
      for (const ip of ['198.51.100.7', '2001:db8::1']) {
        const res = await create(transactionBody({ customer: { email: 'a@example.com', ip_address: ip } }));
        expect(res.status, res.text).to.equal(200);
        expect(res.body.data.ip_address).to.equal(ip);
      }
    });
  });

  describe('merchant_id and keys', () => {
    it('creates a transaction for the linked merchant a partner key names', async () => {
      const res = await create(transactionBody({ merchant_id: 1001 }), PARTNER_KEY);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.merchant_id).to.equal(1001);
      expect(stored(res.body.data.id)?.merchantId).to.equal(1001);
      const status = await t.call('GET', `/api/v1/transactions/${res.body.data.id}/status`);
      expect(status.status, status.text).to.equal(200);
      expect(status.body.data.merchant_id).to.equal(1001);
    });

    const rejections: [string, Record<string, unknown>, string, number][] = [
      ['a partner key without merchant_id', {}, PARTNER_KEY, 400],
      ['a partner key with an unlinked merchant_id (1002)', { merchant_id: 1002 }, PARTNER_KEY, 400],
      ['a partner key with its inactive linked merchant (1003)', { merchant_id: 1003 }, PARTNER_KEY, 403],
      ["a merchant key sending another merchant's id", { merchant_id: 1002 }, 'sk_test_merchant_1001', 400],
    ];
    for (const [name, extra, key, status] of rejections) {
      it(`answers ${name} with ${status} ERR_AUTH_FAILED and creates nothing`, async () => {
        const reference = uniqueReference('auth-fail');
        const before = transactionCount();
        const res = await create(transactionBody({ reference, ...extra }), key);
        expectError(res, status, 'ERR_AUTH_FAILED');
        expect(transactionCount()).to.equal(before);
        await expectReferenceFree(reference);
      });
    }
  });
});
