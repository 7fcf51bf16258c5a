import { createHash } from 'node:crypto';
import { Op, UniqueConstraintError } from 'sequelize';
import type { Clock } from '../../shared/clock.js';
import { type RandomSource, randomId } from '../../shared/ids.js';
import { type CurrencyCode, formatMoney } from '../../shared/money.js';
import { type Actor, actorLabel } from '../operators/roles.js';
import { auditStatement } from './audit.js';
import { type Models, plain } from './models.js';
import type { OrderWriter } from './order-writer.js';
import type { OperationKind, OperationRecord } from './records.js';

export type OperationResult =
  | { status: 'succeeded'; transactionId: string }
  | { status: 'failed'; code: string; message: string };

/**
 * An operator's Idempotency-Key as the table keeps it: its SHA-256, hex. The key is the caller's free
 * text: as a digest it holds no card number whatever was sent. A retry sends the same key: the same
 * digest.
 */
export function requestKeyDigest(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * Operator capture, refund and void, each stored with its gateway Idempotency-Key before the gateway
 * is called: a crash after the row is written reuses the same key.
 */
export class OperationStore {
  constructor(
    private readonly models: Models,
    private readonly writer: OrderWriter,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  async find(orderId: string, operation: OperationKind, requestKey: string): Promise<OperationRecord | null> {
    const row = await this.models.Operation.findOne({
      where: { order_id: orderId, operation, request_key: requestKeyDigest(requestKey) },
    });
    return row && plain(row);
  }

  /**
   * The oldest operation of this kind on the order created since `since`, still without an answer,
   * under another key than `requestKey` (the same key is the same request: `find`).
   */
  async unanswered(
    orderId: string,
    operation: OperationKind,
    since: Date,
    requestKey: string,
  ): Promise<OperationRecord | null> {
    const row = await this.models.Operation.findOne({
      where: {
        order_id: orderId,
        operation,
        status: 'pending',
        created_at: { [Op.gte]: since },
        request_key: { [Op.ne]: requestKeyDigest(requestKey) },
      },
      order: [['created_at', 'ASC']],
    });
    return row && plain(row);
  }

  /**
   * Stores an operation before the gateway is called, with, in the same transaction, the order's
   * history line saying who asked for it and why (`requested`) and its audit line. A retry that races
   * this one finds the row the first stored (and writes neither line again).
   */
  async create(input: {
    orderId: string;
    attemptId: string;
    operation: OperationKind;
    requestKey: string;
    amountMinor: number;
    /** Sent to the gateway with a refund or void. */
    reason: string | null;
    /** Who asked for it. */
    actor: Actor;
    /** The order's, for the history line and the audit. */
    currency: string;
    /** What the operator said beside the reason (a capture's note); kept in the history and audit. */
    note?: string | null;
  }): Promise<OperationRecord> {
    const id = randomId('op_', this.random);
    const idempotencyKey = randomId('idem_', this.random, 32);
    try {
      const done = await this.writer.one(
        { orderId: input.orderId, attemptId: input.attemptId },
        (_locked, now) => {
          const row: OperationRecord = {
            id,
            order_id: input.orderId,
            attempt_id: input.attemptId,
            operation: input.operation,
            idempotency_key: idempotencyKey,
            request_key: requestKeyDigest(input.requestKey),
            amount_minor: input.amountMinor,
            reason: input.reason,
            status: 'pending',
            result_transaction_id: null,
            error_code: null,
            error_message: null,
            created_at: now,
            updated_at: now,
          };
          const why = input.note ?? input.reason;
          const amount = formatMoney(input.amountMinor, input.currency as CurrencyCode);
          return {
            change: {
              history: {
                source: 'api',
                sourceId: `op:${id}:requested`,
                outcome: 'requested',
                detail: `${input.operation} of ${amount} by ${actorLabel(input.actor)}${why ? `: ${why}` : ''}`,
              },
              also: [
                { sql: 'INSERT INTO gateway_operations SET ?', values: [row] },
                auditStatement(
                  {
                    actor: input.actor,
                    action: input.operation,
                    orderId: input.orderId,
                    subjectId: id,
                    amountMinor: input.amountMinor,
                    currency: input.currency,
                    reason: why,
                  },
                  now,
                ),
              ],
            },
            result: row,
          };
        },
      );
      return done!.result;
    } catch (error) {
      // Two retries racing: the first stored the row; the second uses it.
      if (duplicateKey(error)) {
        const existing = await this.find(input.orderId, input.operation, input.requestKey);
        if (existing) return existing;
      }
      throw error;
    }
  }

  /**
   * Records the gateway's answer; returns the operation as it now stands. A refusal also leaves a line
   * in the order's history (outcome `refused`, the order unchanged), in the same transaction: an
   * operator sees there that a refund was asked for and not made, and why. What a success changed is
   * the gateway's record, applied through the apply path by the caller.
   */
  async settle(op: OperationRecord, result: OperationResult): Promise<OperationRecord> {
    const now = new Date(this.clock.now());
    const change =
      result.status === 'succeeded'
        ? { status: 'succeeded' as const, result_transaction_id: result.transactionId, updated_at: now }
        : {
            status: 'failed' as const,
            error_code: result.code,
            error_message: result.message.slice(0, 512),
            updated_at: now,
          };
    if (result.status === 'succeeded') {
      await this.models.Operation.update(change, { where: { id: op.id } });
      return { ...op, ...change };
    }
    await this.writer.one({ orderId: op.order_id, attemptId: op.attempt_id }, ({ order }) => ({
      change: {
        history: {
          source: 'api',
          sourceId: `op:${op.id}`,
          outcome: 'refused',
          // As the request's line says it: 6.00 EUR, not 600, which reads as six hundred.
          detail: `${op.operation} of ${formatMoney(op.amount_minor, order.currency as CurrencyCode)} refused: ${result.code}`,
        },
        also: [{ sql: 'UPDATE gateway_operations SET ? WHERE id = ?', values: [change, op.id] }],
      },
      result: null,
    }));
    return { ...op, ...change };
  }
}

/** MySQL's duplicate key (ER_DUP_ENTRY), as mysql2 reports it. */
const duplicateKey = (error: unknown) =>
  error instanceof UniqueConstraintError || (error as { errno?: number } | null)?.errno === 1062;
