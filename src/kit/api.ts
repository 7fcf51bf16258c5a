import type Koa from 'koa';
import { localUrl } from '../config.js';
import { extraSecretsOf } from '../gateway-merchants.js';
import { RedisEndedSessions } from '../infra/ended-sessions.js';
import type { HttpServer } from '../infra/http-server.js';
import { type Limits, RedisLimits } from '../infra/rate-limits.js';
import { jsonSecurityHeaderList } from '../infra/security-headers.js';
import { createMerchantApp } from '../merchant/http/app.js';
import type { DemoShop } from '../merchant/http/demo-shop.js';
import type { MetricsEndpoint } from '../merchant/http/metrics-route.js';
import { prepareEventShape } from '../merchant/orders/event-shape.js';
import { enqueueEvents } from '../merchant/reconciler/queue.js';
import { secretOwner } from '../merchant/store/secrets.js';
import { deliveryListener, deliveryRoute } from '../merchant/webhooks/delivery-endpoint.js';
import { inboxIntake } from '../merchant/webhooks/intake.js';
import type { ReceiverDeps, ReceiverEndpoint } from '../merchant/webhooks/receiver.js';
import { SecretCache } from '../merchant/webhooks/secret-cache.js';
import { type Adapters, BATCHES } from './adapters.js';

/**
 * The `api` role: the merchant API and the webhook receiver, on the server bound at start-up. `limits`:
 * limitsOf(a), shared with the METRICS_PORT app when there is one. `demoShop`: demoShopOf(config), the
 * demo shop at `/` with its script (null in production).
 */
export function startApi(
  a: Adapters,
  server: HttpServer,
  limits: Limits = limitsOf(a),
  demoShop: DemoShop | null = null,
): Koa {
  const { config, logger, clock, store, redis, sequelize } = a;
  const receiver: ReceiverDeps = {
    // Concurrent requests share one multi-row INSERT and one job; each is answered once both are done.
    intake: inboxIntake(
      { inbox: store.inbox, enqueue: (ids) => enqueueEvents(a.queue, ids), logger },
      BATCHES,
    ),
    ...receiverEndpoints(a),
    clock,
    logger,
    observe: (outcome, seconds) => a.metrics.receiver(outcome, seconds),
  };
  const app = createMerchantApp({
    ...a.checkout,
    opsApiToken: config.opsApiToken,
    shopUrl: config.shopUrl ?? `${a.checkout.publicBaseUrl}/`,
    demoShop,
    orderRules: config.orders,
    limits,
    savedCardsSyncWindowMs: config.savedCardsSyncWindowMs,
    endedSessions: new RedisEndedSessions(redis, a.redisPrefix),
    trustProxy: config.trustProxy,
    proxyIpHeader: config.proxyIpHeader,
    receiver: deliveryRoute(receiver),
    // With a port of its own and no token, /metrics is open there only, never on the public port.
    metrics: config.metricsPort !== null && config.metricsToken === null ? null : metricsEndpoint(a),
    queues: [a.queue],
    readinessFacts: { gateway_key: a.gateway.key },
    readiness: [
      { name: 'database', check: async () => void (await sequelize.query('SELECT 1')) },
      { name: 'redis', check: async () => void (await redis.ping()) },
      {
        name: 'gateway',
        check: async () => void (await fetch(a.gateway.url, { signal: AbortSignal.timeout(2000) })),
      },
    ],
  });
  const koa = app.callback();
  // The receiver's compiled event check, made before the first delivery rather than during it.
  prepareEventShape();
  // A delivery's answer is JSON, and carries the headers that matter to JSON: not the pages' policy.
  server.ready(
    deliveryListener(
      { ...receiver, securityHeaders: jsonSecurityHeaderList({ publicUrl: a.checkout.publicBaseUrl }) },
      koa,
    ),
  );
  logger.info(
    { url: localUrl(config.host, server.port), publicBaseUrl: a.checkout.publicBaseUrl, roles: config.roles },
    'merchant API listening',
  );
  return app;
}

/**
 * The receiver's endpoints (issue 45): one per merchant the kit acts for, each with a cache of that
 * merchant's secrets only (read at most every 30 s: no query per delivery). `POST /webhooks/gateway` is
 * the one merchant's (as before platform mode), or in platform mode the first merchant's (GATEWAY_MERCHANTS'
 * first), so that an endpoint registered before keeps delivering; `/webhooks/gateway/{merchant_id}`
 * names a merchant, and one the kit does not act for is a 404.
 */
export function receiverEndpoints(a: Pick<Adapters, 'config' | 'store' | 'clock' | 'gateway'>) {
  const { config, store, clock } = a;
  const served = a.gateway.gateways.merchants;
  const cacheOf = (id: number | null) => {
    const owner = secretOwner(served, id);
    const extra = extraSecretsOf({ ...config.gateway, merchants: served }, id);
    return new SecretCache(() => store.secrets.active(extra, owner), clock);
  };
  const first = served[0] ?? null;
  const fallback: ReceiverEndpoint = { merchantId: first, secrets: cacheOf(first) };
  const endpoints = new Map<number, ReceiverEndpoint>(
    served.map((id) => [id, id === first ? fallback : { merchantId: id, secrets: cacheOf(id) }]),
  );
  return {
    secrets: fallback.secrets,
    merchantId: fallback.merchantId,
    merchant: (id: number) => endpoints.get(id) ?? null,
  };
}

/**
 * The limits of the public routes and of wrong operator tokens, shared by every process through
 * Redis (rate-limiter-flexible over the kit's connection): the API's, and METRICS_PORT's.
 */
export function limitsOf(a: Adapters): RedisLimits {
  const l = a.config.limits;
  return new RedisLimits({
    redis: a.redis,
    prefix: a.redisPrefix,
    rules: {
      orders_per_address: l.ordersPerAddress,
      pay_per_address: l.payPerAddress,
      pay_per_order: l.payPerOrder,
      landing_per_address: l.landingPerAddress,
      landing_per_order: l.landingPerOrder,
      payment_methods_per_address: l.paymentMethodsPerAddress,
      login_failures_per_address: l.loginFailuresPerAddress,
      token_failures_per_address: l.tokenFailuresPerAddress,
      customer_tokens_per_credential: l.customerTokensPerCredential,
      card_lists_per_customer: l.cardListsPerCustomer,
      card_lists_per_address: l.cardListsPerAddress,
    },
    logger: a.logger,
    onFallback: (name) => a.metrics.rateLimitFallback(name),
    onRefused: (name) => a.metrics.rateLimited(name),
  });
}

/** This process's metrics, as GET /metrics serves them (on the API port, or METRICS_PORT). */
export function metricsEndpoint(a: Adapters): MetricsEndpoint {
  return {
    text: () => a.metrics.text(),
    contentType: a.metrics.registry.contentType,
    token: a.config.metricsToken,
  };
}
