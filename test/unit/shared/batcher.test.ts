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
    const store = batched(flush, { maxBatch: 10, maxInFlight: 2, defer: turn.defer });
    const first = store('a');
    const answers = ['b', 'c', 'd'].map((x) => store(x));
    expect(
      calls.map((c) => c.items),
      'the first went alone; the others wait for the turn',
    ).to.deep.equal([['a']]);
    turn.end();
    expect(calls.map((c) => c.items)).to.deep.equal([['a'], ['b', 'c', 'd']]);
    calls[1]!.answer(['B', 'C', 'D']);
    calls[0]!.answer(['A']);
    expect(await Promise.all([first, ...answers])).to.deep.equal(['A', 'B', 'C', 'D']);
  });

  it('a call with no flush running goes alone at once, without waiting for the turn to end', async () => {
    const { calls, flush } = manualFlush<string>();
    const turn = turns();
    const store = batched(flush, { maxBatch: 10, maxInFlight: 2, defer: turn.defer });
    const lone = store('a');
    expect(calls.map((c) => c.items)).to.deep.equal([['a']]);
    calls[0]!.answer(['A']);
    expect(await lone).to.equal('A');
    // Nothing runs again: the next call goes at once too.
    const next = store('b');
    expect(calls.map((c) => c.items)).to.deep.equal([['a'], ['b']]);
    calls[1]!.answer(['B']);
    expect(await next).to.equal('B');
    turn.end();
    expect(calls, 'nothing was left for the turn').to.have.length(2);
  });

  it('under light load up to maxInFlight flushes run at once; only beyond them do calls wait', async () => {
    const { calls, flush } = manualFlush<number>();
    const turn = turns();
    const store = batched(flush, { maxBatch: 10, maxInFlight: 3, defer: turn.defer });
    const answers = [store(0)];
    turn.end();
    answers.push(store(1));
    turn.end();
    answers.push(store(2));
    turn.end();
    answers.push(store(3));
    turn.end();
    expect(
      calls.map((c) => c.items),
      'three in flight, the fourth waits',
    ).to.deep.equal([[0], [1], [2]]);
    calls[1]!.answer([1]);
    await answers[1];
    expect(calls.map((c) => c.items)).to.deep.equal([[0], [1], [2], [3]]);
    calls[0]!.answer([0]);
    calls[2]!.answer([2]);
    calls[3]!.answer([3]);
    expect(await Promise.all(answers)).to.deep.equal([0, 1, 2, 3]);
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
    // The first goes alone at once; a call first keeps the others together.
    const opener = store('opener');
    const [ok, bad] = [store('ok'), store('bad')];
    turn.end();
    calls[0]!.answer(['opener']);
    await opener;
    calls[1]!.answer(['ok', new Error('bad row')]);
    expect(await ok).to.equal('ok');
    const refused = await bad.then(
      () => null,
      (e: Error) => e.message,
    );
    expect(refused).to.equal('bad row');

    // w goes alone at once, x and y together once the turn ends; their flush fails, w's does not.
    const [w, x, y] = [store('w'), store('x'), store('y')];
    turn.end();
    expect(calls.slice(2).map((c) => c.items)).to.deep.equal([['w'], ['x', 'y']]);
    calls[3]!.fail(new Error('database down'));
    calls[2]!.answer(['w']);
    const outcomes = await Promise.allSettled([w, x, y]);
    expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'rejected']);
  });

  it('a flush that answers fewer results than items fails the ones left unanswered', async () => {
    const { calls, flush } = manualFlush<string>();
    const turn = turns();
    const store = batched(flush, { maxBatch: 10, maxInFlight: 1, defer: turn.defer });
    const opener = store('opener');
    const answers = Promise.allSettled([store('a'), store('b')]);
    calls[0]!.answer(['opener']);
    await opener;
    turn.end();
    calls[1]!.answer(['a']);
    expect((await answers).map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected']);
  });
});
