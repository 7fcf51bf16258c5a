import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * issue 20, part 1: a transactional outbox of order events. An event row is written in the same
 * transaction as the order change it tells of; the dispatcher fans each one out to the subscribers
 * (the shop's webhook endpoints, handlers in the fork's code) as one delivery row each, and keeps
 * every try of a delivery.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  const when = (allowNull = false) => ({ type: DataTypes.DATE(3), allowNull });
  await q.createTable('order_events', {
    /** The order of writing: deliveries of one order follow it. */
    seq: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
    /** `oev_…`: the Standard Webhooks `webhook-id`, the same on every try and replay. */
    id: { type: DataTypes.STRING(32), allowNull: false, unique: true },
    order_id: { type: DataTypes.STRING(32), allowNull: false },
    type: { type: DataTypes.STRING(32), allowNull: false },
    /** The body sent: `{type, timestamp, data: {order}}`, the order as it is after the change. */
    payload: { type: DataTypes.TEXT('medium'), allowNull: false },
    created_at: when(),
    /** When the dispatcher made its deliveries; null until then. */
    fanned_out_at: when(true),
  });
  await q.addIndex('order_events', ['fanned_out_at', 'seq'], { name: 'order_events_fan_out' });
  await q.addIndex('order_events', ['order_id', 'seq'], { name: 'order_events_order' });
  await q.createTable('order_event_deliveries', {
    id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
    event_seq: { type: DataTypes.BIGINT, allowNull: false },
    order_id: { type: DataTypes.STRING(32), allowNull: false },
    /** `url:<endpoint>` or `handler:<name>`. */
    subscriber: { type: DataTypes.STRING(512), allowNull: false },
    /** `pending`, `delivered` or `failed` (given up: a replay sends it again). */
    status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'pending' },
    attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    next_attempt_at: when(),
    /** A dispatcher's claim while it sends; a claim that lapses (the process died) is taken again. */
    locked_until: when(true),
    last_error: { type: DataTypes.STRING(512), allowNull: true },
    delivered_at: when(true),
    created_at: when(),
  });
  await q.addIndex('order_event_deliveries', ['event_seq', 'subscriber'], {
    unique: true,
    name: 'order_event_deliveries_unique',
  });
  await q.addIndex('order_event_deliveries', ['status', 'next_attempt_at'], { name: 'order_event_deliveries_due' });
  await q.addIndex('order_event_deliveries', ['order_id', 'subscriber', 'status', 'event_seq'], {
    name: 'order_event_deliveries_order',
  });
  await q.createTable('order_event_attempts', {
    id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
    delivery_id: { type: DataTypes.BIGINT, allowNull: false },
    event_seq: { type: DataTypes.BIGINT, allowNull: false },
    at: when(),
    /** `delivered` or `failed`. */
    result: { type: DataTypes.STRING(16), allowNull: false },
    /** The endpoint's HTTP status; null for a handler or no answer. */
    http_status: { type: DataTypes.INTEGER, allowNull: true },
    error: { type: DataTypes.STRING(512), allowNull: true },
    ms: { type: DataTypes.INTEGER, allowNull: false },
  });
  await q.addIndex('order_event_attempts', ['event_seq', 'id'], { name: 'order_event_attempts_event' });
}

export async function down({ context: q }: { context: QueryInterface }): Promise<void> {
  await q.dropTable('order_event_attempts');
  await q.dropTable('order_event_deliveries');
  await q.dropTable('order_events');
}
