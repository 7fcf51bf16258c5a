import { createRequire } from 'node:module';
import { format } from 'node:util';
import { type DestinationStream, type Logger, pino, stdSerializers } from 'pino';
import type pinoPretty from 'pino-pretty';
import { currentRequestId } from './request-context.js';

/**
 * pino, with a last line of defence: should a card field or a secret ever be handed to the logger,
 * it is censored. The code never passes them; this guards against a future mistake.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      // The request in hand, if any: one id ties a request's lines together (infra/request-context.ts).
      mixin: () => {
        const requestId = currentRequestId();
        return requestId === undefined ? {} : { request_id: requestId };
      },
      // `err: { message }` (what expected failures log) stays as written; pino's own serializer would
      // dress it as `{type: "Object", stack: ""}`. A thrown Error keeps its name and stack.
      serializers: { err: (e: unknown) => (e instanceof Error ? stdSerializers.err(e) : e) },
      redact: {
        paths: [
          'card',
          '*.card',
          'number',
          '*.number',
          'cvv',
          '*.cvv',
          'secret',
          '*.secret',
          'authorization',
          '*.authorization',
          'headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/** LOG_FORMAT: auto (the default), json or pretty. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * Readable lines for a person at a terminal in development; JSON lines for everything else (a log
 * collector, a container, a pipe, the tests), which is what production reads. LOG_FORMAT decides
 * when it is not `auto`.
 */
export function wantsPrettyLogs(format: LogFormat, o: { env: string; isTTY: boolean }): boolean {
  if (format !== 'auto') return format === 'pretty';
  return o.env === 'development' && o.isTTY;
}

/**
 * Where readable lines go: pino-pretty, writing synchronously to `destination` (1 stdout, 2 stderr), so the
 * last lines before an exit are not lost. It formats what pino hands it, after the redaction above:
 * a censored field stays censored.
 */
export function prettyDestination(
  destination: 1 | 2 | NodeJS.WritableStream = 1,
  colorize = true,
): DestinationStream {
  // Loaded here, when lines are to be readable: a process logging JSON (production, a pipe, the
  // CLI's commands run by a script) never loads pino-pretty and its dependencies.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof pinoPretty;
  return pretty({
    destination,
    sync: true,
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    // One line an entry, its fields after the message: a terminal shows many at a glance.
    singleLine: true,
    ignore: 'pid,hostname',
  });
}

/**
 * What libraries write with console.warn, as a warning line of `logger`: ioredis, for one, prints
 * `[WARN] Redis server does not require a password…` as plain text, which breaks a JSON log stream
 * (a collector that parses each line drops it, or worse). For the processes' entry points only.
 */
export function routeConsoleWarnings(logger: Logger): void {
  console.warn = (...args: unknown[]) => logger.warn({ from: 'console' }, format(...args));
}
