import { SandboxControls } from '../client/sandbox-controls.js';
import type { Config } from '../config.js';
import { type Clock, OffsetClock, systemClock } from '../shared/clock.js';

/**
 * The clock the kit runs on, for a CLI command beside it. A kit on its embedded sandbox runs on the
 * sandbox's clock, which `sandbox advance` moves: how far it is ahead is asked of the running kit's
 * sandbox once (`GET /sandbox/clock`), so that tokens, reports and polls made here reckon as the kit
 * does. Against a real gateway, or with no kit answering (said through `warn`), this machine's time.
 */
export async function kitClock(config: Config, warn: (line: string) => void = () => {}): Promise<Clock> {
  if (config.gateway.baseUrl !== null) return systemClock;
  const port = config.gateway.sandboxPort;
  try {
    const asked = Date.now();
    const controls = new SandboxControls({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: config.gateway.apiKey,
    });
    const ahead = Date.parse((await controls.clock()).now) - asked;
    const clock = new OffsetClock();
    if (ahead > 0) clock.advance(ahead);
    return clock;
  } catch (error) {
    warn(
      `no running kit's sandbox answered on GATEWAY_PORT ${port} (${(error as Error).message}): this machine's time is used`,
    );
    return systemClock;
  }
}
