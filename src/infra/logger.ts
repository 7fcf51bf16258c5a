import { type DestinationStream, type Logger, pino, stdSerializers } from 'pino';
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
