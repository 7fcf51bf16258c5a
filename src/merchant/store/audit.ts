import { literal, Op, type Transaction, type WhereOptions } from 'sequelize';
import type { Clock } from '../../shared/clock.js';
import { detailWithout } from '../customers/erasure.js';
import type { Actor } from '../operators/roles.js';
import type { MerchantFilter } from '../orders/order-merchant.js';
import type { Statement } from './batch-writes.js';
import { merchantSql } from './merchant-where.js';
import { type Models, plain } from './models.js';
import type { AuditAction, AuditRecord } from './records.js';

/** What an act leaves in the audit log; who did it is the actor. */
export interface AuditEntry {
  actor: Actor;
  action: AuditAction;
  orderId?: string | null;
  /** What the act was on: the operation (`op_`), money (`umn_`), dispute (`dsp_`), operator (`opr_`), saved card (`card_`), erased customer (`cer_`), payment link (`plk_`). */
  subjectId?: string | null;
  amountMinor?: number | null;
  currency?: string | null;
  /** The reason or note the person gave. */
  reason?: string | null;
  detail?: string | null;
}

/** An audit line with, for a capture, refund or void, what became of it at the gateway. */
export interface AuditLine extends AuditRecord {
  /** `succeeded`, `pending` or `failed` for an operation (as it stands now); null for other acts. */
  operation_status: string | null;
  /** The gateway's refusal code of a failed operation. */
  operation_error: string | null;
  /**
   * The `merchant_id` of the order the line is about, as the order has it (null: it names none, or
   * the line is about no order; reports/audit.ts tells the two apart).
   */
  order_merchant_id: number | null;
}

const clip = (text: string | null | undefined, n: number) => (text == null ? null : text.slice(0, n));

/** An audit line's row. */
export function auditRow(entry: AuditEntry, at: Date) {
  return {
    at,
    actor: entry.actor.name.slice(0, 64),
    role: entry.actor.role,
    credential: entry.actor.credential.slice(0, 32),
    action: entry.action,
    order_id: entry.orderId ?? null,
    subject_id: entry.subjectId ?? null,
    amount_minor: entry.amountMinor ?? null,
    currency: entry.currency ?? null,
    reason: clip(entry.reason, 512),
    detail: clip(entry.detail, 512),
    request_id: clip(entry.actor.requestId, 128),
  };
}

/**
 * An audit line written with an order's change, in its transaction (OrderChange.also): the act and
 * the change it made stand or fall together.
 */
export function auditStatement(entry: AuditEntry, at: Date): Statement {
  return { sql: 'INSERT INTO audit_log SET ?', values: [auditRow(entry, at)] };
}

/**
 * The audit log (issue, part 2): append only, save an erasure's rewrite of a customer's id
 * (forgetCustomer). Each act is written in the transaction that does it
 * when the store does it (an operation stored, a review resolved, a dispute lost, an operator added
 * or revoked, money resolved); an attach, which goes through the apply path, is written once applied.
 */
export class AuditStore {
  constructor(
    private readonly models: Models,
    private readonly clock: Clock,
  ) {}

  async record(entry: AuditEntry, tx?: Transaction): Promise<void> {
    await this.models.Audit.create(auditRow(entry, new Date(this.clock.now())), { transaction: tx });
  }

  /**
   * The lines whose detail names a customer by id (`customer <id>`: a saved card's charge, payment or
   * removal, a token vouched for), rewritten to name them by `label` instead: an erasure (issue 43,
   * part 4), the one change the log takes after a line is written. Who did what stays; whom for is
   * forgotten. Answers how many lines changed.
   */
  async forgetCustomer(customerId: string, label: string, merchant?: MerchantFilter): Promise<number> {
    const like = `customer ${customerId.replace(/[\\%_]/g, '\\$&')}%`;
    const rows = await this.models.Audit.findAll({
      attributes: ['id', 'detail', 'order_id', 'subject_id'],
      where: { detail: { [Op.like]: like } },
    });
    const others = merchant ? await this.othersLines(rows, merchant) : new Set<number>();
    let changed = 0;
    for (const row of rows) {
      if (others.has(Number(row.id))) continue;
      const detail = detailWithout(row.detail ?? '', customerId, label);
      if (detail === row.detail) continue;
      await this.models.Audit.update({ detail }, { where: { id: row.id } });
      changed += 1;
    }
    return changed;
  }

  /**
   * Of these lines, the ones about another merchant's customer of the same id (platform mode): their
   * order, or the saved card they are about, is another merchant's, or they name another merchant
   * (a token vouched for with no order). A line that says nothing of its merchant, or whose card is
   * gone (erased), cannot be told apart: it is forgotten with this customer's, as forgetting errs on
   * the person's side.
   */
  private async othersLines(
    rows: readonly {
      id: number | string;
      order_id: string | null;
      subject_id: string | null;
      detail: string | null;
    }[],
    merchant: MerchantFilter,
  ): Promise<Set<number>> {
    const mine = (merchantId: number | null) =>
      merchantId === null ? merchant.unnamed : merchant.ids.includes(merchantId);
    const orderIds = [...new Set(rows.map((r) => r.order_id).filter((id): id is string => id !== null))];
    const cardIds = [
      ...new Set(
        rows.map((r) => r.subject_id).filter((id): id is string => id?.startsWith('card_') === true),
      ),
    ];
    const [orders, cards] = await Promise.all([
      orderIds.length === 0
        ? []
        : this.models.Order.findAll({ attributes: ['id', 'merchant_id'], where: { id: orderIds } }),
      cardIds.length === 0
        ? []
        : this.models.SavedCard.findAll({ attributes: ['id', 'merchant_id'], where: { id: cardIds } }),
    ]);
    const whose = new Map<string, number | null>([
      ...orders.map((o) => [o.id, o.merchant_id] as const),
      ...cards.map((c) => [c.id, c.merchant_id] as const),
    ]);
    const others = new Set<number>();
    for (const row of rows) {
      for (const about of [row.order_id, row.subject_id])
        if (about !== null && whose.has(about) && !mine(whose.get(about) ?? null)) others.add(Number(row.id));
      // A token vouched for with no order names its merchant, when not the kit's first (customer-routes.ts).
      const named = / \(merchant (\d+)\)$/.exec(row.detail ?? '')?.[1];
      if (named !== undefined && !mine(Number(named))) others.add(Number(row.id));
    }
    return others;
  }

  /**
   * The lines of [from, to), oldest first, a page at a time after `afterId` (the export streams them);
   * each operation's line carries what became of it at the gateway, and each line about an order that
   * order's merchant. `merchant`: the lines about that merchant's orders only (platform mode).
   */
  async page(
    from: Date,
    to: Date,
    afterId: number,
    limit: number,
    merchant: MerchantFilter | null = null,
  ): Promise<AuditLine[]> {
    const where: WhereOptions[] = [{ at: { [Op.gte]: from, [Op.lt]: to }, id: { [Op.gt]: afterId } }];
    if (merchant)
      where.push({
        order_id: {
          [Op.in]: literal(`(SELECT id FROM orders WHERE ${merchantSql(merchant, 'merchant_id')})`),
        },
      });
    const rows = await this.models.Audit.findAll({
      where: { [Op.and]: where },
      order: [['id', 'ASC']],
      limit,
    });
    const lines = rows.map(plain).map((r) => ({
      ...r,
      id: Number(r.id),
      amount_minor: r.amount_minor === null ? null : Number(r.amount_minor),
    }));
    const operationIds = lines
      .filter((l) => ['capture', 'refund', 'void'].includes(l.action) && l.subject_id)
      .map((l) => l.subject_id!);
    const operations =
      operationIds.length === 0
        ? []
        : await this.models.Operation.findAll({
            where: { id: { [Op.in]: operationIds } },
            attributes: ['id', 'status', 'error_code'],
          });
    const byId = new Map(operations.map((o) => [o.id, o]));
    const orderIds = [...new Set(lines.map((l) => l.order_id).filter((id): id is string => id !== null))];
    const orders =
      orderIds.length === 0
        ? []
        : await this.models.Order.findAll({
            where: { id: { [Op.in]: orderIds } },
            attributes: ['id', 'merchant_id'],
          });
    const merchantOfOrder = new Map(orders.map((o) => [o.id, o.merchant_id]));
    return lines.map((l) => {
      const op = l.subject_id ? byId.get(l.subject_id) : undefined;
      return {
        ...l,
        operation_status: op?.status ?? null,
        operation_error: op?.error_code ?? null,
        order_merchant_id: l.order_id === null ? null : (merchantOfOrder.get(l.order_id) ?? null),
      };
    });
  }

  /** Every line of [from, to), oldest first, read a page at a time; of one merchant's orders with `merchant`. */
  async *between(
    from: Date,
    to: Date,
    o: { merchant?: MerchantFilter | null; pageSize?: number } = {},
  ): AsyncGenerator<AuditLine> {
    const pageSize = o.pageSize ?? 500;
    const merchant = o.merchant ?? null;
    let after = 0;
    for (;;) {
      const page = await this.page(from, to, after, pageSize, merchant);
      yield* page;
      if (page.length < pageSize) return;
      after = page.at(-1)!.id;
    }
  }
}
