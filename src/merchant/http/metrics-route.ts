import Router from '@koa/router';
import type { Context } from 'koa';
import Koa from 'koa';
import type { Logger } from 'pino';
import { securityHeaders } from '../../infra/security-headers.js';
import { HttpError } from '../errors/http-error.js';
import { mayScoped } from '../operators/roles.js';
import { errorMiddleware } from './errors.js';
import { bearerOf, type OpsAuth, sameSecret } from './ops-auth.js';

export interface MetricsEndpoint {
  text(): Promise<string>;
  contentType: string;
  /** Null: open, as Prometheus expects on a private network; set, a bearer token is required. */
  token: string | null;
}

/**
 * GET /metrics: Prometheus text (merchant.md, HTTP interface). With METRICS_TOKEN set, that token
 * (the scraper's: it needs no database) or an operator's token whose role reads (every role) opens it.
 */
export function metricsRoute(router: Router, metrics: MetricsEndpoint, ops?: OpsAuth): void {
  router.get('/metrics', (ctx) => serveMetrics(ctx, metrics, ops));
}

export async function serveMetrics(ctx: Context, metrics: MetricsEndpoint, ops?: OpsAuth): Promise<void> {
  if (metrics.token !== null && !(await allowed(ctx, metrics.token, ops)))
    throw new HttpError(
      401,
      'UNAUTHORIZED',
      "GET /metrics needs Authorization: Bearer <METRICS_TOKEN>, or an operator's token.",
    );
  ctx.type = metrics.contentType;
  ctx.body = await metrics.text();
}

/** METRICS_TOKEN, or an operator's token that reads; a wrong token is counted (ops.bearer), a 429 past the limit. */
async function allowed(ctx: Context, token: string, ops: OpsAuth | undefined): Promise<boolean> {
  const presented = bearerOf(ctx);
  if (presented === '') return false;
  if (sameSecret(presented, token)) return true;
  const who = ops ? await ops.bearer(ctx) : null;
  return who !== null && mayScoped(who.role, who.merchants ?? null, 'metrics.read');
}

/** METRICS_PORT: an app that serves GET /metrics alone, for any role (a worker has no API port). */
export function createMetricsApp(metrics: MetricsEndpoint, logger: Logger, ops?: OpsAuth): Koa {
  const app = new Koa();
  app.use(securityHeaders());
  app.use(errorMiddleware(logger));
  const router = new Router();
  metricsRoute(router, metrics, ops);
  app.use(router.routes());
  return app;
}
