import type { Context } from 'koa';
import type { Logger } from 'pino';
import getRawBody from 'raw-body';
import { type Clock, unixSeconds } from '../../shared/clock.js';
import { DEFAULT_TOLERANCE_SECONDS, verify } from '../../shared/signature.js';
import { parseEvent } from '../orders/from-gateway.js';
import type { InboxEvent } from '../store/inbox.js';
import type { Intake } from './intake.js';
import type { SecretCache } from './secret-cache.js';

/** merchant.md, The receiver: at most 256 KiB. */
export const MAX_WEBHOOK_BYTES = 256 * 1024;
/** Fails on bytes that are not UTF-8; keeps a BOM, which then is not JSON. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export interface ReceiverDeps {
  /** Stores a verified event in the inbox and queues it when new (intake.ts inboxIntake). */
  intake: (event: InboxEvent) => Promise<Intake>;
  secrets: SecretCache;
  clock: Clock;
  logger: Logger;
  /** Told of every answer: its outcome and how long it took (the metrics). */
  observe?: (outcome: ReceiverOutcome, seconds: number) => void;
}

/** What the receiver answered: for the metrics and the log. */
export type ReceiverOutcome =
  | 'accepted'
  | 'duplicate'
  | 'bad_signature'
  | 'malformed'
  | 'too_large'
  | 'unavailable'
  | 'ping';

/**
 * POST /webhooks/gateway. Verify first, on the raw bytes; nothing unverified is parsed, stored or
 * queued. Then parse, store in the inbox (the unique event id makes a repeat a no-op) and queue what
 * is new, together with the deliveries in flight beside it (intake.ts), answer.
 */
export function webhookReceiver(deps: ReceiverDeps) {
  return async (ctx: Context): Promise<void> => {
    const started = performance.now();
    const outcome = await receive(ctx, deps);
    deps.observe?.(outcome, (performance.now() - started) / 1000);
  };
}

async function receive(ctx: Context, deps: ReceiverDeps): Promise<ReceiverOutcome> {
  const answer = (outcome: ReceiverOutcome, status: number, code: string, message: string) => {
    ctx.status = status;
    ctx.body = { success: status < 300, message, code, data: null };
    return outcome;
  };
  let raw: Buffer;
  try {
    raw = await getRawBody(ctx.req, { limit: MAX_WEBHOOK_BYTES });
  } catch (error) {
    if ((error as { type?: string }).type === 'entity.too.large') {
      // The rest of the body is never read: the connection cannot carry another request.
      ctx.set('Connection', 'close');
      return answer('too_large', 413, 'PAYLOAD_TOO_LARGE', 'The body is over 256 KiB.');
    }
    throw error;
  }
  const header = ctx.get('X-Service-Signature');
  const nowSeconds = unixSeconds(deps.clock.now());
  const check = async () =>
    verify({
      payload: raw,
      header,
      secrets: await deps.secrets.get(),
      nowSeconds,
      toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
    });
  let verdict = await check();
  // A miss may be a secret rotated by another process: re-read the secrets once and try again.
  if (!verdict.ok && verdict.reason === 'signature_mismatch') {
    await deps.secrets.refresh();
    verdict = await check();
  }
  if (!verdict.ok) {
    deps.logger.warn({ reason: verdict.reason }, 'webhook refused: signature');
    return answer('bad_signature', 401, 'INVALID_SIGNATURE', verdict.message);
  }

  // JSON is UTF-8 (RFC 8259). Decoded leniently, bytes that are not would be stored as U+FFFD: the
  // inbox would keep something other than what was signed.
  let text: string;
  try {
    text = STRICT_UTF8.decode(raw);
  } catch {
    return answer('malformed', 400, 'MALFORMED_EVENT', 'The body is not UTF-8.');
  }
  const source = ctx.get('X-Service-Replay') === 'true' ? 'replay' : 'webhook';
  const event = parseEvent(text, source, deps.clock.now());
  if (event.kind === 'rejected') return answer('malformed', 400, 'MALFORMED_EVENT', event.message);
  if (event.kind === 'ping') return answer('ping', 200, '', 'pong');

  let intake: Intake;
  try {
    intake = await deps.intake({
      id: event.id,
      type: event.type,
      transactionId: event.observation.transaction.id,
      source,
      payload: text,
      now: new Date(deps.clock.now()),
    });
  } catch (error) {
    // Without the inbox nothing is safe: 503, and the gateway delivers it again later.
    deps.logger.error(
      { err: { message: (error as Error).message }, event: event.id },
      'webhook not stored: database unavailable',
    );
    ctx.set('Retry-After', '30');
    return answer('unavailable', 503, 'UNAVAILABLE', 'The event could not be stored; please retry.');
  }
  if (intake === 'duplicate') return answer('duplicate', 200, '', 'Already received.');
  return answer('accepted', 200, '', 'Received.');
}
