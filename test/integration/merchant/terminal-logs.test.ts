import { spawn } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { expect } from 'chai';
import {
  ADMIN_URL,
  databaseName,
  exitWithin,
  freePort,
  healthy,
  KIT_VARIABLES,
  leftovers,
  type Proc,
  SUITE_PREFIX,
  start,
  waitFor,
} from '../../support/process.js';

/**
 * Issue 23: `npm start` in a terminal prints readable lines; anywhere else (a pipe, a collector, the
 * tests), JSON lines. The terminal is a real pseudo-terminal: util-linux's `script` runs the kit in one.
 */
describe('merchant: logs on a terminal and off it', function () {
  this.timeout(60_000);
  const { databases, track, cleanUp } = leftovers();
  after(cleanUp);

  const envFor = async (name: string) => {
    const database = databaseName('tty', name);
    databases.push(database);
    const port = await freePort();
    return {
      url: `http://127.0.0.1:${port}`,
      env: {
        PORT: String(port),
        GATEWAY_PORT: String(await freePort([port])),
        DATABASE_URL: `${ADMIN_URL}/${database}`,
        LOG_LEVEL: 'info',
      },
    };
  };

  it('in a terminal, in development: one readable line an entry, no JSON, no secret', async () => {
    const { url, env } = await envFor('pretty');
    // `script -q -e -f -c CMD /dev/null`: CMD on a pseudo-terminal, its output on script's stdout.
    const base = { ...process.env };
    for (const name of KIT_VARIABLES) delete base[name];
    const child = spawn('script', ['-qefc', `${process.execPath} --import tsx src/main.ts`, '/dev/null'], {
      env: {
        ...base,
        ...env,
        NODE_ENV: 'development',
        GATEWAY_SANDBOX_STATE: 'memory',
        REDIS_PREFIX: SUITE_PREFIX,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += String(chunk);
    });
    const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
    try {
      await waitFor(
        'the kit listening, said on the terminal',
        async () => /merchant API listening/.test(out) && (await fetch(`${url}/healthz`)).ok,
        30_000,
        { everyMs: 100, context: () => out },
      );
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    }
    // The terminal's colours, removed.
    const lines = stripVTControlCharacters(out).split(/\r?\n/).filter(Boolean);
    const listening = lines.find((l) => l.includes('merchant API listening'));
    expect(listening, out).to.match(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: merchant API listening \{"url":/);
    expect(
      lines.filter((l) => l.startsWith('{')),
      'no JSON line',
    ).to.deep.equal([]);
    expect(out).to.not.contain('whsec_');
  });

  it('through a pipe: JSON lines, as a log collector reads them, and a library’s console warning', async () => {
    const { url, env } = await envFor('json');
    // A password Redis does not need: ioredis says so with console.warn, as plain text of its own.
    const password = 'not-needed-by-this-redis';
    const p: Proc = track(
      start('src/main.ts', [], {
        ...env,
        REDIS_URL: `redis://:${password}@127.0.0.1:6379`,
        // Set: a generated one is printed on stdout, on purpose not as a log line (merchant.md).
        OPS_API_TOKEN: 'terminal-logs-token-0123456789-abcdef',
      }),
    );
    await healthy(p, url, 30_000);
    p.child.kill('SIGTERM');
    await exitWithin(p, 20_000);
    const lines = p.stdout().split('\n').filter(Boolean);
    const notJson = lines.filter((l) => {
      try {
        return typeof JSON.parse(l) !== 'object';
      } catch {
        return true;
      }
    });
    expect(notJson, 'every line is JSON').to.deep.equal([]);
    expect(p.stderr(), 'nothing on stderr').to.equal('');
    const listening = lines.find((l) => l.includes('merchant API listening'));
    expect(JSON.parse(listening!)).to.include({ msg: 'merchant API listening', level: 30 });
    const warning = lines.find((l) => l.includes('does not require a password'));
    expect(JSON.parse(warning!), p.stdout()).to.include({ level: 40, from: 'console' });
    expect(p.stdout()).to.not.contain(password);
  });
});
