import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { GatewayClient } from './client/gateway-client.js';
import type { ClientDeps } from './client/request.js';
import type { Config } from './config.js';
import { createGateway, type Gateway } from './gateway/app.js';
import { loadSeedFile, type Seed } from './gateway/seed.js';
import { createSequelize, migrate } from './infra/database.js';
import { initModels, type Models } from './infra/models.js';
import { createMerchantApp } from './merchant/http/app.js';
import { OrderRepository } from './merchant/orders/repository.js';
import { storeSecret } from './merchant/webhooks/secrets.js';
import { type AdvanceableClock, type Clock, systemClock } from './shared/clock.js';
import { cryptoRandom, type RandomSource } from './shared/ids.js';
import { SecretBox } from './shared/secret-box.js';

export interface KitOptions {
  config: Config;
  logger: Logger;
  /** The merchant side's clock (hold expiry, timestamps). Default: real time. */
  clock?: Clock;
  random?: RandomSource;
  /** Seams of the gateway client (tests: a recording sleep). */
  clientDeps?: Partial<ClientDeps>;
  /** The embedded sandbox's clock and seed, for tests; default real time and GATEWAY_SEED. */
  sandbox?: { clock?: AdvanceableClock; seed?: Seed };
}

export interface Kit {
  /** Where the merchant API listens (null without the api role). */
  url: string | null;
  publicBaseUrl: string;
  gatewayUrl: string;
  sandbox: Gateway | null;
  client: GatewayClient;
  orders: OrderRepository;
  models: Models;
  sequelize: Sequelize;
  box: SecretBox;
  close(): Promise<void>;
}

/** Builds and starts the kit from its configuration: what `npm start` runs, and what tests start too. */
export async function startKit(options: KitOptions): Promise<Kit> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? cryptoRandom;
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const fn of closers.reverse())
      await fn().catch((error) => logger.warn({ err: error }, 'while closing'));
  };

  try {
    const sequelize = createSequelize(config.databaseUrl);
    closers.push(() => sequelize.close());
    const applied = await migrate(config.databaseUrl, sequelize);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
    const models = initModels(sequelize);
    const box = new SecretBox(config.encryptionKey, random);
    const orders = new OrderRepository(sequelize, models, clock, random);

    // The merchant server is bound first: with PORT=0 the public URL is known only then.
    const server = createServer();
    const apiRole = config.roles.includes('api');
    const port = apiRole ? await listen(server, config.port) : null;
    if (apiRole) closers.push(() => closeServer(server));
    const publicBaseUrl = config.publicBaseUrl ?? `http://127.0.0.1:${port ?? config.port}`;

    let sandbox: Gateway | null = null;
    let gatewayUrl = config.gateway.baseUrl;
    if (gatewayUrl === null) {
      const seed = options.sandbox?.seed ?? (await loadSeedFile(config.gateway.sandboxSeed));
      // The embedded sandbox is ours and local: it may deliver to the kit on 127.0.0.1.
      const localSeed: Seed = { ...seed, settings: { ...seed.settings, allow_private_webhook_urls: true } };
      sandbox = createGateway({
        seed: localSeed,
        clock: options.sandbox?.clock,
        logger: logger.child({ side: 'sandbox' }),
        autoDeliver: true,
      });
      const listening = await sandbox.listen(config.gateway.sandboxPort, '127.0.0.1');
      const gw = sandbox;
      const ticker = setInterval(
        () => void gw.controls.tick().catch((error) => logger.error({ err: error }, 'sandbox tick failed')),
        1000,
      );
      closers.push(async () => {
        clearInterval(ticker);
        await listening.close();
      });
      gatewayUrl = listening.url;
      logger.info({ url: gatewayUrl }, 'embedded sandbox gateway listening');
    }

    const client = new GatewayClient({
      baseUrl: gatewayUrl,
      apiKey: config.gateway.apiKey,
      merchantId: config.gateway.merchantId,
      deps: options.clientDeps,
    });

    if (sandbox) {
      // merchant.md: against the embedded sandbox the kit registers its own endpoint and keeps the secret.
      const registered = await client.putWebhook({ url: `${publicBaseUrl}/webhooks/gateway` });
      if (registered.data.secret)
        await storeSecret(models, box, registered.data.secret, 'embedded-sandbox', new Date(clock.now()));
    }

    if (apiRole) {
      const app = createMerchantApp({
        orders,
        gateway: client,
        box,
        clock,
        logger,
        publicBaseUrl,
        opsApiToken: config.opsApiToken,
        readiness: [
          { name: 'database', check: async () => void (await sequelize.query('SELECT 1')) },
          {
            name: 'gateway',
            check: async () => void (await fetch(gatewayUrl!, { signal: AbortSignal.timeout(2000) })),
          },
        ],
      });
      server.on('request', app.callback());
      logger.info({ url: `http://127.0.0.1:${port}`, publicBaseUrl }, 'merchant API listening');
    }

    return {
      url: port === null ? null : `http://127.0.0.1:${port}`,
      publicBaseUrl,
      gatewayUrl,
      sandbox,
      client,
      orders,
      models,
      sequelize,
      box,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '0.0.0.0', () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
