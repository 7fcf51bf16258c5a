import { Op, type Sequelize, UniqueConstraintError, type WhereOptions } from 'sequelize';
import { transaction } from '../../infra/database.js';
import type { Clock } from '../../shared/clock.js';
import { type RandomSource, randomId } from '../../shared/ids.js';
import type { Actor } from '../operators/roles.js';
import { INITIAL_PAYMENT } from '../orders/decide.js';
import type { TransactionFact } from '../orders/observation.js';
import type { MerchantFilter } from '../orders/order-merchant.js';
import { keptAfter, keptPayment, paymentColumns } from '../orders/unmatched-money.js';
import type { AuditStore } from './audit.js';
import { merchantWhere } from './merchant-where.js';
import type { Models, UnmatchedMoneyRow } from './models.js';
import { plain } from './models.js';
import { type OpenByMerchant, openByMerchant } from './open-by-merchant.js';
import type { UnmatchedMoneyRecord, UnmatchedResolution } from './records.js';

/** One observation of money no attempt holds, as the reconciler keeps it. */
export interface SeenMoney {
  transaction: TransactionFact;
  /** The observation's source (`webhook`, `replay`, `recovery`, ...) and its id (the event id). */
  source: string;
  sourceId: string;
  /** The order that carries its reference, if any. */
  orderId: string | null;
  /**
   * The merchant whose webhook endpoint the event came to (issue 45: the inbox row's); null or left
   * out, the kit's first merchant. Kept with the row when first seen: a transaction is one merchant's.
   */
  merchantId?: number | null;
}

/** What keeping it did: the row as it now stands, and whether this was its first sight. */
export interface Kept {
  money: UnmatchedMoneyRecord;
  first: boolean;
}

/** What an operator's decision records. */
export interface Decided {
  /** Who decided: their name is kept as `resolved_by`, and the act in the audit log. */
  actor: Actor;
  note?: string | null;
}

/**
 * Gateway money with no order (issue 19, part 1): one row per gateway transaction (and reference),
 * kept when first seen and brought up to date when seen again: first seen stays, last seen and the
 * count move, what the gateway said is replaced only by news that is not older, and its payment's
 * money (captured, refunded, charged back) moves by an order's rule (issue 44, keptAfter).
 */
export class UnmatchedMoneyStore {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly models: Models,
    private readonly audit: AuditStore,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  async keep(seen: SeenMoney): Promise<Kept> {
    try {
      return await this.#keep(seen);
    } catch (error) {
      // Two workers met the same new transaction at once: the other inserted it; this one updates it.
      if (!(error instanceof UniqueConstraintError)) throw error;
      return this.#keep(seen);
    }
  }

  #keep(seen: SeenMoney): Promise<Kept> {
    const t = seen.transaction;
    const now = new Date(this.clock.now());
    const facts = {
      related_transaction_id: t.relatedId,
      transaction_type: t.type,
      status: t.status,
      status_reason: t.statusReason ?? null,
      amount_minor: t.amountMinor,
      currency: t.currency,
      capture_before: t.captureBefore == null ? null : new Date(t.captureBefore),
    };
    const told = { source: seen.source, source_id: seen.sourceId.slice(0, 128) };
    return transaction(this.sequelize, async (tx) => {
      const row = await this.models.UnmatchedMoney.findOne({
        where: { transaction_id: t.id, reference: t.reference ?? '' },
        transaction: tx,
        lock: tx.LOCK.UPDATE,
      });
      if (!row) {
        const { payment } = keptAfter(INITIAL_PAYMENT, t);
        const created = await this.models.UnmatchedMoney.create(
          {
            id: randomId('umn_', this.random),
            transaction_id: t.id,
            reference: t.reference ?? '',
            ...facts,
            ...paymentColumns(payment),
            ...told,
            first_seen_at: now,
            last_seen_at: now,
            order_id: seen.orderId,
            merchant_id: seen.merchantId ?? null,
          },
          { transaction: tx },
        );
        return { money: record(created), first: true };
      }
      // The same observation again (a job bull ran twice) is not a second sight.
      if (row.source === told.source && row.source_id === told.source_id)
        return { money: record(row), first: false };
      const news = keptAfter(keptPayment(record(row)), t);
      await row.update(
        {
          ...(news.replaces ? facts : {}),
          ...paymentColumns(news.payment),
          ...told,
          last_seen_at: now,
          seen_count: row.seen_count + 1,
          order_id: row.order_id ?? seen.orderId,
        },
        { transaction: tx },
      );
      return { money: record(row), first: false };
    });
  }

  async get(id: string): Promise<UnmatchedMoneyRecord | null> {
    const row = await this.models.UnmatchedMoney.findByPk(id);
    return row && record(row);
  }

  /**
   * Newest first (by first sight); all of them, or those of one resolution; of every merchant, or of
   * the merchants of `merchants` (platform mode, issue 45).
   */
  async list(o: {
    resolution?: UnmatchedResolution;
    merchants?: MerchantFilter | null;
    limit: number;
  }): Promise<UnmatchedMoneyRecord[]> {
    const where: WhereOptions[] = [];
    if (o.resolution) where.push({ resolution: o.resolution });
    if (o.merchants) where.push(merchantWhere(o.merchants));
    const rows = await this.models.UnmatchedMoney.findAll({
      where: where.length === 0 ? {} : { [Op.and]: where },
      order: [
        ['first_seen_at', 'DESC'],
        ['id', 'DESC'],
      ],
      limit: o.limit,
    });
    return rows.map(record);
  }

  /**
   * First seen in [from, to), oldest first: the reconciliation report's second part; of every
   * merchant, or of the merchants of `merchants` (a report of one merchant, or a scoped credential's).
   */
  async firstSeen(
    from: Date,
    to: Date,
    merchants: MerchantFilter | null = null,
  ): Promise<UnmatchedMoneyRecord[]> {
    const seen: WhereOptions = { first_seen_at: { [Op.gte]: from, [Op.lt]: to } };
    const rows = await this.models.UnmatchedMoney.findAll({
      where: merchants ? { [Op.and]: [seen, merchantWhere(merchants)] } : seen,
      order: [
        ['first_seen_at', 'ASC'],
        ['id', 'ASC'],
      ],
    });
    return rows.map(record);
  }

  /** Rows still open, by merchant (null: the kit's first) and currency (the gauge). */
  openByMerchant(): Promise<OpenByMerchant[]> {
    return openByMerchant(
      this.sequelize,
      `SELECT merchant_id, currency, COUNT(*) AS n FROM unmatched_money
        WHERE resolution = 'open' GROUP BY merchant_id, currency`,
    );
  }

  /**
   * Marks an open row attached to `orderId`, before the payment is applied to it: of two operators
   * attaching the same money at once, one wins. False: the row is not open (any more).
   */
  async claim(id: string, orderId: string, decided: Decided): Promise<boolean> {
    const [changed] = await this.models.UnmatchedMoney.update(
      {
        order_id: orderId,
        resolved_by: decided.actor.name.slice(0, 64),
        resolved_note: null,
        resolution: 'attached',
        resolved_at: new Date(this.clock.now()),
      },
      { where: { id, resolution: 'open' } },
    );
    return changed === 1;
  }

  /** Undoes a claim whose payment could not be applied: the money is open again, for its order. */
  async reopen(id: string, orderId: string | null): Promise<void> {
    await this.models.UnmatchedMoney.update(
      { resolution: 'open', order_id: orderId, resolved_by: null, resolved_at: null },
      { where: { id, resolution: 'attached' } },
    );
  }

  /**
   * Resolves an open row with the operator's note, and its audit line in the same transaction. False:
   * the row is not open (any more).
   */
  async resolve(id: string, decided: Decided): Promise<boolean> {
    return transaction(this.sequelize, async (tx) => {
      const [changed] = await this.models.UnmatchedMoney.update(
        {
          resolution: 'resolved',
          resolved_by: decided.actor.name.slice(0, 64),
          resolved_note: decided.note ?? null,
          resolved_at: new Date(this.clock.now()),
        },
        { where: { id, resolution: 'open' }, transaction: tx },
      );
      if (changed !== 1) return false;
      const money = await this.models.UnmatchedMoney.findByPk(id, { transaction: tx });
      await this.audit.record(
        {
          actor: decided.actor,
          action: 'unmatched.resolve',
          orderId: money?.order_id ?? null,
          subjectId: id,
          amountMinor: money ? Number(money.amount_minor) : null,
          currency: money?.currency ?? null,
          reason: decided.note ?? null,
          detail: money
            ? `transaction ${money.transaction_id} (${money.transaction_type} ${money.status})`
            : null,
        },
        tx,
      );
      return true;
    });
  }
}
/** A row as its record: amounts as numbers (BIGINT may come back as text), '' as no reference. */
function record(row: UnmatchedMoneyRow): UnmatchedMoneyRecord {
  const r = plain(row);
  return {
    ...r,
    reference: r.reference === '' ? null : r.reference,
    amount_minor: Number(r.amount_minor),
    refunded_minor: Number(r.refunded_minor),
    captured_minor: r.captured_minor === null ? null : Number(r.captured_minor),
    disputed_minor: Number(r.disputed_minor),
  };
}
