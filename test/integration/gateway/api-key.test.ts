import { expect } from 'chai';
import {
  expectStatus,
  INACTIVE_KEY,
  INACTIVE_MERCHANT_KEY,
  MERCHANT_KEY,
  NO_SCOPE_KEY,
  OTHER_MERCHANT_KEY,
  PARTNER_KEY,
  remainingOf,
  startGateway,
  type TestGateway,
} from '../../support/gateway.js';

/**
 * sandbox.md section 11, Key information: GET /api/v1/api-key answers
 * {key_type, merchant_id | linked_merchant_ids, scopes, rate_limit: {limit, window_s}}, and never the
 * key's text or a secret.
 */

describe('gateway: GET /api/v1/api-key (sandbox.md section 11)', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway();
  });
  after(async () => {
    await gw.close();
  });

  const read = (key: string | null) => gw.call('GET', '/api/v1/api-key', { key });

  it('a merchant key: its merchant, scopes and rate limit, and nothing else', async () => {
    const answer = await read(MERCHANT_KEY);
    expectStatus(answer, 200);
    expect(answer.body).to.include({ success: true, code: '' });
    expect(answer.body.data).to.deep.equal({
      key_type: 'merchant',
      merchant_id: 1001,
      scopes: ['webhooks:manage'],
      rate_limit: { limit: 1000, window_s: 60 },
    });
    const other = await read(NO_SCOPE_KEY);
    expect(other.body.data).to.deep.equal({
      key_type: 'merchant',
      merchant_id: 1002,
      scopes: [],
      rate_limit: { limit: 1000, window_s: 60 },
    });
  });

  it('a partner key: every linked merchant (an inactive one too), and no merchant_id', async () => {
    const answer = await read(PARTNER_KEY);
    expectStatus(answer, 200);
    expect(answer.body.data).to.deep.equal({
      key_type: 'partner',
      linked_merchant_ids: [1001, 1003],
      scopes: ['webhooks:manage'],
      rate_limit: { limit: 1000, window_s: 60 },
    });
  });

  it("never returns the key's text", async () => {
    for (const key of [MERCHANT_KEY, OTHER_MERCHANT_KEY, PARTNER_KEY]) {
      const answer = await read(key);
      expectStatus(answer, 200);
      expect(answer.text).to.not.include(key);
      expect(answer.text).to.not.match(/sk_test_|whsec_/);
    }
  });

  it('401 without a key or with an unknown one; 403 for an inactive key or merchant', async () => {
    for (const [key, status] of [
      [null, 401],
      ['sk_test_nobody', 401],
      [INACTIVE_KEY, 403],
      [INACTIVE_MERCHANT_KEY, 403],
    ] as const) {
      const answer = await read(key);
      expectStatus(answer, status);
      expect(answer.body.code).to.equal('ERR_AUTH_FAILED');
      expect(answer.body.data).to.equal(null);
    }
  });

  it("is an API call: it counts against the key's window", async () => {
    const first = remainingOf(await read(OTHER_MERCHANT_KEY));
    expect(remainingOf(await read(OTHER_MERCHANT_KEY))).to.equal(first - 1);
  });
});

describe('gateway: GET /api/v1/api-key with the seed rate limit of 50 per 10 s', () => {
  it('reports the limit the seed sets', async () => {
    const gw = await startGateway({
      seed: (s) => {
        s.settings = { rate_limit: { limit: 50, window_s: 10, slowdown: [] } };
      },
    });
    try {
      const answer = await gw.call('GET', '/api/v1/api-key');
      expectStatus(answer, 200);
      expect(answer.body.data.rate_limit).to.deep.equal({ limit: 50, window_s: 10 });
      expect(remainingOf(answer)).to.equal(49);
    } finally {
      await gw.close();
    }
  });
});
