import type { Logger } from 'pino';
import { formatDuration } from '../../shared/duration.js';
import { askGateway } from '../checkout/ask.js';
import type { CheckoutDeps } from '../checkout/deps.js';
import { type ExpiryVerdict, expiryVerdict, type KeptBecause } from '../orders/closure.js';
import type { ClosureStore, ExpiryCursor, Standing } from '../store/closures.js';

export interface ExpiryDeps {
  store: { closures: Pick<ClosureStore, 'expirable' | 'standing' | 'close'> };
  /** The order's payment turn, the one apply path, the gateway and the clock: checkout's. */
  checkout: Pick<CheckoutDeps, 'turns' | 'apply' | 'gateways' | 'clock'>;
  logger: Logger;
}

export interface ExpiryOptions {
  /** Orders read at a time. Default 100. */
  batch?: number;
  /** Questions to the gateway a run may ask, at most (each within the background budget). Default 100. */
  maxAsks?: number;
  /** A run stops looking after this long, so it ends well inside its lock. Default 45 s. */
  maxMs?: number;
}

/** What a run did: for the log, the metrics and the tests. */
export interface ExpirySummary {
  /** Orders older than ORDER_TTL that could still take a payment, looked at. */
  looked: number;
  /** Closed (`expired`). */
  closed: number;
  /** Asked about at the gateway first (a session or a transaction that may still be under way). */
  asked: number;
  /**
   * Left open, and why: the rule's reason (closure.ts KeptBecause), or `busy` (a payment of it ran
   * the whole wait), `unreachable` (the gateway did not answer), `unasked` (the run asked all it may).
   */
  kept: Partial<Record<KeptBecause | 'busy' | 'unreachable' | 'unasked', number>>;
}

/**
 * ORDER_TTL (issue 43, part 2): every order older than `ttlMs` that could still take a payment, oldest
 * first, in batches, each in its order's payment turn (a shopper paying it now goes first: busy, it is
 * looked at again next run). Whatever closure.ts's `expiryVerdict` says: one with a payment at the
 * gateway that may be under way is asked about first (askGateway, caller `poller`: within the
 * background budget, behind checkout), the answer applied through the one apply path, and judged
 * again on what it left (money wins over the clock); one with no money and nothing in flight is
 * closed, `expired`. A run asks the gateway at most `maxAsks` times and stops after `maxMs`; what it
 * did not reach is looked at next run.
 */
export async function closeExpiredOrders(
  deps: ExpiryDeps,
  ttlMs: number | null,
  options: ExpiryOptions = {},
): Promise<ExpirySummary> {
  const summary: ExpirySummary = { looked: 0, closed: 0, asked: 0, kept: {} };
  if (ttlMs === null) return summary;
  const { batch = 100, maxAsks = 100, maxMs = 45_000 } = options;
  const clock = deps.checkout.clock;
  const started = clock.now();
  const keep = (why: keyof ExpirySummary['kept']) => {
    summary.kept[why] = (summary.kept[why] ?? 0) + 1;
  };
  let after: ExpiryCursor | null = null;
  walk: for (;;) {
    const due = await deps.store.closures.expirable(new Date(clock.now() - ttlMs), after, batch);
    for (const { id } of due) {
      if (clock.now() - started >= maxMs) break walk;
      summary.looked++;
      const done = await deps.checkout.turns.one(id, () =>
        expireInTurn(deps, id, ttlMs, summary.asked < maxAsks, started),
      );
      if (done === 'busy') {
        keep('busy');
        continue;
      }
      if (done.asked) summary.asked++;
      if (done.verdict.kind === 'close') summary.closed++;
      else if (done.verdict.kind === 'keep') keep(done.verdict.because);
      else keep(done.asked ? 'unreachable' : 'unasked');
    }
    if (due.length < batch) break;
    after = due.at(-1)!;
  }
  if (summary.looked > 0)
    deps.logger.info(
      { ...summary, ttl: formatDuration(ttlMs / 1000) },
      'orders past ORDER_TTL looked at: the unpaid closed (expired)',
    );
  return summary;
}

/**
 * One order, in its turn: read as it stands, asked about at the gateway if it may still be paid
 * (when the run may still ask), and closed if the rule says so. The verdict it ended with: `ask`
 * when it could not be asked (the gateway did not answer, or the run asked all it may).
 */
async function expireInTurn(
  deps: ExpiryDeps,
  orderId: string,
  ttlMs: number,
  mayAsk: boolean,
  runAt: number,
): Promise<{ verdict: ExpiryVerdict; asked: boolean }> {
  const now = () => deps.checkout.clock.now();
  let standing = await deps.store.closures.standing(orderId);
  if (!standing) return { verdict: { kind: 'keep', because: 'closed' }, asked: false };
  let verdict = expiryVerdict(factsOf(standing), now(), ttlMs);
  let asked = false;
  if (verdict.kind === 'ask') {
    if (!mayAsk) return { verdict, asked };
    const attempt = standing.attempt!;
    const answer = await askGateway(
      deps.checkout,
      {
        orderId,
        merchantId: standing.order.merchant_id,
        attemptId: attempt.id,
        transactionId: attempt.gateway_transaction_id,
        paymentSessionId: attempt.payment_session_id,
        open: true,
      },
      { source: 'poll', sourceId: `poll:${attempt.id}:${now()}`, caller: 'poller', routine: true },
    );
    asked = answer.kind !== 'nothing';
    if (answer.kind === 'unreachable') return { verdict, asked };
    standing = (await deps.store.closures.standing(orderId))!;
    verdict = expiryVerdict(factsOf(standing), now(), ttlMs, true);
  }
  if (verdict.kind !== 'close') return { verdict, asked };
  const closed = await deps.store.closures.close(orderId, {
    reason: 'expired',
    actor: null,
    note: `no payment within ORDER_TTL (${formatDuration(ttlMs / 1000)})`,
    sourceId: `expiry:${runAt}`,
  });
  // Money landed between the read and the lock: it won.
  return closed.outcome === 'closed'
    ? { verdict, asked }
    : { verdict: { kind: 'keep', because: 'settled' }, asked };
}

function factsOf(standing: Standing) {
  const { order, state, heldUntil } = standing;
  return {
    status: order.status,
    closedReason: order.closed_reason,
    createdAt: order.created_at.getTime(),
    attempt: state,
    // A live payment link keeps the order open (issue 43, part 3).
    heldUntil: heldUntil?.getTime() ?? null,
  };
}
