import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { OPS_TOKEN, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * Wrong bearer tokens, counted per client address (issue 41, part 4), through HTTP against the real
 * kit: on the API, the queue board and /metrics alike, one count per address (after TRUST_PROXY).
 * Past the limit a wrong token is a 429 with Retry-After; a right one is never refused for it.
 */

const METRICS_TOKEN = 'metrics-token-0123456789';
const wrong = () => `kop_${randomBytes(32).toString('base64url')}`;

describe('merchant: wrong bearer tokens are limited per client address', function () {
  this.timeout(60_000);
  let t: TestKit;
  let viewer: string;

  before(async () => {
    t = await startTestKit({
      env: { ROLES: 'api', TRUST_PROXY: '1', LIMIT_TOKEN_FAILURES_PER_ADDRESS: '3/15m', METRICS_TOKEN },
    });
    ({ token: viewer } = await t.kit.store.operators.add({
      name: 'vera',
      role: 'viewer',
      by: { name: 'test', role: 'admin', credential: 'cli' },
    }));
  });
  after(async () => {
    await t?.close();
  });

  const from = (address: string) => ({ 'X-Forwarded-For': address });
  const api = (token: string, address: string) =>
    t.call('GET', '/orders?limit=1', { token, headers: from(address) });
  const board = (token: string, address: string) =>
    t.call('GET', '/ops/queues/api/queues', {
      token,
      headers: { ...from(address), accept: 'application/json' },
    });
  const metrics = (token: string, address: string) =>
    t.call('GET', '/metrics', { token, headers: from(address) });

  /** A 429 of the kit for the wrong-token limit, with Retry-After within its 15 minutes. */
  // biome-ignore lint/suspicious/noExplicitAny: an envelope of any shape
  const expectLimited = (res: { status: number; headers: Headers; body: any; text: string }) => {
    expect(res.status, res.text).to.equal(429);
    expect(res.body).to.include({ success: false, code: 'RATE_LIMITED' });
    expect(res.body.data.limit).to.equal('token_failures_per_address');
    expect(Number(res.headers.get('retry-after'))).to.be.within(840, 900);
    expect(res.body.data.retry_after).to.equal(Number(res.headers.get('retry-after')));
  };

  it('right tokens are never counted: a dozen in a row from one address all pass', async () => {
    for (let i = 0; i < 12; i++) {
      expect((await api(i % 2 ? OPS_TOKEN : viewer, '198.51.100.7')).status).to.equal(200);
    }
    expect((await api(wrong(), '198.51.100.7')).status, 'still 401: nothing was counted').to.equal(401);
  });

  it('the API: past three wrong tokens from an address, a wrong one is 429 with Retry-After; a right one still passes', async () => {
    const address = '203.0.113.9';
    for (let i = 0; i < 3; i++) expect((await api(wrong(), address)).status).to.equal(401);
    expectLimited(await api(wrong(), address));
    expectLimited(await api(`${OPS_TOKEN}x`, address));
    // Someone guessing from the same address (an office, a carrier's NAT) locks nobody out.
    expect((await api(OPS_TOKEN, address)).status).to.equal(200);
    expect((await api(viewer, address)).status).to.equal(200);
    // Another address is not held back by this one's guesses.
    expect((await api(wrong(), '203.0.113.10')).status).to.equal(401);
  });

  it('the queue board and /metrics count into the same limit, and past it answer 429 too', async () => {
    const address = '192.0.2.44';
    expect((await board(wrong(), address)).status).to.equal(401);
    expect((await metrics(wrong(), address)).status).to.equal(401);
    expect((await api(wrong(), address)).status).to.equal(401);
    expectLimited(await board(wrong(), address));
    expectLimited(await metrics(wrong(), address));
    // The right tokens, from the same address: the board's, METRICS_TOKEN, an operator's on /metrics.
    expect((await board(viewer, address)).status).to.equal(200);
    expect((await metrics(METRICS_TOKEN, address)).status).to.equal(200);
    expect((await metrics(viewer, address)).status).to.equal(200);
  });

  it('a request with no token is not a guess: it is a 401 and counts nothing', async () => {
    const address = '192.0.2.80';
    for (let i = 0; i < 5; i++) {
      const res = await t.call('GET', '/orders?limit=1', { headers: from(address) });
      expect(res.status).to.equal(401);
    }
    expect((await api(wrong(), address)).status).to.equal(401);
  });
});
