import { expect } from 'chai';
import { redisLossCell, redisLossFailures } from '../../../chaos/redis-loss.js';

/** Issue 44, part 4: the chaos table's figure after each Redis fault, and when it fails the run. */
describe('chaos: the time from a Redis fault to its events applied', () => {
  it('a cell naming each fault, its seconds and its events', () => {
    expect(redisLossCell([])).to.equal('not measured');
    expect(
      redisLossCell([
        { fault: 'FLUSHALL', events: 41, seconds: 2.04 },
        { fault: 'restart', events: 1, seconds: null },
      ]),
    ).to.equal('FLUSHALL: 2.0 (41 events); restart: not applied (1 event)');
  });

  it('fails the run past 15 s, or when the events were never all applied; 15 s itself passes', () => {
    expect(redisLossFailures([{ fault: 'FLUSHALL', events: 3, seconds: 15 }])).to.deep.equal([]);
    expect(
      redisLossFailures([
        { fault: 'FLUSHALL', events: 3, seconds: 63.2 },
        { fault: 'restart', events: 3, seconds: null },
      ]),
    ).to.deep.equal([
      'after FLUSHALL, the events held unapplied applied in 63.2 s (at most 15)',
      'after restart, the events held unapplied not all applied (at most 15)',
    ]);
  });
});
