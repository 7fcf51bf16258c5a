import { QueryTypes, type Sequelize } from 'sequelize';
import { sqlTime } from '../../infra/database.js';
import { type Actor, actorLabel } from '../operators/roles.js';
import { type AttemptState, closing } from '../orders/closure.js';
import { type CloseReason, RETRYABLE } from '../orders/status.js';
import { auditStatement } from './audit.js';
import { attemptRecord, type Models, orderRecord, type PaymentLinkRow } from './models.js';
import type { OrderWriter } from './order-writer.js';
import type { AttemptRecord, OrderRecord } from './records.js';

/** What closing an order asks. */
export interface CloseRequest {
  reason: CloseReason;
  /** Who asked (a cancel): named in the history line and the audit log. Null: the kit (ORDER_TTL). */
  actor: Actor | null;
  /** Why, in words: the person's note, or the rule that ended it. */
  note: string | null;
  /** The history line's source id: the request's id, or the job's run. */
  sourceId: string;
}

/** What a close did: `closed` now, `already` closed, or refused because the order holds `money`. */
export interface Closed {
  outcome: 'closed' | 'already' | 'money';
  order: OrderRecord;
}

/** An order as the closing rules read it: the order, its current attempt, and that attempt's state. */
export interface Standing {
  order: OrderRecord;
  attempt: AttemptRecord | null;
  /** What closure.ts reads of the attempt (null: none). */
  state: AttemptState | null;
  /** The latest expiry of the order's payment links (issue 43, part 3): live until then, it stays open. */
  heldUntil: Date | null;
}

/** Where a walk through the orders ORDER_TTL may end stands: after this order (by creation, then id). */
export interface ExpiryCursor {
  createdAt: Date;
  id: string;
}

/**
 * Orders that end (issue 43, part 2): closing one, as a change handed to the one writer (its row,
 * its history line, its `order.closed` event, the operator's audit line, the card data of a 3DS
 * challenge let go, all in one transaction), and the orders ORDER_TTL may end.
 */
export class ClosureStore {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly models: Models,
    private readonly writer: OrderWriter,
  ) {}

  /**
   * Closes the order, under its lock, unless it is closed already or holds money (closure.ts
   * `closing`, asked again under the lock: a payment's answer may have landed meanwhile). The poller
   * stops asking about it (`next_poll_at` cleared); a challenge's card data is let go.
   */
  async close(orderId: string, request: CloseRequest): Promise<Closed> {
    const done = await this.writer.one({ orderId }, ({ order }, now) => {
      const verdict = closing({ status: order.status, closedReason: order.closed_reason });
      if (verdict !== 'close')
        return { change: null, result: verdict === 'already' ? ('already' as const) : ('money' as const) };
      const who = request.actor ? ` by ${actorLabel(request.actor)}` : '';
      const detail = `closed (${request.reason})${who}${request.note ? `: ${request.note}` : ''}`;
      return {
        change: {
          order: { status: 'closed', closed_reason: request.reason, closed_at: now, next_poll_at: null },
          history: { source: 'api', sourceId: request.sourceId, outcome: 'applied', detail },
          letGoHolds: true,
          also: request.actor
            ? [
                auditStatement(
                  {
                    actor: request.actor,
                    action: 'order.cancel',
                    orderId,
                    amountMinor: order.amount_minor,
                    currency: order.currency,
                    reason: request.note,
                    detail: `closed (${request.reason}); it was ${order.status}`,
                  },
                  now,
                ),
              ]
            : [],
        },
        result: 'closed' as const,
      };
    });
    return { outcome: done!.result, order: done!.order };
  }

  /** The order and its current attempt as they stand, with what the closing rules read of them. */
  async standing(orderId: string): Promise<Standing | null> {
    const order = await this.models.Order.findByPk(orderId);
    if (!order) return null;
    const row = order.current_attempt_id
      ? await this.models.Attempt.findByPk(order.current_attempt_id)
      : null;
    const attempt = row && attemptRecord(row);
    const heldUntil = await this.models.PaymentLink.max<Date | string | null, PaymentLinkRow>('expires_at', {
      where: { order_id: orderId },
    });
    return {
      order: orderRecord(order),
      attempt,
      state: row && {
        status: row.status,
        atGateway: row.gateway_transaction_id !== null || row.payment_session_id !== null,
        // A hold not yet taken or ended (the holds job's): sealed, or erased and still to be ended.
        challengeOpen: row.hold_sealed !== null || row.hold_expires_at !== null,
      },
      heldUntil: heldUntil == null ? null : utc(heldUntil),
    };
  }

  /**
   * Orders that may still take a payment (RETRYABLE statuses) made before `before`, oldest first,
   * after `after`: what ORDER_TTL looks at. Read by status and age (orders_status_created): paid
   * orders, most of them, are never read.
   */
  async expirable(before: Date, after: ExpiryCursor | null, limit: number): Promise<ExpiryCursor[]> {
    const rows = await this.sequelize.query<{ id: string; created_at: Date | string }>(
      `SELECT id, created_at FROM orders
        WHERE status IN (?) AND created_at < ?${after ? ' AND (created_at > ? OR (created_at = ? AND id > ?))' : ''}
        ORDER BY created_at, id LIMIT ?`,
      {
        replacements: [
          [...RETRYABLE],
          sqlTime(before),
          ...(after ? [sqlTime(after.createdAt), sqlTime(after.createdAt), after.id] : []),
          limit,
        ],
        type: QueryTypes.SELECT,
      },
    );
    return rows.map((r) => ({ id: r.id, createdAt: utc(r.created_at) }));
  }
}

/** A DATETIME a raw read answered: a Date, or its UTC text (the connection's time zone). */
const utc = (value: Date | string) =>
  value instanceof Date ? value : new Date(`${value.replace(' ', 'T')}Z`);
