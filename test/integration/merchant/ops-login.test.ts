import { expect } from 'chai';
import { startTestKit, type TestKit } from '../../support/kit.js';

/**
 * The operator login as a stranger meets it (issue 24, part 3), over HTTP against the real kit: wrong
 * tokens limited per address, the cookie Secure whenever the public URL is https, and a logout that
 * ends the session, copies of the cookie included.
 */

const OPS_TOKEN = 'test-ops-token-0123456789abcdefghij';

function login(t: TestKit, token: string, headers: Record<string, string> = {}) {
  return fetch(`${t.url}/ops/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: `token=${encodeURIComponent(token)}`,
    redirect: 'manual',
  });
}

/** The `name=value` of a Set-Cookie: what a browser sends back. */
const sessionOf = (res: Response) => res.headers.get('set-cookie')!.split(';')[0]!;

const boardApi = (t: TestKit, cookie: string) =>
  fetch(`${t.url}/ops/queues/api/queues`, { headers: { cookie, accept: 'application/json' } });

describe('merchant: the operator login (limits, Secure cookie, logout)', function () {
  this.timeout(60_000);

  describe('wrong tokens, per client address', () => {
    let t: TestKit;
    before(async () => {
      t = await startTestKit({
        env: { TRUST_PROXY: '1', LIMIT_LOGIN_FAILURES_PER_ADDRESS: '3/15m' },
      });
    });
    after(async () => {
      await t?.close();
    });
    const from = (address: string) => ({ 'X-Forwarded-For': address });

    it('right tokens are not counted: ten logins in a row from one address all open the board', async () => {
      for (let i = 0; i < 10; i++)
        expect((await login(t, OPS_TOKEN, from('198.51.100.7'))).status).to.equal(303);
    });

    it('after three wrong tokens, the address gets 429 with Retry-After and the form, the right token too', async () => {
      const address = from('203.0.113.9');
      for (let i = 0; i < 3; i++) expect((await login(t, `wrong-${i}`, address)).status).to.equal(401);
      const refused = await login(t, 'wrong-again', address);
      expect(refused.status).to.equal(429);
      const after = Number(refused.headers.get('retry-after'));
      expect(after).to.be.within(840, 900);
      expect(refused.headers.get('content-type')).to.match(/^text\/html/);
      expect(await refused.text()).to.contain(
        'Too many wrong tokens from this address. Try again in 15 minutes.',
      );
      // Even the right token: the guesser cannot tell a right guess from a wrong one any more.
      const right = await login(t, OPS_TOKEN, address);
      expect(right.status).to.equal(429);
      expect(right.headers.get('set-cookie')).to.equal(null);
      // Another address is not held back by this one's failures.
      expect((await login(t, OPS_TOKEN, from('203.0.113.10'))).status).to.equal(303);
    });

    it('concurrent guesses cannot slip under the limit: of 20 at once, 3 are looked at', async () => {
      const address = from('192.0.2.44');
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => login(t, `guess-${i}`, address)),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 401)).to.have.length(3);
      expect(statuses.filter((s) => s === 429)).to.have.length(17);
    });
  });

  describe('the session cookie and the logout, PUBLIC_BASE_URL https behind a proxy that ends TLS', () => {
    let t: TestKit;
    before(async () => {
      t = await startTestKit({ env: { PUBLIC_BASE_URL: 'https://shop.example' } });
    });
    after(async () => {
      await t?.close();
    });

    it('the cookie is Secure though the connection to the kit is plain http', async () => {
      const answer = await login(t, OPS_TOKEN);
      expect(answer.status).to.equal(303);
      const cookie = answer.headers.get('set-cookie')!;
      expect(cookie).to.match(
        /^kit_ops=admin\.\d+\.[\w-]{16}\.[\w-]+; path=\/ops; expires=.*; samesite=strict; secure; httponly$/i,
      );
    });

    it('signed in, the login page says who and offers the way out', async () => {
      const session = sessionOf(await login(t, OPS_TOKEN));
      const page = await fetch(`${t.url}/ops/login`, { headers: { cookie: session } });
      const html = await page.text();
      expect(html).to.contain('Signed in as <strong>admin</strong>');
      expect(html).to.contain('action="/ops/logout"');
      const stranger = await (await fetch(`${t.url}/ops/login`)).text();
      expect(stranger).to.contain('name="token"');
    });

    it('a logout ends the session: the cookie is cleared, and a copy of it opens nothing', async () => {
      const session = sessionOf(await login(t, OPS_TOKEN));
      const other = sessionOf(await login(t, OPS_TOKEN));
      expect((await boardApi(t, session)).status).to.equal(200);
      const out = await fetch(`${t.url}/ops/logout`, {
        method: 'POST',
        headers: { cookie: session },
        redirect: 'manual',
      });
      expect(out.status).to.equal(303);
      expect(out.headers.get('location')).to.equal('/ops/login');
      expect(out.headers.get('set-cookie')).to.match(/^kit_ops=; path=\/ops; expires=Thu, 01 Jan 1970/i);
      // The cookie a browser (or someone who copied it) kept: refused by the board and its API.
      expect((await boardApi(t, session)).status).to.equal(401);
      const page = await fetch(`${t.url}/ops/queues`, {
        headers: { cookie: session, accept: 'text/html' },
        redirect: 'manual',
      });
      expect(page.status).to.equal(302);
      // Only that session: another sign-in of the same operator goes on.
      expect((await boardApi(t, other)).status).to.equal(200);
      // Ended in Redis for as long as the cookie would have lived, and no longer.
      const id = session.split('.')[2]!;
      const [key, ...more] = await t.kit.redis.keys(`*:ops-session-ended:${id}`);
      expect(more).to.deep.equal([]);
      expect(await t.kit.redis.pttl(key!)).to.be.within(29 * 60_000, 30 * 60_000);
    });

    it('a token whose role cannot read the board (storefront) is refused on the form: 403, no session', async () => {
      const { token } = await t.kit.store.operators.add({
        name: 'sf',
        role: 'storefront',
        by: { name: 'test', role: 'admin', credential: 'cli' },
      });
      const answer = await login(t, token);
      expect(answer.status).to.equal(403);
      expect(answer.headers.get('set-cookie')).to.equal(null);
      const html = await answer.text();
      expect(html).to.contain('role="alert"');
      expect(html).to.contain('The role storefront cannot open the queue board');
      expect(html).to.contain('name="token"');
      expect(html).to.not.contain('Signed in as');
    });

    it('a logout without a session only clears the cookie', async () => {
      const out = await fetch(`${t.url}/ops/logout`, { method: 'POST', redirect: 'manual' });
      expect(out.status).to.equal(303);
      expect(out.headers.get('set-cookie')).to.match(/^kit_ops=;/);
    });
  });

  describe("board actions signed in by cookie come from the board's own page (Origin)", () => {
    let t: TestKit;
    before(async () => {
      t = await startTestKit();
    });
    after(async () => {
      await t?.close();
    });

    const act = (path: string, headers: Record<string, string>, body?: string) =>
      fetch(`${t.url}/ops/queues/api/queues/observations/${path}`, {
        method: path === 'add' ? 'POST' : 'PUT',
        headers: { accept: 'application/json', ...headers },
        body,
      });
    const jobsNamed = async (name: string) =>
      (await t.kit.queue.getJobs(['waiting', 'active', 'completed', 'failed', 'delayed'])).filter(
        (j) => j?.name === name,
      );

    it('a form posted from another origin with the cookie adds nothing: 403 CROSS_ORIGIN', async () => {
      const cookie = sessionOf(await login(t, OPS_TOKEN));
      const evil = await act(
        'add',
        { cookie, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
        'name=planted&data=%7B%7D',
      );
      expect(evil.status).to.equal(403);
      expect(((await evil.json()) as { code: string }).code).to.equal('CROSS_ORIGIN');
      // Nor without an Origin at all: a browser sends one with every such request.
      expect((await act('clean/completed', { cookie })).status).to.equal(403);
      expect(await jobsNamed('planted')).to.deep.equal([]);
    });

    it("from the kit's own origin the cookie acts; a bearer token acts without an Origin", async () => {
      const cookie = sessionOf(await login(t, OPS_TOKEN));
      expect((await act('clean/completed', { cookie, origin: t.url })).status).to.equal(200);
      expect((await act('clean/completed', { authorization: `Bearer ${OPS_TOKEN}` })).status).to.equal(200);
    });
  });
});
