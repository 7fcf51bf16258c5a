import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { hasCardNumber, maskCardNumbers } from '../shared/card-numbers.js';

/** `/pay/<token>`, however spelled (routes match paths whatever their case). */
const LINK_PATH = /^\/pay\/[^/]*/i;

/**
 * A request's path as a log line gives it: as sent, save a payment link's token (the link itself: issue
 * 43, part 3) and a card number (someone put one in a URL), which are masked; a card number is masked
 * in the path with its escapes decoded. Each run of escapes is decoded as the UTF-8 it spells (a bad sequence reads as U+FFFD): decodeURIComponent gives up on a whole path for
 * one stray `%` (the routes' fuzzer found `/customers/%/cards/4000%200000%200000%203097` logged as
 * sent), and a run left as it was lets its hex run into the digits after it (`%E2%80%884000-0000-…`,
 * a punctuation space before a card number, read as the digits 884000).
 */
export function loggedPath(path: string): string {
  const sent = path.replace(LINK_PATH, '/pay/[token]');
  const decoded = sent.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) =>
    Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'),
  );
  return hasCardNumber(decoded) ? maskCardNumbers(decoded) : sent;
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
