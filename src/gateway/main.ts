import { pino } from 'pino';
import { configOrExit, exitOnSettingProblem } from '../startup.js';
import { createGateway } from './app.js';
import { removeStateFile } from './persistence/state-file.js';
import { loadSeedFile } from './state/seed.js';

/**
 * `npm run gateway`: the sandbox standalone (sandbox.md section 1), driven by real time. Its state is
 * kept in GATEWAY_SANDBOX_STATE (default var/sandbox-state.json; `memory` keeps none) under keys
 * derived from APP_ENCRYPTION_KEY. `--fresh` deletes the state file first: starting afresh on purpose.
 */
const USAGE = 'usage: gateway [--fresh]';
const args = process.argv.slice(2);
const unknown = args.find((a) => a !== '--fresh');
if (unknown !== undefined) {
  console.error(`gateway: unknown argument "${unknown}" (${USAGE})`);
  process.exit(1);
}
const fresh = args.includes('--fresh');

// The sandbox's own settings: it needs no gateway (it is one) and no operator token (the kit's).
const config = configOrExit('sandbox');
const logger = pino({ level: config.logLevel });
const {
  sandboxPort: port,
  sandboxHost: host,
  sandboxPublicUrl: publicBaseUrl,
  sandboxSeed: seedPath,
  sandboxStateFile: stateFile,
} = config.gateway;

try {
  if (fresh) {
    if (stateFile === null) logger.info('--fresh: the state is in memory only, nothing to delete');
    else {
      removeStateFile(stateFile);
      logger.info({ file: stateFile }, '--fresh: sandbox state file deleted, starting afresh');
    }
  }
  if (stateFile !== null && config.encryptionKeyIsDevDefault)
    logger.warn('APP_ENCRYPTION_KEY is not set: the sandbox state file is sealed with the development key.');
  const seed = await loadSeedFile(seedPath);
  const gateway = createGateway({
    seed,
    logger,
    autoDeliver: true,
    publicBaseUrl: publicBaseUrl ?? undefined,
    persistence: stateFile === null ? undefined : { file: stateFile, key: config.encryptionKey },
  });
  const { url, close } = await gateway.listen(port, host);
  // Real time drives what is due when the sandbox runs on its own.
  const ticker = setInterval(() => {
    gateway.controls.tick().catch((error) => logger.error({ err: error }, 'tick failed'));
  }, 1000);
  logger.info({ url, seed: seedPath, state: stateFile ?? 'memory' }, 'sandbox gateway listening');
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    clearInterval(ticker);
    try {
      await close(); // the final save
    } catch (error) {
      console.error((error as Error).message);
      process.exit(1);
    }
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
} catch (error) {
  exitOnSettingProblem(error);
}
