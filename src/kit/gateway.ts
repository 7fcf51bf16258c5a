import type { Logger } from 'pino';
import type { Budget, Caller } from '../client/budget.js';
import { GatewayClient, type GatewayClientOptions } from '../client/gateway-client.js';
import { type Gateways, linkedMerchants, ownAccount } from '../client/merchant-gateways.js';
import type { ClientDeps } from '../client/request.js';
import type { Config } from '../config.js';
import type { Gateway } from '../gateway/app.js';
import type { Seed } from '../gateway/state/seed.js';
import { type SecretStore, secretOwner } from '../merchant/store/secrets.js';
import { WEBHOOK_PATH } from '../merchant/webhooks/delivery-endpoint.js';
import type { AdvanceableClock } from '../shared/clock.js';
import { canManageWebhooks, checkGatewayKey, KEY_NOT_DESCRIBED, type KeyReport } from './gateway-key.js';
import { startingMerchantKeys } from './merchant-keys.js';
import type { Shutdown } from './shutdown.js';

/** The label of the embedded sandbox's signing secret in webhook_secrets. */
export const SANDBOX_SECRET_LABEL = 'embedded-sandbox';

/** Which stored secret a rotation replaces: the embedded sandbox's, or the configured gateway's. */
export function secretLabel(config: Config): string {
  return config.gateway.baseUrl === null ? SANDBOX_SECRET_LABEL : 'gateway';
}

/** The sandbox in the kit's process, and where it listens. */
export interface EmbeddedSandbox {
  url: string;
  sandbox: Gateway;
}

/** The gateway the kit talks to: a real one at GATEWAY_BASE_URL, or the sandbox it embeds. */
export interface GatewayConnection {
  url: string;
  /** The key's own client: what asks about the key itself, or, with a merchant key, everything. */
  client: GatewayClient;
  /** The gateway as each merchant's orders see it (one merchant, or a partner key's linked merchants). */
  gateways: Gateways;
  /** The embedded sandbox, when the kit runs one. */
  sandbox: Gateway | null;
  /** What start-up learnt of the API key (readyz shows it). */
  key: KeyReport;
}

export interface ConnectOptions {
  config: Config;
  logger: Logger;
  shutdown: Shutdown;
  /** Where an embedded sandbox started here has its signing secret kept; asked only then. */
  secrets: () => Promise<SecretStore>;
  /**
   * The merchants' own keys stored at rest (`merchant-key set`), opened. Read at the connection in
   * platform mode (GATEWAY_MERCHANTS), before the key is judged and the merchants' clients are made;
   * GATEWAY_MERCHANT_KEYS wins for a merchant given in both. Absent: the environment's only.
   */
  storedMerchantKeys?: () => Promise<ReadonlyMap<number, string>>;
  /** Where the kit's receiver is reached: the embedded sandbox delivers there. */
  publicBaseUrl: string;
  clientDeps?: Partial<ClientDeps>;
  /** The key's rate budget, shared by every process (the Redis budget). */
  budget?: Budget;
  /** The embedded sandbox's clock and seed, for tests; default real time and GATEWAY_SEED. */
  sandbox?: { clock?: AdvanceableClock; seed?: Seed };
  /**
   * Without GATEWAY_BASE_URL: how the kit starts the sandbox in its own process
   * (kit/embedded-sandbox.ts). Absent: the process attaches to the one a running kit serves on
   * GATEWAY_PORT (the CLI), and loads nothing of the sandbox.
   */
  startSandbox?: (o: ConnectOptions) => Promise<EmbeddedSandbox>;
  /**
   * Read and judge the key at start (gateway-key.ts), as this caller of the key's budget: in the
   * processes that call the gateway on their own, an api (`operator`) or a scheduler (`health`). A
   * worker never calls it, and a CLI command's own calls tell. Absent: not checked.
   */
  checkKeyAs?: Caller;
}

export async function connectGateway(o: ConnectOptions): Promise<GatewayConnection> {
  const { config } = o;
  const embedded = config.gateway.baseUrl === null && o.startSandbox ? await o.startSandbox(o) : null;
  const url = embedded?.url ?? gatewayUrl(config);
  const options: GatewayClientOptions = { baseUrl: url, apiKey: config.gateway.apiKey, deps: o.clientDeps };
  const client = new GatewayClient({ ...options, budget: o.budget });
  const { merchants } = config.gateway;
  const merchantKeys = await startingMerchantKeys(
    merchants,
    config.gateway.merchantKeys,
    o.storedMerchantKeys,
    o.logger,
  );
  // Before anything else asks the gateway: a key that cannot work stops start-up with one line.
  const key = o.checkKeyAs
    ? await checkGatewayKey(client, merchants, new Set(merchantKeys.keys()), o.logger, o.checkKeyAs)
    : KEY_NOT_DESCRIBED;
  const gateways = gatewaysOf(key, config, merchantKeys, options, client, o);
  // Without the scope the registration is refused (start-up warned why): the poller keeps orders true.
  if (embedded && canManageWebhooks(key.scopes))
    await registerWithSandbox(gateways, await o.secrets(), o.publicBaseUrl);
  return { url, client, gateways, sandbox: embedded?.sandbox ?? null, key };
}

/**
 * A partner key (as the gateway said, or as the configuration implies when it did not say: merchants
 * listed beside a key not known to be a merchant's) acts for the linked merchants; a merchant key for
 * its own account.
 */
function gatewaysOf(
  key: KeyReport,
  config: Config,
  merchantKeys: ReadonlyMap<number, string>,
  options: GatewayClientOptions,
  client: GatewayClient,
  o: ConnectOptions,
): Gateways {
  const { merchants } = config.gateway;
  if (key.key_type === 'merchant' || merchants.length === 0)
    return ownAccount(client, key.merchant_id ?? merchants[0] ?? null);
  // A merchant's own key is another key: its rate limit is its own, counted in this process.
  return linkedMerchants({ ...options, budget: o.budget }, merchants, merchantKeys, () => options);
}

/**
 * Where a process beside the kit (a CLI command) finds the gateway: GATEWAY_BASE_URL, or else the
 * embedded sandbox of the running kit, on GATEWAY_PORT.
 */
export function gatewayUrl(config: Config): string {
  return config.gateway.baseUrl ?? `http://127.0.0.1:${config.gateway.sandboxPort}`;
}

/**
 * The merchants whose endpoints the kit has, each once: in platform mode (several merchants) each
 * merchant the kit acts for; otherwise the one endpoint of the key's account (null).
 */
export function webhookMerchants(served: readonly number[]): (number | null)[] {
  return served.length > 1 ? [...served] : [null];
}

/**
 * The receiver URL of merchant `id`'s endpoint (null: the first): `/webhooks/gateway` in a kit of
 * one merchant (as before platform mode), `/webhooks/gateway/{merchant_id}` in a kit of several.
 */
export function webhookUrl(publicBaseUrl: string, served: readonly number[], id: number | null): string {
  const base = `${publicBaseUrl}${WEBHOOK_PATH}`;
  return served.length > 1 ? `${base}/${id ?? served[0]}` : base;
}

/**
 * merchant.md: against the embedded sandbox the kit registers its own endpoint and keeps the secret;
 * in platform mode one endpoint per merchant, each secret kept as that merchant's (issue 45). A kept
 * endpoint answers without its secret: a database that never stored it (a new one beside the kept
 * sandbox state) takes a new secret, or no delivery would ever verify.
 */
async function registerWithSandbox(gateways: Gateways, secrets: SecretStore, publicBaseUrl: string) {
  const served = gateways.merchants;
  for (const id of webhookMerchants(served)) {
    const client = gateways.of(id);
    const owner = secretOwner(served, id);
    const registered = await client.putWebhook({ url: webhookUrl(publicBaseUrl, served, id) });
    let secret = registered.data.secret;
    if (!secret && !(await secrets.has(SANDBOX_SECRET_LABEL, owner)))
      secret = (await client.rotateWebhookSecret()).data.secret;
    if (secret) await secrets.put(secret, SANDBOX_SECRET_LABEL, true, owner);
  }
}
