import { z } from 'zod';
import { type CurrencyCode, isCurrencyCode } from '../../shared/money.js';
import { captureDeadline } from '../domain/auth-lifetime.js';
import type { IdempotencyRecord } from '../domain/idempotency.js';
import type { PaymentInstrument } from '../domain/instruments.js';
import type { PaymentSession } from '../domain/sessions.js';
import type { Verification } from '../domain/three-ds.js';
import type { Transaction } from '../domain/transactions.js';
import { type Attempt, type Endpoint, EVENT_TYPES, type WebhookEvent } from '../domain/webhooks.js';
import type { GatewayState, IdCounters, ReferenceHolder } from '../state/gateway-state.js';

/**
 * The sandbox's state as plain JSON, and back: pure code, no I/O (the file is state-file.ts's).
 *
 * Kept: every record (payment instruments included), index and id counter, the webhook endpoints with their sealed secrets, events
 * with their attempts, schedule and queued replays, outages, completed idempotency records, and the
 * clock's last reading. Not kept, on purpose: the rate windows (API, hosted pages, pings, replays) and
 * injected latency. They are short-lived limits and fault injection: a restart starts them afresh, as
 * a real gateway's fail-over would. The seed's accounts come from the seed file on every start.
 */

export const SNAPSHOT_VERSION = 1;

export interface SandboxSnapshot {
  /** The file format: a reader refuses a version it does not know. */
  version: typeof SNAPSHOT_VERSION;
  /** Names the key the secrets and fingerprints were made under (keys.ts `keyId`), never the key. */
  keyId: string;
  counters: IdCounters;
  transactions: Transaction[];
  /** The numeric-id map (`verificationIds`) is rebuilt from these records' `id` and `publicId`. */
  verifications: Verification[];
  /** merchant id -> [reference, holder] entries. */
  references: [number, [string, ReferenceHolder][]][];
  doNotRetry: [string, number][];
  cardholders: [string, number][];
  /** In creation order: lists show them newest first. The index by card is rebuilt from them. */
  instruments: PaymentInstrument[];
  sessions: PaymentSession[];
  sessionByTransaction: [number, string][];
  /** In creation order: the order they expire in. */
  openSessions: string[];
  webhookEndpoints: Endpoint[];
  /** In the order they were recorded: lists show them newest first. */
  webhookEvents: WebhookEvent[];
  outages: [number, number][];
  idempotency: IdempotencyRecord[];
  /** The sandbox clock when written: after a restart it never reads earlier than this. */
  clock: { now: number };
}

/** The state as plain JSON. `now` is the clock's reading; `keyId` names the persistence key. */
export function snapshot(state: GatewayState, o: { now: number; keyId: string }): SandboxSnapshot {
  return {
    version: SNAPSHOT_VERSION,
    keyId: o.keyId,
    counters: state.counters(),
    transactions: [...state.transactions.values()],
    verifications: [...state.verifications.values()],
    references: [...state.references].map(([merchantId, refs]) => [merchantId, [...refs]]),
    doNotRetry: [...state.doNotRetry],
    cardholders: [...state.cardholders],
    instruments: [...state.instruments.records.values()],
    sessions: [...state.sessions.values()],
    sessionByTransaction: [...state.sessionByTransaction],
    openSessions: [...state.openSessions],
    webhookEndpoints: [...state.webhooks.endpoints.values()],
    webhookEvents: [...state.webhooks.events.values()],
    outages: [...state.outages],
    idempotency: state.idempotency.records(),
    clock: { now: o.now },
  };
}

/** The file does not hold what this version writes; the message names the first bad field. */
export class SnapshotError extends Error {
  override name = 'SnapshotError';
}

// The schemas are typed against the records (z.ZodType<T>): a field added to a record and not here fails the typecheck.
const ms = z.number();
const id = z.number().int().nonnegative();
const currency = z.custom<CurrencyCode>(isCurrencyCode, 'must be a platform currency');
const nullableString = z.string().nullable();

/**
 * A transaction as a file holds it. Fields added after the format's version 1 may be missing from an
 * older file: it is read and filled in as the record would have had them, not refused.
 */
type StoredTransaction = Omit<Transaction, 'captureBefore' | 'vaultToken'> & {
  captureBefore?: number | null;
  vaultToken?: string | null;
};

const transactionSchema: z.ZodType<StoredTransaction> = z
  .strictObject({
    id,
    relatedId: id.nullable(),
    merchantId: id,
    cardholderId: id,
    type: z.enum(['sale', 'auth', 'capture', 'refund', 'void']),
    status: z.enum([
      'pending',
      'auth',
      'captured',
      'refunded',
      'voided',
      'failed',
      'cancelled',
      'chargeback',
    ]),
    amount: id,
    currency,
    capturedAmount: id,
    refundedAmount: id,
    chargebackAmount: id.optional(),
    reference: z.string(),
    description: nullableString,
    statusReason: nullableString,
    acquirerTransId: z.string(),
    acquirerAuthCode: z.string(),
    acquirerRefNum: z.string(),
    ipAddress: z.string(),
    captureBefore: ms.nullable().optional(),
    vaultToken: z.string().nullable().optional(),
    createdAt: ms,
    updatedAt: ms,
  })
  .transform((t) => ({
    ...t,
    // Chargebacks were in full before they had an amount: all that was captured and not refunded.
    chargebackAmount:
      t.chargebackAmount ?? (t.status === 'chargeback' ? t.capturedAmount - t.refundedAmount : 0),
  }));

/**
 * An older file's auth gets the deadline the seed's lifetime gives it, so that it too can lapse; its
 * records had no instruments, so none carries a vault token.
 */
function withDeadline(t: StoredTransaction, authLifetimeMs: number): Transaction {
  return {
    ...t,
    captureBefore: t.captureBefore !== undefined ? t.captureBefore : captureDeadline(t, authLifetimeMs),
    vaultToken: t.vaultToken ?? null,
  };
}

const verificationSchema: z.ZodType<Verification> = z.strictObject({
  id,
  publicId: z.string().min(1),
  merchantId: id,
  cardFingerprint: z.string(),
  amount: id,
  currency,
  status: z.enum(['pending', 'full_auth', 'failed']),
  authType: z.enum(['frictionless', 'challenge']),
  eci: z.string(),
  cavv: z.string(),
  dsTransId: z.string(),
  authUrl: z.string(),
  createdAt: ms,
  updatedAt: ms,
});

const instrumentSchema: z.ZodType<PaymentInstrument> = z.strictObject({
  vaultToken: z.string().startsWith('vt_'),
  merchantId: id,
  merchantCustomerId: z.string(),
  brand: z.enum(['visa', 'mastercard', 'amex', 'other']),
  last4: z.string().regex(/^\d{4}$/),
  expMonth: z.number().int().min(1).max(12),
  expYear: z.number().int(),
  name: nullableString,
  status: z.enum(['active', 'revoked']),
  fingerprint: z.string(),
  issuerOnReuse: z.union([
    z.strictObject({ kind: z.literal('approve') }),
    z.strictObject({ kind: z.literal('decline'), code: z.string(), doNotRetryAfter: z.boolean() }),
  ]),
  createdAt: ms,
  revokedAt: ms.nullable(),
});

const sessionSchema: z.ZodType<PaymentSession> = z.strictObject({
  id: z.string().min(1),
  transactionId: id,
  merchantId: id,
  reference: z.string(),
  provider: z.string(),
  paymentMethod: z.string(),
  methodLabel: z.string(),
  status: z.enum([
    'created',
    'pending_redirect',
    'pending_provider',
    'paid',
    'failed',
    'cancelled',
    'chargeback',
    'expired',
  ]),
  amount: id,
  currency,
  returnUrl: z.string(),
  cancelUrl: z.string(),
  providerSessionId: z.string(),
  providerTransactionId: nullableString,
  customerReference: z.string(),
  statusReason: nullableString,
  createdAt: ms,
  updatedAt: ms,
  finalisedAt: ms.nullable(),
});

const eventType = z.enum(EVENT_TYPES);

const endpointSchema: z.ZodType<Endpoint> = z.strictObject({
  id,
  merchantId: id,
  url: z.string(),
  isActive: z.boolean(),
  events: z.array(eventType).nullable(),
  sealedSecret: z.string().startsWith('v1.'),
  lastSuccessAt: ms.nullable(),
  lastFailureAt: ms.nullable(),
  consecutiveFailures: id,
  createdAt: ms,
  updatedAt: ms,
});

const attemptSchema: z.ZodType<Attempt> = z.strictObject({
  deliveryId: z.string(),
  attempt: id,
  statusCode: z.number().int().nullable(),
  errorReason: z
    .enum(['timeout', 'connection_refused', 'dns_error', 'tls_error', 'http_status', 'endpoint_deleted'])
    .nullable(),
  responseExcerpt: nullableString,
  durationMs: z.number().nonnegative(),
  isReplay: z.boolean(),
  createdAt: ms,
});

const eventSchema: z.ZodType<WebhookEvent> = z.strictObject({
  id: z.string().min(1),
  merchantId: id,
  type: eventType,
  transactionId: id,
  reference: z.string(),
  body: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.array(attemptSchema),
  scheduledAttempts: id,
  nextAttemptAt: ms.nullable(),
  queuedReplays: id,
  createdAt: ms,
  deliveredAt: ms.nullable(),
  failedAt: ms.nullable(),
});

const idempotencySchema: z.ZodType<IdempotencyRecord> = z.strictObject({
  scope: z.string(),
  key: z.string(),
  fingerprint: z.string(),
  createdAt: ms,
  response: z.strictObject({ status: z.number().int(), body: z.unknown() }),
});

/** What a file holds: the snapshot, with transactions and instruments as older files may have them. */
type StoredSnapshot = Omit<SandboxSnapshot, 'transactions' | 'instruments'> & {
  transactions: StoredTransaction[];
  /** Absent from a file written before payment instruments existed. */
  instruments?: PaymentInstrument[];
};

const snapshotSchema: z.ZodType<StoredSnapshot> = z.strictObject({
  version: z.literal(SNAPSHOT_VERSION),
  keyId: z.string().min(1),
  counters: z.strictObject({ transaction: id, verification: id, cardholder: id, endpoint: id }),
  transactions: z.array(transactionSchema),
  verifications: z.array(verificationSchema),
  references: z.array(
    z.tuple([id, z.array(z.tuple([z.string(), z.strictObject({ kind: z.literal('transaction'), id })]))]),
  ),
  doNotRetry: z.array(z.tuple([z.string(), ms])),
  cardholders: z.array(z.tuple([z.string(), id])),
  instruments: z.array(instrumentSchema).optional(),
  sessions: z.array(sessionSchema),
  sessionByTransaction: z.array(z.tuple([id, z.string()])),
  openSessions: z.array(z.string()),
  webhookEndpoints: z.array(endpointSchema),
  webhookEvents: z.array(eventSchema),
  outages: z.array(z.tuple([id, ms])),
  idempotency: z.array(idempotencySchema),
  clock: z.strictObject({ now: ms }),
});

/**
 * Fills a freshly built `state` from `json` (what `snapshot` wrote, parsed). Throws a SnapshotError
 * before changing anything when the version, the shape, the key or a cross-reference is wrong: a
 * corrupt file is never half-read into a sandbox. Returns the clock reading kept.
 */
export function restore(json: unknown, state: GatewayState, o: { keyId: string }): { now: number } {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new SnapshotError('is not a JSON object');
  const version = (json as { version?: unknown }).version;
  if (version !== SNAPSHOT_VERSION) {
    throw new SnapshotError(
      `has format version ${JSON.stringify(version ?? null)}; this sandbox reads version ${SNAPSHOT_VERSION}`,
    );
  }
  const parsed = snapshotSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.map(String).join('.') || '(root)';
    throw new SnapshotError(`${field}: ${issue.message.replace(/\s+/g, ' ')}`);
  }
  const s = parsed.data;
  if (s.keyId !== o.keyId) {
    throw new SnapshotError(
      'was written under another key (APP_ENCRYPTION_KEY changed?): its webhook secrets and card fingerprints cannot be used; start afresh on purpose to discard it',
    );
  }
  checkReferences(s);

  for (const stored of s.transactions) {
    const t = withDeadline(stored, state.authLifetimeMs);
    state.transactions.set(t.id, t);
    if (t.type === 'auth' && t.status === 'auth') state.openAuths.add(t.id); // may lapse at once
  }
  for (const v of s.verifications) state.saveVerification(v);
  for (const [merchantId, refs] of s.references) state.references.set(merchantId, new Map(refs));
  for (const [k, until] of s.doNotRetry) state.doNotRetry.set(k, until);
  for (const [k, cardholderId] of s.cardholders) state.cardholders.set(k, cardholderId);
  for (const i of s.instruments ?? []) state.instruments.save(i);
  for (const session of s.sessions) state.sessions.set(session.id, session);
  for (const [transactionId, sessionId] of s.sessionByTransaction)
    state.sessionByTransaction.set(transactionId, sessionId);
  for (const sessionId of s.openSessions) state.openSessions.add(sessionId);
  for (const e of s.webhookEndpoints) state.webhooks.endpoints.set(e.merchantId, e);
  for (const e of s.webhookEvents) state.webhooks.events.set(e.id, e);
  for (const [merchantId, until] of s.outages) state.outages.set(merchantId, until);
  state.idempotency.load(s.idempotency);
  state.restoreCounters(nextCounters(s));
  return { now: s.clock.now };
}

/** The saved counters, raised past every id present: whatever the file says, no id is handed out twice. */
function nextCounters(s: StoredSnapshot): IdCounters {
  const above = (saved: number, ids: number[]) => ids.reduce((next, i) => Math.max(next, i + 1), saved);
  const { counters } = s;
  return {
    transaction: above(counters.transaction, ids(s.transactions, 'id')),
    verification: above(counters.verification, ids(s.verifications, 'id')),
    cardholder: above(
      counters.cardholder,
      s.cardholders.map(([, i]) => i),
    ),
    endpoint: above(counters.endpoint, ids(s.webhookEndpoints, 'id')),
  };
}

function ids<T, K extends keyof T>(records: T[], field: K): T[K][] {
  return records.map((r) => r[field]);
}

/** Everything the routes look up with `!` must be there: a dangling id would be a crash later, not now. */
function checkReferences(s: StoredSnapshot): void {
  const unique = <T>(what: string, values: T[]): Set<T> => {
    const seen = new Set<T>();
    for (const v of values) {
      if (seen.has(v)) throw new SnapshotError(`${what}: ${String(v)} appears twice`);
      seen.add(v);
    }
    return seen;
  };
  const transactions = unique('transactions', ids(s.transactions, 'id'));
  const sessions = unique('sessions', ids(s.sessions, 'id'));
  unique('verifications', ids(s.verifications, 'publicId'));
  unique('verifications (numeric ids)', ids(s.verifications, 'id'));
  unique('webhookEndpoints (merchants)', ids(s.webhookEndpoints, 'merchantId'));
  unique('webhookEvents', ids(s.webhookEvents, 'id'));
  unique('openSessions', s.openSessions);
  const instruments = unique('instruments', ids(s.instruments ?? [], 'vaultToken'));
  const need = (ok: boolean, message: string) => {
    if (!ok) throw new SnapshotError(message);
  };
  for (const t of s.transactions)
    need(
      t.relatedId === null || transactions.has(t.relatedId),
      `transactions: ${t.id} relates to a missing transaction`,
    );
  for (const t of s.transactions)
    need(
      t.vaultToken == null || instruments.has(t.vaultToken),
      `transactions: ${t.id} names a missing payment instrument`,
    );
  for (const x of s.sessions)
    need(transactions.has(x.transactionId), `sessions: ${x.id} has a missing transaction`);
  for (const [transactionId, sessionId] of s.sessionByTransaction)
    need(
      transactions.has(transactionId) && sessions.has(sessionId),
      `sessionByTransaction: ${transactionId} -> ${sessionId} names a missing record`,
    );
  for (const sessionId of s.openSessions)
    need(sessions.has(sessionId), `openSessions: ${sessionId} is a missing session`);
  for (const [merchantId, refs] of s.references)
    for (const [reference, holder] of refs)
      need(
        transactions.has(holder.id),
        `references: ${merchantId}/${reference} is held by a missing transaction`,
      );
}
