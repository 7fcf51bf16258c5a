import type { Caller } from '../../client/budget.js';
import { GatewayError, GatewayNetworkError } from '../../client/errors.js';
import { OPEN } from '../orders/status.js';
import type { OrderRecord } from '../store/records.js';
import { type AskOutcome, askGateway } from './ask.js';
import type { CheckoutDeps } from './deps.js';

export interface RefreshOptions {
  /**
   * Stops waiting for the gateway when it aborts: the caller gets the order as the database has it.
   * A request already sent still finishes, and its answer is still applied. Default: none (the
   * client's own timeouts and retries apply).
   */
  signal?: AbortSignal;
  /** Who asks, for the budget. Default `landing`: a shopper is waiting. */
  caller?: Caller;
}

/**
 * Asks the gateway where the order's current attempt stands (askGateway, the one question every asker
 * puts) and applies the answer as a `poll` observation (DESIGN.md section 2; merchant.md, Background
 * work), a routine one: an answer that changes nothing leaves no history line. Orders the gateway can no longer move, and attempts with nothing to ask about yet (a 3DS
 * challenge still open), are left as they are. A gateway that cannot answer, or an abort, is logged
 * and ignored: the answer is the order as it now stands, never a failure.
 */
export async function refreshOrder(
  deps: CheckoutDeps,
  orderId: string,
  options: RefreshOptions = {},
): Promise<OrderRecord | null> {
  const order = await deps.store.orders.find(orderId);
  if (!order || !OPEN.includes(order.status) || !order.current_attempt_id) return order;
  const attempt = await deps.store.attempts.get(order.current_attempt_id);
  if (!attempt) return order;

  const work = askGateway(
    deps,
    {
      orderId,
      merchantId: order.merchant_id,
      attemptId: attempt.id,
      transactionId: attempt.gateway_transaction_id,
      paymentSessionId: attempt.payment_session_id,
      open: true,
    },
    // `poll:att_<24>:<ms>`: about 48 characters, well under the history's 128.
    {
      source: 'poll',
      sourceId: `poll:${attempt.id}:${deps.clock.now()}`,
      caller: options.caller ?? 'landing',
      // A page that reloads itself every 3 s while a payment is confirmed asks each time: only an
      // answer that changes something is history, as the poller's (a reload is no news).
      routine: true,
    },
  );
  // Message, code and kind, never the error's details: they may carry a gateway record.
  const warn = (error: unknown) =>
    deps.logger.warn(
      {
        order: orderId,
        attempt: attempt.id,
        code: error instanceof GatewayError ? error.code : undefined,
        kind: error instanceof GatewayNetworkError ? error.kind : undefined,
        err: error instanceof Error ? { name: error.name, message: error.message } : undefined,
      },
      'status poll failed; the order is shown as stored',
    );
  const unanswered = (asked: AskOutcome) => {
    if (asked.kind === 'unreachable') warn(asked.error);
    // Flagged for a person through apply; a line for the operator too, as the poller writes.
    if (asked.kind === 'unknown') warn(new Error(`the gateway does not know ${asked.what}`));
  };
  try {
    const asked = await (options.signal ? untilAborted(work, options.signal) : work);
    unanswered(asked);
    if ('applied' in asked && asked.applied.order) return asked.applied.order;
  } catch (error) {
    if (!(error instanceof RefreshAborted)) throw error;
    warn(error);
    // The answer may still come: it is applied then; only its failure is worth a line.
    work.then(unanswered, warn);
  }
  return deps.store.orders.find(orderId);
}

/** `work`, or an AbortError as soon as `signal` aborts, whichever comes first. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

class RefreshAborted extends Error {
  override name = 'AbortError';
}

function abortError(): RefreshAborted {
  return new RefreshAborted('the caller stopped waiting for the gateway');
}
