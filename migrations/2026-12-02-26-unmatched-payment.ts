import { DataTypes, type QueryInterface } from 'sequelize';
import { INITIAL_PAYMENT } from '../src/merchant/orders/decide.js';
import { keptAfter } from '../src/merchant/orders/unmatched-money.js';

/**
 * issue 44, part 2: gateway money with no order carries its payment as an order's attempt does (what
 * was captured, refunded and charged back, and the gateway's time of the latest money record), read
 * by decide's rules, so a chargeback counts in the report's unmatched totals and its reversal is news.
 * Rows kept before are read again from what they keep, as one record each (the rule the kit applies
 * to a first sight, orders/unmatched-money.ts keptAfter); their gateway time is unknown (null), as an
 * attempt's was before money_at, so their next record is placed by stage until one carries a time.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('unmatched_money', 'payment_status', {
    type: DataTypes.STRING(32),
    allowNull: false,
    defaultValue: 'pending',
  });
  await q.addColumn('unmatched_money', 'captured_minor', { type: DataTypes.BIGINT, allowNull: true });
  await q.addColumn('unmatched_money', 'disputed_minor', {
    type: DataTypes.BIGINT,
    allowNull: false,
    defaultValue: 0,
  });
  await q.addColumn('unmatched_money', 'money_at', { type: DataTypes.DATE(3), allowNull: true });
  let after = '';
  for (;;) {
    const [rows] = (await q.sequelize.query(
      `SELECT id, transaction_id, related_transaction_id, transaction_type, status, amount_minor,
              refunded_minor, currency, capture_before
         FROM unmatched_money WHERE id > ? ORDER BY id LIMIT 500`,
      { replacements: [after] },
    )) as [KeptRow[], unknown];
    for (const row of rows) {
      const { payment } = keptAfter(INITIAL_PAYMENT, {
        id: row.transaction_id,
        relatedId: row.related_transaction_id,
        type: row.transaction_type,
        status: row.status,
        amountMinor: Number(row.amount_minor),
        currency: row.currency,
        refundedMinor: Number(row.refunded_minor),
        captureBefore: row.capture_before === null ? null : new Date(row.capture_before).getTime(),
      });
      await q.sequelize.query(
        'UPDATE unmatched_money SET payment_status = ?, captured_minor = ?, disputed_minor = ? WHERE id = ?',
        { replacements: [payment.status, payment.capturedMinor, payment.disputedMinor, row.id] },
      );
    }
    if (rows.length < 500) return;
    after = rows.at(-1)!.id;
  }
}

interface KeptRow {
  id: string;
  transaction_id: string;
  related_transaction_id: string | null;
  transaction_type: string;
  status: string;
  amount_minor: number | string;
  refunded_minor: number | string;
  currency: string;
  capture_before: Date | string | null;
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeColumn('unmatched_money', 'money_at');
  await q.removeColumn('unmatched_money', 'disputed_minor');
  await q.removeColumn('unmatched_money', 'captured_minor');
  await q.removeColumn('unmatched_money', 'payment_status');
}
