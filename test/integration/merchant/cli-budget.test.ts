import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisBudget } from '../../../src/infra/gateway-budget.js';
import { MERCHANT_KEY } from '../../support/gateway.js';
import {
  ADMIN_URL,
  call,
  databaseName,
  exitWithin,
  freePort,
  healthy,
  leftovers,
  type Proc,
  SUITE_PREFIX,
  start,
  waitFor,
} from '../../support/process.js';

/** The key's calls a minute (GATEWAY_KEY_PER_MINUTE), of which background keeps this many for itself. */
const KEY_PER_MINUTE = 6;
const BACKGROUND_RESERVED = 1;
/** Checkout traffic's share of the minute (operators' calls, the CLI's among them, count in it). */
const SHARE = KEY_PER_MINUTE - BACKGROUND_RESERVED;

/**
 * Issue 40: a CLI command asks the gateway within the one budget of the API key that every process
 * of the kit spends from (the Redis budget, src/infra/gateway-budget.ts), the API's checkout included.
 * Two processes on one Redis, as an operator runs them: the kit (`src/main.ts`, ROLES=api, its
 * embedded sandbox) and `src/cli.ts` beside it. The budget is made small, so that the CLI's calls
 * spend checkout's share of the minute: the API's next call is then refused for it, and a CLI call
 * waits rather than call past it.
 */
describe('merchant: a CLI command and the API draw from one budget of the key (two processes)', function () {
  this.timeout(120_000);
  const { databases, track, cleanUp } = leftovers();
  const database = databaseName('clibudget', 'main');
  databases.push(database);
  // This suite's own Redis keys: no other suite's calls in its budget's window.
  const prefix = `${SUITE_PREFIX}-clibudget`;
  let env: Record<string, string>;
  let url: string;
  let kit: Proc;
  let redis: Redis;
  let budget: RedisBudget;

  const cli = async (...args: string[]) => {
    const p = track(start('src/cli.ts', args, env));
    const { code } = await exitWithin(p, 60_000);
    return { code, out: p.stdout(), err: p.stderr() };
  };
  /** Checkout traffic's calls in the budget's window: the entries of its sorted set (one per call). */
  const checkoutCalls = () => redis.zcard(budget.key('fg'));
  /** What the budget counted, by caller (and `<caller>:waited`), over every minute so far. */
  const counted = async () => {
    const counts: Record<string, number> = {};
    for (const key of await redis.keys(budget.key('spend:*')))
      for (const [caller, n] of Object.entries(await redis.hgetall(key)))
        counts[caller] = (counts[caller] ?? 0) + Number(n);
    return counts;
  };

  before(async () => {
    redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
    // Only to name the budget's keys as the kit does (key()): it reserves nothing.
    budget = new RedisBudget({ redis, prefix, apiKey: MERCHANT_KEY, now: Date.now });
    const port = await freePort();
    const gatewayPort = await freePort([port]);
    url = `http://127.0.0.1:${port}`;
    env = {
      PORT: String(port),
      GATEWAY_PORT: String(gatewayPort),
      GATEWAY_API_KEY: MERCHANT_KEY,
      DATABASE_URL: `${ADMIN_URL}/${database}`,
      REDIS_PREFIX: prefix,
      // The API only: no worker or scheduler spending from the budget beside the two under test.
      ROLES: 'api',
      GATEWAY_KEY_PER_MINUTE: String(KEY_PER_MINUTE),
      GATEWAY_BACKGROUND_PER_MINUTE: '2',
      GATEWAY_BACKGROUND_RESERVED_PER_MINUTE: String(BACKGROUND_RESERVED),
    };
    kit = track(start('src/main.ts', [], env));
    await healthy(kit, url, 30_000);
  });
  after(async () => {
    await cleanUp();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it("the CLI's gateway call is admitted by the budget the API's calls are: counted in the same window", async () => {
    // The kit's own start-up calls (the key read, its endpoint registered) are there already.
    const before = await checkoutCalls();
    expect(before, 'the kit’s start-up calls in the window').to.be.at.least(1);
    const countedBefore = await counted();

    const run = await cli('webhook', 'test');
    expect(run.code, run.err).to.equal(0);
    expect(await checkoutCalls(), 'the CLI’s call in the window').to.equal(before + 1);
    expect((await counted()).operator).to.equal((countedBefore.operator ?? 0) + 1);

    // The API's call, in the same window, after the CLI's.
    const methods = await call(url, 'GET', '/payment-methods');
    expect(methods.status, methods.text).to.equal(200);
    expect(await checkoutCalls(), 'the API’s call in the window').to.equal(before + 2);
    expect((await counted()).checkout).to.equal((countedBefore.checkout ?? 0) + 1);
  });

  it("with checkout's share spent by the CLI's calls, the API's next call is refused: 503 GATEWAY_BUSY, nothing sent", async () => {
    const left = SHARE - (await checkoutCalls());
    expect(left, 'calls left of the share').to.be.within(1, SHARE - 2);
    for (let i = 0; i < left; i++) {
      const run = await cli('webhook', 'test');
      expect(run.code, run.err).to.equal(0);
    }
    // Spent within the minute (the kit's start-up calls still in it: they leave it a minute on).
    expect(await checkoutCalls(), 'the share spent').to.equal(SHARE);

    const refused = await call(url, 'GET', '/payment-methods');
    expect(refused.status, refused.text).to.equal(503);
    expect(refused.body.code).to.equal('GATEWAY_BUSY');
    expect(Number(refused.headers.get('retry-after')), 'until the first call leaves the window').to.be.within(
      1,
      60,
    );
    expect(await checkoutCalls(), 'nothing sent').to.equal(SHARE);
  });

  it('and a CLI command now waits for the budget, its wait counted, rather than call past it', async () => {
    const waited = (await counted())['operator:waited'] ?? 0;
    const p = track(start('src/cli.ts', ['webhook', 'test'], env));
    await waitFor(
      'the CLI told to wait by the budget, or done',
      async () => !p.running() || ((await counted())['operator:waited'] ?? 0) > waited,
      30_000,
      { everyMs: 100 },
    );
    expect(p.running(), `the CLI did not wait: ${p.stdout()}${p.stderr()}`).to.equal(true);
    expect(await checkoutCalls(), 'nothing admitted past the share').to.equal(SHARE);
    p.child.kill('SIGTERM');
    await exitWithin(p, 10_000);
  });

  it('the kit stops cleanly after', async () => {
    kit.child.kill('SIGTERM');
    expect((await exitWithin(kit, 20_000)).code, kit.stderr()).to.equal(0);
  });
});
