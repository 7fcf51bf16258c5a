import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from './config.js';
import { SeedError } from './gateway/seed.js';
import { createLogger } from './infra/logger.js';
import { startKit } from './kit.js';

/** `npm start`: the composition root. Configuration errors stop it with one line naming the variable. */
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env, () => randomBytes(24).toString('base64url'));
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`configuration: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
const logger = createLogger(config.logLevel);
if (config.encryptionKeyIsDevDefault)
  logger.warn('APP_ENCRYPTION_KEY is not set: using the fixed development key. Never in production.');
if (config.opsApiTokenGenerated) {
  // merchant.md: in development a random token, printed at start (on stdout, not into the log stream).
  console.log(`OPS_API_TOKEN for this run: ${config.opsApiToken}`);
}

try {
  const kit = await startKit({ config, logger });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await kit.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
} catch (error) {
  if (error instanceof SeedError) {
    console.error(`gateway seed: ${error.message}`);
    process.exit(1);
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (
    code === 'ECONNREFUSED' ||
    code === 'ER_ACCESS_DENIED_ERROR' ||
    (error as Error).name === 'SequelizeConnectionRefusedError'
  ) {
    console.error(`DATABASE_URL: cannot connect to the database (${code ?? (error as Error).name})`);
    process.exit(1);
  }
  if (code === 'EADDRINUSE') {
    console.error(`PORT or GATEWAY_PORT: the port is already in use (${(error as Error).message})`);
    process.exit(1);
  }
  throw error;
}
