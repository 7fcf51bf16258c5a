import { readFileSync } from 'node:fs';
import { SandboxControls } from '../client/sandbox-controls.js';
import type { Config } from '../config.js';
import { keyId } from '../gateway/persistence/keys.js';
import { type Clock, OffsetClock, systemClock } from '../shared/clock.js';
import { formatDuration } from './trigger-input.js';

/**
 * The clock the kit runs on, for a CLI command beside it. A kit on its embedded sandbox runs on the
 * sandbox's clock, which `sandbox advance` moves: how far it is ahead is asked of the running kit's
 * sandbox once (`GET /sandbox/clock`), so that tokens, reports, polls and audit lines made here reckon
 * as the kit does. With no kit answering, the time the kit will resume from when it starts: the
 * sandbox's state file (GATEWAY_SANDBOX_STATE) keeps its clock's last reading, which a restart never
 * goes back before (gateway/app.ts), so an audit line written while the kit is stopped does not come
 * before the kit's own. Against a real gateway, or with nothing kept, this machine's time. `warn`
 * hears the line saying no kit answered.
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
    const unanswered = `no running kit's sandbox answered on GATEWAY_PORT ${port} (${(error as Error).message})`;
    const kept = keptSandboxTime(config);
    const ahead = kept === null ? 0 : kept - Date.now();
    if (kept === null || ahead <= 0) {
      warn(`${unanswered}: this machine's time is used`);
      return systemClock;
    }
    warn(
      `${unanswered}: the time its state file keeps is used (${config.gateway.sandboxStateFile}, ${formatDuration(Math.ceil(ahead / 1000))} ahead of this machine), which the kit resumes from`,
    );
    return { now: () => Math.max(Date.now(), kept) };
  }
}

/**
 * The sandbox clock's last reading in its state file, when the file is one the kit will restore (made
 * under this APP_ENCRYPTION_KEY); null without one. A file the kit would refuse is started afresh,
 * on this machine's time.
 */
function keptSandboxTime(config: Config): number | null {
  const file = config.gateway.sandboxStateFile;
  if (!file) return null;
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { keyId?: unknown; clock?: { now?: unknown } };
    const now = kept.clock?.now;
    if (kept.keyId !== keyId(config.encryptionKey)) return null;
    return typeof now === 'number' && Number.isFinite(now) ? now : null;
  } catch {
    return null; // none yet, or one the kit's start will name
  }
}
