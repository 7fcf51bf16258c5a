import { createHash } from 'node:crypto';
import { Op, QueryTypes, type Sequelize, UniqueConstraintError } from 'sequelize';
import { sqlTime, transaction } from '../../infra/database.js';
import type { Clock } from '../../shared/clock.js';
import { type RandomSource, randomId } from '../../shared/ids.js';
import type { SecretBox } from '../../shared/secret-box.js';
import type { CardFacts } from '../customers/saved-card.js';
import type { Actor } from '../operators/roles.js';
import { type MerchantFilter, writtenMerchant } from '../orders/order-merchant.js';
import type { AuditStore } from './audit.js';
import { merchantSql, merchantWhere } from './merchant-where.js';
import { type Models, plain, type SavedCardRow } from './models.js';
import type { SavedCardRecord } from './records.js';
import { type Resealed, resealColumn } from './reseal.js';

/** What a customer's saved cards may pay in 24 hours with the shopper there (docs/saved-cards.md). */
export interface DailyBound {
  payments: number;
  /** In the payment's currency. */
  amountMinor: number;
}

/** What they paid in the 24 hours before: every payment, and the amount in the payment's currency. */
export interface DailySpent {
  payments: number;
  amountMinor: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** An instrument as the gateway lists it, or as a saving payment made it. */
export interface KnownInstrument extends CardFacts {
  vaultToken: string;
}

/** What a revocation found: the card revoked now, one revoked before, or none of this customer's. */
export type Revocation =
  | { kind: 'revoked'; card: SavedCardRecord }
  | { kind: 'already'; card: SavedCardRecord }
  | { kind: 'not_found' };

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
const record = (row: SavedCardRow): SavedCardRecord => {
  const { token_hash: _hash, token_sealed: _sealed, ...card } = plain(row);
  return card;
};
/** Whether a row's merchant is the filter's. */
const inFilter = (merchantId: number | null, f: MerchantFilter) =>
  merchantId === null ? f.unnamed : f.ids.includes(merchantId);
const NEWEST_FIRST: [string, string][] = [
  ['created_at', 'DESC'],
  ['id', 'DESC'],
];

/** A customer's rows: of one merchant's (`merchant`, orders/order-merchant.ts oneMerchant), or any's when left out. */
const ofMerchant = (merchant: MerchantFilter | undefined) => (merchant ? merchantWhere(merchant) : {});

/** Whose sync row: the merchant's id, 0 for none named (the key's own account). */
const syncKey = (merchant: MerchantFilter | undefined) =>
  merchant === undefined ? 0 : (writtenMerchant(merchant) ?? 0);

/**
 * Customers' saved cards (issue 21): the kit's `card_...` id for each vault token the gateway keeps.
 * The token is sealed to its row (AAD `saved-card:<id>`) and found again by its SHA-256, so the same
 * instrument seen twice (saved again, listed by the gateway) keeps one row and one id.
 *
 * A customer id names a customer of one merchant (issue 45, platform mode): each method takes the
 * merchant (`merchant`, a one-merchant filter: its id, and the rows from before platform mode when
 * it is the kit's first), so that merchant A's `cus-1` and merchant B's `cus-1` never see each
 * other's cards. Left out: any merchant's (the command line's and a single shop's reads).
 */
export class SavedCardStore {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly models: Models,
    private readonly audit: AuditStore,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  /**
   * A payment with one of the customer's saved cards, the shopper there (a token minted for the
   * order), counted against what their cards may pay in 24 hours: under the bound, its audit line is
   * written (naming the credential that vouched, the order and the card) and it may go on; past it,
   * nothing is written. Every try counts, declined or not: a leaked token cannot probe. Under a lock
   * on the customer's cards, so two payments at once cannot both take the last place.
   */
  async vouchPayment(p: {
    customerId: string;
    cardId: string;
    orderId: string;
    amountMinor: number;
    currency: string;
    actor: Actor;
    bound: DailyBound;
    merchant?: MerchantFilter;
  }): Promise<{ kind: 'vouched' } | ({ kind: 'bounded' } & DailySpent)> {
    // One merchant's customer: the bound is theirs, their cards' payments counted alone.
    const mine = p.merchant ? ` AND ${merchantSql(p.merchant, 'c.merchant_id')}` : '';
    return transaction(this.sequelize, async (tx) => {
      await this.sequelize.query(`SELECT id FROM saved_cards c WHERE customer_id = ?${mine} FOR UPDATE`, {
        replacements: [p.customerId],
        transaction: tx,
      });
      const since = new Date(this.clock.now() - DAY_MS);
      const [spent] = await this.sequelize.query<{
        payments: number | string;
        amount: number | string | null;
      }>(
        `SELECT COUNT(*) AS payments, SUM(CASE WHEN l.currency = ? THEN l.amount_minor ELSE 0 END) AS amount
           FROM audit_log l JOIN saved_cards c ON c.id = l.subject_id
          WHERE l.action = 'card.pay' AND l.at > ? AND c.customer_id = ?${mine}`,
        { replacements: [p.currency, since, p.customerId], type: QueryTypes.SELECT, transaction: tx },
      );
      const payments = Number(spent?.payments ?? 0);
      const amountMinor = Number(spent?.amount ?? 0);
      if (payments + 1 > p.bound.payments || amountMinor + p.amountMinor > p.bound.amountMinor)
        return { kind: 'bounded', payments, amountMinor };
      await this.audit.record(
        {
          actor: p.actor,
          action: 'card.pay',
          orderId: p.orderId,
          subjectId: p.cardId,
          amountMinor: p.amountMinor,
          currency: p.currency,
          detail: `customer ${p.customerId}`,
        },
        tx,
      );
      return { kind: 'vouched' };
    });
  }

  /**
   * Keeps an instrument the gateway holds as active, for this customer: new, or the row it has (its
   * facts brought up to date, and live again if the kit had it revoked: the gateway is the truth),
   * unless the kit revoked it at or after `unlessRevokedSince`: news the gateway's answer predates.
   * A card a payment saved (`savedByOrderId`) is kept only while its order still names the customer,
   * checked under a lock on the order in the same transaction: once an erasure forgot them (issue 43,
   * part 4), a payment in flight then saves nothing for them, and null says so (the caller revokes it
   * at the gateway); an erasure that comes after finds the row and deletes it.
   */
  async remember(
    customerId: string,
    instrument: KnownInstrument,
    savedByOrderId: string | null = null,
    unlessRevokedSince?: Date,
    merchant?: MerchantFilter,
  ): Promise<SavedCardRecord | null> {
    const hash = tokenHash(instrument.vaultToken);
    const facts = {
      brand: instrument.brand.slice(0, 16),
      last4: instrument.last4,
      exp_month: instrument.expMonth,
      exp_year: instrument.expYear,
    };
    for (let tries = 0; ; tries++) {
      try {
        return await transaction(this.sequelize, async (tx) => {
          if (savedByOrderId !== null) {
            const [order] = await this.sequelize.query<{ customer_id: string | null }>(
              'SELECT customer_id FROM orders WHERE id = ? LOCK IN SHARE MODE',
              { replacements: [savedByOrderId], type: QueryTypes.SELECT, transaction: tx },
            );
            if (order?.customer_id !== customerId) return null;
          }
          const existing = await this.models.SavedCard.findOne({
            where: { token_hash: hash },
            transaction: tx,
          });
          const now = new Date(this.clock.now());
          if (existing) {
            // A token names one customer's instrument at the gateway: never moved to another customer,
            // nor to another merchant's customer of the same id.
            if (existing.customer_id !== customerId) return record(existing);
            if (merchant && !inFilter(existing.merchant_id, merchant)) return record(existing);
            const revokedAt = existing.revoked_at;
            if (unlessRevokedSince && revokedAt !== null && revokedAt >= unlessRevokedSince)
              return record(existing);
            const changed =
              existing.status !== 'active' ||
              Object.entries(facts).some(([k, v]) => existing.get(k as keyof typeof facts) !== v);
            if (changed)
              await existing.update(
                { ...facts, status: 'active', revoked_at: null, revoked_by: null, updated_at: now },
                { transaction: tx },
              );
            return record(existing);
          }
          const id = randomId('card_', this.random);
          const row = await this.models.SavedCard.create(
            {
              id,
              customer_id: customerId,
              merchant_id: merchant ? writtenMerchant(merchant) : null,
              token_hash: hash,
              token_sealed: this.box.seal(instrument.vaultToken, `saved-card:${id}`),
              ...facts,
              status: 'active',
              saved_by_order_id: savedByOrderId,
              created_at: now,
              updated_at: now,
            },
            { transaction: tx },
          );
          return record(row);
        });
      } catch (error) {
        // Another request kept the same instrument a moment ago: read its row.
        if (!(error instanceof UniqueConstraintError) || tries > 0) throw error;
      }
    }
  }

  /**
   * Brings the kit's rows for a customer in line with the gateway's list of their active instruments,
   * asked for at `listedAt`: each listed one kept, and any the kit holds as active that the gateway no
   * longer lists revoked (`gateway`: revoked there, or lapsed). What changed since `listedAt` is newer
   * than the list and stays as it is: a card saved meanwhile is not revoked, one removed meanwhile not
   * brought back. Answers the customer's active cards, newest first.
   */
  async sync(
    customerId: string,
    listed: readonly KnownInstrument[],
    listedAt: Date,
    merchant?: MerchantFilter,
  ): Promise<SavedCardRecord[]> {
    const kept = new Set<string>();
    for (const instrument of listed) {
      const card = await this.remember(customerId, instrument, null, listedAt, merchant);
      if (card?.status === 'active') kept.add(card.id);
    }
    const gone = await this.models.SavedCard.findAll({
      where: {
        ...ofMerchant(merchant),
        customer_id: customerId,
        status: 'active',
        id: { [Op.notIn]: [...kept, ''] },
        updated_at: { [Op.lt]: listedAt },
      },
    });
    const now = new Date(this.clock.now());
    for (const row of gone)
      await row.update({ status: 'revoked', revoked_at: now, revoked_by: 'gateway', updated_at: now });
    // The list's time, kept unless a newer list was kept meanwhile (two lists at once).
    await this.sequelize.query(
      `INSERT INTO saved_card_syncs (customer_id, merchant_id, synced_at) VALUES (?, ?, ?)
       ON DUPLICATE KEY UPDATE synced_at = GREATEST(synced_at, VALUES(synced_at))`,
      { replacements: [customerId, syncKey(merchant), sqlTime(listedAt)] },
    );
    return this.list(customerId, merchant);
  }

  /**
   * When the kit asked the gateway for the list it last brought this customer's rows in line with;
   * null: never. Without a merchant: the latest list of any merchant's customer of this id.
   */
  async syncedAt(customerId: string, merchant?: MerchantFilter): Promise<Date | null> {
    const row = await this.models.SavedCardSync.findOne({
      where: { customer_id: customerId, ...(merchant ? { merchant_id: syncKey(merchant) } : {}) },
      order: [['synced_at', 'DESC']],
    });
    return row?.synced_at ?? null;
  }

  /** A customer's active cards, newest first. */
  async list(customerId: string, merchant?: MerchantFilter): Promise<SavedCardRecord[]> {
    const rows = await this.models.SavedCard.findAll({
      where: { ...ofMerchant(merchant), customer_id: customerId, status: 'active' },
      order: NEWEST_FIRST,
    });
    return rows.map(record);
  }

  /** A card of this customer's (active or revoked); null for an unknown id, another customer's, another merchant's. */
  async ofCustomer(
    customerId: string,
    id: string,
    merchant?: MerchantFilter,
  ): Promise<SavedCardRecord | null> {
    const row = await this.models.SavedCard.findOne({
      where: { ...ofMerchant(merchant), id, customer_id: customerId },
    });
    return row && record(row);
  }

  /** Seals every vault token a previous key sealed again under the current one (key rotation). */
  reseal(): Promise<Resealed> {
    return resealColumn(this.models.SavedCard, 'token_sealed', (id) => `saved-card:${id}`, this.box);
  }

  /** The active cards whose token no key opens (their key lost): they can pay no more. */
  async unopened(): Promise<{ id: string; customerId: string }[]> {
    const { unopened } = await resealColumn(
      this.models.SavedCard,
      'token_sealed',
      (id) => `saved-card:${id}`,
      this.box,
      { where: { status: 'active' }, write: false },
    );
    const rows = await this.models.SavedCard.findAll({
      attributes: ['id', 'customer_id'],
      where: { id: unopened as string[] },
    });
    return rows.map((r) => ({ id: r.id, customerId: r.customer_id }));
  }

  /** Whether the newest active card's token opens (start-up's key check); true with none. */
  async newestOpens(): Promise<boolean> {
    const row = await this.models.SavedCard.findOne({
      attributes: ['id', 'token_sealed'],
      where: { status: 'active' },
      order: NEWEST_FIRST,
    });
    return row === null || this.box.opens(row.token_sealed, `saved-card:${row.id}`);
  }

  /** The vault token of a card, opened to pay with it: never kept anywhere but in the call. */
  async vaultToken(id: string): Promise<string | null> {
    const row = await this.models.SavedCard.findByPk(id, { attributes: ['id', 'token_sealed'] });
    return row && this.box.open(row.token_sealed, `saved-card:${id}`);
  }

  /**
   * Marks a customer's card revoked, with who did it; an operator's act goes to the audit log in the
   * same transaction. The gateway is told first, by the caller: a card the kit shows revoked is one
   * no payment can use.
   */
  async revoke(
    customerId: string,
    id: string,
    by: { actor: Actor } | { name: string },
    merchant?: MerchantFilter,
  ): Promise<Revocation> {
    return transaction(this.sequelize, async (tx) => {
      const row = await this.models.SavedCard.findOne({
        where: { ...ofMerchant(merchant), id, customer_id: customerId },
        transaction: tx,
        lock: tx.LOCK.UPDATE,
      });
      if (!row) return { kind: 'not_found' };
      if (row.status === 'revoked') return { kind: 'already', card: record(row) };
      const now = new Date(this.clock.now());
      const name = 'actor' in by ? by.actor.name : by.name;
      await row.update(
        { status: 'revoked', revoked_at: now, revoked_by: name.slice(0, 64), updated_at: now },
        { transaction: tx },
      );
      if ('actor' in by)
        await this.audit.record(
          { actor: by.actor, action: 'card.revoke', subjectId: id, detail: `customer ${customerId}` },
          tx,
        );
      return { kind: 'revoked', card: record(row) };
    });
  }

  /** The vault tokens of a customer's active cards, opened to revoke them at the gateway (an erasure). */
  async activeTokens(customerId: string, merchant?: MerchantFilter): Promise<string[]> {
    const rows = await this.models.SavedCard.findAll({
      attributes: ['id', 'token_sealed'],
      where: { ...ofMerchant(merchant), customer_id: customerId, status: 'active' },
    });
    return rows.map((r) => this.box.open(r.token_sealed, `saved-card:${r.id}`));
  }

  /**
   * Every row the kit keeps of a customer's saved cards, active or revoked, and when it last listed
   * them, deleted (an erasure, issue 43 part 4: the gateway revoked them first). Answers the cards removed.
   */
  async forget(customerId: string, merchant?: MerchantFilter): Promise<number> {
    return transaction(this.sequelize, async (tx) => {
      const removed = await this.models.SavedCard.destroy({
        where: { ...ofMerchant(merchant), customer_id: customerId },
        transaction: tx,
      });
      await this.models.SavedCardSync.destroy({
        where: { customer_id: customerId, ...(merchant ? { merchant_id: syncKey(merchant) } : {}) },
        transaction: tx,
      });
      return removed;
    });
  }

  /** The kit learned from the gateway that a token no longer pays (revoked there): so marked. */
  async markRevokedAtGateway(id: string): Promise<void> {
    const now = new Date(this.clock.now());
    await this.models.SavedCard.update(
      { status: 'revoked', revoked_at: now, revoked_by: 'gateway', updated_at: now },
      { where: { id, status: 'active' } },
    );
  }
}
