import { type DestinationStream, type Logger, pino } from 'pino';

/**
 * pino, with a last line of defence: should a card field or a secret ever be handed to the logger,
 * it is censored. The code never passes them; this guards against a future mistake.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
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
