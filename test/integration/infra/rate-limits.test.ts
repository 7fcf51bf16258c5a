import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { LIMIT_NAMES, type LimitName, RedisLimits } from '../../../src/infra/rate-limits.js';
import { createRedis } from '../../../src/infra/redis.js';

/**
 * The public routes' limits in Redis (rate-limiter-flexible), against a real Redis: one count for
 * every process, and what happens when Redis is gone (docs/api.md, Limits: each process counts alone).
 */
const REDIS_URL = 'redis://127.0.0.1:6379';
const off = Object.fromEntries(LIMIT_NAMES.map((n) => [n, null])) as Record<LimitName, null>;

describe('RedisLimits: the limits on the public routes (real Redis)', () => {
  const connections: Redis[] = [];
  let prefix: string;
  let lines: { level: number; msg: string }[];
  const logger = () =>
    pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) },
    );
  const connect = (url = REDIS_URL) => {
    const redis = createRedis(url);
    connections.push(redis);
    return redis;
  };

  beforeEach(() => {
    prefix = `test:limits:${process.pid}:${randomBytes(4).toString('hex')}`;
    lines = [];
  });
  afterEach(async () => {
    const cleaner = connect();
    const keys = await cleaner.keys(`${prefix}:*`);
    if (keys.length > 0) await cleaner.del(...keys);
    for (const c of connections.splice(0)) c.disconnect();
  });

  it('two processes share one count: the fourth request of 3 a minute, from either, is refused with the time left', async () => {
    const rules = { ...off, pay_per_address: { count: 3, seconds: 60 } };
    const a = new RedisLimits({ redis: connect(), prefix, rules, logger: logger() });
    const b = new RedisLimits({ redis: connect(), prefix, rules, logger: logger() });
    expect(await a.take('pay_per_address', '203.0.113.9')).to.deep.equal({ allowed: true });
    expect(await b.take('pay_per_address', '203.0.113.9')).to.deep.equal({ allowed: true });
    expect(await a.take('pay_per_address', '203.0.113.9')).to.deep.equal({ allowed: true });
    const refused = await b.take('pay_per_address', '203.0.113.9');
    expect(refused.allowed).to.equal(false);
    expect(refused.allowed === false && refused.retryAfterSeconds).to.be.within(59, 60);
    expect(await a.take('pay_per_address', '203.0.113.10'), 'another key').to.deep.equal({ allowed: true });
    expect(await a.take('orders_per_address', '203.0.113.9'), 'a limit that is off').to.deep.equal({
      allowed: true,
    });
    const keys = await connect().keys(`${prefix}:*`);
    expect(keys.sort()).to.deep.equal([
      `${prefix}:limit:pay_per_address:203.0.113.10`,
      `${prefix}:limit:pay_per_address:203.0.113.9`,
    ]);
    for (const key of keys) expect(await connect().pttl(key), 'every key expires').to.be.within(1, 60_000);
  });

  it('a limit of failures: what was taken and given back (a success) does not count, in Redis or alone', async () => {
    const rules = { ...off, login_failures_per_address: { count: 2, seconds: 60 } };
    for (const redis of [connect(), connect(`redis://127.0.0.1:${await closedPort()}`)]) {
      const limits = new RedisLimits({ redis, prefix, rules, logger: logger(), timeoutMs: 100 });
      for (let i = 0; i < 5; i++) {
        expect(await limits.take('login_failures_per_address', '192.0.2.1')).to.deep.equal({ allowed: true });
        await limits.giveBack('login_failures_per_address', '192.0.2.1');
      }
      expect(await limits.take('login_failures_per_address', '192.0.2.1')).to.deep.equal({ allowed: true });
      expect(await limits.take('login_failures_per_address', '192.0.2.1')).to.deep.equal({ allowed: true });
      expect((await limits.take('login_failures_per_address', '192.0.2.1')).allowed).to.equal(false);
    }
  });

  it('Redis unreachable: each process counts alone, at once; one warning, and every such decision counted', async () => {
    const closed = await closedPort();
    const fallbacks: string[] = [];
    const refusals: string[] = [];
    const limits = new RedisLimits({
      redis: connect(`redis://127.0.0.1:${closed}`),
      prefix,
      rules: { ...off, orders_per_address: { count: 2, seconds: 60 } },
      logger: logger(),
      onFallback: (name) => fallbacks.push(name),
      onRefused: (name) => refusals.push(name),
    });
    const started = performance.now();
    expect(await limits.take('orders_per_address', '198.51.100.1')).to.deep.equal({ allowed: true });
    expect(await limits.take('orders_per_address', '198.51.100.1')).to.deep.equal({ allowed: true });
    const third = await limits.take('orders_per_address', '198.51.100.1');
    expect(third.allowed, 'the limit still holds, in this process').to.equal(false);
    expect(performance.now() - started, 'no longer than the Redis deadline, once').to.be.below(400);
    expect(fallbacks).to.deep.equal(['orders_per_address', 'orders_per_address', 'orders_per_address']);
    expect(refusals).to.deep.equal(['orders_per_address']);
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings.map((l) => l.msg)).to.deep.equal([
      'rate limits: Redis unavailable; each process counts the limits alone until it answers',
    ]);
  });
});

/** A port nothing listens on: bound, then closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
