import { Op, type WhereOptions } from 'sequelize';
import { type RandomSource, randomId } from '../../shared/ids.js';
import { type Actor, actorLabel } from '../operators/roles.js';
import type { MerchantFilter } from '../orders/order-merchant.js';
import { type ReviewResolution, withResolved } from '../orders/review.js';
import type { OrderStatus } from '../orders/status.js';
import { auditStatement } from './audit.js';
import { merchantWhere } from './merchant-where.js';
import { attemptRecord, type Models, orderRecord } from './models.js';
import type { OrderWriter } from './order-writer.js';
import type { AttemptRecord, OrderRecord } from './records.js';
import { ATTEMPTS } from './tables.js';

/** The operators' list of orders: the review queue is `needsReview: true`. */
export interface OrderListQuery {
  needsReview?: boolean;
  statuses?: readonly OrderStatus[];
  currency?: string;
  /** The order that carries this reference: at most one. */
  reference?: string;
  /** Created from here (inclusive) to there (exclusive). */
  createdFrom?: Date;
  createdTo?: Date;
  /** The position after which the page starts: the last order of the page before. */
  after?: ListPosition | null;
  /** These merchants' orders alone (platform mode: a query's `merchant_id`, a credential's scope). */
  merchants?: MerchantFilter | null;
  limit: number;
}

/** Newest first, by creation time and then id: a stable order for a list that grows at the top. */
export interface ListPosition {
  createdAt: Date;
  id: string;
}

export interface OrderPage {
  orders: { order: OrderRecord; attempt: AttemptRecord | null }[];
  /** The last order's position when there may be more; null at the end. */
  next: ListPosition | null;
}

/** What a person decided about a flagged order. */
export interface Resolution {
  actor: Actor;
  resolution: ReviewResolution;
  note: string;
}

export type ResolveOutcome =
  | { kind: 'resolved'; order: OrderRecord }
  /** The order is not flagged (never was, or someone resolved it first). */
  | { kind: 'not_flagged'; order: OrderRecord };

/**
 * The review queue (issue, part 3): orders listed with filters, a page at a time, and a flagged order's
 * review resolved by a person, with who and why in its history and the audit log.
 */
export class ReviewStore {
  constructor(
    private readonly models: Models,
    private readonly writer: OrderWriter,
    private readonly random: RandomSource,
  ) {}

  async list(q: OrderListQuery): Promise<OrderPage> {
    const where: WhereOptions<OrderRecord>[] = [];
    if (q.needsReview !== undefined) where.push({ needs_review: q.needsReview });
    if (q.statuses && q.statuses.length > 0) where.push({ status: { [Op.in]: [...q.statuses] } });
    if (q.currency) where.push({ currency: q.currency });
    if (q.reference !== undefined) where.push({ reference: q.reference });
    if (q.createdFrom) where.push({ created_at: { [Op.gte]: q.createdFrom } });
    if (q.createdTo) where.push({ created_at: { [Op.lt]: q.createdTo } });
    if (q.merchants) where.push(merchantWhere(q.merchants) as WhereOptions<OrderRecord>);
    if (q.after)
      where.push({
        [Op.or]: [
          { created_at: { [Op.lt]: q.after.createdAt } },
          { created_at: q.after.createdAt, id: { [Op.lt]: q.after.id } },
        ],
      });
    const rows = await this.models.Order.findAll({
      where: { [Op.and]: where },
      order: [
        ['created_at', 'DESC'],
        ['id', 'DESC'],
      ],
      // One more than asked: whether there is a next page, without counting.
      limit: q.limit + 1,
    });
    const page = rows.slice(0, q.limit).map(orderRecord);
    const attemptIds = page.map((o) => o.current_attempt_id).filter((id): id is string => id !== null);
    const attempts =
      attemptIds.length === 0
        ? []
        : await this.models.Attempt.findAll({
            where: { id: { [Op.in]: attemptIds } },
            attributes: { exclude: [...ATTEMPTS.hiddenColumns] },
          });
    const byId = new Map(attempts.map((a) => [a.id, attemptRecord(a)]));
    const last = page.at(-1);
    return {
      orders: page.map((order) => ({
        order,
        attempt: order.current_attempt_id ? (byId.get(order.current_attempt_id) ?? null) : null,
      })),
      next: rows.length > q.limit && last ? { createdAt: last.created_at, id: last.id } : null,
    };
  }

  /**
   * Clears a flagged order's review under its row lock: `needs_review` false, `review_reason` null, and
   * the reasons it had added to `resolved_reasons`, so that the same finding seen again (the next poll
   * of a payment whose amount differs) is recorded but does not flag the order anew; a new reason still
   * does. The order keeps the resolution, who and when (what the reconciliation report shows); a
   * history line (`resolved`) and an audit line say who, the resolution, the note and what was
   * cleared, in the same transaction.
   */
  async resolve(orderId: string, r: Resolution): Promise<ResolveOutcome> {
    const sourceId = `review:${randomId('rvw_', this.random)}`;
    const done = await this.writer.one({ orderId }, ({ order }, now) => {
      if (!order.needs_review) return { change: null, result: 'not_flagged' as const };
      const cleared = order.review_reason ?? '';
      return {
        change: {
          order: {
            needs_review: false,
            review_reason: null,
            resolved_reasons: withResolved(order.resolved_reasons, cleared),
            review_resolution: r.resolution,
            review_resolved_by: actorLabel(r.actor),
            review_resolved_at: now,
          },
          history: {
            source: 'api',
            sourceId,
            outcome: 'resolved',
            detail: `review resolved (${r.resolution}) by ${actorLabel(r.actor)}: ${r.note}; cleared: ${cleared}`,
          },
          also: [
            auditStatement(
              {
                actor: r.actor,
                action: 'review.resolve',
                orderId,
                amountMinor: order.amount_minor,
                currency: order.currency,
                reason: r.note,
                detail: `${r.resolution}; cleared: ${cleared}`,
              },
              now,
            ),
          ],
        },
        result: 'resolved' as const,
      };
    });
    return { kind: done!.result, order: done!.order };
  }
}
