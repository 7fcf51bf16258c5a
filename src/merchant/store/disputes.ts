import { Op, type Sequelize } from 'sequelize';
import { transaction } from '../../infra/database.js';
import type { Clock } from '../../shared/clock.js';
import { type Actor, actorLabel } from '../operators/roles.js';
import type { DisputeOutcome } from '../orders/disputes.js';
import type { AuditStore } from './audit.js';
import type { HistoryStore } from './history.js';
import { type DisputeRow, type Models, plain } from './models.js';
import type { DisputeRecord } from './records.js';

/** Why an operator's `lost` was not written. */
export type LoseRefusal = { kind: 'not_found' } | { kind: 'not_open'; dispute: DisputeRecord };

/**
 * Dispute records (issue 19, part 2). The apply path opens, corrects and wins them in its own
 * transaction (OrderStore.transition); here they are read, and an operator closes one `lost`.
 */
export class DisputeStore {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly models: Models,
    private readonly history: HistoryStore,
    private readonly audit: AuditStore,
    private readonly clock: Clock,
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
  async list(o: { outcome?: DisputeOutcome; limit: number }): Promise<DisputeRecord[]> {
    const rows = await this.models.Dispute.findAll({
      where: o.outcome ? { outcome: o.outcome } : {},
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

  /** Open disputes by currency (the gauge). */
  async openByCurrency(): Promise<Record<string, number>> {
    const rows = (await this.models.Dispute.findAll({
      attributes: ['currency', [this.sequelize.fn('COUNT', this.sequelize.col('id')), 'n']],
      where: { outcome: 'open' },
      group: ['currency'],
      raw: true,
    })) as unknown as { currency: string; n: number | string }[];
    return Object.fromEntries(rows.map((r) => [r.currency, Number(r.n)]));
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
    return transaction(this.sequelize, async (tx) => {
      const row = await this.models.Dispute.findByPk(id, { transaction: tx, lock: tx.LOCK.UPDATE });
      if (!row) return { kind: 'not_found' } as const;
      if (row.outcome !== 'open') return { kind: 'not_open', dispute: record(row) } as const;
      const order = await this.models.Order.findByPk(row.order_id, { transaction: tx });
      await row.update(
        {
          outcome: 'lost',
          closed_at: new Date(this.clock.now()),
          closed_by: decided.actor.name.slice(0, 64),
          note: decided.note,
        },
        { transaction: tx },
      );
      const status = order?.status ?? 'disputed';
      await this.history.record(
        {
          orderId: row.order_id,
          attemptId: row.attempt_id,
          source: 'api',
          sourceId: `dispute:${row.id}:lost`,
          statusBefore: status,
          statusAfter: status,
          outcome: 'applied',
          detail: `dispute ${row.id} lost, by ${actorLabel(decided.actor)}${decided.note ? `: ${decided.note}` : ''}`,
        },
        tx,
      );
      await this.audit.record(
        {
          actor: decided.actor,
          action: 'dispute.lost',
          orderId: row.order_id,
          subjectId: row.id,
          amountMinor: Number(row.amount_minor),
          currency: row.currency,
          reason: decided.note,
        },
        tx,
      );
      return record(row);
    });
  }
}

export const isDispute = (r: DisputeRecord | LoseRefusal): r is DisputeRecord => 'id' in r;

/** A row as its record: the amount as a number (BIGINT may come back as text). */
function record(row: DisputeRow): DisputeRecord {
  const r = plain(row);
  return { ...r, amount_minor: Number(r.amount_minor) };
}
