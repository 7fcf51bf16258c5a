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
  const config = (port: number, baseUrl: string | null = null) =>
    ({ gateway: { baseUrl, sandboxPort: port, apiKey: MERCHANT_KEY } }) as Config;
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

  it('a real gateway (GATEWAY_BASE_URL): real time, and the sandbox is not asked', async () => {
    const warned: string[] = [];
    const clock = await kitClock(config(portOf(gw.url), 'https://gateway.example'), (line) =>
      warned.push(line),
    );
    expect(clock).to.equal(systemClock);
    expect(warned).to.deep.equal([]);
  });
});
