import { expect } from 'chai';
import { seededRandom } from '../../../src/shared/ids.js';
import {
  type Answer,
  card,
  DECLINING_CARDS,
  OTHER_MERCHANT_KEY,
  PARTNER_KEY,
  startGateway,
  type TestGateway,
  transactionBody,
  uniqueReference,
} from '../../support/gateway.js';

const MINUTE_MS = 60 * 1000;
const PUBLIC_ID = /^tds_[A-Za-z0-9]{24}$/;
const AUTH_URL = 'https://shop.example/checkout/3ds-return?order=42';
const CHALLENGE_CARD = '4000000000003220';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('gateway: 3D Secure (POST /api/v1/3ds/verify, hosted challenge)', () => {
  let t: TestGateway;

  before(async () => {
    t = await startGateway();
  });

  after(async () => {
    await t.close();
  });

  function verify(number: string, overrides: Record<string, unknown> = {}, key?: string): Promise<Answer> {
    const body = { amount: 12.34, currency: 'EUR', card: card(number), auth_url: AUTH_URL, ...overrides };
    return t.call('POST', '/api/v1/3ds/verify', { body, ...(key === undefined ? {} : { key }) });
  }

  function pay(
    number: string,
    verificationId: unknown,
    overrides: Record<string, unknown> = {},
    key?: string,
  ) {
    const body = transactionBody({
      card: card(number),
      ...(verificationId === undefined ? {} : { card_verification_data: { id: verificationId } }),
      ...overrides,
    });
    return t.call('POST', '/api/v1/transactions', { body, ...(key === undefined ? {} : { key }) });
  }

  function expectError(res: Answer, status: number, code: string): void {
    expect(res.status, `${res.status} ${res.text}`).to.equal(status);
    expect(res.body.success).to.equal(false);
    expect(res.body.code).to.equal(code);
  }

  function expectApproved(res: Answer): void {
    expect(res.status, `${res.status} ${res.text}`).to.equal(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.data.status).to.equal('captured');
  }

  const pathOf = (url: string) => {
    const u = new URL(url);
    return u.pathname + u.search;
  };

  /** Starts a challenge for the challenge card; returns the verification record. */
  async function startChallenge(overrides: Record<string, unknown> = {}, key?: string) {
    const res = await verify(CHALLENGE_CARD, overrides, key);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.challenge_url, res.text).to.be.a('string');
    return res.body.data as { id: number; public_id: string; challenge_url: string };
  }

  function click(challengeUrl: string, action: string): Promise<Answer> {
    return t.call('POST', pathOf(challengeUrl), { key: null, rawBody: `action=${action}`, headers: FORM });
  }

  /** The 303 back to auth_url, with the verification id and status. */
  function expectReturn(res: Answer, publicId: string, status: 'full_auth' | 'failed'): void {
    expect(res.status, res.text).to.equal(303);
    const location = res.headers.get('location');
    expect(location, 'Location header').to.be.a('string');
    const target = new URL(location!, t.url);
    const expected = new URL(AUTH_URL);
    expect(target.origin + target.pathname).to.equal(expected.origin + expected.pathname);
    expect(target.searchParams.get('order')).to.equal('42');
    expect(target.searchParams.get('card_verification_id')).to.equal(publicId);
    expect(target.searchParams.get('status')).to.equal(status);
  }

  async function authenticatedChallenge(overrides: Record<string, unknown> = {}, key?: string) {
    const v = await startChallenge(overrides, key);
    expectReturn(await click(v.challenge_url, 'authenticate'), v.public_id, 'full_auth');
    return v;
  }

  describe('verify: the 3DS column of sandbox.md section 4', () => {
    it('4242424242424242 is frictionless full_auth with eci 05 and a message saying frictionless', async () => {
      const res = await verify('4242424242424242');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.code).to.equal('');
      expect(res.body.message).to.match(/frictionless/i);
      const d = res.body.data;
      expect(d.status).to.equal('full_auth');
      expect(d.eci).to.equal('05');
      expect(d.auth_type).to.equal('frictionless');
      expect(d.public_id).to.match(PUBLIC_ID);
      expect(Number.isInteger(d.id)).to.equal(true);
      expect(d.amount).to.equal(1234);
      expect(d.currency).to.equal('EUR');
      expect(d.cavv).to.be.a('string').and.not.equal('');
      expect(d.created_at).to.match(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      expect(d.challenge_url ?? null).to.equal(null);
    });

    it('4000000000003063 is frictionless attempted: full_auth with eci 06', async () => {
      const res = await verify('4000000000003063');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.message).to.match(/frictionless/i);
      expect(res.body.data.status).to.equal('full_auth');
      expect(res.body.data.eci).to.equal('06');
      expect(res.body.data.public_id).to.match(PUBLIC_ID);
    });

    const errors: [string, string][] = [
      ['4000000000003097', 'ERR_3DS_TECHNICAL_ERROR'],
      ['4000000000003089', 'ERR_3DS_NOT_ENROLLED'],
      ['4000000000003055', 'ERR_3DS_NOT_SUPPORTED'],
    ];
    for (const [number, code] of errors) {
      it(`${number} answers 400 ${code}`, async () => {
        expectError(await verify(number), 400, code);
      });
    }

    it('4000000000003220 needs a challenge: challenge_url on the gateway and a message saying challenge', async () => {
      const res = await verify(CHALLENGE_CARD);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.message).to.match(/challenge/i);
      expect(res.body.message).not.to.match(/frictionless/i);
      const d = res.body.data;
      expect(d.public_id).to.match(PUBLIC_ID);
      expect(d.challenge_url).to.equal(`${t.url}/hosted/3ds/${d.public_id}`);
      expect(d.status).not.to.equal('full_auth');
    });

    for (const number of DECLINING_CARDS) {
      it(`${number} is frictionless full_auth at verify (it declines only at the transaction)`, async () => {
        const res = await verify(number);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.message).to.match(/frictionless/i);
        expect(res.body.data.status).to.equal('full_auth');
        expect(res.body.data.public_id).to.match(PUBLIC_ID);
      });
    }

    it('accepts exp_month as 1, "1" or "01" and exp_year as a string, like transactions', async () => {
      for (const expiry of [
        { exp_month: 1, exp_year: 2034 },
        { exp_month: '1', exp_year: '2034' },
        { exp_month: '01', exp_year: 2034 },
      ]) {
        const res = await verify('4242424242424242', { card: card('4242424242424242', expiry) });
        expect(res.status, `${JSON.stringify(expiry)}: ${res.text}`).to.equal(200);
        expect(res.body.data.status).to.equal('full_auth');
        // The verification matches a payment with the same card written the other way.
        expectApproved(
          await pay('4242424242424242', res.body.data.public_id, {
            card: card('4242424242424242', { exp_month: 1 }),
          }),
        );
      }
    });

    it('gives every verification a distinct tds_ public_id of 24 [A-Za-z0-9] characters', async () => {
      const ids = new Set<string>();
      for (const number of ['4242424242424242', '4000000000003063', CHALLENGE_CARD, '4242424242424242']) {
        const res = await verify(number);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.data.public_id).to.match(PUBLIC_ID);
        ids.add(res.body.data.public_id);
      }
      expect(ids.size).to.equal(4);
    });

    it('takes ds_trans_id, a UUID v4, from the injected random source: the same seed gives the same one', async () => {
      const first = async (seed: number) => {
        const gw = await startGateway({ random: seededRandom(seed) });
        try {
          const res = await gw.call('POST', '/api/v1/3ds/verify', {
            body: { amount: 12.34, currency: 'EUR', card: card('4242424242424242'), auth_url: AUTH_URL },
          });
          expect(res.status, res.text).to.equal(200);
          return res.body.data.ds_trans_id as string;
        } finally {
          await gw.close();
        }
      };
      const once = await first(7);
      expect(once).to.match(UUID_V4);
      expect(await first(7)).to.equal(once);
      expect(await first(8))
        .to.match(UUID_V4)
        .and.not.equal(once);
      // Within one sandbox every verification draws a new one.
      const a = await verify('4242424242424242');
      const b = await verify('4242424242424242');
      expect(a.body.data.ds_trans_id).to.match(UUID_V4).and.not.equal(b.body.data.ds_trans_id);
    });

    it('refuses a partner key with 403 ERR_AUTH_FAILED and records nothing', async () => {
      const before = t.gateway.deps.state.verifications.size;
      expectError(
        await verify('4242424242424242', { merchant_id: 1001 }, PARTNER_KEY),
        403,
        'ERR_AUTH_FAILED',
      );
      expectError(await verify('4242424242424242', {}, PARTNER_KEY), 403, 'ERR_AUTH_FAILED');
      expect(t.gateway.deps.state.verifications.size).to.equal(before);
    });
  });

  describe('the hosted challenge page', () => {
    it('GET challenge_url is an HTML page with Authenticate and Fail buttons', async () => {
      const v = await startChallenge();
      const res = await t.call('GET', pathOf(v.challenge_url), { key: null });
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      expect(res.text).to.match(/<button[^>]*>\s*Authenticate\s*<\/button>/);
      expect(res.text).to.match(/<button[^>]*>\s*Fail\s*<\/button>/);
      expect(res.text).to.match(/<form[^>]*method="post"/i);
    });

    it('Authenticate redirects (303) to auth_url with card_verification_id and status=full_auth', async () => {
      const v = await startChallenge();
      const res = await click(v.challenge_url, 'authenticate');
      expectReturn(res, v.public_id, 'full_auth');
    });

    it('Fail redirects (303) to auth_url with status=failed', async () => {
      const v = await startChallenge();
      expectReturn(await click(v.challenge_url, 'fail'), v.public_id, 'failed');
    });

    it('a second click does not change the outcome', async () => {
      const passed = await startChallenge();
      expectReturn(await click(passed.challenge_url, 'authenticate'), passed.public_id, 'full_auth');
      expectReturn(await click(passed.challenge_url, 'fail'), passed.public_id, 'full_auth');
      expectApproved(await pay(CHALLENGE_CARD, passed.public_id));

      const failed = await startChallenge();
      expectReturn(await click(failed.challenge_url, 'fail'), failed.public_id, 'failed');
      expectReturn(await click(failed.challenge_url, 'authenticate'), failed.public_id, 'failed');
      expectError(await pay(CHALLENGE_CARD, failed.public_id), 400, 'ERR_3DS_FAILED');
    });

    it('a challenge can still be completed just before 10 minutes', async () => {
      const v = await startChallenge();
      t.clock.advance(10 * MINUTE_MS - 1000);
      expectReturn(await click(v.challenge_url, 'authenticate'), v.public_id, 'full_auth');
      expectApproved(await pay(CHALLENGE_CARD, v.public_id));
    });

    it('a challenge not completed within 10 minutes becomes failed', async () => {
      const v = await startChallenge();
      t.clock.advance(10 * MINUTE_MS + 1000);
      expectReturn(await click(v.challenge_url, 'authenticate'), v.public_id, 'failed');
      const reference = uniqueReference('expired-challenge');
      expectError(await pay(CHALLENGE_CARD, v.public_id, { reference }), 400, 'ERR_3DS_FAILED');
      // Nothing took the reference.
      expectApproved(await pay('4242424242424242', undefined, { reference }));
    });

    it('POST /sandbox/tick after 10 minutes reports the expired challenge', async () => {
      // Expire whatever earlier tests left open, so that the count below is this challenge alone.
      t.clock.advance(11 * MINUTE_MS);
      const clear = await t.call('POST', '/sandbox/tick');
      expect(clear.status, clear.text).to.equal(200);

      const v = await startChallenge();
      const early = await t.call('POST', '/sandbox/tick');
      expect(early.status, early.text).to.equal(200);
      expect(early.body.data.challenges_expired).to.equal(0);

      t.clock.advance(10 * MINUTE_MS + 1000);
      const res = await t.call('POST', '/sandbox/tick');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.data.challenges_expired).to.equal(1);
      expect(t.gateway.deps.state.verifications.get(v.public_id)?.status).to.equal('failed');
      expectReturn(await click(v.challenge_url, 'authenticate'), v.public_id, 'failed');

      const again = await t.call('POST', '/sandbox/tick');
      expect(again.body.data.challenges_expired).to.equal(0);
    });

    it('gateway.controls.tick() expires an open challenge the same way', async () => {
      await t.gateway.controls.tick();
      const v = await startChallenge();
      t.clock.advance(10 * MINUTE_MS + 1000);
      const report = await t.gateway.controls.tick();
      expect(report.challenges_expired).to.equal(1);
      expectError(await pay(CHALLENGE_CARD, v.public_id), 400, 'ERR_3DS_FAILED');
    });
  });

  describe('transactions with the challenge card (4000000000003220)', () => {
    it('without card_verification_data: 400 ERR_3DS_REQUIRED, reference kept free', async () => {
      const reference = uniqueReference('needs-3ds');
      expectError(await pay(CHALLENGE_CARD, undefined, { reference }), 400, 'ERR_3DS_REQUIRED');
      expectApproved(await pay('4242424242424242', undefined, { reference }));
    });

    it("with an authenticated challenge's public_id: approved", async () => {
      const v = await authenticatedChallenge();
      const res = await pay(CHALLENGE_CARD, v.public_id);
      expectApproved(res);
      expect(res.body.data.amount).to.equal(1234);
    });

    it('an auth with an authenticated challenge is approved as auth', async () => {
      const v = await authenticatedChallenge();
      const res = await pay(CHALLENGE_CARD, v.public_id, { transaction_type: 'auth' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.status).to.equal('auth');
    });

    it('with the deprecated numeric id, as a number: approved', async () => {
      const v = await authenticatedChallenge();
      expect(Number.isInteger(v.id)).to.equal(true);
      expectApproved(await pay(CHALLENGE_CARD, v.id));
    });

    it('with the deprecated numeric id, as a string: approved', async () => {
      const v = await authenticatedChallenge();
      expectApproved(await pay(CHALLENGE_CARD, String(v.id)));
    });

    it("with a failed challenge's id: 400 ERR_3DS_FAILED", async () => {
      const v = await startChallenge();
      expectReturn(await click(v.challenge_url, 'fail'), v.public_id, 'failed');
      expectError(await pay(CHALLENGE_CARD, v.public_id), 400, 'ERR_3DS_FAILED');
      expectError(await pay(CHALLENGE_CARD, v.id), 400, 'ERR_3DS_FAILED');
    });

    it('with a challenge nobody answered yet: 400 ERR_3DS_FAILED', async () => {
      const v = await startChallenge();
      expectError(await pay(CHALLENGE_CARD, v.public_id), 400, 'ERR_3DS_FAILED');
    });
  });

  describe('a verification must match the payment (sandbox.md section 5)', () => {
    it('another amount: 400 ERR_3DS_FAILED', async () => {
      const v = await authenticatedChallenge();
      const reference = uniqueReference('3ds-amount');
      expectError(
        await pay(CHALLENGE_CARD, v.public_id, { amount: 12.35, reference }),
        400,
        'ERR_3DS_FAILED',
      );
      expectApproved(await pay('4242424242424242', undefined, { reference }));
    });

    it('another currency: 400 ERR_3DS_FAILED', async () => {
      const v = await authenticatedChallenge();
      expectError(await pay(CHALLENGE_CARD, v.public_id, { currency: 'USD' }), 400, 'ERR_3DS_FAILED');
    });

    it('another card number: 400 ERR_3DS_FAILED', async () => {
      const challenge = await authenticatedChallenge();
      expectError(await pay('4242424242424242', challenge.public_id), 400, 'ERR_3DS_FAILED');

      const frictionless = await verify('4242424242424242');
      expect(frictionless.status, frictionless.text).to.equal(200);
      expectError(await pay(CHALLENGE_CARD, frictionless.body.data.public_id), 400, 'ERR_3DS_FAILED');
    });

    it('another merchant: 400 ERR_3DS_FAILED', async () => {
      const v = await authenticatedChallenge();
      expectError(await pay(CHALLENGE_CARD, v.public_id, {}, OTHER_MERCHANT_KEY), 400, 'ERR_3DS_FAILED');
      expectError(await pay(CHALLENGE_CARD, v.id, {}, OTHER_MERCHANT_KEY), 400, 'ERR_3DS_FAILED');
    });

    it('a frictionless verification of the same card, amount and currency is accepted', async () => {
      const res = await verify('4000000000003063', { amount: 7.5, currency: 'USD' });
      expect(res.status, res.text).to.equal(200);
      expectApproved(
        await pay('4000000000003063', res.body.data.public_id, { amount: 7.5, currency: 'USD' }),
      );
    });

    it('exactly 30 minutes old: still accepted', async () => {
      const v = await authenticatedChallenge();
      t.clock.advance(30 * MINUTE_MS);
      expectApproved(await pay(CHALLENGE_CARD, v.public_id));
    });

    it('older than 30 minutes: 400 ERR_3DS_TIMEOUT', async () => {
      const v = await authenticatedChallenge();
      t.clock.advance(30 * MINUTE_MS + 1000);
      expectError(await pay(CHALLENGE_CARD, v.public_id), 400, 'ERR_3DS_TIMEOUT');

      const frictionless = await verify('4242424242424242');
      t.clock.advance(31 * MINUTE_MS);
      expectError(await pay('4242424242424242', frictionless.body.data.public_id), 400, 'ERR_3DS_TIMEOUT');
    });

    it('an unknown id: 400 ERR_3DS_FAILED', async () => {
      expectError(await pay(CHALLENGE_CARD, 'tds_AAAAAAAAAAAAAAAAAAAAAAAA'), 400, 'ERR_3DS_FAILED');
      expectError(await pay(CHALLENGE_CARD, 99999999), 400, 'ERR_3DS_FAILED');
      expectError(await pay('4242424242424242', 'tds_doesnotexist'), 400, 'ERR_3DS_FAILED');
    });
  });
});
