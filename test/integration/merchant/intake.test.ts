import { expect } from 'chai';
import { enqueueEvents, eventIdsOf } from '../../../src/merchant/reconciler/queue.js';
import { ENQUEUE_DEADLINE_MS, inboxIntake } from '../../../src/merchant/webhooks/intake.js';
import { count } from '../../support/db.js';
import { startTestKit, type TestKit } from '../../support/kit.js';

/**
 * The receiver's durable step (merchant.md, The receiver: stored, then queued, then 200), against the
 * kit's real inbox and queue: deliveries in flight together are one INSERT and one job; a repeat is
 * not queued; a queue that does not answer leaves the event stored and answered.
 */
describe('merchant: the receiver intake (store, then queue, a batch at a time)', () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
  });
  after(async () => {
    await t?.close();
  });
  afterEach(async () => {
    await t.kit.queue.empty();
  });

  const event = (id: string) => ({
    id,
    type: 'transaction.captured',
    transactionId: '100300',
    source: 'webhook' as const,
    payload: `{"id":"${id}"}`,
    now: new Date(),
  });
  const warnings: string[] = [];
  const logger = { warn: (_: unknown, message: string) => void warnings.push(message) };
  /** On the kit's inbox, one flush in flight: what arrives meanwhile goes together in the next. */
  const intakeWith = (enqueue: (ids: readonly string[]) => Promise<unknown>) =>
    inboxIntake(
      { inbox: t.kit.store.inbox, enqueue, logger: logger as never },
      { maxBatch: 200, maxInFlight: 1 },
    );

  it('deliveries in flight together: one INSERT, one job for the new ones; a repeat answered duplicate and not queued', async () => {
    const intake = intakeWith((ids) => enqueueEvents(t.kit.queue, ids));
    expect(await intake(event('evt_intake_known'))).to.equal('queued');
    await t.kit.queue.empty();
    const answers = await Promise.all(
      ['evt_intake_first', 'evt_intake_a', 'evt_intake_known', 'evt_intake_b'].map((id) => intake(event(id))),
    );
    expect(answers).to.deep.equal(['queued', 'queued', 'duplicate', 'queued']);
    const jobs = await t.kit.queue.getJobs(['waiting', 'delayed', 'active']);
    // The first went alone, at once; the rest arrived while it was in flight and went together.
    expect(jobs.map((j) => eventIdsOf(j.data)).sort()).to.deep.equal([
      ['evt_intake_a', 'evt_intake_b'],
      ['evt_intake_first'],
    ]);
    expect(await count(t, 'webhook_inbox', { event_id: 'evt_intake_a' })).to.equal(1);
  });

  it('a queue that does not answer: the batch is stored and answered within the deadline, the sweeper queues it later', async () => {
    const intake = intakeWith(() => new Promise(() => {}));
    const started = performance.now();
    const answers = await Promise.all(['evt_intake_c', 'evt_intake_d'].map((id) => intake(event(id))));
    expect(answers).to.deep.equal(['stored', 'stored']);
    expect(performance.now() - started).to.be.below(ENQUEUE_DEADLINE_MS * 2 + 500);
    expect(warnings.at(-1)).to.equal('webhooks stored, not queued');
    expect(await count(t, 'webhook_inbox', { event_id: ['evt_intake_c', 'evt_intake_d'] })).to.equal(2);
  });

  it('a row the database refuses fails that delivery alone; the rest of its batch is stored and queued', async () => {
    const intake = intakeWith((ids) => enqueueEvents(t.kit.queue, ids));
    const answers = await Promise.all(
      ['evt_intake_e', 'evt_intake_f', `evt_${'x'.repeat(80)}`, 'evt_intake_g'].map((id) =>
        intake(event(id)).catch((error: Error) => error),
      ),
    );
    expect(answers.map((a) => (a instanceof Error ? 'refused' : a))).to.deep.equal([
      'queued',
      'queued',
      'refused',
      'queued',
    ]);
    const queued = (await t.kit.queue.getJobs(['waiting', 'delayed', 'active'])).flatMap((j) =>
      eventIdsOf(j.data),
    );
    expect(queued.sort()).to.deep.equal(['evt_intake_e', 'evt_intake_f', 'evt_intake_g']);
  });
});
