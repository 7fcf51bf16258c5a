import { expect } from 'chai';
import { TEST_CARDS } from './cards.js';
import { suiteLogLines } from './log-sink.js';

/**
 * Root hooks (.mocharc.json `require`): after the whole suite, every log line any kit or process of it
 * wrote is read once more. Card data never reaches a log (merchant.md, Card data), nor a signing
 * secret, an order's client secret or a payment link's token; an expected refusal (4xx) logs no stack trace; and every line of a request names it.
 */

const json = (line: string): Record<string, unknown> | null => {
  try {
    const parsed = JSON.parse(line);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

export const mochaHooks = {
  afterAll() {
    const lines = suiteLogLines;
    const leaks = lines.filter(
      (l) =>
        TEST_CARDS.some((n) => l.includes(n)) ||
        l.includes('whsec_') ||
        /\b(?:ocs|plt)_[A-Za-z0-9_-]{43}/.test(l),
    );
    expect(
      leaks.slice(0, 3),
      `${leaks.length} of ${lines.length} log lines carry a card number or a secret`,
    ).to.deep.equal([]);
    const entries = lines.map(json).filter((e): e is Record<string, unknown> => e !== null);
    const stacks = entries.filter(
      (e) => JSON.stringify(e).includes('"stack"') && Number(e.status ?? 500) < 500 && Number(e.level) < 50,
    );
    expect(stacks.slice(0, 3), 'a stack trace below error level').to.deep.equal([]);
    // The kit's requests (the embedded sandbox is the gateway's side: its lines say side=sandbox).
    const requests = entries.filter(
      (e) => e.msg === 'request' && e.method !== undefined && e.side !== 'sandbox',
    );
    const anonymous = requests.filter((e) => typeof e.request_id !== 'string');
    expect(anonymous.slice(0, 3), `request lines without a request id (of ${requests.length})`).to.deep.equal(
      [],
    );
    console.log(
      `      log guard: ${lines.length} log lines read, ${requests.length} request lines; no card number, no secret`,
    );
  },
};
