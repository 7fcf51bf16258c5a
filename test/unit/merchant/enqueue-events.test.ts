import type Queue from 'bull';
import { expect } from 'chai';
import { enqueueEvents, type ObservationJob } from '../../../src/merchant/reconciler/queue.js';

/** A queue that records what it was asked: one `add`, or one `addBulk` of several. */
function recordingQueue() {
  const asked: { call: 'add' | 'addBulk'; ids: string[] }[] = [];
  const queue = {
    add: async (data: ObservationJob, opts: { jobId: string }) => {
      expect(opts.jobId).to.equal(data.eventId);
      asked.push({ call: 'add', ids: [data.eventId] });
    },
    addBulk: async (jobs: { data: ObservationJob; opts: { jobId: string } }[]) => {
      for (const j of jobs) expect(j.opts.jobId).to.equal(j.data.eventId);
      asked.push({ call: 'addBulk', ids: jobs.map((j) => j.data.eventId) });
    },
  };
  return { asked, queue: queue as unknown as Queue.Queue<ObservationJob> };
}

describe('reconciler queue: enqueueEvents', () => {
  it('one event alone is one add (no MULTI/EXEC), its job id the event id', async () => {
    const { asked, queue } = recordingQueue();
    expect(await enqueueEvents(queue, ['evt_1'])).to.deep.equal([undefined]);
    expect(asked).to.deep.equal([{ call: 'add', ids: ['evt_1'] }]);
  });

  it('several go in one addBulk, in order, each answered', async () => {
    const { asked, queue } = recordingQueue();
    expect(await enqueueEvents(queue, ['evt_1', 'evt_2', 'evt_3'])).to.deep.equal([
      undefined,
      undefined,
      undefined,
    ]);
    expect(asked).to.deep.equal([{ call: 'addBulk', ids: ['evt_1', 'evt_2', 'evt_3'] }]);
  });
});
