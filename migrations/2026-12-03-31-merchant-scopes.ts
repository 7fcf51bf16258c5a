import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Credentials and customers per merchant (issue 45, part 2).
 *
 * `operators.merchant_ids`: the merchants a token is scoped to, as `1001,1004`; NULL (every token
 * made before) is every merchant the kit serves.
 *
 * `saved_cards.merchant_id`: a customer id names a customer of one merchant, so a saved card is one
 * merchant's customer's: merchant A's `cus-1` and merchant B's `cus-1` never see each other's cards.
 * NULL (every card saved before) is the kit's first merchant's, as an order's NULL is. Indexed with
 * the customer: each list, payment and erasure reads one customer of one merchant.
 *
 * `saved_card_syncs.merchant_id`: when the kit last had the gateway's list of that merchant's
 * customer; 0 names none (the key's own account, and every row before: a kit serving merchants asks
 * the gateway again at its next list, which is all such a row saves).
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.addColumn('operators', 'merchant_ids', { type: DataTypes.STRING(255), allowNull: true });
  await q.addColumn('saved_cards', 'merchant_id', { type: DataTypes.INTEGER, allowNull: true });
  await q.addIndex('saved_cards', ['customer_id', 'merchant_id', 'status'], {
    name: 'saved_cards_customer_merchant',
  });
  await q.addColumn('saved_card_syncs', 'merchant_id', {
    type: DataTypes.INTEGER,
    allowNull: false,
    defaultValue: 0,
  });
  await q.sequelize.query(
    'ALTER TABLE saved_card_syncs DROP PRIMARY KEY, ADD PRIMARY KEY (customer_id, merchant_id)',
  );
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.sequelize.query('DELETE FROM saved_card_syncs WHERE merchant_id <> 0');
  await q.sequelize.query('ALTER TABLE saved_card_syncs DROP PRIMARY KEY, ADD PRIMARY KEY (customer_id)');
  await q.removeColumn('saved_card_syncs', 'merchant_id');
  await q.removeIndex('saved_cards', 'saved_cards_customer_merchant');
  await q.removeColumn('saved_cards', 'merchant_id');
  await q.removeColumn('operators', 'merchant_ids');
}
