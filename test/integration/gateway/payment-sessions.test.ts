import { expect } from 'chai';
import type { SeedInput } from '../../../src/gateway/state/seed.js';
import {
  type Answer,
  liftRateLimits,
  OTHER_MERCHANT_KEY,
  PARTNER_KEY,
  startGateway,
  type TestGateway,
  transactionBody,
  uniqueReference,
} from '../../support/gateway.js';
import { allowPrivateUrls, type Receiver, startReceiver } from '../../support/receiver.js';

/**
 * Hosted redirect payment sessions over HTTP: gateway-api.md "Payment session record", "States and
 * transitions", "Payment sessions and methods" rules 1-6; sandbox.md sections 7 and 10.
 */

const MINUTE_MS = 60 * 1000;
const LIFETIME_MS = 15 * MINUTE_MS;
const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const SESSION_ID = /^ps_[A-Za-z0-9]{24}$/;
const SUCCESS_URL = 'https://shop.example/checkout/return?cart=7';
const CANCEL_URL = 'https://shop.example/checkout/cancelled';

/** ISO timestamps with microseconds, as milliseconds (the microseconds beyond the third digit are zero). */
const ms = (iso: string): number => Date.parse(iso.replace(/(\.\d{3})\d{3}Z$/, '$1Z'));

/**
 * The test seed, plus a disabled redirect method, and limits high enough that the many calls of one
 * file (the manual clock does not move by itself) never reach the rate limits under test elsewhere.
 */
function sessionSeed(seed: SeedInput): void {
  seed.merchants[0]!.payment_methods.push({
    payment_method: 'sofort',
    label: 'Sofort',
    provider: 'sandbox-sofort',
    countries: ['DE', 'NL'],
    currencies: ['EUR'],
    enabled: false,
  });
  liftRateLimits(seed);
}

/** A session create body that succeeds: iDEAL in EUR for a Dutch customer. */
function sessionBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: 12.34,
    currency: 'EUR',
    reference: uniqueReference('ps'),
    payment_method: 'ideal',
    customer: {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.com',
      country_code: 'NL',
      merchant_customer_id: 'cust-42',
    },
    customer_reference: 'customer-ref-42',
    success_url: SUCCESS_URL,
    cancel_url: CANCEL_URL,
    ...overrides,
  };
}

function expectError(res: Answer, status: number, code: string): void {
  expect(res.status, `${res.status} ${res.text}`).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.code).to.equal(code);
  expect(res.body.message).to.be.a('string').and.not.equal('');
}

function expectValidation(res: Answer, field: string): void {
  expectError(res, 422, 'ERR_VALIDATION_FAILED');
  expect(res.body.errors, res.text).to.be.an('object').that.has.property(field);
  expect(res.body.errors[field]).to.be.an('array').that.is.not.empty;
  for (const message of res.body.errors[field]) expect(message).to.be.a('string').and.not.equal('');
}

describe('gateway: payment sessions', () => {
  let t: TestGateway;

  before(async () => {
    t = await startGateway({ seed: sessionSeed });
  });

  after(async () => {
    await t.close();
  });

  const counts = () => ({
    sessions: t.gateway.deps.state.sessions.size,
    transactions: t.gateway.deps.state.transactions.size,
  });

  const create = (body: Record<string, unknown>, key?: string): Promise<Answer> =>
    t.call('POST', '/api/v1/payment-sessions', { body, ...(key === undefined ? {} : { key }) });

  const getSession = (id: string, key?: string): Promise<Answer> =>
    t.call('GET', `/api/v1/payment-sessions/${id}`, key === undefined ? {} : { key });

  const transactionStatus = (id: number, key?: string): Promise<Answer> =>
    t.call('GET', `/api/v1/transactions/${id}/status`, key === undefined ? {} : { key });

  // biome-ignore lint/suspicious/noExplicitAny: session records are read field by field
  async function open(overrides: Record<string, unknown> = {}, key?: string): Promise<any> {
    const res = await create(sessionBody(overrides), key);
    expect(res.status, res.text).to.equal(201);
    return res.body.data.payment_session;
  }

  // biome-ignore lint/suspicious/noExplicitAny: session records are read field by field
  async function sessionNow(id: string): Promise<any> {
    const res = await getSession(id);
    expect(res.status, res.text).to.equal(200);
    return res.body.data.payment_session;
  }

  async function transactionNow(id: number): Promise<{ status: string; [k: string]: unknown }> {
    const res = await transactionStatus(id);
    expect(res.status, res.text).to.equal(200);
    return res.body.data;
  }

  /** The reference is free: a new session with it is created. */
  async function expectReferenceFree(reference: string): Promise<void> {
    const res = await create(sessionBody({ reference }));
    expect(res.status, `reference ${reference} should be free: ${res.text}`).to.equal(201);
    expect(res.body.data.payment_session.merchant_reference).to.equal(reference);
  }

  /**
   * A new session, then a card payment, reusing the reference: each 409 ERR_DUPLICATE with exactly
   * this `data` (sandbox.md section 11: the session too when the holder is a session's transaction,
   * whatever its state, no session field otherwise), and nothing created.
   */
  async function expectReferenceHeld(
    reference: string,
    holder: { transaction_id: number; payment_session_id?: string },
  ): Promise<void> {
    const before = counts();
    const session = await create(sessionBody({ reference, payment_method: 'psc' }));
    expectError(session, 409, 'ERR_DUPLICATE');
    expect(session.body.data, 'POST /api/v1/payment-sessions').to.deep.equal(holder);
    const card = await t.call('POST', '/api/v1/transactions', { body: transactionBody({ reference }) });
    expectError(card, 409, 'ERR_DUPLICATE');
    expect(card.body.data, 'POST /api/v1/transactions').to.deep.equal(holder);
    expect(counts()).to.deep.equal(before);
  }

  /** The session the sandbox stored for a reference (for answers that carry none). */
  function storedSessionId(reference: string): string {
    const found = [...t.gateway.deps.state.sessions.values()].filter((s) => s.reference === reference);
    expect(found, `sessions with reference ${reference}`).to.have.length(1);
    return found[0]!.id;
  }

  /** A click on the hosted checkout page, as a browser sends it (no API key). */
  const click = (id: string, action: string): Promise<Answer> =>
    t.call('POST', `/hosted/checkout/${id}`, {
      key: null,
      rawBody: new URLSearchParams({ action }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });

  /** A 303 back to the shop: the target URL. */
  function redirectOf(res: Answer): URL {
    expect(res.status, res.text).to.equal(303);
    const location = res.headers.get('location');
    expect(location, 'Location header').to.be.a('string');
    return new URL(location!);
  }

  /** Rule 5: the shop's URL with payment_session_id, reference and status (its own query kept). */
  function expectReturn(
    target: URL,
    base: string,
    session: { payment_session_id: string; merchant_reference: string },
    status: string,
  ): void {
    const expected = new URL(base);
    expect(target.origin + target.pathname).to.equal(expected.origin + expected.pathname);
    for (const [name, value] of expected.searchParams) expect(target.searchParams.get(name)).to.equal(value);
    expect(target.searchParams.get('payment_session_id')).to.equal(session.payment_session_id);
    expect(target.searchParams.get('reference')).to.equal(session.merchant_reference);
    expect(target.searchParams.get('status')).to.equal(status);
  }

  const settle = (id: string, body: unknown, key?: string): Promise<Answer> =>
    t.call('POST', `/sandbox/payment-sessions/${id}/settle`, { body, ...(key === undefined ? {} : { key }) });

  const chargeback = (transactionId: number): Promise<Answer> =>
    t.call('POST', `/sandbox/transactions/${transactionId}/chargeback`);

  describe('POST /api/v1/payment-sessions: an accepted session', () => {
    it('answers 201 with the envelope and a pending_redirect session with every field of the record', async () => {
      const reference = uniqueReference('ps-create');
      const before = counts();
      const now = t.clock.now();
      const res = await create(sessionBody({ reference, amount: 12.34 }));
      expect(res.status, res.text).to.equal(201);
      expect(res.body.success).to.equal(true);
      expect(res.body.code).to.equal('');
      expect(res.body.message).to.be.a('string').and.not.equal('');
      expect(res.body).to.not.have.property('errors');
      expect(res.headers.get('x-ratelimit-remaining')).to.match(/^\d+$/);
      expect(res.body.data).to.be.an('object').that.has.property('payment_session');

      const s = res.body.data.payment_session;
      expect(s.payment_session_id).to.match(SESSION_ID);
      expect(s.transaction_id).to.be.a('number');
      expect(Number.isInteger(s.transaction_id)).to.equal(true);
      expect(s.merchant_id).to.equal(1001);
      expect(s.merchant_reference).to.equal(reference);
      expect(s.provider).to.equal('sandbox-ideal');
      expect(s.payment_method).to.equal('ideal');
      expect(s.status).to.equal('pending_redirect');
      expect(s.amount).to.equal(1234);
      expect(Number.isInteger(s.amount)).to.equal(true);
      expect(s.amount_formatted).to.equal('12.34');
      expect(s.currency).to.equal('EUR');
      expect(s.checkout_url).to.equal(`${t.url}/hosted/checkout/${s.payment_session_id}`);
      expect(s.return_url).to.equal(SUCCESS_URL);
      expect(s.cancel_url).to.equal(CANCEL_URL);
      expect(s.provider_session_id).to.be.a('string').and.not.equal('');
      expect(s.provider_transaction_id).to.equal(null);
      expect(s.customer_reference).to.equal('customer-ref-42');
      expect(s.finalised_at).to.equal(null);
      for (const field of ['created_at', 'updated_at', 'expires_at'])
        expect(s[field], field).to.match(ISO_MICROS);
      expect(ms(s.created_at)).to.equal(now);
      expect(ms(s.expires_at) - ms(s.created_at)).to.equal(LIFETIME_MS);

      expect(counts()).to.deep.equal({
        sessions: before.sessions + 1,
        transactions: before.transactions + 1,
      });
    });

    it('links a sale transaction in status pending, with the same amount and reference', async () => {
      const s = await open({ amount: 12.34 });
      const res = await transactionStatus(s.transaction_id);
      expect(res.status, res.text).to.equal(200);
      const d = res.body.data;
      expect(d.id).to.equal(s.transaction_id);
      expect(d.transaction_type).to.equal('sale');
      expect(d.status).to.equal('pending');
      expect(d.amount).to.equal(1234);
      expect(d.currency).to.equal('EUR');
      expect(d.merchant_id).to.equal(1001);
      expect(d.merchant_trans_id).to.equal(s.merchant_reference);
    });

    it('gives the amount as exact integer minor units with amount_formatted', async () => {
      const cases: [number, string, string, number, string][] = [
        [0.29, 'EUR', 'ideal', 29, '0.29'],
        [1.1, 'GBP', 'psc', 110, '1.10'],
        [250, 'USD', 'psc', 25000, '250.00'],
      ];
      for (const [amount, currency, method, minor, formatted] of cases) {
        const s = await open({ amount, currency, payment_method: method, customer: undefined });
        expect(s.amount, `${amount} ${currency}`).to.equal(minor);
        expect(Number.isInteger(s.amount)).to.equal(true);
        expect(s.amount_formatted, `${amount} ${currency}`).to.equal(formatted);
        expect(s.currency).to.equal(currency);
        expect((await transactionNow(s.transaction_id)).amount).to.equal(minor);
      }
    });

    it('gives every session its own ps_ id of 24 letters and digits', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const s = await open({ payment_method: 'psc' });
        expect(s.payment_session_id).to.match(SESSION_ID);
        ids.add(s.payment_session_id);
      }
      expect(ids.size).to.equal(5);
    });

    it("forwards customer.ip_address as the transaction's device IP, else the calling server's (rule 4)", async () => {
      const withIp = await open({ customer: { country_code: 'NL', ip_address: '203.0.113.7' } });
      expect((await transactionNow(withIp.transaction_id)).ip_address).to.equal('203.0.113.7');

      const without = await open({ customer: { country_code: 'NL' } });
      expect((await transactionNow(without.transaction_id)).ip_address)
        .to.be.a('string')
        .and.match(/127\.0\.0\.1|::1/);
    });
  });

  describe('create checks, in the order of rule 1', () => {
    it('answers an unknown method with 400 ERR_PAYMENT_METHOD_NOT_ENABLED and creates nothing', async () => {
      const before = counts();
      const reference = uniqueReference('unknown-method');
      const res = await create(sessionBody({ reference, payment_method: 'bancontact' }));
      expectError(res, 400, 'ERR_PAYMENT_METHOD_NOT_ENABLED');
      expect(counts()).to.deep.equal(before);
      await expectReferenceFree(reference);
    });

    it('answers a disabled method with 400 ERR_PAYMENT_METHOD_NOT_ENABLED and creates nothing', async () => {
      const before = counts();
      const res = await create(sessionBody({ payment_method: 'sofort' }));
      expectError(res, 400, 'ERR_PAYMENT_METHOD_NOT_ENABLED');
      expect(counts()).to.deep.equal(before);
    });

    it('answers a currency the method lacks (ideal in USD) with 400 ERR_PAYMENT_METHOD_NOT_ENABLED', async () => {
      const before = counts();
      const res = await create(sessionBody({ currency: 'USD' }));
      expectError(res, 400, 'ERR_PAYMENT_METHOD_NOT_ENABLED');
      expect(counts()).to.deep.equal(before);
    });

    it('answers ideal for a German customer with 400 ERR_PAYMENT_METHOD_NOT_AVAILABLE_IN_COUNTRY, nothing created, reference free', async () => {
      const before = counts();
      const reference = uniqueReference('country');
      const res = await create(
        sessionBody({ reference, customer: { last_name: 'Lovelace', country_code: 'DE' } }),
      );
      expectError(res, 400, 'ERR_PAYMENT_METHOD_NOT_AVAILABLE_IN_COUNTRY');
      expect(counts()).to.deep.equal(before);
      expect([...t.gateway.deps.state.sessions.values()].some((s) => s.reference === reference)).to.equal(
        false,
      );
      await expectReferenceFree(reference);
    });

    it('skips the country check when customer.country_code is omitted', async () => {
      const noCountry = await create(sessionBody({ customer: { first_name: 'Ada', last_name: 'Lovelace' } }));
      expect(noCountry.status, noCountry.text).to.equal(201);
      expect(noCountry.body.data.payment_session.payment_method).to.equal('ideal');
      const noCustomer = await create(sessionBody({ customer: undefined }));
      expect(noCustomer.status, noCustomer.text).to.equal(201);
    });

    it('accepts psc (no country restriction) in any country', async () => {
      for (const country of ['DE', 'NL', 'US', 'JP', 'BR']) {
        const res = await create(
          sessionBody({ payment_method: 'psc', customer: { last_name: 'Lovelace', country_code: country } }),
        );
        expect(res.status, `${country}: ${res.text}`).to.equal(201);
        expect(res.body.data.payment_session.provider).to.equal('sandbox-psc');
      }
    });

    it('reports the method before the country when both are wrong', async () => {
      const germany = { last_name: 'Lovelace', country_code: 'DE' };
      for (const overrides of [
        { payment_method: 'bancontact' },
        { payment_method: 'sofort', customer: { last_name: 'Lovelace', country_code: 'US' } },
        { currency: 'USD' },
      ]) {
        const before = counts();
        const res = await create(sessionBody({ customer: germany, ...overrides }));
        expectError(res, 400, 'ERR_PAYMENT_METHOD_NOT_ENABLED');
        expect(counts()).to.deep.equal(before);
      }
    });

    it('answers currencies by sandbox.md section 3: unknown 422, not enabled for the merchant 400, over the maximum 400', async () => {
      const before = counts();
      expectValidation(await create(sessionBody({ currency: 'XYZ', payment_method: 'psc' })), 'currency');
      expectError(
        await create(sessionBody({ currency: 'CHF', payment_method: 'psc', customer: undefined })),
        400,
        'ERR_PAYMENT_METHOD_NOT_ENABLED',
      );
      expectError(
        await create(sessionBody({ amount: 1_000_000.01, payment_method: 'psc' })),
        400,
        'ERR_ADAPTER_INVALID_AMOUNT',
      );
      expect(counts()).to.deep.equal(before);
      const atMaximum = await create(sessionBody({ amount: 1_000_000, payment_method: 'psc' }));
      expect(atMaximum.status, atMaximum.text).to.equal(201);
      expect(atMaximum.body.data.payment_session.amount).to.equal(100_000_000);
    });

    it('checks method and country before asking the provider', async () => {
      const before = counts();
      const wrongMethod = await create(
        sessionBody({ payment_method: 'bancontact', customer: { last_name: 'PROVIDER_REJECT' } }),
      );
      expectError(wrongMethod, 400, 'ERR_PAYMENT_METHOD_NOT_ENABLED');
      const wrongCountry = await create(
        sessionBody({ customer: { last_name: 'PROVIDER_DOWN', country_code: 'DE' } }),
      );
      expectError(wrongCountry, 400, 'ERR_PAYMENT_METHOD_NOT_AVAILABLE_IN_COUNTRY');
      expect(counts()).to.deep.equal(before);
    });
  });

  describe('duplicate references (rule 2; sandbox.md section 11)', () => {
    it('answers the reference of an open session with 409 ERR_DUPLICATE naming its transaction and the session', async () => {
      const first = await open();
      await expectReferenceHeld(first.merchant_reference, {
        transaction_id: first.transaction_id,
        payment_session_id: first.payment_session_id,
      });
      // The first session is untouched.
      expect((await sessionNow(first.payment_session_id)).status).to.equal('pending_redirect');
    });

    it('answers the reference of an active card transaction with 409 ERR_DUPLICATE naming it, and no session', async () => {
      const reference = uniqueReference('card-ref');
      const sale = await t.call('POST', '/api/v1/transactions', { body: transactionBody({ reference }) });
      expect(sale.status, sale.text).to.equal(200);
      expect(sale.body.data.status).to.equal('captured');
      await expectReferenceHeld(reference, { transaction_id: sale.body.data.id });
    });

    it('names the new session once a failed session released the reference', async () => {
      const failed = await open();
      redirectOf(await click(failed.payment_session_id, 'fail'));
      const again = await open({ reference: failed.merchant_reference });
      expect(again.payment_session_id).to.not.equal(failed.payment_session_id);
      await expectReferenceHeld(failed.merchant_reference, {
        transaction_id: again.transaction_id,
        payment_session_id: again.payment_session_id,
      });
    });
  });

  describe('provider answers (rule 1; sandbox.md section 7)', () => {
    it('answers last_name PROVIDER_REJECT with 400 ERR_PROVIDER_REJECTED; session and transaction failed, reference released', async () => {
      const reference = uniqueReference('reject');
      const before = counts();
      const res = await create(sessionBody({ reference, customer: { last_name: 'PROVIDER_REJECT' } }));
      expectError(res, 400, 'ERR_PROVIDER_REJECTED');
      expect(counts()).to.deep.equal({
        sessions: before.sessions + 1,
        transactions: before.transactions + 1,
      });
      const session = await sessionNow(storedSessionId(reference));
      expect(session.status).to.equal('failed');
      expect(session.merchant_reference).to.equal(reference);
      const transaction = await transactionNow(session.transaction_id);
      expect(transaction.status).to.equal('failed');
      expect(transaction.transaction_type).to.equal('sale');
      await expectReferenceFree(reference);
    });

    it('sets status_reason on the transaction a provider refusal fails (Transaction statuses table)', async () => {
      const reference = uniqueReference('reject-reason');
      const res = await create(sessionBody({ reference, customer: { last_name: 'PROVIDER_REJECT' } }));
      expectError(res, 400, 'ERR_PROVIDER_REJECTED');
      const session = await sessionNow(storedSessionId(reference));
      const transaction = await transactionNow(session.transaction_id);
      expect(transaction.status).to.equal('failed');
      expect(transaction.status_reason, JSON.stringify(transaction)).to.be.a('string').and.not.equal('');
    });

    it('answers last_name PROVIDER_DOWN with 502 ERR_GATEWAY_ERROR; session and transaction failed, reference released', async () => {
      const reference = uniqueReference('down');
      const res = await create(sessionBody({ reference, customer: { last_name: 'PROVIDER_DOWN' } }));
      expectError(res, 502, 'ERR_GATEWAY_ERROR');
      const session = await sessionNow(storedSessionId(reference));
      expect(session.status).to.equal('failed');
      expect((await transactionNow(session.transaction_id)).status).to.equal('failed');
      await expectReferenceFree(reference);
    });
  });

  describe('validation (rule 3): 422 ERR_VALIDATION_FAILED', () => {
    it('rejects an invalid customer.ip_address, IPv4 or IPv6, and creates nothing', async () => {
      for (const ip of ['999.1.1.1', '1.2.3', '2001:db8:::1', '2001:db8::g1', 'not-an-ip']) {
        const before = counts();
        const res = await create(sessionBody({ customer: { country_code: 'NL', ip_address: ip } }));
        expectValidation(res, 'customer.ip_address');
        expect(counts(), ip).to.deep.equal(before);
      }
    });

    it('accepts valid IPv4 and IPv6 customer.ip_address values', async () => {
      for (const ip of ['192.0.2.10', '203.0.113.255', '2001:db8::1', '::ffff:192.0.2.1', 'fe80::1']) {
        const res = await create(sessionBody({ customer: { country_code: 'NL', ip_address: ip } }));
        expect(res.status, `${ip}: ${res.text}`).to.equal(201);
        expect((await transactionNow(res.body.data.payment_session.transaction_id)).ip_address).to.equal(ip);
      }
    });

    const cardData: [string, Record<string, unknown>, string, string][] = [
      ['a top-level card', { card: { number: '4242424242424242', cvv: '737' } }, 'card', '4242424242424242'],
      ['a top-level cvv', { cvv: '8461' }, 'cvv', '8461'],
      ['a vault_token', { vault_token: 'vt_SeCrEtToKeN98765' }, 'vault_token', 'vt_SeCrEtToKeN98765'],
      ['a voucher_code', { voucher_code: 'PSCVOUCHER0042' }, 'voucher_code', 'PSCVOUCHER0042'],
      [
        'a nested customer.card_number',
        { customer: { country_code: 'NL', card_number: '5555555555554444' } },
        'customer.card_number',
        '5555555555554444',
      ],
      [
        'a deep metadata.payment.cvv',
        { metadata: { payment: { cvv: '9315' } } },
        'metadata.payment.cvv',
        '9315',
      ],
      [
        'a cvv inside an array',
        { items: [{ sku: 'A1' }, { sku: 'B2', cvv: '7713' }] },
        'items.1.cvv',
        '7713',
      ],
    ];
    for (const [label, extra, path, value] of cardData) {
      it(`rejects ${label}, names ${path} and echoes no value`, async () => {
        const before = counts();
        const res = await create(sessionBody(extra));
        expectValidation(res, path);
        expect(res.text, 'the answer body').to.not.include(value);
        expect(JSON.stringify([...res.headers]), 'the answer headers').to.not.include(value);
        expect(counts()).to.deep.equal(before);
      });
    }

    for (const field of ['reference', 'payment_method', 'success_url', 'cancel_url', 'amount', 'currency']) {
      it(`requires ${field}`, async () => {
        const before = counts();
        const res = await create(sessionBody({ [field]: undefined }));
        expectValidation(res, field);
        expect(counts()).to.deep.equal(before);
      });
    }

    it('rejects more decimals than the currency has', async () => {
      expectValidation(await create(sessionBody({ amount: 12.345 })), 'amount');
      expectValidation(
        await create(sessionBody({ amount: 1.001, currency: 'GBP', payment_method: 'psc' })),
        'amount',
      );
    });

    it('rejects a zero or negative amount and a URL that is not one', async () => {
      expectValidation(await create(sessionBody({ amount: 0 })), 'amount');
      expectValidation(await create(sessionBody({ amount: -5 })), 'amount');
      expectValidation(await create(sessionBody({ success_url: 'not a url' })), 'success_url');
    });
  });

  describe('partner keys', () => {
    it('creates a session for a linked merchant_id, and the partner can read it', async () => {
      const res = await create(sessionBody({ merchant_id: 1001 }), PARTNER_KEY);
      expect(res.status, res.text).to.equal(201);
      const s = res.body.data.payment_session;
      expect(s.merchant_id).to.equal(1001);
      const read = await getSession(s.payment_session_id, PARTNER_KEY);
      expect(read.status, read.text).to.equal(200);
      expect(read.body.data.payment_session.payment_session_id).to.equal(s.payment_session_id);
    });

    it('answers a partner key without merchant_id, or with an unlinked one, with 400 ERR_AUTH_FAILED', async () => {
      const before = counts();
      expectError(await create(sessionBody(), PARTNER_KEY), 400, 'ERR_AUTH_FAILED');
      expectError(await create(sessionBody({ merchant_id: 1002 }), PARTNER_KEY), 400, 'ERR_AUTH_FAILED');
      expect(counts()).to.deep.equal(before);
    });
  });

  describe('GET /api/v1/payment-sessions/{id}', () => {
    it('returns an own session as created', async () => {
      const created = await create(sessionBody());
      const s = created.body.data.payment_session;
      const res = await getSession(s.payment_session_id);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.code).to.equal('');
      expect(res.body.data.payment_session).to.deep.equal(s);
    });

    it("answers another merchant's session and an unknown id with 404", async () => {
      const s = await open();
      expectError(await getSession(s.payment_session_id, OTHER_MERCHANT_KEY), 404, 'ERR_NOT_FOUND');
      expectError(await getSession('ps_AAAAAAAAAAAAAAAAAAAAAAAA'), 404, 'ERR_NOT_FOUND');
      expectError(
        await t.call('GET', `/api/v1/transactions/${s.transaction_id}/status`, { key: OTHER_MERCHANT_KEY }),
        404,
        'ERR_NOT_FOUND',
      );
    });
  });

  describe('expiry (15 minutes, pending_redirect only)', () => {
    it('expires a session at 15 minutes: transaction cancelled, reference released', async () => {
      const s = await open();
      t.clock.advance(LIFETIME_MS - 1000);
      expect((await sessionNow(s.payment_session_id)).status).to.equal('pending_redirect');
      expect((await transactionNow(s.transaction_id)).status).to.equal('pending');

      t.clock.advance(1000);
      const expired = await sessionNow(s.payment_session_id);
      expect(expired.status).to.equal('expired');
      expect(expired.finalised_at).to.match(ISO_MICROS);
      expect(expired.provider_transaction_id).to.equal(null);
      expect((await transactionNow(s.transaction_id)).status).to.equal('cancelled');
      await expectReferenceFree(s.merchant_reference);
    });

    it('expires sessions on a tick too, without a read first', async () => {
      const s = await open();
      t.clock.advance(LIFETIME_MS);
      await t.gateway.controls.tick();
      expect((await transactionNow(s.transaction_id)).status).to.equal('cancelled');
      expect((await sessionNow(s.payment_session_id)).status).to.equal('expired');
    });

    it('does not expire a session moved to pending_provider; the provider can still settle it', async () => {
      const s = await open();
      redirectOf(await click(s.payment_session_id, 'pending'));
      t.clock.advance(LIFETIME_MS + MINUTE_MS);
      await t.gateway.controls.tick();
      const waiting = await sessionNow(s.payment_session_id);
      expect(waiting.status).to.equal('pending_provider');
      expect(waiting.finalised_at).to.equal(null);
      expect((await transactionNow(s.transaction_id)).status).to.equal('pending');

      const res = await settle(s.payment_session_id, { outcome: 'paid' });
      expect(res.status, res.text).to.equal(200);
      expect((await sessionNow(s.payment_session_id)).status).to.equal('paid');
      expect((await transactionNow(s.transaction_id)).status).to.equal('captured');
    });

    it('does not let the provider settle a session whose 15 minutes are over (expired is final)', async () => {
      const s = await open();
      t.clock.advance(LIFETIME_MS + MINUTE_MS);
      // Nothing has read or ticked since: the report arrives for a session that is already expired.
      const res = await settle(s.payment_session_id, { outcome: 'paid' });
      expect(res.status, res.text).to.equal(409);
      expect((await sessionNow(s.payment_session_id)).status).to.equal('expired');
      expect((await transactionNow(s.transaction_id)).status).to.equal('cancelled');
    });

    it('does not let the customer pay an expired session on the hosted page', async () => {
      const s = await open();
      t.clock.advance(LIFETIME_MS);
      const target = redirectOf(await click(s.payment_session_id, 'pay'));
      expect(target.searchParams.get('status')).to.not.equal('paid');
      expect((await sessionNow(s.payment_session_id)).status).to.equal('expired');
      expect((await transactionNow(s.transaction_id)).status).to.equal('cancelled');
    });
  });

  describe('the hosted checkout page (sandbox.md section 7)', () => {
    it('serves an HTML page with Pay, Pending, Fail and Cancel, and the session stays pending_redirect', async () => {
      const s = await open();
      const res = await t.call('GET', new URL(s.checkout_url).pathname, { key: null });
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      for (const label of ['Pay', 'Pending', 'Fail', 'Cancel']) {
        expect(res.text, label).to.match(new RegExp(`<button[^>]*>${label}</button>`));
      }
      expect((await sessionNow(s.payment_session_id)).status).to.equal('pending_redirect');
      expect((await transactionNow(s.transaction_id)).status).to.equal('pending');
    });

    it('answers an unknown checkout with 404', async () => {
      const res = await t.call('GET', '/hosted/checkout/ps_AAAAAAAAAAAAAAAAAAAAAAAA', { key: null });
      expect(res.status).to.equal(404);
    });

    it('Pay: 303 to success_url with status=paid; session paid and finalised, transaction captured', async () => {
      const s = await open();
      const paidAt = t.clock.now() + 5000;
      t.clock.advance(5000);
      const target = redirectOf(await click(s.payment_session_id, 'pay'));
      expectReturn(target, SUCCESS_URL, s, 'paid');

      const paid = await sessionNow(s.payment_session_id);
      expect(paid.status).to.equal('paid');
      expect(paid.finalised_at).to.match(ISO_MICROS);
      expect(ms(paid.finalised_at)).to.equal(paidAt);
      expect(paid.provider_transaction_id).to.be.a('string').and.not.equal('');
      const transaction = await transactionNow(s.transaction_id);
      expect(transaction.status).to.equal('captured');
      expect(transaction.amount).to.equal(s.amount);
      // A paid session's transaction keeps holding the reference.
      await expectReferenceHeld(s.merchant_reference, {
        transaction_id: s.transaction_id,
        payment_session_id: s.payment_session_id,
      });
    });

    it('Fail: 303 to success_url with status=failed; transaction failed, reference released', async () => {
      const s = await open();
      const target = redirectOf(await click(s.payment_session_id, 'fail'));
      expectReturn(target, SUCCESS_URL, s, 'failed');
      const failed = await sessionNow(s.payment_session_id);
      expect(failed.status).to.equal('failed');
      expect(failed.finalised_at).to.match(ISO_MICROS);
      expect(failed.provider_transaction_id).to.equal(null);
      expect((await transactionNow(s.transaction_id)).status).to.equal('failed');
      await expectReferenceFree(s.merchant_reference);
    });

    it('Cancel: 303 to cancel_url with status=cancelled; transaction cancelled, reference released', async () => {
      const s = await open();
      const target = redirectOf(await click(s.payment_session_id, 'cancel'));
      expectReturn(target, CANCEL_URL, s, 'cancelled');
      const cancelled = await sessionNow(s.payment_session_id);
      expect(cancelled.status).to.equal('cancelled');
      expect(cancelled.finalised_at).to.match(ISO_MICROS);
      expect((await transactionNow(s.transaction_id)).status).to.equal('cancelled');
      await expectReferenceFree(s.merchant_reference);
    });

    it('Pending: 303 to success_url with status=pending_provider; transaction still pending', async () => {
      const s = await open();
      const target = redirectOf(await click(s.payment_session_id, 'pending'));
      expectReturn(target, SUCCESS_URL, s, 'pending_provider');
      const pending = await sessionNow(s.payment_session_id);
      expect(pending.status).to.equal('pending_provider');
      expect(pending.finalised_at).to.equal(null);
      expect(pending.provider_transaction_id).to.equal(null);
      expect((await transactionNow(s.transaction_id)).status).to.equal('pending');
      await expectReferenceHeld(s.merchant_reference, {
        transaction_id: s.transaction_id,
        payment_session_id: s.payment_session_id,
      });
    });

    it('a second click on a finished session changes nothing', async () => {
      const s = await open();
      redirectOf(await click(s.payment_session_id, 'pay'));
      const paid = await sessionNow(s.payment_session_id);
      t.clock.advance(1000);
      for (const action of ['fail', 'cancel', 'pending', 'pay']) {
        const target = redirectOf(await click(s.payment_session_id, action));
        expect(target.searchParams.get('status'), action).to.equal('paid');
        expect(await sessionNow(s.payment_session_id), action).to.deep.equal(paid);
        expect((await transactionNow(s.transaction_id)).status, action).to.equal('captured');
      }

      const cancelled = await open();
      redirectOf(await click(cancelled.payment_session_id, 'cancel'));
      const target = redirectOf(await click(cancelled.payment_session_id, 'pay'));
      expect(target.searchParams.get('status')).to.equal('cancelled');
      expect((await sessionNow(cancelled.payment_session_id)).status).to.equal('cancelled');
      expect((await transactionNow(cancelled.transaction_id)).status).to.equal('cancelled');
    });
  });

  describe('POST /sandbox/payment-sessions/{id}/settle (sandbox.md section 10)', () => {
    const outcomes: [string, string][] = [
      ['paid', 'captured'],
      ['failed', 'failed'],
      ['cancelled', 'cancelled'],
    ];
    for (const [outcome, transactionStatusAfter] of outcomes) {
      it(`moves a session left pending_provider to ${outcome} (transaction ${transactionStatusAfter})`, async () => {
        const s = await open();
        redirectOf(await click(s.payment_session_id, 'pending'));
        const res = await settle(s.payment_session_id, { outcome });
        expect(res.status, res.text).to.equal(200);
        expect(res.body.success).to.equal(true);
        const after = await sessionNow(s.payment_session_id);
        expect(after.status).to.equal(outcome);
        expect(after.finalised_at).to.match(ISO_MICROS);
        if (outcome === 'paid') expect(after.provider_transaction_id).to.be.a('string').and.not.equal('');
        else expect(after.provider_transaction_id).to.equal(null);
        expect((await transactionNow(s.transaction_id)).status).to.equal(transactionStatusAfter);
      });
    }

    it('answers 409 on a finished session and changes nothing', async () => {
      const s = await open();
      redirectOf(await click(s.payment_session_id, 'pay'));
      const paid = await sessionNow(s.payment_session_id);
      for (const outcome of ['paid', 'failed', 'cancelled']) {
        const res = await settle(s.payment_session_id, { outcome });
        expect(res.status, `${outcome}: ${res.text}`).to.equal(409);
        expect(res.body.success).to.equal(false);
      }
      expect(await sessionNow(s.payment_session_id)).to.deep.equal(paid);
      expect((await transactionNow(s.transaction_id)).status).to.equal('captured');
    });

    it('answers 422 on a bad or missing outcome and changes nothing', async () => {
      const s = await open();
      redirectOf(await click(s.payment_session_id, 'pending'));
      for (const body of [{ outcome: 'refunded' }, { outcome: 'expired' }, { outcome: 'pending' }, {}]) {
        expectValidation(await settle(s.payment_session_id, body), 'outcome');
      }
      expect((await sessionNow(s.payment_session_id)).status).to.equal('pending_provider');
      expect((await transactionNow(s.transaction_id)).status).to.equal('pending');
    });

    it("answers 404 for an unknown session or another merchant's", async () => {
      const s = await open();
      expectError(await settle('ps_AAAAAAAAAAAAAAAAAAAAAAAA', { outcome: 'paid' }), 404, 'ERR_NOT_FOUND');
      expectError(
        await settle(s.payment_session_id, { outcome: 'paid' }, OTHER_MERCHANT_KEY),
        404,
        'ERR_NOT_FOUND',
      );
      expect((await sessionNow(s.payment_session_id)).status).to.equal('pending_redirect');
    });
  });

  describe('POST /sandbox/transactions/{id}/chargeback on a session (sandbox.md section 10)', () => {
    it("charges back a paid session's transaction: transaction and session chargeback", async () => {
      const s = await open();
      redirectOf(await click(s.payment_session_id, 'pay'));
      const res = await chargeback(s.transaction_id);
      expect(res.status, res.text).to.equal(200);
      expect((await transactionNow(s.transaction_id)).status).to.equal('chargeback');
      const after = await sessionNow(s.payment_session_id);
      expect(after.status).to.equal('chargeback');
      expect(after.provider_transaction_id).to.be.a('string').and.not.equal('');
    });

    it('answers 400 for the transaction of an unpaid session, which keeps its state', async () => {
      const open1 = await open();
      expectError(await chargeback(open1.transaction_id), 400, 'ERR_INVALID_TRANSACTION');
      expect((await sessionNow(open1.payment_session_id)).status).to.equal('pending_redirect');
      expect((await transactionNow(open1.transaction_id)).status).to.equal('pending');

      const waiting = await open();
      redirectOf(await click(waiting.payment_session_id, 'pending'));
      expect((await chargeback(waiting.transaction_id)).status).to.equal(400);
      expect((await sessionNow(waiting.payment_session_id)).status).to.equal('pending_provider');

      const failed = await open();
      redirectOf(await click(failed.payment_session_id, 'fail'));
      expect((await chargeback(failed.transaction_id)).status).to.equal(400);
      expect((await sessionNow(failed.payment_session_id)).status).to.equal('failed');
      expect((await transactionNow(failed.transaction_id)).status).to.equal('failed');
    });
  });
});

describe('gateway: payment sessions behind the webhook readiness gate (sandbox.md section 7)', () => {
  const GATED_KEY = 'sk_test_merchant_1004_gated';
  let t: TestGateway;
  let receiver: Receiver;

  before(async () => {
    receiver = await startReceiver();
    t = await startGateway({
      seed: (seed) => {
        allowPrivateUrls(seed);
        seed.merchants[0]!.webhook_readiness_gate = true;
        // A second gated merchant, made ready by a delivery instead of a ping.
        seed.merchants.push({
          id: 1004,
          name: 'Gated Shop',
          active: true,
          currencies: ['EUR'],
          webhook_readiness_gate: true,
          payment_methods: [
            {
              payment_method: 'psc',
              label: 'paysafecard',
              provider: 'sandbox-psc',
              countries: [],
              currencies: ['EUR'],
              enabled: true,
            },
          ],
        });
        seed.api_keys.push({ key: GATED_KEY, merchant_id: 1004, scopes: ['webhooks:manage'], active: true });
      },
    });
  });

  after(async () => {
    await t.close();
    await receiver.close();
  });

  const create = (key?: string) =>
    t.call('POST', '/api/v1/payment-sessions', {
      body: sessionBody({ payment_method: 'psc' }),
      ...(key === undefined ? {} : { key }),
    });
  const sessions = () => t.gateway.deps.state.sessions.size;

  it('answers 400 ERR_WEBHOOK_NOT_READY until the endpoint has had a successful ping, then 201', async () => {
    expectError(await create(), 400, 'ERR_WEBHOOK_NOT_READY');

    receiver.behave({ kind: 'answer', status: 500, body: 'down' });
    const put = await t.call('PUT', '/api/v1/webhook', { body: { url: receiver.url } });
    expect(put.status, put.text).to.equal(201);
    expectError(await create(), 400, 'ERR_WEBHOOK_NOT_READY');

    const failedPing = await t.call('POST', '/api/v1/webhook/test');
    expect(failedPing.status, failedPing.text).to.equal(200);
    expect(failedPing.body.data.success).to.equal(false);
    expectError(await create(), 400, 'ERR_WEBHOOK_NOT_READY');
    expect(sessions()).to.equal(0);

    receiver.behave({ kind: 'answer', status: 200, body: 'ok' });
    const ping = await t.call('POST', '/api/v1/webhook/test');
    expect(ping.status, ping.text).to.equal(200);
    expect(ping.body.data.success).to.equal(true);
    const res = await create();
    expect(res.status, res.text).to.equal(201);
    expect(res.body.data.payment_session.status).to.equal('pending_redirect');
  });

  it('opens the gate after a successful event delivery as well', async () => {
    expectError(await create(GATED_KEY), 400, 'ERR_WEBHOOK_NOT_READY');
    const put = await t.call('PUT', '/api/v1/webhook', { key: GATED_KEY, body: { url: receiver.url } });
    expect(put.status, put.text).to.equal(201);
    const sale = await t.call('POST', '/api/v1/transactions', { key: GATED_KEY, body: transactionBody() });
    expect(sale.status, sale.text).to.equal(200);
    expectError(await create(GATED_KEY), 400, 'ERR_WEBHOOK_NOT_READY');
    const report = await t.gateway.controls.tick();
    expect(report.delivered).to.equal(1);
    const res = await create(GATED_KEY);
    expect(res.status, res.text).to.equal(201);
  });
});
