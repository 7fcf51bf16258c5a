import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { GatewayPersistence } from '../../../src/gateway/app.js';
import type { SeedInput } from '../../../src/gateway/state/seed.js';
import { seededRandom } from '../../../src/shared/ids.js';
import {
  type Answer,
  card,
  DECLINES_ONCE_SAVED,
  expectStatus,
  liftRateLimits,
  luhnNumber,
  OTHER_MERCHANT_KEY,
  PARTNER_KEY,
  startGateway,
  type TestGateway,
  transactionBody,
  uniqueReference,
} from '../../support/gateway.js';
import { allowPrivateUrls, type Receiver, startReceiver } from '../../support/receiver.js';

/**
 * sandbox.md section 11, Payment instruments (card on file), through HTTP: saving a card with an
 * approved payment, listing and revoking instruments, and paying with a vault token.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read records field by field
type Json = any;

const VAULT_TOKEN = /^vt_[A-Za-z0-9]{24}$/;
const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const CHALLENGE_CARD = '4000000000003220';
const INSTRUMENT_FIELDS = [
  'vault_token',
  'merchant_id',
  'merchant_customer_id',
  'brand',
  'last4',
  'exp_month',
  'exp_year',
  'name',
  'status',
  'created_at',
  'revoked_at',
];

const seedFor = (seed: SeedInput) => {
  allowPrivateUrls(seed);
  liftRateLimits(seed);
};

const customerId = () => uniqueReference('cust');

/** The calls of this file against one sandbox. */
function api(gw: () => TestGateway) {
  const pay = (body: Record<string, unknown>, key?: string) =>
    gw().call('POST', '/api/v1/transactions', { body, ...(key === undefined ? {} : { key }) });
  return {
    pay,
    /** A payment with `number` that asks to keep the card for `customer`. */
    save: (number: string, customer: string, overrides: Record<string, unknown> = {}, key?: string) =>
      pay(
        transactionBody({
          card: card(number),
          save_payment_instrument: true,
          customer: { merchant_customer_id: customer, email: 'ada@example.com' },
          ...overrides,
        }),
        key,
      ),
    /** A payment with the token in place of a card. */
    payWith: (token: string, overrides: Record<string, unknown> = {}, key?: string) => {
      const body: Record<string, unknown> = transactionBody({ vault_token: token, ...overrides });
      delete body.card;
      return pay(body, key);
    },
    list: (customer: string, o: { key?: string | null; query?: string } = {}) =>
      gw().call(
        'GET',
        `/api/v1/payment-instruments?merchant_customer_id=${encodeURIComponent(customer)}${o.query ?? ''}`,
        o.key === undefined ? {} : { key: o.key },
      ),
    revoke: (token: string, key?: string) =>
      gw().call('DELETE', `/api/v1/payment-instruments/${token}`, key === undefined ? {} : { key }),
    status: (id: number, key?: string) =>
      gw().call('GET', `/api/v1/transactions/${id}/status`, key === undefined ? {} : { key }),
  };
}

function expectError(res: Answer, status: number, code: string): void {
  expect(res.status, `${res.status} ${res.text}`).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.code, res.text).to.equal(code);
}

/** A saving payment's token, after checking the payment was approved and carries one. */
function tokenOf(res: Answer): string {
  expectStatus(res, 200);
  expect(res.body.data.vault_token, res.text).to.match(VAULT_TOKEN);
  return res.body.data.vault_token;
}

/** A challenge verification for `amount` EUR, authenticated on the hosted page: its `tds_` id. */
async function authenticatedChallenge(gw: TestGateway, amount: number): Promise<string> {
  const verify = await gw.call('POST', '/api/v1/3ds/verify', {
    body: { amount, currency: 'EUR', card: card(CHALLENGE_CARD), auth_url: 'https://shop.example/3ds' },
  });
  expectStatus(verify, 200);
  expect(verify.body.data.auth_type).to.equal('challenge');
  const done = await gw.call('POST', new URL(verify.body.data.challenge_url).pathname, {
    key: null,
    rawBody: 'action=authenticate',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  expectStatus(done, 303);
  return verify.body.data.public_id;
}

describe('gateway: payment instruments, card on file (sandbox.md section 11)', () => {
  let gw: TestGateway;
  const { pay, save, payWith, list, revoke, status } = api(() => gw);
  const instruments = () => gw.gateway.deps.state.instruments.records;
  const transactionCount = () => gw.gateway.deps.state.transactions.size;

  before(async () => {
    gw = await startGateway({ seed: seedFor });
  });
  after(async () => {
    await gw?.close();
  });

  describe('saving a card with an approved payment', () => {
    it('a sale keeps its card: the record carries vault_token (in the answer and in GET status), and the instrument has every field', async () => {
      const customer = customerId();
      const sale = await save('4242424242424242', customer);
      const token = tokenOf(sale);
      expect(sale.body.data.status).to.equal('captured');
      const read = await status(sale.body.data.id);
      expectStatus(read, 200);
      expect(read.body.data.vault_token).to.equal(token);

      const listed = await list(customer);
      expectStatus(listed, 200);
      expect(listed.body.data.payment_instruments).to.have.length(1);
      const instrument = listed.body.data.payment_instruments[0];
      expect(Object.keys(instrument)).to.have.members(INSTRUMENT_FIELDS);
      expect(instrument).to.deep.include({
        vault_token: token,
        merchant_id: 1001,
        merchant_customer_id: customer,
        brand: 'visa',
        last4: '4242',
        exp_month: 12,
        exp_year: 2034,
        name: 'Ada Lovelace',
        status: 'active',
        revoked_at: null,
      });
      expect(instrument.created_at).to.match(ISO_MICROS);
      expect(instrument.created_at).to.equal(sale.body.data.created_at);
    });

    it('an auth keeps its card too; its capture record carries null, the auth keeps the token', async () => {
      const auth = await save('5555555555554444', customerId(), { transaction_type: 'auth' });
      const token = tokenOf(auth);
      expect(auth.body.data.status).to.equal('auth');
      const capture = await gw.call('POST', `/api/v1/transactions/${auth.body.data.id}/capture`, {
        body: { amount: 12.34 },
      });
      expectStatus(capture, 200);
      expect(capture.body.data.transaction.vault_token).to.equal(null);
      expect((await status(auth.body.data.id)).body.data.vault_token).to.equal(token);
    });

    it('a payment that does not ask keeps nothing, and its record carries vault_token null', async () => {
      const before = instruments().size;
      const customer = customerId();
      const plain = await pay(
        transactionBody({ customer: { merchant_customer_id: customer, email: 'ada@example.com' } }),
      );
      expectStatus(plain, 200);
      expect(plain.body.data).to.have.property('vault_token', null);
      const unasked = await save('4242424242424242', customer, { save_payment_instrument: false });
      expectStatus(unasked, 200);
      expect(unasked.body.data.vault_token).to.equal(null);
      expect(instruments().size).to.equal(before);
      expect((await list(customer)).body.data.payment_instruments).to.deep.equal([]);
    });

    it('a payment that is not approved keeps nothing: an issuer decline, the risk rule, a 3DS refusal', async () => {
      const before = instruments().size;
      const customer = customerId();
      const declined = await save('4000000000000002', customer);
      expectError(declined, 400, 'ERR_CARD_DO_NOT_HONOR');
      expect(declined.body.data.status).to.equal('failed');
      expect(declined.body.data.vault_token).to.equal(null);
      const risky = await save('4242424242424242', customer, {
        customer: { merchant_customer_id: customer, email: 'mallory@risk.test' },
      });
      expectError(risky, 400, 'ERR_RISK_REJECTED');
      expect(risky.body.data.vault_token).to.equal(null);
      expectError(await save(CHALLENGE_CARD, customer), 400, 'ERR_3DS_REQUIRED');
      expectError(
        await save('4242424242424242', customer, { card: card('4242424242424242', { exp_year: 2020 }) }),
        400,
        'ERR_EXPIRED_CARD',
      );
      expect(instruments().size).to.equal(before);
      expect((await list(customer)).body.data.payment_instruments).to.deep.equal([]);
    });

    for (const [name, customer] of [
      ['no customer', undefined],
      ['a customer without merchant_customer_id', { email: 'ada@example.com' }],
      ['an empty merchant_customer_id', { merchant_customer_id: '', email: 'ada@example.com' }],
    ] as const) {
      it(`asking to save with ${name}: 422 on errors["customer.merchant_customer_id"], nothing recorded`, async () => {
        const before = [transactionCount(), instruments().size];
        const body: Record<string, unknown> = transactionBody({ save_payment_instrument: true, customer });
        if (customer === undefined) delete body.customer;
        const res = await pay(body);
        expectError(res, 422, 'ERR_VALIDATION_FAILED');
        expect(res.body.errors, res.text).to.have.property('customer.merchant_customer_id');
        expect(res.body.errors['customer.merchant_customer_id'][0]).to.be.a('string').and.not.equal('');
        expect([transactionCount(), instruments().size]).to.deep.equal(before);
      });
    }

    it('save_payment_instrument must be a boolean, and saves a card only (not with a vault_token): 422', async () => {
      const notBoolean = await save('4242424242424242', customerId(), { save_payment_instrument: 'yes' });
      expectError(notBoolean, 422, 'ERR_VALIDATION_FAILED');
      expect(notBoolean.body.errors).to.have.property('save_payment_instrument');
      const token = tokenOf(await save('4242424242424242', customerId()));
      const withToken = await payWith(token, {
        save_payment_instrument: true,
        customer: { merchant_customer_id: 'c', email: 'ada@example.com' },
      });
      expectError(withToken, 422, 'ERR_VALIDATION_FAILED');
      expect(withToken.body.errors).to.have.property('save_payment_instrument');
    });

    it('the same card saved again for the same customer returns the same token, with the latest expiry', async () => {
      const customer = customerId();
      const first = tokenOf(await save('4242424242424242', customer));
      const again = await save('4242424242424242', customer, {
        transaction_type: 'auth',
        card: card('4242424242424242', { exp_month: 3, exp_year: 2035 }),
      });
      expect(tokenOf(again)).to.equal(first);
      const listed = (await list(customer)).body.data.payment_instruments;
      expect(listed.map((i: Json) => i.vault_token)).to.deep.equal([first]);
      expect(listed[0]).to.include({ exp_month: 3, exp_year: 2035 });
    });

    it('another customer, another card, or another merchant: another token', async () => {
      const customer = customerId();
      const token = tokenOf(await save('4242424242424242', customer));
      const otherCustomer = tokenOf(await save('4242424242424242', customerId()));
      const otherCard = tokenOf(await save('5555555555554444', customer));
      // The same customer id at another merchant is that merchant's customer.
      const otherMerchant = tokenOf(await save('4242424242424242', customer, {}, OTHER_MERCHANT_KEY));
      expect(new Set([token, otherCustomer, otherCard, otherMerchant]).size).to.equal(4);
    });
  });

  describe('GET /api/v1/payment-instruments', () => {
    it('lists the active ones, newest first, with the pagination of the other lists', async () => {
      const customer = customerId();
      const tokens: string[] = [];
      for (const number of ['4242424242424242', '5555555555554444', luhnNumber('37', 15), luhnNumber('6011')])
        tokens.push(tokenOf(await save(number, customer)));
      expectStatus(await revoke(tokens[1]!), 200);
      const listed = await list(customer);
      expectStatus(listed, 200);
      expect(listed.body.data.payment_instruments.map((i: Json) => i.vault_token)).to.deep.equal([
        tokens[3],
        tokens[2],
        tokens[0],
      ]);
      expect(listed.body.data.payment_instruments.every((i: Json) => i.status === 'active')).to.equal(true);
      expect(listed.body.data.pagination).to.deep.equal({
        current_page: 1,
        last_page: 1,
        per_page: 25,
        total: 3,
      });
      const second = await list(customer, { query: '&per_page=2&page=2' });
      expect(second.body.data.payment_instruments.map((i: Json) => i.vault_token)).to.deep.equal([tokens[0]]);
      expect(second.body.data.pagination).to.deep.equal({
        current_page: 2,
        last_page: 2,
        per_page: 2,
        total: 3,
      });
    });

    it('merchant_customer_id is required: 422 naming it', async () => {
      for (const path of [
        '/api/v1/payment-instruments',
        '/api/v1/payment-instruments?merchant_customer_id=',
      ]) {
        const res = await gw.call('GET', path);
        expectError(res, 422, 'ERR_VALIDATION_FAILED');
        expect(res.body.errors, res.text).to.have.property('merchant_customer_id');
      }
      expectError(await list('x', { query: '&per_page=0' }), 422, 'ERR_VALIDATION_FAILED');
    });

    it("another merchant's customer of the same id has no instruments there", async () => {
      const customer = customerId();
      tokenOf(await save('4242424242424242', customer));
      const other = await list(customer, { key: OTHER_MERCHANT_KEY });
      expectStatus(other, 200);
      expect(other.body.data.payment_instruments).to.deep.equal([]);
      expect(other.body.data.pagination.total).to.equal(0);
    });

    it('partner keys name a linked merchant_id (400 ERR_AUTH_FAILED without one, or an unlinked one)', async () => {
      const customer = customerId();
      const token = tokenOf(await save('4242424242424242', customer));
      const linked = await list(customer, { key: PARTNER_KEY, query: '&merchant_id=1001' });
      expectStatus(linked, 200);
      expect(linked.body.data.payment_instruments.map((i: Json) => i.vault_token)).to.deep.equal([token]);
      expectError(await list(customer, { key: PARTNER_KEY }), 400, 'ERR_AUTH_FAILED');
      expectError(
        await list(customer, { key: PARTNER_KEY, query: '&merchant_id=1002' }),
        400,
        'ERR_AUTH_FAILED',
      );
      expectError(
        await list(customer, { key: PARTNER_KEY, query: '&merchant_id=x' }),
        400,
        'ERR_AUTH_FAILED',
      );
      expectError(await list(customer, { key: null }), 401, 'ERR_AUTH_FAILED');
    });
  });

  describe('brand and last four digits', () => {
    const cases: [string, string][] = [
      ['4242424242424242', 'visa'],
      [luhnNumber('4917'), 'visa'],
      [luhnNumber('51'), 'mastercard'],
      ['5555555555554444', 'mastercard'],
      [luhnNumber('2221'), 'mastercard'],
      [luhnNumber('2720'), 'mastercard'],
      [luhnNumber('34', 15), 'amex'],
      [luhnNumber('37', 15), 'amex'],
      [luhnNumber('2220'), 'other'],
      [luhnNumber('2721'), 'other'],
      [luhnNumber('56'), 'other'],
      [luhnNumber('6011'), 'other'],
      [luhnNumber('35'), 'other'],
    ];
    for (const [number, brand] of cases) {
      it(`${number.slice(0, 4)}… (${number.length} digits) is saved as ${brand}, last4 ${number.slice(-4)}`, async () => {
        const customer = customerId();
        tokenOf(await save(number, customer));
        const [instrument] = (await list(customer)).body.data.payment_instruments;
        expect(instrument).to.include({ brand, last4: number.slice(-4) });
      });
    }
  });

  describe('paying with a vault token', () => {
    it("a sale and an auth are approved, with the token and the saving payment's cardholder", async () => {
      const saving = await save('4242424242424242', customerId());
      const token = tokenOf(saving);
      const sale = await payWith(token);
      expectStatus(sale, 200);
      expect(sale.body.data).to.include({
        status: 'captured',
        vault_token: token,
        cardholder_id: saving.body.data.cardholder_id,
        merchant_id: 1001,
      });
      const auth = await payWith(token, { transaction_type: 'auth', amount: 5 });
      expectStatus(auth, 200);
      expect(auth.body.data).to.include({ status: 'auth', amount: 500, vault_token: token });
      // A partner key pays for its linked merchant with the merchant's token.
      const partner = await payWith(token, { merchant_id: 1001 }, PARTNER_KEY);
      expectStatus(partner, 200);
      expect(partner.body.data.vault_token).to.equal(token);
    });

    it('the 3DS-challenge card, saved with its authenticated verification, pays by token without 3DS', async () => {
      const customer = customerId();
      const verification = await authenticatedChallenge(gw, 12.34);
      const token = tokenOf(
        await save(CHALLENGE_CARD, customer, { card_verification_data: { id: verification } }),
      );
      // The card itself still asks for 3D Secure ...
      expectError(await pay(transactionBody({ card: card(CHALLENGE_CARD) })), 400, 'ERR_3DS_REQUIRED');
      // ... its token does not, and ignores card_verification_data, even an unknown one.
      const paid = await payWith(token, { amount: 99 });
      expectStatus(paid, 200);
      expect(paid.body.data).to.include({ status: 'captured', vault_token: token });
      const ignored = await payWith(token, { card_verification_data: { id: 'tds_unknownunknownunknown00' } });
      expectStatus(ignored, 200);
    });

    it('the 0341 card is approved and saved; every later payment with its token is declined ERR_CARD_DO_NOT_HONOR, recorded failed', async () => {
      const token = tokenOf(await save(DECLINES_ONCE_SAVED, customerId()));
      for (const type of ['sale', 'auth', 'sale']) {
        const reference = uniqueReference('0341');
        const declined = await payWith(token, { transaction_type: type, reference });
        expectError(declined, 400, 'ERR_CARD_DO_NOT_HONOR');
        expect(declined.body.data).to.include({ status: 'failed', vault_token: token });
        expect(gw.gateway.deps.state.transactions.get(declined.body.data.id)?.status).to.equal('failed');
        // A decline releases the reference.
        expectStatus(await pay(transactionBody({ reference })), 200);
      }
      // The card itself is still approved when sent as a card.
      expectStatus(await pay(transactionBody({ card: card(DECLINES_ONCE_SAVED) })), 200);
    });

    it('the rules of card payments hold: risk rule (cancelled), duplicate reference, currency, maximum', async () => {
      const token = tokenOf(await save('4242424242424242', customerId()));
      const risky = await payWith(token, { customer: { email: 'mallory@risk.test' } });
      expectError(risky, 400, 'ERR_RISK_REJECTED');
      expect(risky.body.data).to.include({ status: 'cancelled', vault_token: token });
      const held = await payWith(token);
      expectStatus(held, 200);
      const duplicate = await payWith(token, { reference: held.body.data.merchant_trans_id });
      expectError(duplicate, 409, 'ERR_DUPLICATE');
      expect(duplicate.body.data).to.deep.equal({ transaction_id: held.body.data.id });
      expectError(await payWith(token, { currency: 'CHF' }), 400, 'ERR_PAYMENT_METHOD_NOT_ENABLED');
      expectError(await payWith(token, { amount: 1000000.01 }), 400, 'ERR_ADAPTER_INVALID_AMOUNT');
    });

    it('both card and vault_token: 422, nothing recorded', async () => {
      const token = tokenOf(await save('4242424242424242', customerId()));
      const before = transactionCount();
      const res = await pay(transactionBody({ vault_token: token }));
      expectError(res, 422, 'ERR_VALIDATION_FAILED');
      expect(Object.keys(res.body.errors)).to.include('card');
      expect(transactionCount()).to.equal(before);
    });

    it('an unknown token: 400 ERR_INVALID_CARD_TOKEN with nothing recorded; DELETE 404', async () => {
      const before = transactionCount();
      const reference = uniqueReference('unknown');
      const res = await payWith('vt_unknownunknownunknown00', { reference });
      expectError(res, 400, 'ERR_INVALID_CARD_TOKEN');
      expect(res.body.data).to.equal(null);
      expect(transactionCount()).to.equal(before);
      expectStatus(await pay(transactionBody({ reference })), 200);
      expectError(await revoke('vt_unknownunknownunknown00'), 404, 'ERR_NOT_FOUND');
    });
  });

  describe('DELETE /api/v1/payment-instruments/{vault_token}', () => {
    it('revokes: the record, revoked with revoked_at; again the same answer; the token pays no more', async () => {
      const customer = customerId();
      const token = tokenOf(await save('4242424242424242', customer));
      gw.clock.advance(5_000); // revoked_at differs from created_at
      const first = await revoke(token);
      expectStatus(first, 200);
      expect(Object.keys(first.body.data)).to.have.members(INSTRUMENT_FIELDS);
      expect(first.body.data).to.include({ vault_token: token, status: 'revoked', last4: '4242' });
      expect(first.body.data.revoked_at).to.match(ISO_MICROS);
      expect(first.body.data.revoked_at).to.not.equal(first.body.data.created_at);

      gw.clock.advance(5_000);
      const again = await revoke(token);
      expectStatus(again, 200);
      expect(again.body.data).to.deep.equal(first.body.data);

      const before = transactionCount();
      const res = await payWith(token);
      expectError(res, 400, 'ERR_INVALID_CARD_TOKEN');
      expect(transactionCount()).to.equal(before);
      expect((await list(customer)).body.data.payment_instruments).to.deep.equal([]);
    });

    it('the card saved again after a revoke gets a new active token; the old one stays revoked', async () => {
      const customer = customerId();
      const old = tokenOf(await save('4242424242424242', customer));
      expectStatus(await revoke(old), 200);
      const fresh = tokenOf(await save('4242424242424242', customer));
      expect(fresh).to.not.equal(old);
      expect(
        (await list(customer)).body.data.payment_instruments.map((i: Json) => i.vault_token),
      ).to.deep.equal([fresh]);
      expect((await revoke(old)).body.data.status).to.equal('revoked');
      expectError(await payWith(old), 400, 'ERR_INVALID_CARD_TOKEN');
      expectStatus(await payWith(fresh), 200);
    });

    it("another merchant's token: 404 on DELETE (it stays active), 400 ERR_INVALID_CARD_TOKEN on paying", async () => {
      const customer = customerId();
      const token = tokenOf(await save('4242424242424242', customer));
      expectError(await revoke(token, OTHER_MERCHANT_KEY), 404, 'ERR_NOT_FOUND');
      const before = transactionCount();
      expectError(await payWith(token, {}, OTHER_MERCHANT_KEY), 400, 'ERR_INVALID_CARD_TOKEN');
      expect(transactionCount()).to.equal(before);
      expect((await list(customer)).body.data.payment_instruments[0]).to.include({
        vault_token: token,
        status: 'active',
      });
      // The other way round too: 1002's token is unknown to 1001.
      const theirs = tokenOf(await save('4242424242424242', customer, {}, OTHER_MERCHANT_KEY));
      expectError(await revoke(theirs), 404, 'ERR_NOT_FOUND');
      expectError(await payWith(theirs), 400, 'ERR_INVALID_CARD_TOKEN');
    });

    it("a partner key revokes a linked merchant's instrument", async () => {
      const token = tokenOf(await save('4242424242424242', customerId()));
      const res = await revoke(token, PARTNER_KEY);
      expectStatus(res, 200);
      expect(res.body.data.status).to.equal('revoked');
    });
  });
});

describe('gateway: a saved card expires by the sandbox clock', () => {
  let gw: TestGateway;
  const { save, payWith } = api(() => gw);
  before(async () => {
    gw = await startGateway({ seed: seedFor });
  });
  after(async () => {
    await gw?.close();
  });

  it('pays through the end of its expiry month, then 400 ERR_EXPIRED_CARD with nothing recorded', async () => {
    // The sandbox clock starts on 2026-11-01 12:00 UTC: a card expiring 11/2026 is valid for 30 days less 12 hours.
    const number = '4242424242424242';
    const token = tokenOf(
      await save(number, customerId(), { card: card(number, { exp_month: 11, exp_year: 2026 }) }),
    );
    expectStatus(await payWith(token), 200);
    const advanced = await gw.call('POST', '/sandbox/clock/advance', {
      body: { seconds: 29 * 86400 + 11 * 3600 },
    });
    expectStatus(advanced, 200);
    expectStatus(await payWith(token), 200); // 2026-11-30 23:00
    expectStatus(await gw.call('POST', '/sandbox/clock/advance', { body: { seconds: 3600 } }), 200);
    const before = gw.gateway.deps.state.transactions.size;
    const reference = uniqueReference('expired');
    const res = await payWith(token, { reference });
    expectError(res, 400, 'ERR_EXPIRED_CARD');
    expect(res.body.data).to.equal(null);
    expect(gw.gateway.deps.state.transactions.size).to.equal(before);
  });
});

describe('gateway: webhook payloads carry vault_token', () => {
  let gw: TestGateway;
  let rx: Receiver;
  const { pay, save, payWith } = api(() => gw);
  before(async () => {
    rx = await startReceiver();
    gw = await startGateway({ seed: seedFor });
    expectStatus(await gw.call('PUT', '/api/v1/webhook', { body: { url: rx.url } }), 201);
  });
  after(async () => {
    await gw?.close();
    await rx?.close();
  });

  it('transaction.captured of a saving sale and of a token payment name the token; a plain sale null; a token decline too', async () => {
    const saving = await save('4242424242424242', customerId());
    const token = tokenOf(saving);
    const byToken = await payWith(token);
    expectStatus(byToken, 200);
    const plain = await pay(transactionBody());
    expectStatus(plain, 200);
    const declining = tokenOf(await save(DECLINES_ONCE_SAVED, customerId()));
    const declined = await payWith(declining);
    expectError(declined, 400, 'ERR_CARD_DO_NOT_HONOR');
    await gw.gateway.controls.tick();

    const payloadOf = (id: number, type: string) => {
      const delivery = rx.received.find((r) => {
        const json = r.json as Json;
        return json?.type === type && json?.data?.transaction?.id === id;
      });
      expect(delivery, `${type} for ${id}`).to.not.equal(undefined);
      return (delivery!.json as Json).data.transaction;
    };
    expect(payloadOf(saving.body.data.id, 'transaction.captured').vault_token).to.equal(token);
    expect(payloadOf(byToken.body.data.id, 'transaction.captured').vault_token).to.equal(token);
    expect(payloadOf(plain.body.data.id, 'transaction.captured')).to.have.property('vault_token', null);
    expect(payloadOf(declined.body.data.id, 'transaction.failed').vault_token).to.equal(declining);
  });
});

describe('gateway: instruments kept across a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-instruments-'));
  const persistence: GatewayPersistence = { file: join(dir, 'state.json'), key: randomBytes(32) };
  let first: TestGateway;
  let second: TestGateway;
  const customer = customerId();
  let saving: Answer;
  let token: string;
  let revokedToken: string;
  let revokedRecord: Json;
  let listedBefore: Json;
  let file: Json;

  before(async () => {
    first = await startGateway({ seed: seedFor, persistence, random: seededRandom(1) });
    const a = api(() => first);
    saving = await a.save('4242424242424242', customer);
    token = tokenOf(saving);
    revokedToken = tokenOf(await a.save('5555555555554444', customer));
    revokedRecord = (await a.revoke(revokedToken)).body.data;
    listedBefore = (await a.list(customer)).body.data;
    await first.close();
    file = JSON.parse(readFileSync(persistence.file, 'utf8'));
    // Another random seed, as another process would have.
    second = await startGateway({ seed: seedFor, persistence, random: seededRandom(2) });
  });
  after(async () => {
    await second?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the state file holds the instruments, and the token pays after the restart as before', async () => {
    expect(file.instruments.map((i: Json) => [i.vaultToken, i.status])).to.deep.equal([
      [token, 'active'],
      [revokedToken, 'revoked'],
    ]);
    const a = api(() => second);
    expect((await a.list(customer)).body.data).to.deep.equal(listedBefore);
    const paid = await a.payWith(token);
    expectStatus(paid, 200);
    expect(paid.body.data).to.include({ vault_token: token, cardholder_id: saving.body.data.cardholder_id });
    expect((await a.status(saving.body.data.id)).body.data.vault_token).to.equal(token);
  });

  it('the same card saved again keeps its token; the revoked one stays revoked', async () => {
    const a = api(() => second);
    expect(tokenOf(await a.save('4242424242424242', customer))).to.equal(token);
    expect((await a.revoke(revokedToken)).body.data).to.deep.equal(revokedRecord);
    expectError(await a.payWith(revokedToken), 400, 'ERR_INVALID_CARD_TOKEN');
  });
});
