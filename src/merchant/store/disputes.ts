import { literal, Op, type Sequelize } from 'sequelize';
import { type Actor, actorLabel } from '../operators/roles.js';
import type { DisputeOutcome } from '../orders/disputes.js';
import type { MerchantFilter } from '../orders/order-merchant.js';
import { auditStatement } from './audit.js';
import { merchantSql } from './merchant-where.js';
import { type DisputeRow, type Models, plain } from './models.js';
import { type OpenByMerchant, openByMerchant } from './open-by-merchant.js';
import type { OrderChange, OrderWriter } from './order-writer.js';
import type { DisputeRecord } from './records.js';

/** Why an operator's `lost` was not written. */
export type LoseRefusal = { kind: 'not_found' } | { kind: 'not_open'; dispute: DisputeRecord };

/**
 * Dispute records (issue 19, part 2; keyed by the gateway's chargeback, issue 44, part 3). The apply
 * path makes and closes them in its own transaction, as the dispute rule plans (orders/disputes.ts,
 * OrderStore.transition); here they are read, and an operator closes one `lost`.
 */
export class DisputeStore {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly models: Models,
    private readonly writer: OrderWriter,
  ) {}

  async get(id: string): Promise<DisputeRecord | null> {
    const row = await this.models.Dispute.findByPk(id);
    return row && record(row);
  }

  /** An order's disputes, newest first. */
  async ofOrder(orderId: string): Promise<DisputeRecord[]> {
    const rows = await this.models.Dispute.findAll({
      where: { order_id: orderId },
      order: [
        ['opened_at', 'DESC'],
        ['id', 'DESC'],
      ],
    });
    return rows.map(record);
  }

  /** Newest first; all of them, or those of one outcome. */
  /** Newest first; `merchants`: of these merchants' orders alone (platform mode). */
  async list(o: {
    outcome?: DisputeOutcome;
    merchants?: MerchantFilter | null;
    limit: number;
  }): Promise<DisputeRecord[]> {
    const ofMerchants = o.merchants
      ? literal(`(SELECT id FROM orders WHERE ${merchantSql(o.merchants, 'merchant_id')})`)
      : null;
    const rows = await this.models.Dispute.findAll({
      where: {
        ...(o.outcome ? { outcome: o.outcome } : {}),
        ...(ofMerchants ? { order_id: { [Op.in]: ofMerchants } } : {}),
      },
      order: [
        ['opened_at', 'DESC'],
        ['id', 'DESC'],
      ],
      limit: o.limit,
    });
    return rows.map(record);
  }

  /** The latest dispute of each of these attempts (the report's page), by attempt id. */
  async latestOf(attemptIds: readonly string[]): Promise<Map<string, DisputeRecord>> {
    if (attemptIds.length === 0) return new Map();
    const rows = await this.models.Dispute.findAll({
      where: { attempt_id: { [Op.in]: [...attemptIds] } },
      order: [
        ['opened_at', 'ASC'],
        ['id', 'ASC'],
      ],
    });
    return new Map(rows.map((r) => [r.attempt_id, record(r)]));
  }

  /**
   * Open disputes by the merchant of their order and currency (the gauge, issue 45): `merchant_id` as
   * the order has it (null: it names none).
   */
  openByMerchant(): Promise<OpenByMerchant[]> {
    return openByMerchant(
      this.sequelize,
      `SELECT o.merchant_id, d.currency, COUNT(*) AS n FROM disputes d JOIN orders o ON o.id = d.order_id
        WHERE d.outcome = 'open' GROUP BY o.merchant_id, d.currency`,
    );
  }

  /**
   * Closes an open dispute `lost`, on an operator's word (the gateway says nothing of a lost one,
   * sandbox.md section 11), with a line in the order's history; the order stays disputed: the money
   * is gone. A reversal that comes later still makes it `won` (the gateway's word is the last).
   */
  async lose(
    id: string,
    decided: { actor: Actor; note: string | null },
  ): Promise<DisputeRecord | LoseRefusal> {
    // Which order it is of never changes: read it first, then lock that order with the dispute.
    const found = await this.models.Dispute.findByPk(id);
    if (!found) return { kind: 'not_found' };
    const done = await this.writer.one(
      { orderId: found.order_id, disputeId: id },
      ({ dispute }, now): { change: OrderChange | null; result: DisputeRecord | LoseRefusal } => {
        if (!dispute) return { change: null, result: { kind: 'not_found' } };
        if (dispute.outcome !== 'open') return { change: null, result: { kind: 'not_open', dispute } };
        const by = decided.actor.name.slice(0, 64);
        return {
          change: {
            dispute: { kind: 'lost', disputeId: id, by, note: decided.note, at: now },
            history: {
              source: 'api',
              sourceId: `dispute:${id}:lost`,
              outcome: 'applied',
              detail: `dispute ${id} lost, by ${actorLabel(decided.actor)}${decided.note ? `: ${decided.note}` : ''}`,
            },
            also: [
              auditStatement(
                {
                  actor: decided.actor,
                  action: 'dispute.lost',
                  orderId: dispute.order_id,
                  subjectId: id,
                  amountMinor: dispute.amount_minor,
                  currency: dispute.currency,
                  reason: decided.note,
                },
                now,
              ),
            ],
          },
          result: { ...dispute, outcome: 'lost', closed_at: now, closed_by: by, note: decided.note },
        };
      },
    );
    return done!.result;
  }
}

export const isDispute = (r: DisputeRecord | LoseRefusal): r is DisputeRecord => 'id' in r;

/** A row as its record: the amount as a number (BIGINT may come back as text). */
function record(row: DisputeRow): DisputeRecord {
  const r = plain(row);
  return { ...r, amount_minor: Number(r.amount_minor) };
}
