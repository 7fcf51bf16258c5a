import { expect } from 'chai';
import {
  type CallOptions,
  card,
  INACTIVE_KEY,
  OTHER_MERCHANT_KEY,
  remainingOf,
  startGateway,
  type TestGateway,
  transactionBody,
} from '../../support/gateway.js';

/** sandbox.md section 10: POST /sandbox/clock/advance and POST /sandbox/tick; GET /sandbox/clock, a read of ours. */

describe('gateway: sandbox controls', () => {
  let gw: TestGateway;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.close();
  });

  const advance = (seconds: unknown, options: CallOptions = {}) =>
    gw.call('POST', '/sandbox/clock/advance', { body: { seconds }, ...options });

  describe('GET /sandbox/clock', () => {
    it('reads the sandbox clock, advances included, and moves nothing; 401 without a key', async () => {
      const start = gw.clock.now();
      const read = await gw.call('GET', '/sandbox/clock');
      expect(read.status, read.text).to.equal(200);
      expect(Date.parse(read.body.data.now)).to.equal(start);
      await advance(7200);
      expect(Date.parse((await gw.call('GET', '/sandbox/clock')).body.data.now)).to.equal(start + 7_200_000);
      expect(gw.clock.now(), 'reading twice moved nothing').to.equal(start + 7_200_000);
      const anonymous = await gw.call('GET', '/sandbox/clock', { key: null });
      expect(anonymous.status).to.equal(401);
      expect(anonymous.body.code).to.equal('ERR_AUTH_FAILED');
    });
  });

  describe('POST /sandbox/clock/advance', () => {
    it('moves the sandbox clock by the seconds given and returns the new now', async () => {
      const start = gw.clock.now();
      const answer = await advance(90);
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.success).to.equal(true);
      expect(answer.body.code).to.equal('');
      expect(gw.clock.now()).to.equal(start + 90_000);
      expect(Date.parse(answer.body.data.now)).to.equal(start + 90_000);
      const again = await advance(3600);
      expect(Date.parse(again.body.data.now)).to.equal(start + 90_000 + 3_600_000);
    });

    it('the clock it moves is the one records are stamped with', async () => {
      const before = await gw.call('POST', '/api/v1/transactions', { body: transactionBody() });
      await advance(7200);
      const after = await gw.call('POST', '/api/v1/transactions', { body: transactionBody() });
      expect(Date.parse(after.body.data.created_at) - Date.parse(before.body.data.created_at)).to.equal(
        7_200_000,
      );
    });

    it('idempotency keys expire by it: a refund key replays before 24 h and executes afresh after', async () => {
      const sale = await gw.call('POST', '/api/v1/transactions', { body: transactionBody() });
      const path = `/api/v1/transactions/${sale.body.data.id}/refund`;
      const options = { body: { amount: 1, reason: 'r' }, headers: { 'Idempotency-Key': 'control-expiry' } };
      const first = await gw.call('POST', path, options);
      expect(first.status, first.text).to.equal(200);
      expect((await advance(86_399)).status).to.equal(200);
      const replay = await gw.call('POST', path, options);
      expect(replay.headers.get('idempotency-replayed')).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
      expect((await advance(2)).status).to.equal(200);
      const fresh = await gw.call('POST', path, options);
      expect(fresh.status, fresh.text).to.equal(200);
      expect(fresh.headers.get('idempotency-replayed')).to.equal(null);
      expect(fresh.body.data.transaction.id).to.not.equal(first.body.data.transaction.id);
      expect(fresh.body.data.transaction.refunded_amount).to.equal(200);
    });

    const invalid: [string, unknown][] = [
      ['zero', 0],
      ['negative', -5],
      ['a numeric string', '10'],
      ['null', null],
      ['a boolean', true],
      ['an object', { n: 1 }],
    ];
    for (const [label, seconds] of invalid) {
      it(`422 ERR_VALIDATION_FAILED on errors.seconds for ${label}, and the clock does not move`, async () => {
        const start = gw.clock.now();
        const answer = await advance(seconds);
        expect(answer.status, answer.text).to.equal(422);
        expect(answer.body.code).to.equal('ERR_VALIDATION_FAILED');
        expect(answer.body.errors.seconds).to.be.an('array').that.is.not.empty;
        expect(gw.clock.now()).to.equal(start);
      });
    }

    it('422 when seconds is missing (empty object, empty body)', async () => {
      const start = gw.clock.now();
      for (const options of [{ body: {} }, {}, { body: { second: 10 } }] as CallOptions[]) {
        const answer = await gw.call('POST', '/sandbox/clock/advance', options);
        expect(answer.status, answer.text).to.equal(422);
        expect(answer.body.code).to.equal('ERR_VALIDATION_FAILED');
        expect(answer.body.errors.seconds).to.be.an('array').that.is.not.empty;
      }
      expect(gw.clock.now()).to.equal(start);
    });

    it('422 with errors.body for malformed JSON or a non-object body', async () => {
      for (const rawBody of ['{"seconds": ', '[60]', '60']) {
        const answer = await gw.call('POST', '/sandbox/clock/advance', { rawBody });
        expect(answer.status, rawBody).to.equal(422);
        expect(answer.body.errors.body, rawBody).to.be.an('array').that.is.not.empty;
      }
    });

    it('401 ERR_AUTH_FAILED without a key or with an unknown key, 403 with an inactive key; the clock does not move', async () => {
      const start = gw.clock.now();
      for (const [key, status] of [
        [null, 401],
        ['sk_test_nobody', 401],
        [INACTIVE_KEY, 403],
      ] as const) {
        const answer = await advance(60, { key });
        expect(answer.status, answer.text).to.equal(status);
        expect(answer.body.code).to.equal('ERR_AUTH_FAILED');
      }
      // 401 before the body is looked at.
      expect((await gw.call('POST', '/sandbox/clock/advance', { key: null, rawBody: '[' })).status).to.equal(
        401,
      );
      expect(gw.clock.now()).to.equal(start);
    });
  });

  describe('POST /sandbox/tick', () => {
    it('returns a report of the run with the current now', async () => {
      const answer = await gw.call('POST', '/sandbox/tick');
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.success).to.equal(true);
      expect(answer.body.code).to.equal('');
      expect(answer.body.data).to.be.an('object');
      expect(Date.parse(answer.body.data.now)).to.equal(gw.clock.now());
      expect(answer.body.data.challenges_expired).to.equal(0);
    });

    it('runs due expiries: a challenge not completed within 10 minutes becomes failed', async () => {
      const verify = await gw.call('POST', '/api/v1/3ds/verify', {
        body: {
          amount: 12.34,
          currency: 'EUR',
          card: card('4000000000003220'),
          auth_url: 'https://shop.example/return',
        },
      });
      expect(verify.status, verify.text).to.equal(200);
      const publicId = verify.body.data.public_id as string;
      expect((await gw.call('POST', '/sandbox/tick')).body.data.challenges_expired).to.equal(0);
      await advance(599);
      expect((await gw.call('POST', '/sandbox/tick')).body.data.challenges_expired).to.equal(0);
      expect(gw.gateway.deps.state.verifications.get(publicId)?.status).to.equal('pending');
      await advance(1);
      const report = await gw.call('POST', '/sandbox/tick');
      expect(report.body.data.challenges_expired).to.equal(1);
      expect(gw.gateway.deps.state.verifications.get(publicId)?.status).to.equal('failed');
      expect((await gw.call('POST', '/sandbox/tick')).body.data.challenges_expired).to.equal(0);
    });

    it('401 without a key', async () => {
      const answer = await gw.call('POST', '/sandbox/tick', { key: null });
      expect(answer.status).to.equal(401);
      expect(answer.body.code).to.equal('ERR_AUTH_FAILED');
    });
  });

  describe('controls are not API calls', () => {
    it('neither advance nor tick uses rate-limit budget; they show the key budget unchanged', async () => {
      const first = await gw.call('GET', '/api/v1/transactions/999999/status');
      expect(remainingOf(first)).to.equal(999);
      for (let i = 0; i < 5; i++) {
        expect(remainingOf(await gw.call('POST', '/sandbox/tick'))).to.equal(999);
        expect(remainingOf(await advance(1))).to.equal(999);
      }
      expect(remainingOf(await advance('bad'))).to.equal(999);
      const next = await gw.call('GET', '/api/v1/transactions/999999/status');
      expect(remainingOf(next)).to.equal(998);
      // Another key's budget is its own and untouched.
      expect(remainingOf(await gw.call('POST', '/sandbox/tick', { key: OTHER_MERCHANT_KEY }))).to.equal(1000);
    });

    it('they live outside /api/v1', async () => {
      expect((await gw.call('POST', '/api/v1/sandbox/tick')).status).to.equal(404);
      expect(
        (await gw.call('POST', '/api/v1/sandbox/clock/advance', { body: { seconds: 5 } })).status,
      ).to.equal(404);
    });
  });
});

describe('gateway: sandbox controls with a small rate limit (limit 3, window 60 s)', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({
      seed: (s) => {
        s.settings = { rate_limit: { limit: 3, window_s: 60, slowdown: [] } };
      },
    });
  });
  after(async () => {
    await gw.close();
  });

  it('controls still answer when the key is rate limited, and the advanced clock ends the window', async () => {
    for (let i = 0; i < 3; i++)
      expect((await gw.call('GET', '/api/v1/transactions/1/status')).status).to.equal(404);
    expect((await gw.call('GET', '/api/v1/transactions/1/status')).status).to.equal(429);
    const tick = await gw.call('POST', '/sandbox/tick');
    expect(tick.status).to.equal(200);
    expect(remainingOf(tick)).to.equal(0);
    const moved = await gw.call('POST', '/sandbox/clock/advance', { body: { seconds: 60 } });
    expect(moved.status, moved.text).to.equal(200);
    const served = await gw.call('GET', '/api/v1/transactions/1/status');
    expect(served.status).to.equal(404);
    expect(remainingOf(served)).to.equal(2);
  });
});
