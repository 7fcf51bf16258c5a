import { expect } from 'chai';
import { SecretCache } from '../../../src/merchant/webhooks/secret-cache.js';
import { ManualClock } from '../../../src/shared/clock.js';

/**
 * merchant.md, The receiver and Running it: the receiver verifies against every active secret, and a
 * rotation elsewhere loses no event. The SecretCache keeps those secrets off the hot path: read at most
 * every TTL, re-read at once on demand (`refresh()`), with refreshes that arrive together sharing one read.
 */

const TTL = 30_000;

/** A loader that answers from a script of results and counts its calls. */
function scriptedLoader(results: (string[] | Error)[]) {
  let calls = 0;
  const load = async (): Promise<string[]> => {
    const result = results[Math.min(calls, results.length - 1)]!;
    calls += 1;
    if (result instanceof Error) throw result;
    return [...result];
  };
  return { load, calls: () => calls };
}

describe('merchant: SecretCache (the receiver’s signing secrets)', () => {
  describe('get()', () => {
    it('loads once, then serves from memory within the TTL', async () => {
      const clock = new ManualClock();
      const loader = scriptedLoader([['secret-one'], ['secret-two']]);
      const cache = new SecretCache(loader.load, clock, TTL);

      expect(loader.calls(), 'nothing is read before it is needed').to.equal(0);
      expect(await cache.get()).to.deep.equal(['secret-one']);
      expect(loader.calls()).to.equal(1);

      for (const step of [0, 1000, 10_000, TTL - 1 - 11_000]) {
        clock.advance(step);
        expect(await cache.get()).to.deep.equal(['secret-one']);
      }
      expect(loader.calls(), 'no read within the TTL').to.equal(1);
    });

    it('reloads once the TTL has passed, and serves the new secrets', async () => {
      const clock = new ManualClock();
      const loader = scriptedLoader([['old-secret'], ['new-secret'], ['newer-secret']]);
      const cache = new SecretCache(loader.load, clock, TTL);

      expect(await cache.get()).to.deep.equal(['old-secret']);
      clock.advance(TTL + 1);
      expect(await cache.get()).to.deep.equal(['new-secret']);
      expect(loader.calls()).to.equal(2);
      // The TTL counts from the reload: within it, memory again.
      clock.advance(TTL - 1);
      expect(await cache.get()).to.deep.equal(['new-secret']);
      expect(loader.calls()).to.equal(2);
      clock.advance(2);
      expect(await cache.get()).to.deep.equal(['newer-secret']);
      expect(loader.calls()).to.equal(3);
    });

    it('serves every secret the loader returns (a rotation keeps the old one active)', async () => {
      const clock = new ManualClock();
      const loader = scriptedLoader([['current-secret', 'previous-secret', 'extra-from-env']]);
      const cache = new SecretCache(loader.load, clock, TTL);
      expect(await cache.get()).to.deep.equal(['current-secret', 'previous-secret', 'extra-from-env']);
    });
  });

  describe('matched()', () => {
    it('puts the secret that verified first, leaves the rest in order; the next read restores the stored order', async () => {
      const clock = new ManualClock();
      const cache = new SecretCache(async () => ['s1', 's2', 's3'], clock, TTL);
      await cache.get();
      cache.matched('s3');
      expect(cache.current()).to.deep.equal(['s3', 's1', 's2']);
      cache.matched('s3');
      cache.matched('unknown');
      expect(cache.current(), 'already first, or not held: unchanged').to.deep.equal(['s3', 's1', 's2']);
      clock.advance(TTL);
      expect(await cache.get()).to.deep.equal(['s1', 's2', 's3']);
    });

    it('before any read: nothing to reorder', () => {
      const cache = new SecretCache(async () => ['s1'], new ManualClock(), TTL);
      cache.matched('s1');
      expect(cache.current()).to.equal(null);
    });
  });

  describe('refresh()', () => {
    it('re-reads well within the TTL (a rotation stored a moment ago is seen), at most once a second', async () => {
      const clock = new ManualClock();
      const loader = scriptedLoader([['old'], ['old', 'new'], ['newer']]);
      const cache = new SecretCache(loader.load, clock, TTL);
      expect(await cache.get()).to.deep.equal(['old']);
      clock.advance(1000);
      await cache.refresh();
      expect(await cache.get()).to.deep.equal(['old', 'new']);
      clock.advance(1000);
      await cache.refresh();
      expect(await cache.get()).to.deep.equal(['newer']);
      expect(loader.calls()).to.equal(3);
    });

    it('bad signatures one after another cost one read a second, not one each', async () => {
      const clock = new ManualClock();
      const loader = scriptedLoader([['s']]);
      const cache = new SecretCache(loader.load, clock, TTL);
      await cache.get();
      for (let i = 0; i < 100; i++) {
        await cache.refresh();
        clock.advance(25); // 40 misses a second
      }
      // 2.5 s of misses: a read at 1 s and at 2 s after the first.
      expect(loader.calls()).to.equal(3);
    });

    it('refreshes that arrive together share one read (a flood of bad signatures costs one query at a time)', async () => {
      const clock = new ManualClock();
      let release: () => void = () => {};
      let calls = 0;
      const cache = new SecretCache(
        () => {
          calls += 1;
          return new Promise<string[]>((resolve) => {
            release = () => resolve(['s']);
          });
        },
        clock,
        TTL,
      );
      const together = Array.from({ length: 20 }, () => cache.refresh());
      release();
      await Promise.all(together);
      expect(calls).to.equal(1);
      clock.advance(1000);
      const later = cache.refresh();
      release();
      await later;
      expect(calls, 'a later refresh reads again').to.equal(2);
    });

    it('a refresh resets the TTL: get() serves what it read', async () => {
      const clock = new ManualClock();
      const loader = scriptedLoader([['a'], ['b']]);
      const cache = new SecretCache(loader.load, clock, TTL);
      await cache.get();
      clock.advance(TTL - 1000);
      await cache.refresh();
      clock.advance(2000);
      expect(await cache.get()).to.deep.equal(['b']);
      expect(loader.calls()).to.equal(2);
    });
  });

  describe('a loader failure', () => {
    it('propagates from the first get(), and the next call tries again', async () => {
      const clock = new ManualClock();
      const loader = scriptedLoader([new Error('database unreachable'), ['recovered']]);
      const cache = new SecretCache(loader.load, clock, TTL);

      let caught: unknown;
      try {
        await cache.get();
      } catch (error) {
        caught = error;
      }
      expect(caught, 'the failure is not swallowed').to.be.instanceOf(Error);
      expect((caught as Error).message).to.equal('database unreachable');

      // No time passes: a failure is not cached as a load.
      expect(await cache.get()).to.deep.equal(['recovered']);
      expect(loader.calls()).to.equal(2);
    });

    it('propagates from a reload after the TTL (no stale answer passed off as fresh), and the next call tries again', async () => {
      const clock = new ManualClock();
      const loader = scriptedLoader([['old'], new Error('timeout'), ['new']]);
      const cache = new SecretCache(loader.load, clock, TTL);
      expect(await cache.get()).to.deep.equal(['old']);

      clock.advance(TTL + 1);
      let caught: unknown;
      try {
        await cache.get();
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(Error);
      expect((caught as Error).message).to.equal('timeout');

      expect(await cache.get()).to.deep.equal(['new']);
      expect(loader.calls()).to.equal(3);
    });

    it('propagates from refresh(), and the next refresh() tries again', async () => {
      const clock = new ManualClock();
      const loader = scriptedLoader([['a'], new Error('database down'), ['b']]);
      const cache = new SecretCache(loader.load, clock, TTL);
      await cache.get();
      clock.advance(1000);
      let failed = false;
      try {
        await cache.refresh();
      } catch (error) {
        failed = (error as Error).message === 'database down';
      }
      expect(failed).to.equal(true);
      expect(await cache.get(), 'the last good secrets stay').to.deep.equal(['a']);
      await cache.refresh();
      expect(await cache.get()).to.deep.equal(['b']);
    });
  });
});
