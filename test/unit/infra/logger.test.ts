import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger, prettyDestination, wantsPrettyLogs } from '../../../src/infra/logger.js';

/** The logger's own rules, one line at a time into memory. */
describe('infra: the logger', () => {
  const capture = () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    return { logger: createLogger('info', sink), lines };
  };

  it('an expected failure logged as `err: {message}` stays that, with no empty type or stack', () => {
    const { logger, lines } = capture();
    logger.warn({ err: { message: 'Transaction not found.' } }, 'status poll failed');
    expect(lines[0]!.err).to.deep.equal({ message: 'Transaction not found.' });
  });

  it('a thrown Error keeps its name, message and stack', () => {
    const { logger, lines } = capture();
    logger.error({ err: new TypeError('boom') }, 'unexpected');
    const err = lines[0]!.err as { type: string; message: string; stack: string };
    expect([err.type, err.message]).to.deep.equal(['TypeError', 'boom']);
    expect(err.stack).to.match(/^TypeError: boom\n/);
  });

  it('card fields and secrets handed to it by mistake are censored', () => {
    const { logger, lines } = capture();
    logger.info({ card: { number: '4000000000000002' }, body: { cvv: '123', secret: 'whsec_x' } }, 'oops');
    const text = JSON.stringify(lines[0]);
    expect(text).to.not.contain('4000000000000002');
    expect(text).to.not.contain('whsec_');
    expect(text).to.not.contain('"123"');
  });
});

describe('infra: readable logs on a terminal', () => {
  it('auto: readable only on a terminal in development; json and pretty decide alone', () => {
    expect(wantsPrettyLogs('auto', { env: 'development', isTTY: true })).to.equal(true);
    expect(wantsPrettyLogs('auto', { env: 'development', isTTY: false }), 'a pipe, a file').to.equal(false);
    expect(wantsPrettyLogs('auto', { env: 'production', isTTY: true }), 'production reads JSON').to.equal(
      false,
    );
    expect(wantsPrettyLogs('auto', { env: 'test', isTTY: true })).to.equal(false);
    expect(wantsPrettyLogs('json', { env: 'development', isTTY: true })).to.equal(false);
    expect(wantsPrettyLogs('pretty', { env: 'production', isTTY: false })).to.equal(true);
  });

  it('a readable line: time, level, message and fields, no JSON; card fields and secrets still censored', () => {
    let text = '';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    });
    const logger = createLogger('info', prettyDestination(sink, false));
    logger.info({ port: 3000 }, 'merchant API listening');
    logger.warn({ card: { number: '4000000000000002', cvv: '123' }, body: { secret: 'whsec_abc' } }, 'oops');
    const [first, second] = text.trim().split('\n');
    expect(first).to.match(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: merchant API listening \{"port":3000\}$/);
    expect(second).to.match(/^\[[\d:.]+\] WARN: oops /);
    expect(text).to.not.match(/^\{/m);
    expect(text).to.match(/WARN: oops/);
    expect(text).to.contain('[redacted]');
    expect(text).to.not.contain('4000000000000002');
    expect(text).to.not.contain('whsec_');
  });
});
