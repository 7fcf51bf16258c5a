import type { QueryInterface } from 'sequelize';

/**
 * Every order event's body names the order's merchant (issue 45, platform mode): `data.order.merchant_id`,
 * as the order view shows it. Events written before orders had a merchant (migration 29) are still in
 * the outbox, waiting for an endpoint or sent again by a replay: their bodies get the field, null, as
 * their orders have it (such an order is the kit's first merchant's). Bodies that have it are left as
 * they are. Nothing to undo: a body with the field reads as before to code that does not know it.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.sequelize.query(
    `UPDATE order_events SET payload = JSON_INSERT(payload, '$.data.order.merchant_id', NULL)
      WHERE JSON_CONTAINS_PATH(payload, 'one', '$.data.order')
        AND NOT JSON_CONTAINS_PATH(payload, 'one', '$.data.order.merchant_id')`,
  );
}

export async function down(): Promise<void> {}
