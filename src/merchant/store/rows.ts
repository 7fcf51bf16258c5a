import type { AttemptRecord, OrderRecord } from './records.js';

/**
 * The worker's hot path reads and writes orders, attempts and the inbox through mysql2 directly
 * (infra/database.ts createPool): the ORM's model instances cost more than the queries. These turn
 * the rows mysql2 answers into the same plain records the models give (the store test compares them).
 */
export const ORDER_COLUMNS = [
  'id',
  'reference',
  'amount_minor',
  'currency',
  'description',
  'customer',
  'status',
  'captured_minor',
  'refunded_minor',
  'disputed_minor',
  'failure_code',
  'needs_review',
  'review_reason',
  'resolved_reasons',
  'current_attempt_id',
  'version',
  'next_poll_at',
  'created_at',
  'updated_at',
];

/** Every column but the sealed 3DS hold and its expiry: only the hold store reads those. */
export const ATTEMPT_COLUMNS = [
  'id',
  'order_id',
  'kind',
  'mode',
  'payment_method',
  'gateway_transaction_id',
  'payment_session_id',
  'verification_id',
  'status',
  'captured_minor',
  'refunded_minor',
  'disputed_minor',
  'capture_id',
  'failure_code',
  'session_expires_at',
  'capture_before',
  'money_at',
  'gateway_status',
  'gateway_amount_minor',
  'gateway_currency',
  'gateway_captured_minor',
  'gateway_refunded_minor',
  'observed_at',
  'observed_source',
  'created_at',
  'updated_at',
];

// biome-ignore lint/suspicious/noExplicitAny: a row as mysql2 answers it
type Row = Record<string, any>;

/** MariaDB answers BOOLEAN as 0/1 and JSON as its text. */
export function orderFromRow(row: Row): OrderRecord {
  return {
    ...(row as OrderRecord),
    customer: typeof row.customer === 'string' ? JSON.parse(row.customer) : row.customer,
    needs_review: Boolean(row.needs_review),
  };
}

export function attemptFromRow(row: Row): AttemptRecord {
  return { ...(row as AttemptRecord) };
}

/** Values for `SET ?`: objects (JSON columns) as their text, the rest as they are. */
export function columnValues(change: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(change).map(([k, v]) => [
      k,
      v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v,
    ]),
  );
}
