import type { QueryInterface } from 'sequelize';

/**
 * Forgetting a customer (issue 43, part 4): `orders.customer_id` is the shop's id of the order's
 * customer as the `customer` JSON says it (`merchant_customer_id`), computed by the database (VIRTUAL:
 * never written, nothing stored twice) and indexed, so that `POST /customers/{id}/erase` finds a
 * customer's orders without reading every order. An erased order's customer names nobody: its
 * `customer_id` is NULL.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.sequelize.query(
    `ALTER TABLE orders ADD COLUMN customer_id VARCHAR(255)
       AS (JSON_VALUE(customer, '$.merchant_customer_id')) VIRTUAL`,
  );
  await q.addIndex('orders', ['customer_id'], { name: 'orders_customer' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.removeIndex('orders', 'orders_customer');
  await q.removeColumn('orders', 'customer_id');
}
