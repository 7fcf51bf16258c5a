import { expect } from 'chai';
import {
  ageOut,
  oldEvents,
  REDELIVERY_DAYS,
  retentionCutoffs,
  undelivered,
} from '../../../src/merchant/jobs/retention.js';
import type { ScannedEvent } from '../../../src/merchant/store/retention.js';

/** Issue 43, part 5: what ages out, and when, without a database. */
describe('merchant: retention rules (issue 43, part 5)', () => {
  const DAY = 86_400_000;
  const now = Date.parse('2026-12-31T00:00:00Z');

  it('bodies and order events after RETENTION_DAYS; ids not before the gateway stops delivering (31 days)', () => {
    expect(REDELIVERY_DAYS).to.equal(31);
    expect(retentionCutoffs(now, 90)).to.deep.equal({
      bodies: new Date(now - 90 * DAY),
      ids: new Date(now - 90 * DAY),
      orderEvents: new Date(now - 90 * DAY),
    });
    const week = retentionCutoffs(now, 7);
    expect(week.bodies).to.deep.equal(new Date(now - 7 * DAY));
    expect(week.ids).to.deep.equal(new Date(now - 31 * DAY));
  });

  const at = (seq: number, daysAgo: number, fanned = true): ScannedEvent => ({
    seq,
    created_at: new Date(now - daysAgo * DAY),
    fanned_out_at: fanned ? new Date(now - daysAgo * DAY) : null,
  });

  it('old events fanned out are candidates; the scan stops at the first young one', () => {
    const before = new Date(now - 7 * DAY);
    expect(oldEvents([at(1, 9), at(2, 8, false), at(3, 8), at(4, 6), at(5, 9)], before)).to.deep.equal({
      seqs: [1, 3],
      done: true,
    });
    expect(oldEvents([at(1, 9)], before)).to.deep.equal({ seqs: [1], done: false });
    expect(
      undelivered([
        { event_seq: 1, status: 'delivered' },
        { event_seq: 1, status: 'failed' },
        { event_seq: 3, status: 'delivered' },
        { event_seq: 4, status: 'pending' },
      ]),
    ).to.deep.equal(new Set([1, 4]));
  });

  it('a run: ids, then bodies, then order events, batch after batch while each fills', async () => {
    const calls: string[] = [];
    let deletes = [2, 1];
    let clears = [2, 2, 0];
    const scans: ScannedEvent[][] = [
      [at(1, 9), at(2, 9)],
      [at(3, 9), at(4, 1)],
    ];
    const summary = await ageOut(
      {
        now: () => now,
        retention: {
          deleteEvents: async (before) => {
            calls.push(`delete<${(now - before.getTime()) / DAY}d`);
            return deletes.shift() ?? 0;
          },
          clearBodies: async (before) => {
            calls.push(`clear<${(now - before.getTime()) / DAY}d`);
            return clears.shift() ?? 0;
          },
          scanOrderEvents: async (after) => {
            calls.push(`scan>${after}`);
            return scans.shift() ?? [];
          },
          pruneOrderEvents: async (seqs, keep) => {
            calls.push(`prune ${seqs.join(',')}`);
            const kept = keep(seqs.map((s) => ({ event_seq: s, status: s === 3 ? 'failed' : 'delivered' })));
            const gone = seqs.filter((s) => !kept.has(s)).length;
            return { events: gone, deliveries: gone, tries: 2 * gone };
          },
        },
      },
      { days: 7, batch: 2 },
    );
    expect(calls).to.deep.equal([
      'delete<31d',
      'delete<31d',
      'clear<7d',
      'clear<7d',
      'clear<7d',
      'scan>0',
      'prune 1,2',
      'scan>2',
      'prune 3',
    ]);
    expect(summary).to.deep.equal({
      webhookPayloads: 4,
      webhookEvents: 3,
      orderEvents: 2,
      orderEventDeliveries: 2,
      orderEventTries: 4,
    });
    deletes = [];
    clears = [];
  });

  it('a run stops after its cap of batches: the next one goes on', async () => {
    let deleted = 0;
    const summary = await ageOut(
      {
        now: () => now,
        retention: {
          deleteEvents: async () => {
            deleted += 1;
            return 5;
          },
          clearBodies: async () => 0,
          scanOrderEvents: async () => [],
          pruneOrderEvents: async () => ({ events: 0, deliveries: 0, tries: 0 }),
        },
      },
      { days: 90, batch: 5, maxBatches: 3 },
    );
    expect(deleted).to.equal(3);
    expect(summary.webhookEvents).to.equal(15);
  });
});
