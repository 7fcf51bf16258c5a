import { Op, type WhereOptions } from 'sequelize';
import type { MerchantFilter } from '../orders/order-merchant.js';
import type { DisputeStore } from './disputes.js';
import { merchantWhere } from './merchant-where.js';
import { attemptRecord, type Models, orderRecord } from './models.js';
import type { AttemptRecord, DisputeRecord, OrderRecord } from './records.js';

/** An order with its current attempt and that attempt's latest dispute: one line of the reconciliation report. */
export interface ReportSource {
  order: OrderRecord;
  attempt: AttemptRecord | null;
  dispute: DisputeRecord | null;
}

/** Where a page of the report ends: the next page starts after it. */
export interface ReportCursor {
  createdAt: Date;
  id: string;
}

/** The orders the reconciliation report reads: by the time they were created (indexed), in pages. */
export class ReportStore {
  constructor(
    private readonly models: Models,
    private readonly disputes: Pick<DisputeStore, 'latestOf'>,
  ) {}

  /**
   * Orders created in [from, to), oldest first, up to `limit` after `after`; with `merchant`, that
   * merchant's only (platform mode).
   */
  async created(
    from: Date,
    to: Date,
    limit: number,
    after: ReportCursor | null = null,
    merchant: MerchantFilter | null = null,
  ): Promise<ReportSource[]> {
    const range = { [Op.gte]: from, [Op.lt]: to };
    const created: WhereOptions = after
      ? {
          [Op.or]: [
            { created_at: { ...range, [Op.gt]: after.createdAt } },
            { created_at: after.createdAt, id: { [Op.gt]: after.id } },
          ],
        }
      : { created_at: range };
    const orders = await this.models.Order.findAll({
      where: merchant ? { [Op.and]: [created, merchantWhere(merchant)] } : created,
      order: [
        ['created_at', 'ASC'],
        ['id', 'ASC'],
      ],
      limit,
    });
    const ids = orders.map((o) => o.current_attempt_id).filter((id): id is string => id !== null);
    const attempts =
      ids.length === 0 ? [] : await this.models.Attempt.findAll({ where: { id: { [Op.in]: ids } } });
    const byId = new Map(attempts.map((a) => [a.id, attemptRecord(a)]));
    const disputes = await this.disputes.latestOf(ids);
    return orders.map((o) => ({
      order: orderRecord(o),
      attempt: o.current_attempt_id ? (byId.get(o.current_attempt_id) ?? null) : null,
      dispute: o.current_attempt_id ? (disputes.get(o.current_attempt_id) ?? null) : null,
    }));
  }

  async countCreated(from: Date, to: Date, merchant: MerchantFilter | null = null): Promise<number> {
    const created = { created_at: { [Op.gte]: from, [Op.lt]: to } };
    return this.models.Order.count({
      where: merchant ? { [Op.and]: [created, merchantWhere(merchant)] } : created,
    });
  }
}
