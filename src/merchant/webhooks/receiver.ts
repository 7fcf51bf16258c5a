import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import getRawBody from 'raw-body';
import { type Clock, unixSeconds } from '../../shared/clock.js';
import { failureEnvelope, successEnvelope } from '../../shared/envelope.js';
import { DEFAULT_TOLERANCE_SECONDS, type VerifyResult, verify } from '../../shared/signature.js';
import { checkEvent } from '../orders/from-gateway.js';
import type { InboxEvent } from '../store/inbox.js';
import type { Intake } from './intake.js';
import type { SecretCache } from './secret-cache.js';

/** merchant.md, The receiver: at most 256 KiB. */
export const MAX_WEBHOOK_BYTES = 256 * 1024;
/** Fails on bytes that are not UTF-8; keeps a BOM, which then is not JSON. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** One merchant's endpoint at the receiver: whose events arrive there, and the secrets they are signed with. */
export interface ReceiverEndpoint {
  /** The merchant its events are kept as (the inbox's `merchant_id`); null: the kit's one merchant, id unknown. */
  merchantId: number | null;
  /** That merchant's secrets only: an event signed with another merchant's is a bad signature. */
  secrets: SecretCache;
}

export interface ReceiverDeps {
  /** Stores a verified event in the inbox and queues it when new (intake.ts inboxIntake). */
  intake: (event: InboxEvent) => Promise<Intake>;
  /** `POST /webhooks/gateway`'s secrets: the kit's one merchant's, or (platform mode) the first merchant's. */
  secrets: SecretCache;
  /** Whose events `POST /webhooks/gateway` receives; default null (the one merchant, id unknown). */
  merchantId?: number | null;
  /**
   * `POST /webhooks/gateway/{merchant_id}` (issue 45, platform mode): that merchant's endpoint, from a
   * map built at start (no query on the way); null or absent: the kit acts for no such merchant (404).
   */
  merchant?: (id: number) => ReceiverEndpoint | null;
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
  | 'ping'
  /** A merchant id in the path the kit does not act for (404): nothing read, nothing stored. */
  | 'unknown_merchant'
  /** A defect of the kit's own (500): not the database, so not counted as `unavailable`. */
  | 'error';

/** An answer to a delivery, whatever serves it (delivery-endpoint.ts: before the app, or as its route). */
export interface ReceiverAnswer {
  outcome: ReceiverOutcome;
  status: number;
  /** The merchant envelope, as JSON text. */
  body: string;
  /** Beside the JSON content type: Retry-After, Connection. */
  headers: Record<string, string>;
  /** The same object answers every delivery it answers (the 200s, made once): what is made of it may be kept. */
  fixed?: true;
}

/** A 200: the envelope with no `request_id`, as the app's successes have none; built once (below). */
const accepted = (outcome: ReceiverOutcome, message: string): ReceiverAnswer => ({
  outcome,
  status: 200,
  body: JSON.stringify(successEnvelope(null, message)),
  headers: {},
  fixed: true,
});

/** An error: the envelope with the request's id, as every error body of the app carries it. */
const refused = (
  requestId: string,
  outcome: ReceiverOutcome,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): ReceiverAnswer => ({
  outcome,
  status,
  body: JSON.stringify(failureEnvelope(code, message, { requestId })),
  headers,
});

// The answers that never vary, written once, at load: a delivery sends ready-made text.
const ACCEPTED = accepted('accepted', 'Received.');
const DUPLICATE = accepted('duplicate', 'Already received.');
const PONG = accepted('ping', 'pong');
// The rest of the body is never read: the connection cannot carry another request.
const tooLarge = (requestId: string) =>
  refused(requestId, 'too_large', 413, 'PAYLOAD_TOO_LARGE', 'The body is over 256 KiB.', {
    Connection: 'close',
  });
// Without the inbox (or the secrets, kept in the same database) nothing is safe: 503, and the gateway
// delivers it again later.
const unavailable = (requestId: string) =>
  refused(requestId, 'unavailable', 503, 'UNAVAILABLE', 'The event could not be stored; please retry.', {
    'Retry-After': '30',
  });

/** `/webhooks/gateway/{merchant_id}` naming a merchant this kit does not act for: 404, the body unread. */
export const unknownMerchant = (requestId: string, id: string): ReceiverAnswer =>
  refused(
    requestId,
    'unknown_merchant',
    404,
    'NOT_FOUND',
    // A segment that is no merchant id (the app's route takes any) is not echoed back.
    /^\d{1,10}$/.test(id) ? `This kit has no webhook endpoint for merchant ${id}.` : 'Not found.',
  );

/** The delivery's signature against these secrets, within the default tolerance. */
const checkSignature = (
  payload: Buffer,
  header: string | undefined,
  secrets: readonly string[],
  nowSeconds: number,
): VerifyResult =>
  verify({ payload, header, secrets, nowSeconds, toleranceSeconds: DEFAULT_TOLERANCE_SECONDS });

/** The endpoint of `POST /webhooks/gateway`: the one merchant's, or (platform mode) the first merchant's. */
export const defaultEndpoint = (deps: ReceiverDeps): ReceiverEndpoint => ({
  merchantId: deps.merchantId ?? null,
  secrets: deps.secrets,
});

/**
 * POST /webhooks/gateway (and /webhooks/gateway/{merchant_id}: `endpoint`). Verify first, with the
 * endpoint's merchant's secrets only, on the raw bytes; nothing unverified is parsed, stored or
 * queued. Then parse (what reads as a card number outside the gateway's ids truncated: the event is
 * kept so, orders/event-masking.ts), store in the inbox (the unique event id makes a repeat a no-op)
 * and queue what is new, together with the deliveries in flight beside it (intake.ts), answer.
 * Framework-free: the one route under load is served straight off Node's request
 * (delivery-endpoint.ts). Throws what reading the body throws (other than a body too large), and a
 * defect.
 */
export async function receive(
  req: IncomingMessage,
  deps: ReceiverDeps,
  requestId: string,
  endpoint: ReceiverEndpoint = defaultEndpoint(deps),
): Promise<ReceiverAnswer> {
  let raw: Buffer;
  try {
    raw = await getRawBody(req, { limit: MAX_WEBHOOK_BYTES });
  } catch (error) {
    if ((error as { type?: string }).type === 'entity.too.large') return tooLarge(requestId);
    throw error; // aborted, or not readable: the caller answers it as the app does (errorAnswer)
  }
  const sent = req.headers['x-service-signature'];
  const header = typeof sent === 'string' ? sent : undefined;
  // One reading of the clock: the signature's time window, and the time the event was received.
  const nowMs = deps.clock.now();
  const nowSeconds = unixSeconds(nowMs);
  let verdict: VerifyResult;
  try {
    const cache = endpoint.secrets;
    let secrets = cache.current() ?? (await cache.get());
    verdict = checkSignature(raw, header, secrets, nowSeconds);
    // A miss may be a secret rotated by another process: re-read the secrets once and try again.
    if (!verdict.ok && verdict.reason === 'signature_mismatch') {
      await cache.refresh();
      secrets = await cache.get();
      verdict = checkSignature(raw, header, secrets, nowSeconds);
    }
    if (verdict.ok) cache.matched(secrets[verdict.secretIndex]!);
  } catch (error) {
    // The secrets live in the database: without them nothing can be verified, so it is retried later.
    deps.logger.error(
      { request_id: requestId, err: { message: (error as Error).message } },
      'webhook not verified: secrets unavailable',
    );
    return unavailable(requestId);
  }
  if (!verdict.ok) {
    deps.logger.warn(
      {
        request_id: requestId,
        reason: verdict.reason,
        ...(endpoint.merchantId === null ? {} : { merchant: endpoint.merchantId }),
      },
      'webhook refused: signature',
    );
    return refused(requestId, 'bad_signature', 401, 'INVALID_SIGNATURE', verdict.message);
  }

  // JSON is UTF-8 (RFC 8259). Decoded leniently, bytes that are not would be stored as U+FFFD: the
  // inbox would keep something other than what was signed.
  let text: string;
  try {
    text = STRICT_UTF8.decode(raw);
  } catch {
    return refused(requestId, 'malformed', 400, 'MALFORMED_EVENT', 'The body is not UTF-8.');
  }
  const source = req.headers['x-service-replay'] === 'true' ? 'replay' : 'webhook';
  const event = checkEvent(text);
  if (event.kind === 'rejected')
    return refused(requestId, 'malformed', 400, 'MALFORMED_EVENT', event.message);
  if (event.kind === 'ping') return PONG;

  // Something outside the gateway's ids read as a card number: kept truncated, applied all the same.
  if (event.masked.length > 0)
    deps.logger.info(
      { request_id: requestId, event: event.id, masked: event.masked },
      'webhook kept with card numbers truncated',
    );
  let intake: Intake;
  try {
    intake = await deps.intake({
      id: event.id,
      type: event.type,
      transactionId: event.transactionId,
      source,
      payload: event.kept,
      masked: event.masked,
      merchantId: endpoint.merchantId,
      now: new Date(nowMs),
    });
  } catch (error) {
    deps.logger.error(
      { request_id: requestId, err: { message: (error as Error).message }, event: event.id },
      'webhook not stored: database unavailable',
    );
    return unavailable(requestId);
  }
  return intake === 'duplicate' ? DUPLICATE : ACCEPTED;
}
