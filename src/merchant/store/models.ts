import {
  type Attributes,
  DataTypes,
  type Model,
  type ModelStatic,
  type Optional,
  type Sequelize,
} from 'sequelize';
import type {
  AttemptRecord,
  AuditRecord,
  CheckpointRecord,
  DisputeRecord,
  HistoryRecord,
  OperationRecord,
  OperatorRecord,
  OrderRecord,
  ReversalRecord,
  SavedCardRecord,
  SecretRecord,
  UnmatchedMoneyRecord,
} from './records.js';
import {
  ATTEMPTS,
  attributesOf,
  type Columns,
  INBOX,
  type OmittableOf,
  ORDERS,
  type RowOf,
  recordFrom,
} from './tables.js';

/**
 * The tables of migrations/ as Sequelize models, for the store's files alone. The migrations are the
 * schema's history and stay as written; these describe the schema as it is now, and a test checks
 * that the two agree column for column. The hot tables' models (orders, attempts, the inbox) take
 * their attributes from the tables' one description (tables.ts).
 */
type Row<A extends object, Defaults extends keyof A = never> = Model<A, Optional<A, Defaults>> & A;
/** A hot table's row (every column, hidden ones too); an INSERT may leave out what has a default or may be NULL. */
type HotRow<T extends { readonly columns: Columns }> = Row<RowOf<T>, OmittableOf<T>>;
export type OrderRow = HotRow<typeof ORDERS>;
export type AttemptRow = HotRow<typeof ATTEMPTS>;
export type OperationRow = Row<OperationRecord>;
export type HistoryRow = Row<HistoryRecord, 'id'>;
export type SecretRow = Row<SecretRecord, 'id' | 'active' | 'merchant_id'>;
export type InboxRow = HotRow<typeof INBOX>;
export type CheckpointRow = Row<CheckpointRecord>;
/** The column holds '' for a record without a reference (the unique key's part); the record says null. */
export type UnmatchedMoneyColumns = Omit<UnmatchedMoneyRecord, 'reference'> & { reference: string };
export type UnmatchedMoneyRow = Row<
  UnmatchedMoneyColumns,
  | 'seen_count'
  | 'resolution'
  | 'resolved_note'
  | 'resolved_by'
  | 'resolved_at'
  | 'disputed_minor'
  | 'merchant_id'
>;

export type DisputeRow = Row<
  DisputeRecord,
  'outcome' | 'charged_back_at' | 'closed_at' | 'closed_by' | 'note'
>;
export type ReversalRow = Row<ReversalRecord>;
/** The scope is kept as text (`1001,1004`), the record's list once read (store/operators.ts). */
export type OperatorColumns = Omit<OperatorRecord, 'merchant_ids'> & { merchant_ids: string | null };
export type OperatorRow = Row<OperatorColumns, 'revoked_at' | 'revoked_by' | 'merchant_ids'>;
export type AuditRow = Row<AuditRecord, 'id'>;
/** The sealed vault token and its digest stay in the store (saved-cards.ts). */
export interface VaultTokenColumns {
  token_hash: string;
  token_sealed: string;
}
export type SavedCardRow = Row<
  SavedCardRecord & VaultTokenColumns,
  'saved_by_order_id' | 'revoked_at' | 'revoked_by' | 'merchant_id'
>;
/** When the kit last had the gateway's list of a customer's saved cards (merchant 0: none named). */
export type SavedCardSyncRow = Row<{ customer_id: string; merchant_id: number; synced_at: Date }>;
/** An Idempotency-Key of POST /orders and the order it made (store/order-requests.ts). */
export interface OrderRequestColumns {
  key_digest: string;
  scope: string;
  request_digest: string;
  order_id: string;
  client_secret_sealed: string;
  created_at: Date;
  expires_at: Date;
}
export type OrderRequestRow = Row<OrderRequestColumns>;
/** A payment link (store/payment-links.ts): its token's hash, never the token. */
export interface PaymentLinkColumns {
  id: string;
  order_id: string;
  token_hash: string;
  payment_method: string;
  expires_at: Date;
  created_at: Date;
  created_by: string;
}
export type PaymentLinkRow = Row<PaymentLinkColumns>;
/** A linked merchant's own gateway key, sealed (store/merchant-keys.ts): never opened outside that file. */
export interface MerchantKeyColumns {
  merchant_id: number;
  key_sealed: string;
  created_at: Date;
  updated_at: Date;
}
export type MerchantKeyRow = Row<MerchantKeyColumns>;

export interface Models {
  Order: ModelStatic<OrderRow>;
  Attempt: ModelStatic<AttemptRow>;
  Operation: ModelStatic<OperationRow>;
  History: ModelStatic<HistoryRow>;
  Secret: ModelStatic<SecretRow>;
  Inbox: ModelStatic<InboxRow>;
  Checkpoint: ModelStatic<CheckpointRow>;
  UnmatchedMoney: ModelStatic<UnmatchedMoneyRow>;
  Dispute: ModelStatic<DisputeRow>;
  DisputeReversal: ModelStatic<ReversalRow>;
  Operator: ModelStatic<OperatorRow>;
  Audit: ModelStatic<AuditRow>;
  SavedCard: ModelStatic<SavedCardRow>;
  SavedCardSync: ModelStatic<SavedCardSyncRow>;
  OrderRequest: ModelStatic<OrderRequestRow>;
  PaymentLink: ModelStatic<PaymentLinkRow>;
  MerchantKey: ModelStatic<MerchantKeyRow>;
}

// Factories: Sequelize writes into attribute definitions, so two attributes must never share one object.
const str = (n: number, allowNull = true) => ({ type: DataTypes.STRING(n), allowNull });
const when = (allowNull = false) => ({ type: DataTypes.DATE(3), allowNull });
const minor = (allowNull = true) => ({ type: DataTypes.BIGINT, allowNull });
const id = (n = 32) => ({ type: DataTypes.STRING(n), primaryKey: true });
const options = (tableName: string) => ({ tableName, timestamps: false });

/** Defines the models on one connection (each kit, CLI run or test has its own). */
export function defineModels(sequelize: Sequelize): Models {
  const Order = sequelize.define<OrderRow>('Order', attributesOf(ORDERS), options(ORDERS.name));
  const Attempt = sequelize.define<AttemptRow>('Attempt', attributesOf(ATTEMPTS), options(ATTEMPTS.name));
  const Operation = sequelize.define<OperationRow>(
    'Operation',
    {
      id: id(),
      order_id: str(32, false),
      attempt_id: str(32, false),
      operation: str(16, false),
      idempotency_key: str(64, false),
      request_key: str(255, false),
      amount_minor: minor(false),
      reason: str(255),
      status: str(16, false),
      result_transaction_id: str(64),
      error_code: str(64),
      error_message: str(512),
      created_at: when(),
      updated_at: when(),
    },
    options('gateway_operations'),
  );
  const History = sequelize.define<HistoryRow>(
    'History',
    {
      id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
      order_id: str(32, false),
      attempt_id: str(32),
      source: str(16, false),
      source_id: str(128, false),
      status_before: str(32, false),
      status_after: str(32, false),
      outcome: str(16, false),
      detail: str(512),
      created_at: when(),
    },
    options('order_history'),
  );
  const Secret = sequelize.define<SecretRow>(
    'Secret',
    {
      id: { type: DataTypes.INTEGER, autoIncrement: true, primaryKey: true },
      secret_sealed: { type: DataTypes.TEXT, allowNull: false },
      label: str(64, false),
      // Whose endpoint signs with it (platform mode); null: stored before, the first merchant's.
      merchant_id: { type: DataTypes.INTEGER, allowNull: true },
      active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      created_at: when(),
      retired_at: when(true),
    },
    options('webhook_secrets'),
  );
  const Inbox = sequelize.define<InboxRow>('InboxEvent', attributesOf(INBOX), options(INBOX.name));
  const Checkpoint = sequelize.define<CheckpointRow>(
    'Checkpoint',
    { name: id(64), value: str(64, false), updated_at: when() },
    options('kit_checkpoints'),
  );
  const UnmatchedMoney = sequelize.define<UnmatchedMoneyRow>(
    'UnmatchedMoney',
    {
      id: id(),
      transaction_id: str(64, false),
      reference: { ...str(255, false), defaultValue: '' },
      related_transaction_id: str(64),
      transaction_type: str(32, false),
      status: str(32, false),
      status_reason: str(64),
      amount_minor: minor(false),
      refunded_minor: { ...minor(false), defaultValue: 0 },
      currency: str(16, false),
      capture_before: when(true),
      payment_status: str(32, false),
      captured_minor: minor(true),
      disputed_minor: { ...minor(false), defaultValue: 0 },
      money_at: when(true),
      source: str(16, false),
      source_id: str(128, false),
      first_seen_at: when(),
      last_seen_at: when(),
      seen_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
      order_id: str(32),
      resolution: { ...str(16, false), defaultValue: 'open' },
      resolved_note: str(512),
      resolved_by: str(64),
      resolved_at: when(true),
      merchant_id: { type: DataTypes.INTEGER, allowNull: true },
    },
    options('unmatched_money'),
  );
  const Dispute = sequelize.define<DisputeRow>(
    'Dispute',
    {
      id: id(),
      order_id: str(32, false),
      attempt_id: str(32, false),
      transaction_id: str(64),
      amount_minor: minor(false),
      currency: { type: DataTypes.CHAR(3), allowNull: false },
      outcome: { ...str(8, false), defaultValue: 'open' },
      charged_back_at: when(true),
      opened_at: when(),
      closed_at: when(true),
      closed_by: str(64),
      note: str(512),
    },
    options('disputes'),
  );
  const DisputeReversal = sequelize.define<ReversalRow>(
    'DisputeReversal',
    {
      attempt_id: { ...str(32, false), primaryKey: true },
      reversed_at: { ...when(), primaryKey: true },
      order_id: str(32, false),
    },
    options('dispute_reversals'),
  );
  const Operator = sequelize.define<OperatorRow>(
    'Operator',
    {
      id: id(),
      name: str(64, false),
      role: str(16, false),
      merchant_ids: str(255),
      token_hash: { type: DataTypes.CHAR(64), allowNull: false },
      active_name: str(64),
      created_at: when(),
      created_by: str(64, false),
      revoked_at: when(true),
      revoked_by: str(64),
    },
    options('operators'),
  );
  const Audit = sequelize.define<AuditRow>(
    'Audit',
    {
      id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
      at: when(),
      actor: str(64, false),
      role: str(16, false),
      credential: str(32, false),
      action: str(32, false),
      order_id: str(32),
      subject_id: str(64),
      amount_minor: minor(),
      currency: str(16),
      reason: str(512),
      detail: str(512),
      request_id: str(128),
    },
    options('audit_log'),
  );
  const SavedCard = sequelize.define<SavedCardRow>(
    'SavedCard',
    {
      id: id(),
      customer_id: str(255, false),
      merchant_id: { type: DataTypes.INTEGER, allowNull: true },
      token_hash: { type: DataTypes.CHAR(64), allowNull: false, unique: true },
      token_sealed: str(512, false),
      brand: str(16, false),
      last4: { type: DataTypes.CHAR(4), allowNull: false },
      exp_month: { type: DataTypes.TINYINT, allowNull: false },
      exp_year: { type: DataTypes.SMALLINT, allowNull: false },
      status: str(16, false),
      saved_by_order_id: str(32),
      created_at: when(),
      updated_at: when(),
      revoked_at: when(true),
      revoked_by: str(64),
    },
    options('saved_cards'),
  );
  const SavedCardSync = sequelize.define<SavedCardSyncRow>(
    'SavedCardSync',
    {
      customer_id: { type: DataTypes.STRING(255), primaryKey: true },
      merchant_id: { type: DataTypes.INTEGER, primaryKey: true, allowNull: false },
      synced_at: when(),
    },
    options('saved_card_syncs'),
  );
  const OrderRequest = sequelize.define<OrderRequestRow>(
    'OrderRequest',
    {
      key_digest: { type: DataTypes.CHAR(43), primaryKey: true },
      scope: str(32, false),
      request_digest: { type: DataTypes.CHAR(43), allowNull: false },
      order_id: str(32, false),
      client_secret_sealed: str(255, false),
      created_at: when(),
      expires_at: when(),
    },
    options('order_requests'),
  );
  const PaymentLink = sequelize.define<PaymentLinkRow>(
    'PaymentLink',
    {
      id: id(),
      order_id: str(32, false),
      token_hash: { type: DataTypes.CHAR(43), allowNull: false, unique: true },
      payment_method: str(64, false),
      expires_at: when(),
      created_at: when(),
      created_by: str(96, false),
    },
    options('payment_links'),
  );
  const MerchantKey = sequelize.define<MerchantKeyRow>(
    'MerchantKey',
    {
      merchant_id: { type: DataTypes.INTEGER, primaryKey: true },
      key_sealed: str(512, false),
      created_at: when(),
      updated_at: when(),
    },
    options('merchant_keys'),
  );
  return {
    Order,
    Attempt,
    Operation,
    History,
    Secret,
    Inbox,
    Checkpoint,
    UnmatchedMoney,
    Dispute,
    DisputeReversal,
    Operator,
    Audit,
    SavedCard,
    SavedCardSync,
    OrderRequest,
    PaymentLink,
    MerchantKey,
  };
}

/** A row as its plain record. */
// `clone`: without it Sequelize hands out the row's own dataValues, which a later update would change.
export const plain = <R extends Model>(row: R): Attributes<R> => row.get({ plain: true, clone: true });

/** An order's row as its record: the hidden column (its client secret's hash) stays behind. */
export function orderRecord(row: OrderRow): OrderRecord {
  return recordFrom(ORDERS, plain(row));
}

/** An attempt's row as its record: the hidden columns (the sealed hold) stay behind. */
export function attemptRecord(row: AttemptRow): AttemptRecord {
  return recordFrom(ATTEMPTS, plain(row));
}
