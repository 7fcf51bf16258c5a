import Router from '@koa/router';
import type Queue from 'bull';
import Koa, { type Context } from 'koa';
import type { Logger } from 'pino';
import { apiDocsRouter } from '../../infra/api-docs.js';
import type { EndedSessions } from '../../infra/ended-sessions.js';
import { requestContext } from '../../infra/request-context.js';
import { requestLog } from '../../infra/request-log.js';
import { securityHeaders } from '../../infra/security-headers.js';
import { withDeadline } from '../../shared/deadline.js';
import { failureEnvelope, successEnvelope } from '../../shared/envelope.js';
import { WEBHOOK_PATH } from '../webhooks/delivery-endpoint.js';
import { merchantApi } from './api-document.js';
import { cancelRoutes } from './cancel-routes.js';
import { createOrderRoute } from './create-order.js';
import { customerRoutes } from './customer-routes.js';
import { disputeRoutes } from './dispute-routes.js';
import { errorMiddleware, ok } from './errors.js';
import { landingRoutes } from './landing-routes.js';
import { type MetricsEndpoint, metricsRoute } from './metrics-route.js';
import { OpsAuth } from './ops-auth.js';
import { mountOpsBoard, opsLoginRoutes } from './ops-board.js';
import { paymentLinkRoutes } from './payment-link-routes.js';
import { reportRoutes } from './report-routes.js';
import { reviewRoutes } from './review-routes.js';
import { merchantRoutes, type RouteDeps } from './routes.js';
import { unmatchedRoutes } from './unmatched-routes.js';

export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

/** The merchant's Koa app: a factory, so tests mount it on port 0 and main.ts on PORT. */
export function createMerchantApp(
  deps: RouteDeps & {
    logger: Logger;
    readiness: ReadinessCheck[];
    /** Facts readyz shows beside the checks: what start-up learnt of the gateway key. */
    readinessFacts?: Record<string, unknown>;
    /**
     * The receiver as a route (delivery-endpoint.ts deliveryRoute): for the spellings of its path that
     * reach the app; the kit serves the usual one before the app (deliveryListener).
     */
    receiver: (ctx: Context) => Promise<void>;
    /** GET /metrics on this port; null when it is served only on METRICS_PORT. */
    metrics: MetricsEndpoint | null;
    /** Operator sessions signed out before their time (POST /ops/logout). */
    endedSessions: EndedSessions;
    /** The queues the operator's board shows (bull-board at /ops/queues). */
    queues: Queue.Queue[];
    /** TRUST_PROXY: how many proxies in front of the kit to believe; 0 or unset, none. */
    trustProxy?: number;
    /** PROXY_IP_HEADER: where those proxies put the client's address. Default X-Forwarded-For. */
    proxyIpHeader?: string;
    /** SAVED_CARDS_SYNC_WINDOW_MS: a customer's cards from the kit's rows this long after a gateway list. Default 30 s. */
    savedCardsSyncWindowMs?: number;
  },
): Koa {
  // TRUST_PROXY: only then is the proxies' header believed, and only its last `trustProxy` entries
  // (those the trusted proxies appended): ctx.ip is the address the outermost of them saw.
  const app = new Koa({
    proxy: (deps.trustProxy ?? 0) > 0,
    proxyIpHeader: deps.proxyIpHeader ?? 'X-Forwarded-For',
    maxIpsCount: deps.trustProxy ?? 0,
  });
  // First, so that every answer carries them: error answers, the queue board's and koa's own included.
  app.use(securityHeaders({ publicUrl: deps.publicBaseUrl }));
  app.use(requestContext());
  app.use(requestLog(deps.logger, 'info'));
  app.use(errorMiddleware(deps.logger));
  // The bootstrap token (admin) and named operators' tokens, with their roles (operators/roles.ts).
  const ops = new OpsAuth(deps.opsApiToken, deps.store.operators, deps.endedSessions, deps.limits);
  const routeDeps = { ...deps, ops };
  mountOpsBoard(app, { queues: deps.queues, ops, clock: deps.clock, publicBaseUrl: deps.publicBaseUrl });
  const router = new Router();
  router.get('/healthz', (ctx) => ok(ctx, { status: 'ok' }));
  /**
   * Ready or not, to anyone who can reach the port (a container platform's probe sends no token).
   * Which dependency is down and what start-up learnt of the gateway key are for a reader's token
   * (every role but storefront): they map the kit's insides for whoever probes it.
   */
  router.get('/readyz', async (ctx) => {
    ctx.set('Vary', 'Authorization');
    ctx.set('Cache-Control', 'no-store');
    const reader = ctx.get('Authorization') === '' ? null : await ops.require(ctx, 'metrics.read');
    const results = await Promise.all(
      deps.readiness.map(async ({ name, check }) => {
        try {
          await withDeadline(check(), 2000, name);
          return [name, 'ok'] as const;
        } catch (error) {
          // The why goes to the log: an error's text (a host, a user, a driver's message) is for
          // operators, and readyz answers anyone who can reach the port.
          deps.logger.warn(
            { dependency: name, err: (error as Error).message },
            'readyz: a dependency is unavailable',
          );
          return [name, 'unavailable'] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    const status = ready ? 'ready' : 'not_ready';
    const data = reader ? { status, ...Object.fromEntries(results), ...deps.readinessFacts } : { status };
    ctx.status = ready ? 200 : 503;
    // The 503 is the probe's state, not a request's error: documented without a request id.
    ctx.body = ready ? successEnvelope(data, 'ready') : failureEnvelope('NOT_READY', 'not ready', { data });
  });
  router.post(WEBHOOK_PATH, deps.receiver);
  // Platform mode (issue 45): one endpoint per merchant; the receiver answers 404 for one it does not serve.
  router.post(`${WEBHOOK_PATH}/:merchant_id`, deps.receiver);
  createOrderRoute(router, routeDeps);
  merchantRoutes(router, routeDeps);
  cancelRoutes(router, routeDeps);
  paymentLinkRoutes(router, routeDeps);
  landingRoutes(router, deps);
  reportRoutes(router, routeDeps);
  reviewRoutes(router, routeDeps);
  unmatchedRoutes(router, routeDeps);
  disputeRoutes(router, routeDeps);
  customerRoutes(router, routeDeps);
  if (deps.metrics) metricsRoute(router, deps.metrics, ops);
  opsLoginRoutes(router, routeDeps);
  app.use(router.routes());
  app.use(apiDocsRouter(merchantApi).routes());
  return app;
}
