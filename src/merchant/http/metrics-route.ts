import Router from '@koa/router';
import type { Context } from 'koa';
import Koa from 'koa';
import type { Logger } from 'pino';
import { errorMiddleware, HttpError } from './errors.js';
import { sameSecret } from './ops-auth.js';

export interface MetricsEndpoint {
  text(): Promise<string>;
  contentType: string;
  /** Null: open, as Prometheus expects on a private network; set, a bearer token is required. */
  token: string | null;
}

/** GET /metrics: Prometheus text (merchant.md, HTTP interface). */
export function metricsRoute(router: Router, metrics: MetricsEndpoint): void {
  router.get('/metrics', (ctx) => serveMetrics(ctx, metrics));
}

export async function serveMetrics(ctx: Context, metrics: MetricsEndpoint): Promise<void> {
  const presented = /^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization'))?.[1] ?? '';
  if (metrics.token !== null && !sameSecret(presented, metrics.token))
    throw new HttpError(401, 'UNAUTHORIZED', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.');
  ctx.type = metrics.contentType;
  ctx.body = await metrics.text();
}

/** METRICS_PORT: an app that serves GET /metrics alone, for any role (a worker has no API port). */
export function createMetricsApp(metrics: MetricsEndpoint, logger: Logger): Koa {
  const app = new Koa();
  app.use(errorMiddleware(logger));
  const router = new Router();
  metricsRoute(router, metrics);
  app.use(router.routes());
  return app;
}
