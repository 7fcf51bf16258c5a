import type { Actor } from '../operators/roles.js';
import { cancelStep } from '../orders/closure.js';
import type { ClosureStore } from '../store/closures.js';
import { OrderNotFound } from '../store/index.js';
import type { AttemptRecord, OperationRecord, OrderRecord } from '../store/records.js';
import { askGateway } from './ask.js';
import type { CheckoutDeps, CheckoutStore } from './deps.js';
import { EarlierRequestSettled, type OperationOutcome, operate } from './operations.js';

/** What a cancel needs beside checkout's port: closing the order, and reading it as the rules do. */
export type CancelDeps = CheckoutDeps & {
  store: CheckoutStore & { closures: Pick<ClosureStore, 'close' | 'standing'> };
};

export interface CancelRequest {
  /** Who cancels: the history line, the audit log, and the void's own lines when there is one. */
  actor: Actor;
  /** Why, as they said it. */
  note: string | null;
}

type Standing = { order: OrderRecord; attempt: AttemptRecord | null };

export type CancelOutcome = Standing &
  /** Closed (`cancelled`), or closed already (`already`: its first reason stands). */
  (
    | { kind: 'closed'; already: boolean }
    /** The order holds money: it is refunded, not cancelled. */
    | { kind: 'paid' }
    /** Another payment of the order ran for the whole wait (PaymentTurns): nothing was done. */
    | { kind: 'in_progress' }
    /** The gateway could not be asked whether the payment under way was paid: nothing was done. */
    | { kind: 'unreachable' }
    /** The authorisation's void was refused by the gateway: the order is still authorized. */
    | { kind: 'void_refused'; code: string; message: string; operation: OperationRecord }
    /** The void had no answer: the same request again finishes it (its key is stored). */
    | { kind: 'void_unknown'; operation: OperationRecord }
  );

/**
 * POST /orders/{id}/cancel (issue 43, part 2), in the order's payment turn, so that no payment of it
 * starts or finishes meanwhile: a payment at the gateway that may be under way is asked about first
 * (money wins: a paid order is refunded instead); an authorised one is voided first, through the
 * operators' void with its derived key (`void:<attempt>`: a retry, or an operator's void of the same
 * attempt, is the same void); then the order is closed. Idempotent: a closed order answers as it is.
 */
export async function cancelOrder(
  deps: CancelDeps,
  orderId: string,
  request: CancelRequest,
): Promise<CancelOutcome> {
  const outcome = await deps.turns.one(orderId, () => inTurn(deps, orderId, request));
  if (outcome !== 'busy') return outcome;
  return { kind: 'in_progress', ...(await read(deps, orderId)) };
}

async function inTurn(deps: CancelDeps, orderId: string, request: CancelRequest): Promise<CancelOutcome> {
  let asked = false;
  // At most: ask, void, close, and a close refused once because money landed under it.
  for (let step = 0; step < 5; step++) {
    const now = await deps.store.closures.standing(orderId);
    if (!now) throw new OrderNotFound(`order ${orderId} does not exist`);
    const { order, attempt } = now;
    switch (cancelStep({ status: order.status, closedReason: order.closed_reason }, now.state, asked)) {
      case 'already':
        return { kind: 'closed', already: true, order, attempt };
      case 'paid':
        return { kind: 'paid', order, attempt };
      case 'ask': {
        const answer = await askGateway(
          deps,
          {
            orderId,
            merchantId: order.merchant_id,
            attemptId: attempt!.id,
            transactionId: attempt!.gateway_transaction_id,
            paymentSessionId: attempt!.payment_session_id,
            open: true,
          },
          {
            source: 'poll',
            sourceId: `poll:${attempt!.id}:${deps.clock.now()}`,
            caller: 'operator',
            routine: true,
          },
        );
        if (answer.kind === 'unreachable') return { kind: 'unreachable', order, attempt };
        asked = true;
        break;
      }
      case 'void': {
        const voided = await voidFirst(deps, order, request);
        if (voided.kind === 'done') break;
        const after = await read(deps, orderId);
        // Refused because the authorisation ended meanwhile (it lapsed): the next step sees that.
        if (voided.kind === 'refused' && after.order.status !== 'authorized') break;
        return voided.kind === 'refused'
          ? {
              ...after,
              kind: 'void_refused',
              code: voided.code,
              message: voided.message,
              operation: voided.operation,
            }
          : { ...after, kind: 'void_unknown', operation: voided.operation };
      }
      case 'close': {
        const closed = await deps.store.closures.close(orderId, {
          reason: 'cancelled',
          actor: request.actor,
          note: request.note,
          sourceId: `cancel:${request.actor.requestId ?? deps.clock.now()}`,
        });
        // Money landed between the read and the lock: the next step says what now.
        if (closed.outcome === 'money') break;
        return { kind: 'closed', already: closed.outcome === 'already', ...(await read(deps, orderId)) };
      }
    }
  }
  throw new Error(`order ${orderId}: the cancel did not settle`);
}

/** The authorisation voided, as an operator's void of it would be (operations.ts). */
async function voidFirst(
  deps: CancelDeps,
  order: OrderRecord,
  request: CancelRequest,
): Promise<OperationOutcome> {
  try {
    return await operate(deps, order, 'void', {
      amountMinor: order.amount_minor,
      reason: 'order cancelled',
      requestKey: `void:${order.current_attempt_id}`,
      keyDerived: true,
      actor: request.actor,
      note: request.note,
    });
  } catch (error) {
    // An earlier void of it had no answer: settled now, with its own key; it is this void.
    if (error instanceof EarlierRequestSettled) return error.outcome;
    throw error;
  }
}

async function read(deps: CancelDeps, orderId: string): Promise<Standing> {
  const now = await deps.store.closures.standing(orderId);
  if (!now) throw new OrderNotFound(`order ${orderId} does not exist`);
  return { order: now.order, attempt: now.attempt };
}
