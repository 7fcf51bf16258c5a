import { expect } from 'chai';
import { OutageLog, STILL_DOWN_EVERY_MS } from '../../../src/infra/outage-log.js';
import { ManualClock } from '../../../src/shared/clock.js';

/** Redis down for a while: a line when it goes, one a minute while it stays down, one when it is back. */
describe('infra: the outage log', () => {
  const setup = () => {
    const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
    const logger = {
      warn: (fields: object, message: string) =>
        void lines.push({ level: 'warn', message, fields: { ...fields } }),
      info: (fields: object, message: string) =>
        void lines.push({ level: 'info', message, fields: { ...fields } }),
    };
    const clock = new ManualClock();
    return { lines, clock, log: OutageLog.of('redis', logger, clock) };
  };
  const refused = new Error('connect ECONNREFUSED 127.0.0.1:6379');

  it('five minutes of failed reconnections from four clients: one line when it goes, one a minute, one when back', () => {
    const { lines, clock, log } = setup();
    // ioredis retries every 2 s at most, on each of the kit's clients.
    for (let t = 0; t < 300_000; t += 2000) {
      for (let client = 0; client < 4; client += 1) log.failed(refused);
      clock.advance(2000);
    }
    log.available();
    expect(lines.map((l) => l.message)).to.deep.equal([
      'redis unavailable',
      'redis still unavailable',
      'redis still unavailable',
      'redis still unavailable',
      'redis still unavailable',
      'redis available again',
    ]);
    expect(lines[0]!.fields).to.deep.equal({ err: { message: refused.message } });
    expect(lines[1]!.fields).to.deep.equal({ err: { message: refused.message }, down_s: 60, failures: 120 });
    expect(lines.at(-1)).to.deep.include({ level: 'info' });
    expect(lines.at(-1)!.fields).to.deep.equal({ down_s: 300, failures: 600 });
  });

  it('a connection made while up says nothing; an outage after a recovery is logged afresh', () => {
    const { lines, clock, log } = setup();
    log.available();
    expect(lines).to.deep.equal([]);
    log.failed(refused);
    clock.advance(5000);
    log.available();
    log.available(); // the other clients reconnecting
    clock.advance(1000);
    log.failed(refused);
    expect(lines.map((l) => [l.message, l.fields.down_s])).to.deep.equal([
      ['redis unavailable', undefined],
      ['redis available again', 5],
      ['redis unavailable', undefined],
    ]);
  });

  it('the minute is counted from the last line, not from the first failure', () => {
    const { lines, clock, log } = setup();
    log.failed(refused);
    clock.advance(STILL_DOWN_EVERY_MS - 1);
    log.failed(refused);
    expect(lines).to.have.length(1);
    clock.advance(1);
    log.failed(refused);
    expect(lines).to.have.length(2);
    expect(lines[1]!.fields.failures).to.equal(2);
  });
});
