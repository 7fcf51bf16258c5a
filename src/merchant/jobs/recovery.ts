import type { Logger } from 'pino';
import { GatewayError, GatewayNetworkError } from '../../client/errors.js';
import type { GatewayClient } from '../../client/gateway-client.js';
import type { GatewayEventRow } from '../../client/schemas.js';
import type { Clock } from '../../shared/clock.js';
import { checkEvent } from '../orders/from-gateway.js';
import type { Store } from '../store/index.js';

/** The checkpoint's name in kit_checkpoints: the gateway time up to which every event is stored. */
export const RECOVERY_CHECKPOINT = 'recovery';
/** Listed again before the checkpoint, for events the gateway wrote with a slightly earlier time. */
export const OVERLAP_MS = 5 * 60_000;
/** How far back the very first run looks. */
export const FIRST_LOOKBACK_MS = 24 * 60 * 60_000;
/** gateway-api.md, Limits: the largest page. */
const PAGE_SIZE = 100;

/**
 * Where a merchant's recovery keeps its checkpoint (issue 45): `recovery` in a kit of one merchant (as
 * before platform mode), `recovery:<merchant_id>` in a kit of several, the first merchant starting from
 * `recovery` while it has none of its own (the kit acted for it alone before: it resumes there).
 */
export function recoveryCheckpoint(
  served: readonly number[],
  id: number | null,
): { name: string; former?: string } {
  if (served.length <= 1) return { name: RECOVERY_CHECKPOINT };
  const merchant = id ?? served[0]!;
  return merchant === served[0]
    ? { name: `${RECOVERY_CHECKPOINT}:${merchant}`, former: RECOVERY_CHECKPOINT }
    : { name: `${RECOVERY_CHECKPOINT}:${merchant}` };
}

export interface RecoveryDeps {
  store: Pick<Store, 'inbox' | 'checkpoints'>;
  /** The gateway as the merchant whose events are listed sees it (platform mode: a partner key naming it). */
  gateway: Pick<GatewayClient, 'listEvents' | 'getEvent' | 'replayEvent'>;
  /** Whose events they are: kept on the inbox rows (the reconciler applies them to its orders only). */
  merchantId?: number | null;
  /** The checkpoint's name (recoveryCheckpoint); default `recovery`. */
  checkpoint?: { name: string; former?: string };
  /** Queues a stored event for the reconciler; a failure only delays it (the sweeper queues it later). */
  enqueue: (eventId: string) => Promise<void>;
  clock: Clock;
  logger: Logger;
}

export interface RecoverySummary {
  /** Where the listing started (gateway time, ISO). */
  from: string;
  /** Events the gateway listed from there. */
  listed: number;
  /** Listed events the inbox did not hold. */
  missing: number;
  /** Missing events fetched by id and stored, source `recovery`. */
  recovered: number;
  /** Missing events asked to be delivered again, where fetching could not serve. */
  replayed: number;
  /** Missing events neither fetched nor replayed: the checkpoint stays before the first of them. */
  failed: number;
  gatewayCalls: number;
  /** The checkpoint after this run (several merchants: the earliest of theirs). */
  checkpoint: string | null;
  /** A kit of several merchants (issue 45): each merchant's run, by merchant id; the fields above add them up. */
  merchants?: Record<string, RecoverySummary>;
}

/**
 * The runs of several merchants as one summary: counts added up, listed from the earliest start, and
 * the earliest checkpoint (every merchant's events are stored up to there; null while one has none).
 */
export function combinedSummary(runs: readonly [number, RecoverySummary][]): RecoverySummary {
  const sum = (pick: (s: RecoverySummary) => number) => runs.reduce((n, [, s]) => n + pick(s), 0);
  const earliest = (values: (string | null)[]) =>
    values.includes(null)
      ? null
      : (values as string[]).reduce<string | null>(
          (a, b) => (a === null || Date.parse(b) < Date.parse(a) ? b : a),
          null,
        );
  return {
    from: earliest(runs.map(([, s]) => s.from)) ?? '',
    listed: sum((s) => s.listed),
    missing: sum((s) => s.missing),
    recovered: sum((s) => s.recovered),
    replayed: sum((s) => s.replayed),
    failed: sum((s) => s.failed),
    gatewayCalls: sum((s) => s.gatewayCalls),
    checkpoint: earliest(runs.map(([, s]) => s.checkpoint)),
    merchants: Object.fromEntries(runs.map(([id, s]) => [String(id), s])),
  };
}

export interface RecoveryOptions {
  /** List from here instead of the checkpoint (`cli recover --since`). */
  since?: Date;
  /** Told as the run goes: the listing, then each missing event (the CLI's progress bar). */
  onProgress?: (phase: 'listing' | 'recovering', done: number, total: number) => void;
}

/**
 * Recovery (merchant.md, Background work): lists the gateway's event history from the stored
 * checkpoint (minus an overlap), pages of 100, and compares it with the inbox. Each missing event's
 * payload is fetched by id and stored in the inbox with source `recovery`, then queued, oldest
 * first; an event whose payload cannot be fetched is replayed instead (30 a minute at the gateway).
 * The checkpoint moves only past events that are all stored, so a run cut short, or an event that
 * could not be had, is looked at again next time. Its cost: one call per 100 listed, plus one per
 * missing event. Running it twice changes nothing the second time.
 */
export async function recoverEvents(
  deps: RecoveryDeps,
  options: RecoveryOptions = {},
): Promise<RecoverySummary> {
  const progress = options.onProgress ?? (() => {});
  const name = deps.checkpoint?.name ?? RECOVERY_CHECKPOINT;
  const former = deps.checkpoint?.former;
  const checkpoint =
    (await deps.store.checkpoints.get(name)) ??
    (former === undefined ? null : await deps.store.checkpoints.get(former));
  const fromMs =
    options.since?.getTime() ??
    (checkpoint === null ? deps.clock.now() - FIRST_LOOKBACK_MS : Date.parse(checkpoint) - OVERLAP_MS);
  const from = new Date(fromMs).toISOString();
  const summary: RecoverySummary = {
    from,
    listed: 0,
    missing: 0,
    recovered: 0,
    replayed: 0,
    failed: 0,
    gatewayCalls: 0,
    checkpoint,
  };

  // Newest first, page by page. An event recorded meanwhile pushes the rest one place down: it is
  // seen twice at worst, never skipped.
  const listed = new Map<string, GatewayEventRow>();
  for (let page = 1, last = 1; page <= last; page++) {
    summary.gatewayCalls += 1;
    const answer = await deps.gateway.listEvents({ from, page, perPage: PAGE_SIZE }, 'recovery');
    for (const row of answer.data.events) listed.set(row.id, row);
    last = answer.data.pagination.last_page;
    progress('listing', page, last);
  }
  summary.listed = listed.size;
  const rows = [...listed.values()].sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));
  const held = await deps.store.inbox.holding(rows.map((r) => r.id));
  const missing = rows.filter((r) => !held.has(r.id));
  summary.missing = missing.length;

  // The first event not stored by this run (replayed ones arrive later, if at all): the checkpoint stops before it.
  let firstNotStored: GatewayEventRow | null = null;
  for (const [i, row] of missing.entries()) {
    const outcome = await recoverOne(deps, row, summary);
    if (outcome === 'failed' || outcome === 'replayed') firstNotStored ??= row;
    progress('recovering', i + 1, missing.length);
  }

  const stored = firstNotStored
    ? rows.filter((r) => Date.parse(r.created_at) < Date.parse(firstNotStored.created_at))
    : rows;
  const reached = stored.at(-1)?.created_at;
  if (reached !== undefined && (checkpoint === null || Date.parse(reached) > Date.parse(checkpoint))) {
    await deps.store.checkpoints.put(name, reached);
    summary.checkpoint = reached;
  }
  if (summary.missing > 0)
    deps.logger.info(
      {
        ...(deps.merchantId === undefined || deps.merchantId === null ? {} : { merchant: deps.merchantId }),
        listed: summary.listed,
        missing: summary.missing,
        recovered: summary.recovered,
        failed: summary.failed,
      },
      'missed webhook events recovered',
    );
  return summary;
}

/** Fetches one missing event by id and stores it; replays it when the fetch cannot serve. */
async function recoverOne(
  deps: RecoveryDeps,
  row: GatewayEventRow,
  summary: RecoverySummary,
): Promise<'recovered' | 'replayed' | 'skipped' | 'failed'> {
  let payload: string;
  try {
    summary.gatewayCalls += 1;
    payload = JSON.stringify((await deps.gateway.getEvent(row.id, 'recovery')).data.payload);
  } catch (error) {
    if (!(error instanceof GatewayError || error instanceof GatewayNetworkError)) throw error;
    return replay(deps, row, summary, error);
  }
  // Read as the receiver reads a delivery: what reads as a card number outside the ids is kept truncated.
  const event = checkEvent(payload);
  if (event.kind !== 'event') return 'skipped'; // not a transaction's event: nothing to apply
  await deps.store.inbox.store({
    id: event.id,
    type: event.type,
    transactionId: event.transactionId,
    source: 'recovery',
    payload: event.kept,
    masked: event.masked,
    merchantId: deps.merchantId ?? null,
    now: new Date(deps.clock.now()),
  });
  summary.recovered += 1;
  await deps
    .enqueue(event.id)
    .catch((error: Error) =>
      deps.logger.warn(
        { event: event.id, err: { message: error.message } },
        'recovered event stored, not queued',
      ),
    );
  return 'recovered';
}

async function replay(
  deps: RecoveryDeps,
  row: GatewayEventRow,
  summary: RecoverySummary,
  cause: Error,
): Promise<'replayed' | 'failed'> {
  // A pruned event (past the 30-day retention) cannot be replayed either.
  if (!(cause instanceof GatewayError && cause.status === 404)) {
    try {
      summary.gatewayCalls += 1;
      await deps.gateway.replayEvent(row.id, 'recovery');
      summary.replayed += 1;
      return 'replayed';
    } catch (error) {
      if (!(error instanceof GatewayError || error instanceof GatewayNetworkError)) throw error;
      cause = error;
    }
  }
  summary.failed += 1;
  deps.logger.warn({ event: row.id, err: { message: cause.message } }, 'missed event could not be recovered');
  return 'failed';
}
