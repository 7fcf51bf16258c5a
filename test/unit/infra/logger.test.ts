import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '../../../src/infra/logger.js';

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
