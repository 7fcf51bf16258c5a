import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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
  lines,
  logLines,
  SUITE_PREFIX,
  start,
  waitFor,
} from '../../support/process.js';

/**
 * Issue 42: the first line a person reads when the kit starts is where to open the demo shop, before
 * the warnings, the generated token and the start-up's own lines.
 */
describe("merchant: the demo shop's address is the first line of the start log", function () {
  this.timeout(60_000);
  const { databases, track, cleanUp } = leftovers();
  after(cleanUp);
  const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

  const envFor = async (what: string) => {
    const database = databaseName('first_line', what);
    databases.push(database);
    const port = await freePort();
    return {
      port,
      env: {
        PORT: String(port),
        GATEWAY_PORT: String(await freePort([port])),
        DATABASE_URL: `${ADMIN_URL}/${database}`,
        LOG_LEVEL: 'info',
      },
    };
  };

  it('through a pipe: the first line is the log line naming the demo shop, the token after it', async () => {
    const { port, env } = await envFor('pipe');
    const p = track(start('src/main.ts', [], env));
    await healthy(p, `http://127.0.0.1:${port}`, 30_000);
    p.child.kill('SIGTERM');
    await exitWithin(p, 20_000);
    const out = lines(p.stdout());
    expect(JSON.parse(out[0]!), p.stdout()).to.include({
      level: 30,
      msg: `demo shop: http://127.0.0.1:${port}/`,
    });
    expect(logLines(p.stdout()).filter((l) => String(l.msg).startsWith('demo shop'))).to.have.length(1);
    // Printed on stdout, on purpose not as a log line (merchant.md): after the address.
    expect(out.findIndex((l) => l.startsWith('OPS_API_TOKEN for this run: '))).to.be.greaterThan(0);
  });

  it('`npm start` in a terminal: the first line after npm’s own names the demo shop', async () => {
    const { port, env } = await envFor('tty');
    const base = { ...process.env };
    for (const name of KIT_VARIABLES) delete base[name];
    // `script -q -e -f -c CMD /dev/null`: CMD on a pseudo-terminal, its output on script's stdout.
    const child = spawn('script', ['-qefc', 'npm start', '/dev/null'], {
      cwd: ROOT,
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
        () => /merchant API listening/.test(out),
        30_000,
        {
          everyMs: 100,
          context: () => out,
        },
      );
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    }
    // npm's header (`> merchant-payment-kit@… start`, `> exec node …`) and blank lines come first.
    const kit = stripVTControlCharacters(out)
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '' && !l.startsWith('>'));
    expect(kit[0], out).to.match(
      new RegExp(`^\\[\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\] INFO: demo shop: http://127\\.0\\.0\\.1:${port}/$`),
    );
  });
});
