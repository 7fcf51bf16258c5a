import { expect } from 'chai';
import { parseIsoTime } from '../../../src/shared/iso-time.js';

describe('shared: a typed point in time (pure)', () => {
  const iso = (text: string) => parseIsoTime(text)?.toISOString() ?? null;

  it('takes a date as its midnight UTC, and a date-time with Z or an offset', () => {
    expect(iso('2026-11-23')).to.equal('2026-11-23T00:00:00.000Z');
    expect(iso('2024-02-29')).to.equal('2024-02-29T00:00:00.000Z');
    expect(iso('2026-11-23T08:00:00Z')).to.equal('2026-11-23T08:00:00.000Z');
    expect(iso('2026-11-23T08:00Z')).to.equal('2026-11-23T08:00:00.000Z');
    expect(iso('2026-11-23T08:00:00.123456Z')).to.equal('2026-11-23T08:00:00.123Z');
    expect(iso('2026-11-23T08:00:00.5+01:00')).to.equal('2026-11-23T07:00:00.500Z');
    expect(iso('2026-11-23T23:30:00-02:30')).to.equal('2026-11-24T02:00:00.000Z');
    expect(iso('2026-12-31T23:59:59Z')).to.equal('2026-12-31T23:59:59.000Z');
  });

  it('refuses a date or time that does not exist, instead of moving it to one that does', () => {
    for (const text of [
      '2026-02-30',
      '2026-02-29',
      '2026-11-31',
      '2026-11-00',
      '2026-13-01',
      '2026-00-10',
      '2026-11-01T24:00:00Z',
      '2026-11-01T10:60:00Z',
      '2026-11-01T10:00:60Z',
      '2026-11-01T10:00:00+24:00',
      '2026-11-01T10:00:00+01:60',
    ])
      expect(parseIsoTime(text), text).to.equal(null);
  });

  it('refuses what is not ISO 8601, or a time with no zone', () => {
    for (const text of [
      '2026-11-01 10:00 PST',
      '2026-11-01 10:00:00Z',
      '2026-11-01T10:00:00',
      '2026-11-01T10Z',
      '2026-11-01garbage',
      '2026-1-01',
      'yesterday',
      '',
      ' 2026-11-01',
      '1700000000',
    ])
      expect(parseIsoTime(text), text).to.equal(null);
  });
});
