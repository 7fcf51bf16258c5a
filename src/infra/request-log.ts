import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { hasCardNumber, maskCardNumbers } from '../shared/card-numbers.js';

/**
 * A request's path as a log line gives it: as sent, unless it holds a card number (someone put one in
 * a URL), which is masked in the decoded path.
 */
export function loggedPath(path: string): string {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // Not valid percent-encoding: the path as sent is what is checked.
  }
  return hasCardNumber(decoded) ? maskCardNumbers(decoded) : path;
}

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
          path: loggedPath(ctx.path),
          status: ctx.status,
          ms: Math.round(performance.now() - started),
        },
        'request',
      );
    }
  };
}
