import { type DataType, DataTypes, type ModelAttributeColumnOptions } from 'sequelize';
import { ACTION_URL_MAX } from '../orders/observation.js';
import type { ReviewResolution } from '../orders/review.js';
import type { CloseReason, OrderStatus } from '../orders/status.js';

/**
 * The hot tables (orders, their payment attempts, the webhook inbox), each described once: per column
 * its SQL type and nullability as the model declares them, its default, how a value mysql2 answers
 * becomes the record's, the record field's TypeScript type, and whether it stays out of the record.
 * The record types (records.ts), the models' attributes (models.ts), the column lists of the
 * worker's raw reads and their row conversion all come from here: a column added here is in all of
 * them, and nowhere else needs to be told. The migrations stay the schema's history; the store test
 * checks this against the migrated tables.
 */

/**
 * One column. `T` is the record field's type (null included when the column is nullable), `Omittable`
 * whether an INSERT may leave it out (it has a default or may be NULL), `Hidden` whether it stays out
 * of the record (only its own store reads it).
 */
export class Column<T = unknown, Omittable extends boolean = boolean, Hidden extends boolean = boolean> {
  private constructor(
    /** A new Sequelize type each time: Sequelize writes into attribute definitions. */
    readonly sqlType: () => DataType,
    readonly allowNull: boolean,
    /** A value as mysql2 answers it (never null: null stays null) -> the record's. */
    readonly convert: ((raw: unknown) => T) | null,
    readonly omittable: Omittable,
    readonly hidden: Hidden,
    readonly primaryKey: boolean,
    readonly defaultValue: T | undefined,
    /** A unique index on this column alone: a row's write must not take another row's value. */
    readonly uniqueIndex: boolean = false,
    /** Counts the row's changes: a batch's write checks it still holds what the batch read. */
    readonly version: boolean = false,
  ) {}

  static of<T>(
    sqlType: () => DataType,
    convert: ((raw: unknown) => T) | null = null,
  ): Column<T, false, false> {
    return new Column<T, false, false>(sqlType, false, convert, false, false, false, undefined);
  }

  /**
   * The record's value of a raw column value. A nullable column the row lacks is NULL: a row the
   * model just created holds only what it was given and the defaults (none of which is non-null for
   * a nullable column).
   */
  read(raw: unknown): T {
    if (raw === undefined && this.allowNull) return null as T;
    if (raw === null || raw === undefined || this.convert === null) return raw as T;
    return this.convert(raw);
  }

  /** A narrower type than the SQL one says: a status, a kind. */
  as<N extends T>(): Column<N, Omittable, Hidden> {
    return this as unknown as Column<N, Omittable, Hidden>;
  }

  /** NULL allowed (and what an INSERT that leaves it out stores). */
  nullable(): Column<T | null, true, Hidden> {
    return this.#with({ allowNull: true, omittable: true });
  }

  /** What an INSERT that leaves it out stores. */
  default(value: T): Column<T, true, Hidden> {
    return this.#with({ omittable: true, defaultValue: value });
  }

  key(): Column<T, Omittable, Hidden> {
    return this.#with({ primaryKey: true });
  }

  /** A unique index of its own (the migrations make it; the store test checks they agree). */
  unique(): Column<T, Omittable, Hidden> {
    return this.#with({ uniqueIndex: true });
  }

  /**
   * The row's version: what a batch's write checks is still the value it read, so that a row changed
   * by someone else since is not overwritten (store/batch-writes.ts).
   */
  counts(): Column<T, Omittable, Hidden> {
    return this.#with({ version: true });
  }

  /** Stays out of the record: only its own store (a raw read or the model) reads it. */
  hide(): Column<T, Omittable, true> {
    return this.#with({ hidden: true });
  }

  /** The Sequelize attribute (a new object each call, its type too). */
  attribute(): ModelAttributeColumnOptions {
    return {
      type: this.sqlType(),
      allowNull: this.allowNull,
      ...(this.primaryKey ? { primaryKey: true } : {}),
      ...(this.defaultValue !== undefined ? { defaultValue: this.defaultValue } : {}),
    };
  }

  // biome-ignore lint/suspicious/noExplicitAny: the builder's steps retype the same description
  #with(change: Partial<Record<keyof Column, unknown>>): any {
    const c = { ...this, ...change } as Column;
    return new Column(
      c.sqlType,
      c.allowNull,
      c.convert,
      c.omittable,
      c.hidden,
      c.primaryKey,
      c.defaultValue,
      c.uniqueIndex,
      c.version,
    );
  }
}

// The column kinds, as the models declare them.
const varchar = (n: number) => Column.of<string>(() => DataTypes.STRING(n));
const char = (n: number) => Column.of<string>(() => DataTypes.CHAR(n));
const text = (size?: 'medium') => Column.of<string>(() => (size ? DataTypes.TEXT(size) : DataTypes.TEXT));
/** Minor amounts and counters: mysql2 and Sequelize are set to answer BIGINT as a number. */
const bigint = () => Column.of<number>(() => DataTypes.BIGINT);
const integer = () => Column.of<number>(() => DataTypes.INTEGER);
const datetime = () => Column.of<Date>(() => DataTypes.DATE(3));
/** MariaDB answers BOOLEAN (TINYINT(1)) as 0 or 1. */
const boolean = () =>
  Column.of<boolean>(
    () => DataTypes.BOOLEAN,
    (raw) => Boolean(raw),
  );
/** MariaDB's JSON is LONGTEXT: mysql2 answers its text. */
const json = <T>() =>
  Column.of<T>(
    () => DataTypes.JSON,
    (raw) => (typeof raw === 'string' ? JSON.parse(raw) : raw) as T,
  );

export type Columns = Record<string, Column>;

export interface Table<C extends Columns = Columns> {
  readonly name: string;
  readonly columns: C;
  /** The record's columns, in the table's order: what the raw reads select. */
  readonly recordColumns: readonly string[];
  /** The columns that stay out of the record. */
  readonly hiddenColumns: readonly string[];
  /** The primary key's column. */
  readonly key: string;
  /** The columns an INSERT must name (no default, NOT NULL), the key included. */
  readonly requiredColumns: readonly string[];
  /** The columns with a unique index of their own, the key apart. */
  readonly uniqueColumns: readonly string[];
  /** The column that counts the row's changes (a batch's write checks it), if any. */
  readonly version: string | null;
}

function table<C extends Columns>(name: string, columns: C): Table<C> {
  const names = Object.keys(columns);
  return {
    name,
    columns,
    recordColumns: names.filter((n) => !columns[n]!.hidden),
    hiddenColumns: names.filter((n) => columns[n]!.hidden),
    key: names.find((n) => columns[n]!.primaryKey)!,
    requiredColumns: names.filter((n) => !columns[n]!.omittable),
    uniqueColumns: names.filter((n) => columns[n]!.uniqueIndex),
    version: names.find((n) => columns[n]!.version) ?? null,
  };
}

type ValueOf<C> = C extends Column<infer T, boolean, boolean> ? T : never;
/** A table, to the types below: its columns. */
type Described = { readonly columns: Columns };
/** Every column of a table's row, with its record type (the model's attributes). */
export type RowOf<T extends Described> = { -readonly [K in keyof T['columns']]: ValueOf<T['columns'][K]> };
/** The columns that stay out of the record. */
export type HiddenOf<T extends Described> = {
  [K in keyof T['columns']]: T['columns'][K] extends Column<unknown, boolean, true> ? K : never;
}[keyof T['columns']];
/** The columns an INSERT may leave out (a default, or NULL). */
export type OmittableOf<T extends Described> = {
  [K in keyof T['columns']]: T['columns'][K] extends Column<unknown, true, boolean> ? K : never;
}[keyof T['columns']] &
  keyof RowOf<T>;
/** The plain record the store hands out: the row without its hidden columns. */
export type RecordOf<T extends Described> = Omit<RowOf<T>, HiddenOf<T>>;

export const ORDERS = table('orders', {
  id: varchar(32).key(),
  /**
   * The gateway merchant the order is for (issue 45): what a partner key names when it asks about it.
   * Null: made before platform mode, or for a merchant key whose id the gateway did not say; such an
   * order is the first configured merchant's (client/merchant-gateways.ts).
   */
  merchant_id: integer().nullable(),
  reference: varchar(255).unique(),
  amount_minor: bigint(),
  currency: char(3),
  description: varchar(1024).nullable(),
  customer: json<Record<string, unknown>>().nullable(),
  status: varchar(32).as<OrderStatus>(),
  captured_minor: bigint().nullable(),
  refunded_minor: bigint().default(0),
  /** What a chargeback took back, while the current attempt's payment is disputed; 0 otherwise. */
  disputed_minor: bigint().default(0),
  failure_code: varchar(64).nullable(),
  needs_review: boolean().default(false),
  review_reason: varchar(512).nullable(),
  /** The review reasons a person resolved (`; `-joined): the same finding again does not flag anew. */
  resolved_reasons: varchar(1024).nullable(),
  /** What a person last decided about the order's review (POST /orders/{id}/review); null: never resolved. */
  review_resolution: varchar(16).as<ReviewResolution>().nullable(),
  /** Who decided it, as its history line names them: `ada (finance)`. */
  review_resolved_by: varchar(96).nullable(),
  review_resolved_at: datetime().nullable(),
  current_attempt_id: varchar(32).nullable(),
  version: integer().default(0).counts(),
  /** When the poller next asks the gateway about it; null: nothing to ask (final, or nothing at the gateway). */
  next_poll_at: datetime().nullable(),
  /**
   * Why the order ended (issue 43, part 2), once it did: `cancelled` or `expired` (ORDER_TTL). Kept
   * when money reaches it after all: it takes no new attempt, whatever its status then.
   */
  closed_reason: varchar(16).as<CloseReason>().nullable(),
  closed_at: datetime().nullable(),
  created_at: datetime(),
  /** The order's last change: what the polling schedule counts its age from. */
  updated_at: datetime(),
  /**
   * The SHA-256 of the order's client secret (orders/client-secret.ts), set when it is made; null for
   * an order made before secrets. Out of the record: no view, event or log can carry it by mistake.
   */
  client_secret_hash: char(43).nullable().hide(),
  /**
   * The customer's id as `customer` says it (`merchant_customer_id`), computed by the database
   * (VIRTUAL: never written) and indexed: how an erasure finds a customer's orders. Out of the record:
   * `customer` is the one place a reader finds it.
   */
  customer_id: varchar(255).nullable().hide(),
});

/** A payment attempt. Its 3DS hold (ciphertext) is never part of the record: only the hold store reads it. */
export const ATTEMPTS = table('payment_attempts', {
  id: varchar(32).key(),
  order_id: varchar(32),
  kind: varchar(16).as<'card' | 'redirect'>(),
  mode: varchar(8).as<'sale' | 'auth'>().nullable(),
  payment_method: varchar(64).nullable(),
  /** The saved card it pays with (`card_...`): what a charge's Idempotency-Key holds it to. */
  saved_card_id: varchar(32).nullable(),
  gateway_transaction_id: varchar(64).nullable(),
  payment_session_id: varchar(64).nullable().unique(),
  verification_id: varchar(64).nullable().unique(),
  status: varchar(32).as<OrderStatus>(),
  captured_minor: bigint().nullable(),
  refunded_minor: bigint().default(0),
  /** decide's PaymentState.disputedMinor: what a chargeback took, while disputed. */
  disputed_minor: bigint().default(0),
  capture_id: varchar(64).nullable(),
  failure_code: varchar(64).nullable(),
  /** merchant.md, Card data: the sealed 3DS hold (AES-256-GCM), erased once taken or expired. */
  hold_sealed: text().nullable().hide(),
  hold_expires_at: datetime().nullable().hide(),
  /** A payment session's `expires_at`: the poller asks right after it. */
  session_expires_at: datetime().nullable(),
  /** The page the shopper is sent to (3DS challenge, hosted checkout): the order's `next_action`. */
  action_url: varchar(ACTION_URL_MAX).nullable(),
  /** An auth's deadline to be captured or voided, as its gateway record says (sandbox.md section 11). */
  capture_before: datetime().nullable(),
  /** The gateway's time of the latest record seen once money moved (decide's PaymentState.moneyAt). */
  money_at: datetime().nullable(),
  /** What the gateway last said of the attempt's transaction (the reconciliation report's right side). */
  gateway_status: varchar(32).nullable(),
  gateway_amount_minor: bigint().nullable(),
  gateway_currency: char(3).nullable(),
  gateway_captured_minor: bigint().nullable(),
  gateway_refunded_minor: bigint().nullable(),
  observed_at: datetime().nullable(),
  observed_source: varchar(16).nullable(),
  created_at: datetime(),
  updated_at: datetime(),
});

export const INBOX = table('webhook_inbox', {
  event_id: varchar(64).key(),
  event_type: varchar(64),
  transaction_id: varchar(64).nullable(),
  source: varchar(16),
  /** The event's bytes as the gateway signed them; card numbers outside its ids truncated (masked_fields). */
  payload: text('medium'),
  received_at: datetime(),
  queued_at: datetime().nullable(),
  processed_at: datetime().nullable(),
  outcome: varchar(16).nullable(),
  attempts: integer().default(0),
  last_error: varchar(512).nullable(),
  /** The receiver's batch that stored it (null: stored one by one, by recovery). */
  receipt: char(16).nullable(),
  /** Deliveries of the event after the first. */
  repeats: integer().default(0),
  /**
   * Its body was cleared after RETENTION_DAYS (`payload` is then empty); the row, its id, stays as
   * long as the gateway may deliver the event again, so a late delivery is still a duplicate.
   */
  payload_cleared: boolean().default(false),
  /**
   * Where a card number outside the gateway's ids was truncated before the payload was kept
   * (orders/event-masking.ts), for the order's history; null: nowhere (most events).
   */
  masked_fields: varchar(512).nullable(),
  /**
   * The merchant whose endpoint the event came to (platform mode: its receiver URL, its secret);
   * the reconciler applies it to that merchant's orders only. Null: stored before webhooks were per
   * merchant, or by a kit of one merchant whose id the gateway did not say (the first merchant's).
   */
  merchant_id: integer().nullable(),
});

/** A table's Sequelize attributes, every one a new object (Sequelize writes into them). */
export function attributesOf<C extends Columns>(
  t: Table<C>,
): { [K in keyof C]: ModelAttributeColumnOptions } {
  return Object.fromEntries(Object.entries(t.columns).map(([name, c]) => [name, c.attribute()])) as {
    [K in keyof C]: ModelAttributeColumnOptions;
  };
}

/** `a.id, a.order_id, ...`: the record's columns for a SELECT, each under `alias` when given. */
export function selectList(t: Table, alias?: string): string {
  return t.recordColumns.map((c) => (alias ? `${alias}.${c}` : c)).join(', ');
}

/**
 * A row as its plain record: each record column's value converted (0/1 to a boolean, JSON text to its
 * value), the hidden columns and anything else the row carries left out. Works on mysql2's rows and
 * on the models' plain rows alike (their values are already converted; a row just created lacks the
 * nullable columns it was not given, which the record says are null).
 */
export function recordFrom<C extends Columns>(t: Table<C>, row: Record<string, unknown>): RecordOf<Table<C>> {
  const record: Record<string, unknown> = {};
  for (const name of t.recordColumns) record[name] = t.columns[name]!.read(row[name]);
  return record as RecordOf<Table<C>>;
}
