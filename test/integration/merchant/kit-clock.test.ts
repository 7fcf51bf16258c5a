import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { kitClock } from '../../../src/cli/kit-clock.js';
import type { Config } from '../../../src/config.js';
import { ManualClock, systemClock } from '../../../src/shared/clock.js';
import { MERCHANT_KEY, startGateway, type TestGateway } from '../../support/gateway.js';
import { freePort } from '../../support/process.js';

const HOUR = 3_600_000;

/** The CLI's clock beside a kit (cli/kit-clock.ts): the embedded sandbox's, asked once; else real time. */
describe('cli: the clock the kit runs on', () => {
  let gw: TestGateway;
  const config = (port: number, baseUrl: string | null = null, kept?: { file: string; key: Buffer }) =>
    ({
      gateway: { baseUrl, sandboxPort: port, apiKey: MERCHANT_KEY, sandboxStateFile: kept?.file ?? null },
      encryptionKey: kept?.key ?? randomBytes(32),
    }) as Config;
  const portOf = (url: string) => Number(new URL(url).port);

  before(async () => {
    // A sandbox whose clock `sandbox advance` moved two hours past real time.
    gw = await startGateway({ clock: new ManualClock(Date.now() + 2 * HOUR) });
  });
  after(async () => {
    await gw.close();
  });

  it("a kit on its embedded sandbox: the sandbox's time, advances included, going on with real time", async () => {
    const warned: string[] = [];
    const clock = await kitClock(config(portOf(gw.url)), (line) => warned.push(line));
    expect(warned).to.deep.equal([]);
    expect(Math.abs(clock.now() - gw.clock.now())).to.be.below(1000);
    // Ahead by as much, while real time goes on.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(clock.now() - Date.now()).to.be.within(2 * HOUR - 1000, 2 * HOUR + 1000);
  });

  it('no kit answering: one warning naming GATEWAY_PORT, and real time', async () => {
    const warned: string[] = [];
    const port = await freePort();
    const clock = await kitClock(config(port), (line) => warned.push(line));
    expect(clock).to.equal(systemClock);
    expect(warned).to.have.length(1);
    expect(warned[0]).to.match(
      new RegExp(
        `^no running kit's sandbox answered on GATEWAY_PORT ${port} \\(.+\\): this machine's time is used$`,
      ),
    );
  });

  describe('no kit answering, its sandbox state kept in a file (GATEWAY_SANDBOX_STATE)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-clock-'));
    const kept = { file: join(dir, 'sandbox-state.json'), key: randomBytes(32) };
    let keptAt: number;
    before(async () => {
      // A kit's sandbox, advanced two hours, then stopped: its file keeps the clock's last reading.
      const stopped = await startGateway({
        clock: new ManualClock(Date.now() + 2 * HOUR),
        persistence: { file: kept.file, key: kept.key },
      });
      keptAt = stopped.clock.now();
      await stopped.close();
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('the time the kit resumes from (never before the kept reading), and a warning saying so', async () => {
      const warned: string[] = [];
      const port = await freePort();
      const clock = await kitClock(config(port, null, kept), (line) => warned.push(line));
      expect(clock.now()).to.be.at.least(keptAt);
      expect(clock.now() - Date.now()).to.be.above(2 * HOUR - 60_000);
      expect(warned).to.have.length(1);
      expect(warned[0]).to.match(
        new RegExp(
          `^no running kit's sandbox answered on GATEWAY_PORT ${port} \\(.+\\): the time its state file keeps is used \\(${kept.file}, (2h|1h59m\\d+s) ahead of this machine\\), which the kit resumes from$`,
        ),
      );
    });

    it('a file made under another key (which the kit would refuse): real time', async () => {
      const port = await freePort();
      const other = { file: kept.file, key: randomBytes(32) };
      const clock = await kitClock(config(port, null, other));
      expect(clock).to.equal(systemClock);
    });
  });

  it('a real gateway (GATEWAY_BASE_URL): real time, and the sandbox is not asked', async () => {
    const warned: string[] = [];
    const clock = await kitClock(config(portOf(gw.url), 'https://gateway.example'), (line) =>
      warned.push(line),
    );
    expect(clock).to.equal(systemClock);
    expect(warned).to.deep.equal([]);
  });
});
