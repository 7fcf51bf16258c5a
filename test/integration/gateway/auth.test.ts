import { expect } from 'chai';
import {
  type Answer,
  type CallOptions,
  card,
  INACTIVE_KEY,
  INACTIVE_MERCHANT_KEY,
  MERCHANT_KEY,
  OTHER_MERCHANT_KEY,
  PARTNER_KEY,
  startGateway,
  type TestGateway,
  transactionBody,
} from '../../support/gateway.js';

/** gateway-api.md, Authentication rules 1, 2 and 4. */

function expectAuthFailed(answer: Answer, status: 400 | 401 | 403): void {
  expect(answer.status, answer.text).to.equal(status);
  expect(answer.body?.success, answer.text).to.equal(false);
  expect(answer.body?.code, answer.text).to.equal('ERR_AUTH_FAILED');
  expect(answer.body?.data, answer.text).to.equal(null);
}

const verifyBody = () => ({
  amount: 12.34,
  currency: 'EUR',
  card: card(),
  auth_url: 'https://shop.example/3ds-return',
});

describe('gateway: authentication', () => {
  let gw: TestGateway;
  /** An auth, a sale and another auth of merchant 1001, made before each test. */
  let authId: number;
  let saleId: number;
  let secondAuthId: number;

  const txCount = () => gw.gateway.deps.state.transactions.size;
  const snapshot = () =>
    JSON.stringify(
      [...gw.gateway.deps.state.transactions.values()].map((t) => [t.id, t.status, t.refundedAmount]),
    );

  beforeEach(async () => {
    gw = await startGateway();
    const a = await gw.call('POST', '/api/v1/transactions', {
      body: transactionBody({ transaction_type: 'auth' }),
    });
    const s = await gw.call('POST', '/api/v1/transactions', { body: transactionBody() });
    const a2 = await gw.call('POST', '/api/v1/transactions', {
      body: transactionBody({ transaction_type: 'auth' }),
    });
    expect([a.status, s.status, a2.status]).to.deep.equal([200, 200, 200]);
    authId = a.body.data.id;
    saleId = s.body.data.id;
    secondAuthId = a2.body.data.id;
  });
  afterEach(async () => {
    await gw.close();
  });

  describe('401 ERR_AUTH_FAILED for a missing or unknown key (rule 4)', () => {
    const cases: [string, CallOptions][] = [
      ['no Authorization header', { key: null }],
      [
        'a Basic scheme',
        {
          key: null,
          headers: { authorization: `Basic ${Buffer.from(`${MERCHANT_KEY}:`).toString('base64')}` },
        },
      ],
      ['the key without a scheme', { key: null, headers: { authorization: MERCHANT_KEY } }],
      ['a Token scheme with a valid key', { key: null, headers: { authorization: `Token ${MERCHANT_KEY}` } }],
      ['Bearer with nothing after it', { key: null, headers: { authorization: 'Bearer ' } }],
      ['an unknown key', { key: 'sk_test_unknown_0000' }],
      ['a known key with a different case', { key: MERCHANT_KEY.toUpperCase() }],
      ['a known key with a suffix', { key: `${MERCHANT_KEY}x` }],
    ];
    for (const [label, options] of cases) {
      it(`${label}: initiate, status and capture`, async () => {
        const before = snapshot();
        expectAuthFailed(
          await gw.call('POST', '/api/v1/transactions', { ...options, body: transactionBody() }),
          401,
        );
        expectAuthFailed(await gw.call('GET', `/api/v1/transactions/${saleId}/status`, options), 401);
        expectAuthFailed(
          await gw.call('POST', `/api/v1/transactions/${authId}/capture`, {
            ...options,
            body: { amount: 12.34 },
          }),
          401,
        );
        expectAuthFailed(
          await gw.call('POST', '/api/v1/3ds/verify', { ...options, body: verifyBody() }),
          401,
        );
        expect(snapshot()).to.equal(before);
      });
    }
  });

  describe('403 ERR_AUTH_FAILED for a valid key that may not act (rule 4)', () => {
    it('an inactive key', async () => {
      expectAuthFailed(
        await gw.call('POST', '/api/v1/transactions', { key: INACTIVE_KEY, body: transactionBody() }),
        403,
      );
      expectAuthFailed(
        await gw.call('GET', `/api/v1/transactions/${saleId}/status`, { key: INACTIVE_KEY }),
        403,
      );
      expectAuthFailed(
        await gw.call('POST', `/api/v1/transactions/${authId}/capture`, {
          key: INACTIVE_KEY,
          body: { amount: 12.34 },
        }),
        403,
      );
    });

    it('an active key of an inactive merchant', async () => {
      const key = INACTIVE_MERCHANT_KEY;
      expectAuthFailed(await gw.call('POST', '/api/v1/transactions', { key, body: transactionBody() }), 403);
      expectAuthFailed(await gw.call('POST', '/api/v1/3ds/verify', { key, body: verifyBody() }), 403);
      expectAuthFailed(await gw.call('GET', '/api/v1/transactions/100000/status', { key }), 403);
    });

    it('a partner key on POST /api/v1/3ds/verify', async () => {
      expectAuthFailed(
        await gw.call('POST', '/api/v1/3ds/verify', { key: PARTNER_KEY, body: verifyBody() }),
        403,
      );
      expectAuthFailed(
        await gw.call('POST', '/api/v1/3ds/verify', {
          key: PARTNER_KEY,
          body: { ...verifyBody(), merchant_id: 1001 },
        }),
        403,
      );
      expect(gw.gateway.deps.state.verifications.size).to.equal(0);
    });

    it('a partner key on capture, refund and void of a linked merchant transaction (merchant-only, rule 2)', async () => {
      const before = snapshot();
      expectAuthFailed(
        await gw.call('POST', `/api/v1/transactions/${authId}/capture`, {
          key: PARTNER_KEY,
          body: { amount: 12.34 },
        }),
        403,
      );
      expectAuthFailed(
        await gw.call('POST', `/api/v1/transactions/${saleId}/refund`, {
          key: PARTNER_KEY,
          body: { amount: 1, reason: 'r' },
        }),
        403,
      );
      expectAuthFailed(
        await gw.call('POST', `/api/v1/transactions/${secondAuthId}/void`, {
          key: PARTNER_KEY,
          body: { amount: 12.34, reason: 'r' },
        }),
        403,
      );
      // ...even with merchant_id in the body.
      expectAuthFailed(
        await gw.call('POST', `/api/v1/transactions/${authId}/capture`, {
          key: PARTNER_KEY,
          body: { amount: 12.34, merchant_id: 1001 },
        }),
        403,
      );
      expect(snapshot()).to.equal(before);
      // The merchant's own key still can.
      const capture = await gw.call('POST', `/api/v1/transactions/${authId}/capture`, {
        body: { amount: 12.34 },
      });
      expect(capture.status, capture.text).to.equal(200);
    });

    it('a partner initiating for a linked but inactive merchant', async () => {
      const before = txCount();
      expectAuthFailed(
        await gw.call('POST', '/api/v1/transactions', {
          key: PARTNER_KEY,
          body: transactionBody({ merchant_id: 1003 }),
        }),
        403,
      );
      expect(txCount()).to.equal(before);
    });
  });

  describe('partner keys on POST /api/v1/transactions (rules 2 and 4)', () => {
    it('without merchant_id -> 400 ERR_AUTH_FAILED', async () => {
      const before = txCount();
      expectAuthFailed(
        await gw.call('POST', '/api/v1/transactions', { key: PARTNER_KEY, body: transactionBody() }),
        400,
      );
      expectAuthFailed(
        await gw.call('POST', '/api/v1/transactions', {
          key: PARTNER_KEY,
          body: transactionBody({ merchant_id: null }),
        }),
        400,
      );
      expect(txCount()).to.equal(before);
    });

    it('with an unlinked or unknown merchant_id -> 400 ERR_AUTH_FAILED', async () => {
      const before = txCount();
      for (const merchantId of [1002, 4242]) {
        expectAuthFailed(
          await gw.call('POST', '/api/v1/transactions', {
            key: PARTNER_KEY,
            body: transactionBody({ merchant_id: merchantId }),
          }),
          400,
        );
      }
      expect(txCount()).to.equal(before);
    });

    it('with a linked merchant_id -> 200, recorded for that merchant', async () => {
      const answer = await gw.call('POST', '/api/v1/transactions', {
        key: PARTNER_KEY,
        body: transactionBody({ merchant_id: 1001 }),
      });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.code).to.equal('');
      expect(answer.body.data.merchant_id).to.equal(1001);
      expect(gw.gateway.deps.state.transactions.get(answer.body.data.id)?.merchantId).to.equal(1001);
      // Partners may read the status of a linked merchant's transaction (rule 2).
      const status = await gw.call('GET', `/api/v1/transactions/${answer.body.data.id}/status`, {
        key: PARTNER_KEY,
      });
      expect(status.status, status.text).to.equal(200);
    });

    it('a merchant key naming another merchant_id is refused and creates nothing', async () => {
      const before = txCount();
      const answer = await gw.call('POST', '/api/v1/transactions', {
        body: transactionBody({ merchant_id: 1002 }),
      });
      expect(answer.status).to.be.oneOf([400, 403]);
      expect(answer.body.code).to.equal('ERR_AUTH_FAILED');
      expect(txCount()).to.equal(before);
    });
  });

  describe('auth failures change no state', () => {
    it('a mix of 401, 403 and 400 auth failures leaves the transaction store, references and verifications unchanged', async () => {
      const before = snapshot();
      const count = txCount();
      const refs = JSON.stringify([...(gw.gateway.deps.state.references.get(1001)?.keys() ?? [])]);
      const body = transactionBody({ reference: 'auth-fail-ref', transaction_type: 'auth' });
      const attempts: [CallOptions, number][] = [
        [{ key: null, body }, 401],
        [{ key: 'sk_test_nobody', body }, 401],
        [{ key: INACTIVE_KEY, body }, 403],
        [{ key: INACTIVE_MERCHANT_KEY, body }, 403],
        [{ key: PARTNER_KEY, body }, 400],
        [{ key: PARTNER_KEY, body: { ...body, merchant_id: 1002 } }, 400],
      ];
      for (const [options, status] of attempts) {
        expectAuthFailed(await gw.call('POST', '/api/v1/transactions', options), status as 400 | 401 | 403);
      }
      expectAuthFailed(
        await gw.call('POST', '/api/v1/3ds/verify', { key: PARTNER_KEY, body: verifyBody() }),
        403,
      );
      expectAuthFailed(
        await gw.call('POST', `/api/v1/transactions/${saleId}/refund`, {
          key: INACTIVE_KEY,
          body: { amount: 1 },
        }),
        403,
      );
      expect(txCount()).to.equal(count);
      expect(snapshot()).to.equal(before);
      expect(JSON.stringify([...(gw.gateway.deps.state.references.get(1001)?.keys() ?? [])])).to.equal(refs);
      expect(gw.gateway.deps.state.verifications.size).to.equal(0);
      // The reference those failures carried is still free.
      const ok = await gw.call('POST', '/api/v1/transactions', { body });
      expect(ok.status, ok.text).to.equal(200);
    });

    it('the other merchant cannot see or act on merchant 1001 transactions (404), and nothing changes', async () => {
      const before = snapshot();
      const status = await gw.call('GET', `/api/v1/transactions/${saleId}/status`, {
        key: OTHER_MERCHANT_KEY,
      });
      expect(status.status).to.equal(404);
      expect(status.body.code).to.equal('ERR_NOT_FOUND');
      const capture = await gw.call('POST', `/api/v1/transactions/${authId}/capture`, {
        key: OTHER_MERCHANT_KEY,
        body: { amount: 12.34 },
      });
      expect(capture.status).to.equal(404);
      expect(snapshot()).to.equal(before);
    });
  });

  describe('401 comes before body validation', () => {
    for (const [label, options] of [
      ['malformed JSON', { rawBody: '{"amount": ' }],
      ['a JSON array', { rawBody: '[]' }],
      ['an invalid field', { body: transactionBody({ amount: -5, currency: 'XX' }) }],
      ['an empty body', {}],
    ] as [string, CallOptions][]) {
      it(`${label} without a key is 401, not 422`, async () => {
        expectAuthFailed(await gw.call('POST', '/api/v1/transactions', { ...options, key: null }), 401);
        expectAuthFailed(
          await gw.call('POST', `/api/v1/transactions/${authId}/capture`, { ...options, key: null }),
          401,
        );
        expectAuthFailed(await gw.call('POST', '/api/v1/3ds/verify', { ...options, key: null }), 401);
      });
    }

    it('an inactive key with a bad body is 403, not 422', async () => {
      expectAuthFailed(
        await gw.call('POST', '/api/v1/transactions', { key: INACTIVE_KEY, rawBody: '{"amount": ' }),
        403,
      );
    });

    it('a partner key on capture with a bad body is 403, not 422', async () => {
      expectAuthFailed(
        await gw.call('POST', `/api/v1/transactions/${authId}/capture`, {
          key: PARTNER_KEY,
          body: { amount: 'lots' },
        }),
        403,
      );
    });
  });
});
