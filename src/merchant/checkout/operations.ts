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
 * A new request (a new key) while an earlier one of the same kind on the order had no answer: that
 * one was settled first, with its own stored key, and the new one was not made. An operator who saw
 * "no answer" and pressed again with a new key meant the same refund; one who means another sends it
 * again, now that the order shows the first.
 */
export class EarlierRequestSettled extends Error {
  override name = 'EarlierRequestSettled';
  constructor(readonly outcome: OperationOutcome) {
    super(
      `an earlier ${outcome.operation.operation} of order ${outcome.order.id} had no answer; it was settled first`,
    );
  }
}

/** The gateway keeps an Idempotency-Key 24 hours (gateway-api.md): past that, sending it again may do it twice. */
export const GATEWAY_KEY_KEPT_MS = 24 * 60 * 60_000;
/** A request younger than this may still be waiting for its answer (the client's timeouts and retries). */
export const IN_FLIGHT_MS = 60_000;

/** What an operator asks: the amount, why, under which key, who. */
export interface OperateInput {
  amountMinor: number;
  reason: string | null;
  requestKey: string;
  /** Who asks: named in the order's history and the audit log. */
  actor: Actor;
  /** A note beside the reason (a capture has no reason of its own); not part of the request's identity. */
  note?: string | null;
  /**
   * The kit made the key (the operator sent none): it names the payment and amount, not a request,
   * so another reason with it is the same operation asked again, answered as it stands.
   */
  keyDerived?: boolean;
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
  input: OperateInput,
): Promise<OperationOutcome> {
  // The key names one request: the stored one must be this one, whether found here or, when two
  // raced to store it, handed back by create.
  const sameRequest = (stored: OperationRecord) => {
    const otherReason = stored.reason !== input.reason && !input.keyDerived;
    if (stored.amount_minor !== input.amountMinor || otherReason)
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
    // An earlier request of this kind with no answer (its process died, the gateway did not answer):
    // settled first with its own key, so that a press again with a new key does not do it twice.
    // One still within a call's time may be in flight in another request: not sent a second time.
    const now = deps.clock.now();
    const earlier = await deps.store.operations.unanswered(
      order.id,
      operation,
      new Date(now - GATEWAY_KEY_KEPT_MS),
      input.requestKey,
    );
    if (earlier)
      throw new EarlierRequestSettled(
        earlier.created_at.getTime() > now - IN_FLIGHT_MS
          ? { kind: 'unknown', order, operation: earlier }
          : await drive(deps, order, earlier),
      );
    if (operation === 'refund' && order.status === 'disputed') throw new OrderDisputed(order);
    // Platform mode, a merchant with no key of its own: refused before anything is stored or sent.
    const keyless = deps.gateways.refusal(order.merchant_id, operation);
    if (keyless) throw keyless;
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
  const gateway = deps.gateways.of(order.merchant_id);
  try {
    const answer =
      op.operation === 'capture'
        ? await gateway.capture(transactionId, money, op.idempotency_key)
        : op.operation === 'refund'
          ? await gateway.refund(transactionId, money, op.reason ?? undefined, op.idempotency_key)
          : await gateway.void(transactionId, money, op.reason ?? undefined, op.idempotency_key);
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
    // A merchant's own key the gateway refused (MerchantKeyRefused) among them: nothing was done
    // there, so the operation stays pending, and the same request makes it once the key is right.
    throw error;
  }
}
