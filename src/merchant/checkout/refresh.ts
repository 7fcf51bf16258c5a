import type { Caller } from '../../client/budget.js';
import { GatewayError, GatewayNetworkError } from '../../client/errors.js';
import { observeSession, observeTransaction } from '../orders/from-gateway.js';
import type { Observation } from '../orders/observation.js';
import { OPEN } from '../orders/status.js';
import type { OrderRecord } from '../store/records.js';
import type { CheckoutDeps } from './deps.js';

export interface RefreshOptions {
  /**
   * Stops waiting for the gateway when it aborts: the caller gets the order as the database has it.
   * A request already sent still finishes, and its answer is still applied. Default: none (the
   * client's own timeouts and retries apply).
   */
  signal?: AbortSignal;
  /** Who asks, for the budget. Default `landing`: a shopper is waiting. The poller passes `poller`. */
  caller?: Caller;
}

/**
 * Asks the gateway where the order's current attempt stands and applies the answer as a `poll`
 * observation, through the one apply path (DESIGN.md section 2; merchant.md, Background work). A
 * redirect attempt asks for its payment session (whose status tells expired from cancelled); a card
 * attempt for its transaction's status. Orders the gateway can no longer move, and attempts with
 * nothing to ask about yet (a 3DS challenge still open), are left as they are. A gateway error or an
 * abort is logged and ignored: the answer is the order as it now stands, never a failure.
 */
export async function refreshOrder(
  deps: CheckoutDeps,
  orderId: string,
  options: RefreshOptions = {},
): Promise<OrderRecord | null> {
  const order = await deps.store.orders.find(orderId);
  if (!order || !OPEN.includes(order.status) || !order.current_attempt_id) return order;
  const attempt = await deps.store.attempts.get(order.current_attempt_id);
  if (!attempt || (!attempt.payment_session_id && !attempt.gateway_transaction_id)) return order;

  const caller = options.caller ?? 'landing';
  // `poll:att_<24>:<ms>`: about 48 characters, well under the history's 128.
  const sourceId = `poll:${attempt.id}:${deps.clock.now()}`;
  const poll = async (): Promise<Observation> => {
    if (attempt.payment_session_id) {
      const session = (await deps.gateway.getPaymentSession(attempt.payment_session_id, caller)).data;
      return observeSession(session, 'poll', sourceId, deps.clock.now());
    }
    const record = (await deps.gateway.transactionStatus(attempt.gateway_transaction_id!, caller)).data;
    return observeTransaction(record, 'poll', sourceId, deps.clock.now());
  };
  const work = poll().then((obs) => deps.apply(obs));
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
  try {
    await (options.signal ? untilAborted(work, options.signal) : work);
  } catch (error) {
    if (error instanceof RefreshAborted) {
      warn(error);
      // The answer may still come: it is applied then; only its failure is worth a line.
      work.catch(warn);
    } else if (error instanceof GatewayError || error instanceof GatewayNetworkError) {
      warn(error);
    } else {
      throw error;
    }
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
