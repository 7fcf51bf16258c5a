import type { Logger } from 'pino';
import type { Budget, Caller } from '../client/budget.js';
import { GatewayClient } from '../client/gateway-client.js';
import type { ClientDeps } from '../client/request.js';
import type { Config } from '../config.js';
import { createGateway, type Gateway } from '../gateway/app.js';
import { loadSeedFile, type Seed } from '../gateway/state/seed.js';
import type { SecretStore } from '../merchant/store/secrets.js';
import type { AdvanceableClock } from '../shared/clock.js';
import { canManageWebhooks, checkGatewayKey, KEY_NOT_DESCRIBED, type KeyReport } from './gateway-key.js';
import type { Shutdown } from './shutdown.js';

/** The label of the embedded sandbox's signing secret in webhook_secrets. */
export const SANDBOX_SECRET_LABEL = 'embedded-sandbox';

/** Which stored secret a rotation replaces: the embedded sandbox's, or the configured gateway's. */
export function secretLabel(config: Config): string {
  return config.gateway.baseUrl === null ? SANDBOX_SECRET_LABEL : 'gateway';
}

/** The gateway the kit talks to: a real one at GATEWAY_BASE_URL, or the sandbox it embeds. */
export interface GatewayConnection {
  url: string;
  client: GatewayClient;
  /** The embedded sandbox, when the kit runs one. */
  sandbox: Gateway | null;
  /** What start-up learnt of the API key (readyz shows it). */
  key: KeyReport;
}

export interface ConnectOptions {
  config: Config;
  logger: Logger;
  shutdown: Shutdown;
  secrets: SecretStore;
  /** Where the kit's receiver is reached: the embedded sandbox delivers there. */
  publicBaseUrl: string;
  clientDeps?: Partial<ClientDeps>;
  /** The key's rate budget, shared by every process (the Redis budget). */
  budget?: Budget;
  /** The embedded sandbox's clock and seed, for tests; default real time and GATEWAY_SEED. */
  sandbox?: { clock?: AdvanceableClock; seed?: Seed };
  /**
   * Without GATEWAY_BASE_URL: `start` the sandbox in this process (the kit), or `attach` to the one a
   * running kit serves on GATEWAY_PORT (the CLI). Default `start`.
   */
  embedded?: 'start' | 'attach';
  /**
   * Read and judge the key at start (gateway-key.ts), as this caller of the key's budget: in the
   * processes that call the gateway on their own, an api (`operator`) or a scheduler (`health`). A
   * worker never calls it, and a CLI command's own calls tell. Absent: not checked.
   */
  checkKeyAs?: Caller;
}

export async function connectGateway(o: ConnectOptions): Promise<GatewayConnection> {
  const { config } = o;
  const attach = o.embedded === 'attach';
  const embedded = config.gateway.baseUrl === null && !attach ? await startEmbeddedSandbox(o) : null;
  const url = embedded?.url ?? config.gateway.baseUrl ?? `http://127.0.0.1:${config.gateway.sandboxPort}`;
  const client = new GatewayClient({
    baseUrl: url,
    apiKey: config.gateway.apiKey,
    merchantId: config.gateway.merchantId,
    deps: o.clientDeps,
    budget: o.budget,
  });
  // Before anything else asks the gateway: a key that cannot work stops start-up with one line.
  const key = o.checkKeyAs
    ? await checkGatewayKey(client, config.gateway.merchantId, o.logger, o.checkKeyAs)
    : KEY_NOT_DESCRIBED;
  // Without the scope the registration is refused (start-up warned why): the poller keeps orders true.
  if (embedded && canManageWebhooks(key.scopes))
    await registerWithSandbox(client, o.secrets, o.publicBaseUrl);
  return { url, client, sandbox: embedded?.sandbox ?? null, key };
}

/** The sandbox in this process, on GATEWAY_PORT, ticked by real time and stopped with the kit. */
async function startEmbeddedSandbox(o: ConnectOptions): Promise<{ url: string; sandbox: Gateway }> {
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

/**
 * merchant.md: against the embedded sandbox the kit registers its own endpoint and keeps the secret.
 * A kept endpoint answers without its secret: a database that never stored it (a new one beside the
 * kept sandbox state) takes a new secret, or no delivery would ever verify.
 */
async function registerWithSandbox(client: GatewayClient, secrets: SecretStore, publicBaseUrl: string) {
  const registered = await client.putWebhook({ url: `${publicBaseUrl}/webhooks/gateway` });
  let secret = registered.data.secret;
  if (!secret && !(await secrets.has(SANDBOX_SECRET_LABEL)))
    secret = (await client.rotateWebhookSecret()).data.secret;
  if (secret) await secrets.put(secret, SANDBOX_SECRET_LABEL);
}
