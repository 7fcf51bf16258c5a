import { createGateway } from '../gateway/app.js';
import { loadSeedFile } from '../gateway/state/seed.js';
import type { ConnectOptions, EmbeddedSandbox } from './gateway.js';

/**
 * The sandbox in the kit's process, on GATEWAY_PORT, ticked by real time and stopped with the kit:
 * what startKit hands the gateway connection (`startSandbox`). A CLI command attaches to a running
 * kit's sandbox instead, and so never loads the sandbox's modules.
 */
export async function startEmbeddedSandbox(
  o: Pick<ConnectOptions, 'config' | 'logger' | 'shutdown' | 'sandbox'>,
): Promise<EmbeddedSandbox> {
  const { config, logger } = o;
  const seed = o.sandbox?.seed ?? (await loadSeedFile(config.gateway.sandboxSeed));
  const sandbox = createGateway({
    // The embedded sandbox is ours and local: it may deliver to the kit on 127.0.0.1.
    seed: { ...seed, settings: { ...seed.settings, allow_private_webhook_urls: true } },
    clock: o.sandbox?.clock,
    logger: logger.child({ side: 'sandbox' }),
    autoDeliver: true,
    // Like a real gateway, it remembers across restarts: ids continue, the endpoint and secret stay.
    persistence:
      config.gateway.sandboxStateFile === null
        ? undefined
        : { file: config.gateway.sandboxStateFile, key: config.encryptionKey },
  });
  const listening = await sandbox.listen(config.gateway.sandboxPort, '127.0.0.1');
  const tickFailed = (error: Error) =>
    logger.error({ err: { message: error.message } }, 'sandbox tick failed');
  const ticker = setInterval(() => void sandbox.controls.tick().catch(tickFailed), 1000);
  o.shutdown.connection({
    name: 'sandbox',
    close: async () => {
      clearInterval(ticker);
      await listening.close();
    },
  });
  logger.info({ url: listening.url }, 'embedded sandbox gateway listening');
  return { url: listening.url, sandbox };
}
