import { GatewayError, GatewayNetworkError } from '../../client/errors.js';
import type { Actor } from '../operators/roles.js';
import { observeTransaction } from '../orders/from-gateway.js';
import { InvalidTransition, type OrderStatus } from '../orders/status.js';
import type { OperationKind, OperationRecord, OrderRecord } from '../store/records.js';
import { type CheckoutDeps, reload } from './deps.js';

/** Where each operation is allowed (the gateway's rules, sandbox.md section 6, in order terms). */
const ALLOWED: Record<OperationKind, readonly OrderStatus[]> = {
  capture: ['authorized'],
  void: ['authorized'],
  refund: ['paid', 'partially_refunded'],
};

export type OperationOutcome =
  | { kind: 'done'; order: OrderRecord; operation: OperationRecord }
  | { kind: 'refused'; order: OrderRecord; operation: OperationRecord; code: string; message: string }
  /** No answer from the gateway: the key is stored; the same request again finishes it. */
  | { kind: 'unknown'; order: OrderRecord; operation: OperationRecord };

export class OperationConflict extends Error {
  override name = 'OperationConflict';
}

/**
 * A refund of a charged-back payment: the bank took the money back from the shop already, so a refund
 * would pay the customer twice (and the gateway refuses it). Not a typo; if the dispute is won the
 * order is paid again and can be refunded.
 */
export class OrderDisputed extends Error {
  override name = 'OrderDisputed';
  constructor(readonly order: OrderRecord) {
    super(`order ${order.id} is disputed`);
  }
}

export class NothingToOperate extends Error {
  override name = 'NothingToOperate';
}

/**
 * Operator capture, refund and void (merchant.md). The gateway Idempotency-Key is stored before the
 * call, under the operator's own key, so a retry, even after a crash between the call and its
 * answer, sends the same key and the gateway does the work once.
 */
export async function operate(
  deps: CheckoutDeps,
  order: OrderRecord,
  operation: OperationKind,
  input: {
    amountMinor: number;
    reason: string | null;
    requestKey: string;
    /** Who asks: named in the order's history and the audit log. */
    actor: Actor;
    /** A note beside the reason (a capture has no reason of its own); not part of the request's identity. */
    note?: string | null;
  },
): Promise<OperationOutcome> {
  // The key names one request: the stored one must be this one, whether found here or, when two
  // raced to store it, handed back by create.
  const sameRequest = (stored: OperationRecord) => {
    if (stored.amount_minor !== input.amountMinor || stored.reason !== input.reason)
      throw new OperationConflict(`This Idempotency-Key was used for another ${operation} of this order`);
    return stored;
  };
  let op = await deps.store.operations.find(order.id, operation, input.requestKey);
  if (op) sameRequest(op);
  if (op?.status === 'succeeded') return { kind: 'done', order, operation: op };
  if (op?.status === 'failed') {
    return {
      kind: 'refused',
      order,
      operation: op,
      code: op.error_code ?? 'ERR_TXN_FAILED',
      message: op.error_message ?? '',
    };
  }
  if (!op) {
    if (operation === 'refund' && order.status === 'disputed') throw new OrderDisputed(order);
    if (!ALLOWED[operation].includes(order.status))
      throw new InvalidTransition(order.status, ALLOWED[operation], operation);
    const attempt = order.current_attempt_id ? await deps.store.attempts.get(order.current_attempt_id) : null;
    if (!attempt?.gateway_transaction_id)
      throw new NothingToOperate(`order ${order.id} has no gateway transaction to ${operation}`);
    op = sameRequest(
      await deps.store.operations.create({
        orderId: order.id,
        attemptId: attempt.id,
        operation,
        requestKey: input.requestKey,
        amountMinor: input.amountMinor,
        reason: input.reason,
        actor: input.actor,
        note: input.note ?? null,
        currency: order.currency,
        statusBefore: order.status,
      }),
    );
  }
  return drive(deps, order, op);
}

/** Calls the gateway for a stored operation; also how a pending one left by a crash is finished. */
export async function drive(
  deps: CheckoutDeps,
  order: OrderRecord,
  stored: OperationRecord,
): Promise<OperationOutcome> {
  let op = stored;
  const attempt = (await deps.store.attempts.get(op.attempt_id))!;
  const money = { amountMinor: op.amount_minor, currency: order.currency as never };
  const transactionId = attempt.gateway_transaction_id!;
  try {
    const answer =
      op.operation === 'capture'
        ? await deps.gateway.capture(transactionId, money, op.idempotency_key)
        : op.operation === 'refund'
          ? await deps.gateway.refund(transactionId, money, op.reason ?? undefined, op.idempotency_key)
          : await deps.gateway.void(transactionId, money, op.reason ?? undefined, op.idempotency_key);
    op = await deps.store.operations.settle(op, { status: 'succeeded', transactionId: answer.data.id });
    const applied = await deps.apply(observeTransaction(answer.data, 'api', `op:${op.id}`, deps.clock.now()));
    return { kind: 'done', order: applied.order ?? (await reload(deps, order.id)).order, operation: op };
  } catch (error) {
    if (error instanceof GatewayError && !error.retryable) {
      op = await deps.store.operations.settle(op, {
        status: 'failed',
        code: error.code,
        message: error.message,
      });
      return {
        kind: 'refused',
        order: (await reload(deps, order.id)).order,
        operation: op,
        code: error.code,
        message: error.message,
      };
    }
    if (error instanceof GatewayError || error instanceof GatewayNetworkError) {
      deps.logger.warn(
        { order: order.id, operation: op.id, error: error.message },
        'operation outcome unknown; kept pending',
      );
      return { kind: 'unknown', order: (await reload(deps, order.id)).order, operation: op };
    }
    throw error;
  }
}
