import type { Context, Next } from 'koa';
import type { Logger } from 'pino';

/** One line per request: method, path, status, time. Never a body, a query string or a header. */
export function requestLog(logger: Logger, level: 'debug' | 'info' = 'info') {
  return async (ctx: Context, next: Next): Promise<void> => {
    const started = performance.now();
    try {
      await next();
    } finally {
      logger[level](
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(performance.now() - started),
        },
        'request',
      );
    }
  };
}
