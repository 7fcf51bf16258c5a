import type { Readable } from 'node:stream';
import { type CurrencyCode, formatMinor, isCurrencyCode } from '../../shared/money.js';
import { merchantOf } from '../orders/order-merchant.js';
import type { AuditLine } from '../store/index.js';
import { csvTable } from './csv.js';

/** One line of the audit export (GET /audit), JSON and CSV alike. */
export interface AuditRow {
  id: number;
  at: string;
  actor: string;
  role: string;
  credential: string;
  action: string;
  order_id: string | null;
  subject_id: string | null;
  currency: string | null;
  amount: number | null;
  amount_formatted: string | null;
  reason: string | null;
  detail: string | null;
  outcome: string;
  gateway_code: string | null;
  request_id: string | null;
  /**
   * The merchant whose order the act was about (platform mode; an order made before it is the first
   * merchant's); null for an act about no order.
   */
  merchant_id: number | null;
}

/** The CSV's columns, in this order (stable: a spreadsheet's formulas may name them). */
export const AUDIT_COLUMNS = [
  'id',
  'at',
  'actor',
  'role',
  'credential',
  'action',
  'order_id',
  'subject_id',
  'currency',
  'amount',
  'amount_formatted',
  'reason',
  'detail',
  'outcome',
  'gateway_code',
  'request_id',
  // Last: a spreadsheet that reads the columns by position before platform mode still reads them.
  'merchant_id',
] as const satisfies readonly (keyof AuditRow)[];

/**
 * A line as the export shows it. `outcome`: for a capture, refund or void, what became of it at the
 * gateway as it stands now (`succeeded`, `failed` with `gateway_code`, or `pending`: no answer yet);
 * `done` for every other act, which the kit itself completes. `served`: the merchants the kit acts
 * for, the first of which an order naming none belongs to.
 */
export function auditRow(l: AuditLine, served: readonly number[] = []): AuditRow {
  const money = l.amount_minor !== null && l.currency !== null && isCurrencyCode(l.currency);
  return {
    id: l.id,
    at: l.at.toISOString(),
    actor: l.actor,
    role: l.role,
    credential: l.credential,
    action: l.action,
    order_id: l.order_id,
    subject_id: l.subject_id,
    currency: l.currency,
    amount: l.amount_minor,
    amount_formatted: money ? formatMinor(l.amount_minor!, l.currency as CurrencyCode) : null,
    reason: l.reason,
    detail: l.detail,
    outcome: l.operation_status ?? 'done',
    gateway_code: l.operation_status === 'failed' ? (l.operation_error ?? null) : null,
    request_id: l.request_id,
    merchant_id: l.order_id === null ? null : merchantOf(l.order_merchant_id, served),
  };
}

/** The export as CSV: one header line, RFC 4180 quoting, empty for null; streamed. */
export function auditCsv(lines: AsyncIterable<AuditLine>, served: readonly number[] = []): Readable {
  return csvTable(rows(lines, served), AUDIT_COLUMNS);
}

async function* rows(lines: AsyncIterable<AuditLine>, served: readonly number[]): AsyncGenerator<AuditRow> {
  for await (const l of lines) yield auditRow(l, served);
}
