import { pino } from 'pino';
import { createGateway } from './app.js';
import { loadSeedFile, SeedError } from './seed.js';

/** `npm run gateway`: the sandbox standalone (sandbox.md section 1), driven by real time. */
const logger = pino({ level: process.env.LOG_LEVEL ?? 'info' });
const portText = process.env.GATEWAY_PORT ?? '4010';
const port = Number(portText);
if (!/^\d+$/.test(portText) || port > 65535) {
  console.error(`GATEWAY_PORT: must be a port number from 0 to 65535, got "${portText}"`);
  process.exit(1);
}
const seedPath = process.env.GATEWAY_SEED ?? 'config/gateway-seed.json';

try {
  const seed = await loadSeedFile(seedPath);
  const gateway = createGateway({ seed, logger, autoDeliver: true });
  const { url, close } = await gateway.listen(port, '127.0.0.1');
  // Real time drives what is due when the sandbox runs on its own.
  const ticker = setInterval(() => {
    gateway.controls.tick().catch((error) => logger.error({ err: error }, 'tick failed'));
  }, 1000);
  logger.info({ url, seed: seedPath }, 'sandbox gateway listening');
  const stop = async () => {
    clearInterval(ticker);
    await close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  if (error instanceof SeedError) {
    console.error(`gateway seed: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
