import { expect } from 'chai';
import pino from 'pino';
import { Shutdown } from '../../../src/kit/shutdown.js';

/** A logger whose lines the test reads back, parsed. */
function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('kit: Shutdown past its grace', () => {
  const stuck = () => new Promise<void>(() => undefined);

  it('names each thing cut off, one warning line each, after the grace line', async () => {
    const { logger, lines } = recordingLogger();
    const shutdown = new Shutdown(20, logger);
    const cut = [{ method: 'POST', path: '/orders/o1/pay/card', requestId: 'req_1', ms: 25 }];
    shutdown.work({ name: 'http', drain: stuck, cutOff: () => cut });
    shutdown.work({ name: 'worker', drain: async () => undefined, cutOff: () => [{ job: 'never' }] });
    await shutdown.stop();
    expect(lines.map((l) => l.msg)).to.deep.equal([
      'shutdown grace over: cutting off the work left',
      'cut off at shutdown',
    ]);
    expect(lines[1]).to.include({
      level: 40,
      work: 'http',
      method: 'POST',
      path: '/orders/o1/pay/card',
      requestId: 'req_1',
      ms: 25,
    });
  });

  it('names at most 20, then one line counts the rest', async () => {
    const { logger, lines } = recordingLogger();
    const shutdown = new Shutdown(10, logger);
    const cut = Array.from({ length: 23 }, (_, i) => ({ requestId: `req_${i}` }));
    shutdown.work({ name: 'http', drain: stuck, cutOff: () => cut });
    await shutdown.stop();
    const named = lines.filter((l) => l.msg === 'cut off at shutdown');
    expect(named.map((l) => l.requestId)).to.deep.equal(cut.slice(0, 20).map((c) => c.requestId));
    expect(lines.at(-1)).to.include({ msg: 'cut off at shutdown: more not listed', work: 'http', more: 3 });
  });
});
