import type { Pool } from 'mysql2/promise';
import type { Sequelize } from 'sequelize';
import type { Clock } from '../../shared/clock.js';
import { type RandomSource, randomId } from '../../shared/ids.js';
import type { SecretBox } from '../../shared/secret-box.js';
import { AttemptStore } from './attempts.js';
import { AuditStore } from './audit.js';
import { CheckpointStore } from './checkpoints.js';
import { ClosureStore } from './closures.js';
import { DisputeStore } from './disputes.js';
import { HistoryStore } from './history.js';
import { HoldStore } from './holds.js';
import { InboxStore } from './inbox.js';
import { MerchantKeyStore } from './merchant-keys.js';
import { defineModels } from './models.js';
import { OperationStore } from './operations.js';
import { OperatorStore } from './operators.js';
import { OrderRequestStore } from './order-requests.js';
import { OrderWriter } from './order-writer.js';
import { OrderStore } from './orders.js';
import { OutboxStore } from './outbox.js';
import { PaymentLinkStore } from './payment-links.js';
import { PollStore } from './polls.js';
import { ReportStore } from './reports.js';
import { RetentionStore } from './retention.js';
import { ReviewStore } from './reviews.js';
import { SavedCardStore } from './saved-cards.js';
import { SecretStore } from './secrets.js';
import { UnmatchedMoneyStore } from './unmatched.js';

/**
 * The merchant database: the one folder that knows SQL and Sequelize. Each part hands out plain
 * records (./records.ts); nothing outside this folder sees a model or a database transaction.
 */
export interface Store {
  orders: OrderStore;
  /** The Idempotency-Keys of POST /orders, each with the order it made. */
  orderRequests: OrderRequestStore;
  /** Orders that end: closing one, and those ORDER_TTL may end. */
  closures: ClosureStore;
  /** Payment links: made through the order's writer, found by their token's hash. */
  paymentLinks: PaymentLinkStore;
  attempts: AttemptStore;
  history: HistoryStore;
  holds: HoldStore;
  operations: OperationStore;
  inbox: InboxStore;
  secrets: SecretStore;
  /** The linked merchants' own gateway keys stored at rest (platform mode), sealed. */
  merchantKeys: MerchantKeyStore;
  polls: PollStore;
  checkpoints: CheckpointStore;
  reports: ReportStore;
  unmatched: UnmatchedMoneyStore;
  disputes: DisputeStore;
  outbox: OutboxStore;
  operators: OperatorStore;
  audit: AuditStore;
  reviews: ReviewStore;
  savedCards: SavedCardStore;
  /** What ages out after RETENTION_DAYS (issue 43, part 5). */
  retention: RetentionStore;
}

export interface StoreDeps {
  sequelize: Sequelize;
  /** mysql2's pool, for the inbox's batches (infra/database.ts createPool). */
  pool: Pool;
  /** The transitions' own pool, the one that takes several statements a query (createTransitionPool). */
  transitionPool: Pool;
  clock: Clock;
  random: RandomSource;
  /**
   * Seals the webhook signing secrets, saved cards' vault tokens, the client secrets kept for a
   * replay and the merchants' own gateway keys.
   */
  box: SecretBox;
}

export function createStore({ sequelize, pool, transitionPool, clock, random, box }: StoreDeps): Store {
  const models = defineModels(sequelize);
  // Every change of an order goes through this one writer (order-writer.ts).
  const writer = new OrderWriter(transitionPool, clock, random);
  const history = new HistoryStore(models);
  const audit = new AuditStore(models, clock);
  const disputes = new DisputeStore(sequelize, models, writer);
  const orders = new OrderStore(sequelize, models, writer, clock, random);
  return {
    orders,
    orderRequests: new OrderRequestStore(models, orders, box, clock),
    closures: new ClosureStore(sequelize, models, writer),
    paymentLinks: new PaymentLinkStore(models, writer, random),
    attempts: new AttemptStore(pool, models),
    history,
    holds: new HoldStore(sequelize, models, clock),
    operations: new OperationStore(models, writer, clock, random),
    inbox: new InboxStore(models, pool, () => randomId('', random, 16)),
    secrets: new SecretStore(models, box, clock),
    merchantKeys: new MerchantKeyStore(models, box, clock),
    polls: new PollStore(sequelize, models),
    checkpoints: new CheckpointStore(models, clock),
    reports: new ReportStore(models, disputes),
    unmatched: new UnmatchedMoneyStore(sequelize, models, audit, clock, random),
    disputes,
    outbox: new OutboxStore(pool),
    operators: new OperatorStore(sequelize, models, audit, clock, random),
    audit,
    reviews: new ReviewStore(models, writer, random),
    savedCards: new SavedCardStore(sequelize, models, audit, box, clock, random),
    retention: new RetentionStore(pool),
  };
}

export type { AuditEntry, AuditLine } from './audit.js';
export type { Closed, CloseRequest, ExpiryCursor, Standing as ClosingStanding } from './closures.js';
export { isDispute, type LoseRefusal } from './disputes.js';
export type { StoredMerchantKey } from './merchant-keys.js';
export { OperatorExists } from './operators.js';
export type { OrderOnce, OrderRequestKey } from './order-requests.js';
export type {
  Change,
  CreatedOrder,
  NewOrder,
  OrderBeforeAttempt,
  Transitioned,
  TransitionTarget,
} from './orders.js';
export { DuplicateReference, OrderNotFound } from './orders.js';
export type { MadeLink, NewLink } from './payment-links.js';
export type { PollTarget } from './polls.js';
export type * from './records.js';
export type { ReportCursor, ReportSource } from './reports.js';
export type { Pruned, ScannedEvent } from './retention.js';
export type { ListPosition, OrderListQuery, OrderPage } from './reviews.js';
export type { KnownInstrument, Revocation } from './saved-cards.js';
export type { Decided, Kept, SeenMoney } from './unmatched.js';
