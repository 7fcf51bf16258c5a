import { constants } from 'node:os';
import { pino } from 'pino';
import { createLogger, prettyDestination, routeConsoleWarnings, wantsPrettyLogs } from './infra/logger.js';
import { type Kit, startKit } from './kit.js';
import { configOrExit, exitOnSettingProblem } from './startup.js';

/**
 * A signal within this of the first is the same one delivered twice: Ctrl-C under `npm start` reaches
 * both npm and the kit (one process group), and npm forwards it once more.
 */
const REPEAT_MS = 1000;
/** Past the grace, closing the connections gets this long before the process exits anyway. */
const OVERRUN_MS = 5000;

/** `npm start`: the composition root. Bad settings stop it with one line for each, naming its variable. */
const config = configOrExit();
const pretty = wantsPrettyLogs(config.logFormat, { env: config.env, isTTY: process.stdout.isTTY === true });
// JSON lines go through one stream of our own (pino's default, made here), so that the token line
// below can go through it too: written beside it with console.log, it could overtake a log line still
// held in the stream's buffer (a pipe that was full), and the address would no longer come first.
const jsonOut = pretty ? null : pino.destination({ dest: 1, sync: true });
const logger = createLogger(config.logLevel, jsonOut ?? prettyDestination(1, process.stdout.isTTY === true));
routeConsoleWarnings(logger);

/** What start-up says once the kit has logged the demo shop's address, its first line (issue 42). */
function afterAddress(): void {
  if (config.encryptionKeyIsDevDefault)
    logger.warn('APP_ENCRYPTION_KEY is not set: using the fixed development key. Never in production.');
  // `npm start` runs the source through tsx: right for development; production runs the build (the
  // image does).
  if (config.env === 'production' && import.meta.url.endsWith('.ts'))
    logger.warn(
      'running the TypeScript source through a loader: in production, `npm run build` and run node dist/src/main.js',
    );
  if (config.opsApiTokenGenerated) {
    // merchant.md: in development a random token, printed at start (on stdout, not into the log stream).
    const line = `OPS_API_TOKEN for this run: ${config.opsApiToken}\n`;
    // Readable lines are written synchronously as they come, so a plain write keeps its place there.
    if (jsonOut) jsonOut.write(line);
    else process.stdout.write(line);
  }
}

// Shutdown (issue 8). The handlers are in place before start-up begins: a signal during start-up stops
// the kit as soon as it has started (bounded, like the rest, by the overrun timer).
const starting = startKit({ config, logger, onBound: afterAddress });
let firstSignalAt: number | null = null;
const onSignal = (signal: NodeJS.Signals) => {
  if (firstSignalAt === null) {
    firstSignalAt = Date.now();
    void shutDown(signal);
  } else if (Date.now() - firstSignalAt < REPEAT_MS) {
    logger.info({ signal }, 'signal repeated at once: taken as the same one');
  } else {
    logger.warn({ signal }, 'second signal during shutdown: exiting at once, dropping the work in hand');
    exitAfterLogs(128 + (constants.signals[signal] ?? 0), 100);
  }
};
process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);
// bull names its worker's blocking connection without waiting for the answer (setWorkerName in
// bull/lib/worker.js). Stopping within seconds of the start cuts that command off when bull drops the
// connection, and its rejection is nobody's: expected once shutdown has begun, a crash otherwise.
process.on('unhandledRejection', (reason) => {
  if (firstSignalAt !== null && (reason as Error | undefined)?.message === 'Connection is closed.') {
    logger.debug({ err: { message: 'Connection is closed.' } }, 'a Redis command cut off by the shutdown');
    return;
  }
  throw reason;
});

/** kit.close() stops everything in order (intake, drain within the grace, connections); then `stopped`. */
async function shutDown(signal: NodeJS.Signals): Promise<void> {
  logger.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
  const overrun = setTimeout(() => {
    logger.error({ overrunMs: OVERRUN_MS }, 'shutdown overran its grace: exiting');
    exitAfterLogs(1, 100);
  }, config.shutdownGraceMs + OVERRUN_MS);
  let kit: Kit;
  try {
    kit = await starting;
  } catch {
    return; // a start-up that failed exits by itself, below
  }
  await kit.close();
  clearTimeout(overrun);
  logger.info('stopped');
  exitAfterLogs(0, 1000);
}

/**
 * Ends the process with `code` once pino's last lines are out. pino writes stdout asynchronously, and
 * process.exit() during a write puts the lines queued behind it first (sonic-boom's flushSync at exit):
 * so the process ends by itself, when nothing is left open, and at the latest after `ms`.
 */
function exitAfterLogs(code: number, ms: number): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), ms).unref();
}

try {
  await starting;
} catch (error) {
  exitOnSettingProblem(error); // a setting's one line and exit 1; anything else throws with its stack
}
