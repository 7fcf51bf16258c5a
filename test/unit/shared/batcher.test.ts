import { expect } from 'chai';
import { batched } from '../../../src/shared/batcher.js';

/** A flush the test answers by hand: each call waits until the test releases it. */
function manualFlush<T>() {
  const calls: {
    items: readonly T[];
    answer: (results: readonly (T | Error)[]) => void;
    fail: (e: Error) => void;
  }[] = [];
  const flush = (items: readonly T[]) =>
    new Promise<readonly (T | Error)[]>((answer, fail) => {
      calls.push({ items, answer, fail });
    });
  return { calls, flush };
}

/** Runs what was deferred, as the end of an event-loop turn would. */
function turns() {
  const pending: (() => void)[] = [];
  return {
    defer: (run: () => void) => void pending.push(run),
    end: () => {
      for (const run of pending.splice(0)) run();
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('shared: batched (group commit)', () => {
  it('the calls of one turn go in one flush, each answered with its own result', async () => {
    const { calls, flush } = manualFlush<string>();
    const turn = turns();
    const store = batched(flush, { maxBatch: 10, maxInFlight: 1, defer: turn.defer });
    const answers = ['a', 'b', 'c'].map((x) => store(x));
    expect(calls, 'nothing before the turn ends').to.have.length(0);
    turn.end();
    expect(calls.map((c) => c.items)).to.deep.equal([['a', 'b', 'c']]);
    calls[0]!.answer(['A', 'B', 'C']);
    expect(await Promise.all(answers)).to.deep.equal(['A', 'B', 'C']);
  });

  it('while maxInFlight flushes run, new calls wait and then go together, at most maxBatch each', async () => {
    const { calls, flush } = manualFlush<number>();
    const turn = turns();
    const store = batched(flush, { maxBatch: 3, maxInFlight: 1, defer: turn.defer });
    const first = store(0);
    turn.end();
    const later = [1, 2, 3, 4, 5].map((n) => store(n));
    turn.end();
    expect(
      calls.map((c) => c.items),
      'one flush in flight: the rest wait',
    ).to.deep.equal([[0]]);
    calls[0]!.answer([0]);
    await first;
    expect(calls.map((c) => c.items)).to.deep.equal([[0], [1, 2, 3]]);
    calls[1]!.answer([1, 2, 3]);
    await settle();
    expect(calls.map((c) => c.items)).to.deep.equal([[0], [1, 2, 3], [4, 5]]);
    calls[2]!.answer([4, 5]);
    expect(await Promise.all(later)).to.deep.equal([1, 2, 3, 4, 5]);
  });

  it('an Error answered for one item fails that item alone; a failed flush fails its whole batch only', async () => {
    const { calls, flush } = manualFlush<string>();
    const turn = turns();
    const store = batched(flush, { maxBatch: 10, maxInFlight: 2, defer: turn.defer });
    const [ok, bad] = [store('ok'), store('bad')];
    turn.end();
    calls[0]!.answer(['ok', new Error('bad row')]);
    expect(await ok).to.equal('ok');
    const refused = await bad.then(
      () => null,
      (e: Error) => e.message,
    );
    expect(refused).to.equal('bad row');

    const [x, y] = [store('x'), store('y')];
    turn.end();
    const z = store('z');
    turn.end();
    calls[1]!.fail(new Error('database down'));
    calls[2]!.answer(['z']);
    const outcomes = await Promise.allSettled([x, y, z]);
    expect(outcomes.map((o) => o.status)).to.deep.equal(['rejected', 'rejected', 'fulfilled']);
  });

  it('a flush that answers fewer results than items fails the ones left unanswered', async () => {
    const { calls, flush } = manualFlush<string>();
    const turn = turns();
    const store = batched(flush, { maxBatch: 10, maxInFlight: 1, defer: turn.defer });
    const answers = Promise.allSettled([store('a'), store('b')]);
    turn.end();
    calls[0]!.answer(['a']);
    expect((await answers).map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected']);
  });
});
