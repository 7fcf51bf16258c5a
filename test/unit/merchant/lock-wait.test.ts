import { expect } from 'chai';
import { whenLockFree } from '../../../src/cli/kit-session.js';
import type { Jobs } from '../../../src/kit/jobs.js';

/**
 * An operator's `cli recover` or `cli poll` runs under its job's lock (merchant.md, Background work:
 * each cron job runs on one instance at a time): while a scheduler holds it, the command waits,
 * bounded, instead of doing the same work beside it.
 */
describe('CLI: an operator’s run of a job waits for the lock (whenLockFree)', () => {
  /** Jobs whose lock is held elsewhere for the first `busy` tries. */
  const jobsHeldFor = (busy: number) => {
    let tries = 0;
    const jobs = {
      underLock: async <T>(_name: string, work: () => Promise<T>) => (++tries > busy ? work() : null),
    } as unknown as Jobs;
    return { jobs, tries: () => tries };
  };
  const slept: number[] = [];
  const sleep = async (ms: number) => void slept.push(ms);
  const stderr: string[] = [];
  const original = console.error;
  beforeEach(() => {
    slept.length = 0;
    stderr.length = 0;
    console.error = (line: string) => void stderr.push(line);
  });
  afterEach(() => {
    console.error = original;
  });

  it('runs at once when the lock is free, and says nothing', async () => {
    const { jobs, tries } = jobsHeldFor(0);
    expect(await whenLockFree(jobs, 'recovery', async () => 'done', { sleep })).to.equal('done');
    expect([tries(), slept.length, stderr]).to.deep.equal([1, 0, []]);
  });

  it('a held lock: says so once, tries again until it is free, then runs; a result of null is a result', async () => {
    const { jobs, tries } = jobsHeldFor(3);
    expect(await whenLockFree(jobs, 'poller', async () => null, { sleep, retryMs: 500 })).to.equal(null);
    expect(tries()).to.equal(4);
    expect(slept).to.deep.equal([500, 500, 500]);
    expect(stderr).to.deep.equal([
      'poller is running on another instance (its lock is held): waiting for it to finish',
    ]);
  });

  it('gives up after the wait with one line, never running the work', async () => {
    const { jobs } = jobsHeldFor(Number.POSITIVE_INFINITY);
    let ran = false;
    const waiting = whenLockFree(
      jobs,
      'recovery',
      async () => {
        ran = true;
      },
      { sleep, waitMs: 2000, retryMs: 500 },
    );
    let error: Error | undefined;
    await waiting.catch((e: Error) => {
      error = e;
    });
    expect(error?.message).to.equal(
      'recovery has been running on another instance for 2 s (its lock is held): try again later',
    );
    expect(ran).to.equal(false);
    expect(slept).to.have.length(4);
  });
});
