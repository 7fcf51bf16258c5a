import { expect } from 'chai';
import fc from 'fast-check';
import { admit, type RatePolicy, type WindowState } from '../../../src/gateway/domain/rate-window.js';
import { parseSeed } from '../../../src/gateway/state/seed.js';
import {
  type Answer,
  card,
  MERCHANT_KEY,
  OTHER_MERCHANT_KEY,
  PARTNER_KEY,
  remainingOf,
  startGateway,
  type TestGateway,
  testSeed,
  transactionBody,
} from '../../support/gateway.js';

/** gateway-api.md, Limits; sandbox.md section 2 (rate_limit, slowdown, public_pages_per_minute). */

function expectRateLimited(answer: Answer): number {
  expect(answer.status, answer.text).to.equal(429);
  expect(answer.body.success).to.equal(false);
  expect(answer.body.code).to.equal('ERR_RATE_LIMITED');
  const retryAfter = answer.headers.get('retry-after');
  expect(retryAfter, 'Retry-After').to.match(/^\d+$/);
  const seconds = Number(retryAfter);
  expect(seconds).to.be.within(1, 60);
  return seconds;
}

/** The policy a seed without settings gets: the published limits. */
function defaultPolicy(): RatePolicy {
  const input = testSeed();
  expect(input.settings).to.equal(undefined);
  const { limit, window_s, slowdown } = parseSeed(input).settings.rate_limit;
  return { limit, windowMs: window_s * 1000, slowdown };
}

/** The published table: 0-499 no delay; 500-749 0.5 s; 750-999 1 s; 1000+ HTTP 429. */
function publishedDelayMs(count: number): number | 'refused' {
  if (count < 500) return 0;
  if (count < 750) return 500;
  if (count < 1000) return 1000;
  return 'refused';
}

describe('gateway: API rate limit, small policy {limit 6, window 60 s, slowdown [[2, 0.5], [4, 1]]}', () => {
  let gw: TestGateway;
  let saleId: number;
  const statusPath = () => `/api/v1/transactions/${saleId}/status`;

  beforeEach(async () => {
    gw = await startGateway({
      seed: (seed) => {
        seed.settings = {
          rate_limit: {
            limit: 6,
            window_s: 60,
            slowdown: [
              [2, 0.5],
              [4, 1],
            ],
          },
        };
      },
    });
    // Made with the partner key so that the merchant key's window starts empty.
    const sale = await gw.call('POST', '/api/v1/transactions', {
      key: PARTNER_KEY,
      body: transactionBody({ merchant_id: 1001 }),
    });
    expect(sale.status, sale.text).to.equal(200);
    saleId = sale.body.data.id;
    gw.sleeps.length = 0;
  });
  afterEach(async () => {
    await gw.close();
  });

  it('counts down X-RateLimit-Remaining 5..0 and delays requests 3-6 by exactly 500, 500, 1000, 1000 ms', async () => {
    const remaining: number[] = [];
    const sleepsAfter: number[][] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await gw.call('GET', statusPath());
      expect(answer.status, answer.text).to.equal(200);
      remaining.push(remainingOf(answer));
      sleepsAfter.push([...gw.sleeps]);
    }
    expect(remaining).to.deep.equal([5, 4, 3, 2, 1, 0]);
    expect(sleepsAfter).to.deep.equal([[], [], [500], [500, 500], [500, 500, 1000], [500, 500, 1000, 1000]]);
  });

  it('every API answer counts, whatever its status (200, 404, 422, 400)', async () => {
    const answers = [
      await gw.call('GET', statusPath()),
      await gw.call('GET', '/api/v1/transactions/999999/status'),
      await gw.call('POST', '/api/v1/transactions', { rawBody: '[]' }),
      await gw.call('POST', '/api/v1/transactions', {
        body: transactionBody({ card: card('4000000000000002') }),
      }),
    ];
    expect(answers.map((a) => a.status)).to.deep.equal([200, 404, 422, 400]);
    expect(answers.map(remainingOf)).to.deep.equal([5, 4, 3, 2]);
  });

  it('the 7th request gets 429 ERR_RATE_LIMITED with Retry-After, undelayed, and is not served', async () => {
    for (let i = 0; i < 6; i++) expect((await gw.call('GET', statusPath())).status).to.equal(200);
    const sleeps = [...gw.sleeps];
    const before = gw.gateway.deps.state.transactions.size;
    const refused = await gw.call('POST', '/api/v1/transactions', { body: transactionBody() });
    expect(expectRateLimited(refused)).to.equal(60);
    expect(remainingOf(refused)).to.equal(0);
    expect(refused.body.data).to.equal(null);
    expect(gw.gateway.deps.state.transactions.size, 'a refused request executes nothing').to.equal(before);
    expect(gw.sleeps, 'a refused request is not delayed').to.deep.equal(sleeps);
  });

  it('Retry-After is the whole seconds left in the window, and 60 s later the key is served again', async () => {
    for (let i = 0; i < 6; i++) await gw.call('GET', statusPath());
    gw.clock.advance(45_000);
    expect(expectRateLimited(await gw.call('GET', statusPath()))).to.equal(15);
    gw.clock.advance(14_500);
    expect(expectRateLimited(await gw.call('GET', statusPath()))).to.equal(1);
    // Repeated refusals are not counted and do not push the window back.
    for (let i = 0; i < 5; i++) expectRateLimited(await gw.call('GET', statusPath()));
    gw.clock.advance(500);
    const sleeps = gw.sleeps.length;
    const served = await gw.call('GET', statusPath());
    expect(served.status, served.text).to.equal(200);
    expect(remainingOf(served)).to.equal(5);
    expect(gw.sleeps.length, 'the first request of a new window is not delayed').to.equal(sleeps);
  });

  it('limits are per key: another key is unaffected while one is limited', async () => {
    for (let i = 0; i < 6; i++) await gw.call('GET', statusPath());
    expectRateLimited(await gw.call('GET', statusPath()));
    const other = await gw.call('GET', '/api/v1/transactions/999999/status', { key: OTHER_MERCHANT_KEY });
    expect(other.status).to.equal(404);
    expect(remainingOf(other)).to.equal(5);
    const partner = await gw.call('GET', statusPath(), { key: PARTNER_KEY });
    expect(partner.status).to.equal(200);
    expect(remainingOf(partner)).to.equal(4); // it made the sale in beforeEach
    expectRateLimited(await gw.call('GET', statusPath()));
  });

  it('the refused request leaves the window count at the limit (pure admit)', () => {
    const policy: RatePolicy = {
      limit: 6,
      windowMs: 60_000,
      slowdown: [
        [2, 0.5],
        [4, 1],
      ],
    };
    let state: WindowState | undefined;
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      const d = admit(policy, state, 1000 + i);
      expect(d.allowed).to.equal(true);
      if (d.allowed) delays.push(d.delayMs);
      state = d.state;
    }
    expect(delays).to.deep.equal([0, 0, 500, 500, 1000, 1000]);
    for (let i = 0; i < 3; i++) {
      const refused = admit(policy, state, 2000 + i);
      expect(refused.allowed).to.equal(false);
      expect(refused.state.count).to.equal(6);
      expect(refused.state.startedAt).to.equal(1000);
      state = refused.state;
    }
  });
});

describe('gateway: API rate limit, published defaults', () => {
  it('a seed without settings gets {limit 1000, window 60 s, slowdown [[500, 0.5], [750, 1]]}', () => {
    expect(defaultPolicy()).to.deep.equal({
      limit: 1000,
      windowMs: 60_000,
      slowdown: [
        [500, 0.5],
        [750, 1],
      ],
    });
  });

  it('property: admit reproduces the 0-499 / 500-749 / 750-999 / 1000+ table for counts 0..1100', () => {
    const policy = defaultPolicy();
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1100 }),
        fc.integer({ min: 0, max: 59_999 }),
        fc.integer({ min: 0, max: 2 ** 40 }),
        (count, elapsed, startedAt) => {
          const previous: WindowState = { startedAt, count };
          const d = admit(policy, previous, startedAt + elapsed);
          const expected = publishedDelayMs(count);
          if (expected === 'refused') {
            expect(d.allowed).to.equal(false);
            if (!d.allowed) {
              expect(d.retryAfterSeconds).to.equal(Math.ceil((60_000 - elapsed) / 1000));
              expect(d.retryAfterSeconds).to.be.within(1, 60);
            }
            expect(d.remaining).to.equal(0);
            expect(d.state).to.deep.equal(previous);
          } else {
            expect(d.allowed).to.equal(true);
            if (d.allowed) expect(d.delayMs).to.equal(expected);
            expect(d.remaining).to.equal(1000 - count - 1);
            expect(d.state).to.deep.equal({ startedAt, count: count + 1 });
          }
          expect(previous, 'admit does not mutate its input').to.deep.equal({ startedAt, count });
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('property: every count 0..1100 in order, from an empty window, follows the table', () => {
    const policy = defaultPolicy();
    let state: WindowState | undefined;
    for (let count = 0; count <= 1100; count++) {
      const d = admit(policy, state, 5_000 + count);
      const expected = publishedDelayMs(count);
      if (expected === 'refused') expect(d.allowed, `count ${count}`).to.equal(false);
      else {
        expect(d.allowed, `count ${count}`).to.equal(true);
        if (d.allowed) expect(d.delayMs, `count ${count}`).to.equal(expected);
      }
      state = d.state;
    }
  });

  it('property: a window that has ended starts afresh, whatever its count', () => {
    const policy = defaultPolicy();
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 60_000, max: 10_000_000 }),
        (count, elapsed) => {
          const d = admit(policy, { startedAt: 0, count }, elapsed);
          expect(d.allowed).to.equal(true);
          if (d.allowed) expect(d.delayMs).to.equal(0);
          expect(d.state).to.deep.equal({ startedAt: elapsed, count: 1 });
          expect(d.remaining).to.equal(999);
        },
      ),
    );
  });

  describe('over HTTP at the table edges', () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startGateway(); // the test seed has no settings: the published defaults
    });
    after(async () => {
      await gw.close();
    });

    /** Counts `n` requests for the key directly in the window, as if made earlier in this window. */
    const fill = (n: number) => {
      for (let i = 0; i < n; i++) gw.gateway.deps.state.apiRate.admit(MERCHANT_KEY, gw.clock.now());
    };
    const probe = async () => {
      const before = gw.sleeps.length;
      const answer = await gw.call('GET', '/api/v1/transactions/999999/status');
      return { answer, slept: gw.sleeps.slice(before) };
    };

    it('request 500 is undelayed, 501 waits 0.5 s, 751 waits 1 s, 1000 waits 1 s, 1001 is refused', async () => {
      fill(499);
      let p = await probe(); // count 499
      expect([p.answer.status, remainingOf(p.answer), p.slept]).to.deep.equal([404, 500, []]);
      p = await probe(); // count 500
      expect([p.answer.status, remainingOf(p.answer), p.slept]).to.deep.equal([404, 499, [500]]);
      fill(248);
      p = await probe(); // count 749
      expect([p.answer.status, remainingOf(p.answer), p.slept]).to.deep.equal([404, 250, [500]]);
      p = await probe(); // count 750
      expect([p.answer.status, remainingOf(p.answer), p.slept]).to.deep.equal([404, 249, [1000]]);
      fill(248);
      p = await probe(); // count 999
      expect([p.answer.status, remainingOf(p.answer), p.slept]).to.deep.equal([404, 0, [1000]]);
      p = await probe(); // count 1000
      expectRateLimited(p.answer);
      expect(p.slept).to.deep.equal([]);
    });
  });
});

describe('gateway: public page limit per IP (public_pages_per_minute = 3)', () => {
  let gw: TestGateway;
  beforeEach(async () => {
    gw = await startGateway({
      seed: (s) => {
        s.settings = { public_pages_per_minute: 3 };
      },
    });
  });
  afterEach(async () => {
    await gw.close();
  });

  const challengePath = async (): Promise<string> => {
    const answer = await gw.call('POST', '/api/v1/3ds/verify', {
      body: {
        amount: 12.34,
        currency: 'EUR',
        card: card('4000000000003220'),
        auth_url: 'https://shop.example/return',
      },
    });
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body.data.challenge_url).to.be.a('string');
    return new URL(answer.body.data.challenge_url).pathname;
  };

  it('serves the challenge page 3 times, refuses the 4th with 429 and Retry-After, and serves again 60 s later', async () => {
    const path = await challengePath();
    for (let i = 0; i < 3; i++) {
      const page = await gw.call('GET', path, { key: null });
      expect(page.status, `page ${i + 1}`).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/text\/html/);
      expect(page.text).to.include('Authenticate');
    }
    const refused = await gw.call('GET', path, { key: null });
    expect(expectRateLimited(refused)).to.equal(60);
    gw.clock.advance(30_000);
    expect(expectRateLimited(await gw.call('GET', path, { key: null }))).to.equal(30);
    gw.clock.advance(30_000);
    const again = await gw.call('GET', path, { key: null });
    expect(again.status, again.text).to.equal(200);
    expect(again.text).to.include('Authenticate');
  });

  it('the page limit is per IP across pages, and does not touch the API key budget', async () => {
    const first = await challengePath();
    const second = await challengePath();
    expect((await gw.call('GET', first, { key: null })).status).to.equal(200);
    expect((await gw.call('GET', second, { key: null })).status).to.equal(200);
    // A browser sending a key is still the same IP.
    expect((await gw.call('GET', first)).status).to.equal(200);
    expectRateLimited(await gw.call('GET', second, { key: null }));
    const api = await gw.call('GET', '/api/v1/transactions/999999/status');
    expect(api.status).to.equal(404);
    expect(remainingOf(api)).to.equal(1000 - 3); // two verifies and this call
  });
});
