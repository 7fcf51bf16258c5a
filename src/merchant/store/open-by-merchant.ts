import { QueryTypes, type Sequelize } from 'sequelize';

/** What a gauge counts, by merchant (null: the row names none) and currency. */
export interface OpenByMerchant {
  merchant_id: number | null;
  currency: string;
  open: number;
}

/**
 * Runs `sql`, a count that selects `merchant_id`, `currency` and `n` (grouped by the first two), and
 * answers its rows as numbers: MySQL hands a COUNT and a BIGINT back as text.
 */
export async function openByMerchant(sequelize: Sequelize, sql: string): Promise<OpenByMerchant[]> {
  const rows = await sequelize.query<{
    merchant_id: number | string | null;
    currency: string;
    n: number | string;
  }>(sql, { type: QueryTypes.SELECT });
  return rows.map((r) => ({
    merchant_id: r.merchant_id === null ? null : Number(r.merchant_id),
    currency: r.currency,
    open: Number(r.n),
  }));
}
