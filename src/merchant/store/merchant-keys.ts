import { UniqueConstraintError } from 'sequelize';
import type { Clock } from '../../shared/clock.js';
import { NotSealedHere, type SecretBox } from '../../shared/secret-box.js';
import type { Models } from './models.js';
import { type Resealed, resealColumn } from './reseal.js';

/**
 * The AAD a merchant's key is sealed with: bound to its merchant, so that a sealed key copied into
 * another merchant's row (by hand, a restore gone wrong) does not open there, and the kit never sends
 * one merchant's key for another's orders.
 */
export const merchantKeyAad = (merchantId: number | string) => `merchant-key:${merchantId}`;

/** A stored merchant key as it may be shown: whose, and when; never the key. */
export interface StoredMerchantKey {
  merchantId: number;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The linked merchants' own gateway keys (issue 45, platform mode), stored by `merchant-key set`
 * beside GATEWAY_MERCHANT_KEYS: sealed under APP_ENCRYPTION_KEY, opened only by `all()`, which the
 * kit's start reads to build each merchant's gateway client.
 */
export class MerchantKeyStore {
  constructor(
    private readonly models: Models,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  /** Stores the merchant's key, replacing the one it had: `replaced` says whether it had one. */
  async put(merchantId: number, key: string): Promise<{ replaced: boolean }> {
    const now = new Date(this.clock.now());
    const key_sealed = this.box.seal(key, merchantKeyAad(merchantId));
    const replace = async () =>
      (
        await this.models.MerchantKey.update(
          { key_sealed, updated_at: now },
          { where: { merchant_id: merchantId } },
        )
      )[0] > 0;
    if (await replace()) return { replaced: true };
    try {
      await this.models.MerchantKey.create({
        merchant_id: merchantId,
        key_sealed,
        created_at: now,
        updated_at: now,
      });
      return { replaced: false };
    } catch (error) {
      // Two stores of one merchant's key at once: the other made the row; this one replaces it.
      if (!(error instanceof UniqueConstraintError)) throw error;
      await replace();
      return { replaced: true };
    }
  }

  /** Forgets the merchant's key; false when none was stored. */
  async remove(merchantId: number): Promise<boolean> {
    return (await this.models.MerchantKey.destroy({ where: { merchant_id: merchantId } })) > 0;
  }

  /** Whose keys are stored and since when, by merchant id: what an operator may see of them. */
  async list(): Promise<StoredMerchantKey[]> {
    const rows = await this.models.MerchantKey.findAll({
      attributes: ['merchant_id', 'created_at', 'updated_at'],
      order: [['merchant_id', 'ASC']],
    });
    return rows.map((r) => ({ merchantId: r.merchant_id, createdAt: r.created_at, updatedAt: r.updated_at }));
  }

  /**
   * Every stored key, opened, by merchant id: what the kit's start builds the merchants' clients
   * with. A key no key of the box opens throws NotSealedHere naming the merchant (start-up checked
   * first: settleEncryptionKeys).
   */
  async all(): Promise<Map<number, string>> {
    const rows = await this.models.MerchantKey.findAll({ order: [['merchant_id', 'ASC']] });
    const keys = new Map<number, string>();
    for (const r of rows) {
      try {
        keys.set(r.merchant_id, this.box.open(r.key_sealed, merchantKeyAad(r.merchant_id)));
      } catch (error) {
        if (!(error instanceof NotSealedHere)) throw error;
        throw new NotSealedHere(
          `the key of merchant ${r.merchant_id} does not open under APP_ENCRYPTION_KEY (${error.message})`,
        );
      }
    }
    return keys;
  }

  /** The merchants whose stored key none of the box's keys opens (start-up's key check, `keys discard-lost`). */
  async unopened(): Promise<number[]> {
    const { unopened } = await resealColumn(
      this.models.MerchantKey,
      'key_sealed',
      (id) => merchantKeyAad(id),
      this.box,
      { write: false },
    );
    return unopened.map(Number);
  }

  /** Seals every stored key a previous key sealed again under the current one (key rotation). */
  reseal(): Promise<Resealed> {
    return resealColumn(this.models.MerchantKey, 'key_sealed', (id) => merchantKeyAad(id), this.box);
  }

  /** Deletes the stored keys no key opens (their key lost): the merchants' keys are to be stored again. */
  async discardUnopened(): Promise<number[]> {
    const unopened = await this.unopened();
    if (unopened.length > 0) await this.models.MerchantKey.destroy({ where: { merchant_id: unopened } });
    return unopened;
  }
}
