import { DataTypes, type Model, type ModelStatic, type Optional, type Sequelize } from 'sequelize';
import type { OrderStatus } from '../merchant/orders/status.js';

/** The tables of migrations/, as Sequelize models, defined per connection: the repository is their only user. */
export interface OrderAttrs {
  id: string;
  reference: string;
  amount_minor: number;
  currency: string;
  description: string | null;
  customer: Record<string, unknown> | null;
  status: OrderStatus;
  captured_minor: number | null;
  refunded_minor: number;
  failure_code: string | null;
  needs_review: boolean;
  review_reason: string | null;
  current_attempt_id: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptAttrs {
  id: string;
  order_id: string;
  kind: 'card' | 'redirect';
  mode: 'sale' | 'auth' | null;
  payment_method: string | null;
  gateway_transaction_id: string | null;
  payment_session_id: string | null;
  verification_id: string | null;
  status: OrderStatus;
  captured_minor: number | null;
  refunded_minor: number;
  capture_id: string | null;
  failure_code: string | null;
  hold_sealed: string | null;
  hold_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type OperationKind = 'capture' | 'refund' | 'void';
export type OperationStatus = 'pending' | 'succeeded' | 'failed';

export interface OperationAttrs {
  id: string;
  order_id: string;
  attempt_id: string;
  operation: OperationKind;
  idempotency_key: string;
  request_key: string;
  amount_minor: number;
  reason: string | null;
  status: OperationStatus;
  result_transaction_id: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface HistoryAttrs {
  id: number;
  order_id: string;
  attempt_id: string | null;
  source: string;
  source_id: string;
  status_before: string;
  status_after: string;
  outcome: string;
  detail: string | null;
  created_at: Date;
}

export interface SecretAttrs {
  id: number;
  secret_sealed: string;
  label: string;
  active: boolean;
  created_at: Date;
  retired_at: Date | null;
}

type Row<A extends object, Defaults extends keyof A = never> = Model<A, Optional<A, Defaults>> & A;
export type OrderRow = Row<OrderAttrs, 'refunded_minor' | 'needs_review' | 'version'>;
export type AttemptRow = Row<AttemptAttrs, 'refunded_minor'>;
export type OperationRow = Row<OperationAttrs>;
export type HistoryRow = Row<HistoryAttrs, 'id'>;
export type SecretRow = Row<SecretAttrs, 'id' | 'active'>;

const str = (n: number, allowNull = true) => ({ type: DataTypes.STRING(n), allowNull });
// A factory: Sequelize writes into attribute definitions, so two attributes must never share one object.
const when = () => ({ type: DataTypes.DATE(3), allowNull: false });

export interface Models {
  Order: ModelStatic<OrderRow>;
  Attempt: ModelStatic<AttemptRow>;
  Operation: ModelStatic<OperationRow>;
  History: ModelStatic<HistoryRow>;
  Secret: ModelStatic<SecretRow>;
}

export function initModels(sequelize: Sequelize): Models {
  const Order = sequelize.define<OrderRow>(
    'Order',
    {
      id: { type: DataTypes.STRING(32), primaryKey: true },
      reference: str(255, false),
      amount_minor: { type: DataTypes.BIGINT, allowNull: false },
      currency: { type: DataTypes.CHAR(3), allowNull: false },
      description: str(1024),
      customer: { type: DataTypes.JSON, allowNull: true },
      status: str(32, false),
      captured_minor: { type: DataTypes.BIGINT, allowNull: true },
      refunded_minor: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
      failure_code: str(64),
      needs_review: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      review_reason: str(512),
      current_attempt_id: str(32),
      version: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      created_at: when(),
      updated_at: when(),
    },
    { tableName: 'orders' },
  );
  const Attempt = sequelize.define<AttemptRow>(
    'Attempt',
    {
      id: { type: DataTypes.STRING(32), primaryKey: true },
      order_id: str(32, false),
      kind: str(16, false),
      mode: str(8),
      payment_method: str(64),
      gateway_transaction_id: str(64),
      payment_session_id: str(64),
      verification_id: str(64),
      status: str(32, false),
      captured_minor: { type: DataTypes.BIGINT, allowNull: true },
      refunded_minor: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
      capture_id: str(64),
      failure_code: str(64),
      hold_sealed: { type: DataTypes.TEXT, allowNull: true },
      hold_expires_at: { type: DataTypes.DATE(3), allowNull: true },
      created_at: when(),
      updated_at: when(),
    },
    { tableName: 'payment_attempts' },
  );
  const Operation = sequelize.define<OperationRow>(
    'Operation',
    {
      id: { type: DataTypes.STRING(32), primaryKey: true },
      order_id: str(32, false),
      attempt_id: str(32, false),
      operation: str(16, false),
      idempotency_key: str(64, false),
      request_key: str(255, false),
      amount_minor: { type: DataTypes.BIGINT, allowNull: false },
      reason: str(255),
      status: str(16, false),
      result_transaction_id: str(64),
      error_code: str(64),
      error_message: str(512),
      created_at: when(),
      updated_at: when(),
    },
    { tableName: 'gateway_operations' },
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
    { tableName: 'order_history' },
  );
  const Secret = sequelize.define<SecretRow>(
    'Secret',
    {
      id: { type: DataTypes.INTEGER, autoIncrement: true, primaryKey: true },
      secret_sealed: { type: DataTypes.TEXT, allowNull: false },
      label: str(64, false),
      active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      created_at: when(),
      retired_at: { type: DataTypes.DATE(3), allowNull: true },
    },
    { tableName: 'webhook_secrets' },
  );
  return { Order, Attempt, Operation, History, Secret };
}
