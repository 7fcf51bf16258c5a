import type { TickAnswer } from '../client/sandbox-controls.js';
import { formatMoney, isCurrencyCode } from '../shared/money.js';
import { DEFAULT_TOLERANCE_SECONDS } from '../shared/signature.js';
import { formatDuration } from './trigger-input.js';

/**
 * What a sandbox trigger prints: what changed, in a few lines an engineer reads, never a JSON dump.
 * Pure: the command hands in what the sandbox answered and what the kit's order was and became.
 */

/** `2026-11-25 04:24:22 UTC`: to the second, which is what a person compares. */
export function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/**
 * A sandbox clock ahead of the kit's, when the kit runs on its own (GATEWAY_BASE_URL names a standalone
 * sandbox): the sandbox signs each webhook with its clock, and the kit's receiver refuses a signature
 * more than DEFAULT_TOLERANCE_SECONDS off the kit's clock, too new as well as too old (sandbox.md
 * section 8). Nothing at the gateway says so, so the command does.
 */
export function aheadLines(sandboxNowMs: number, machineNowMs: number): string[] {
  const lead = Math.round((sandboxNowMs - machineNowMs) / 1000);
  if (lead <= DEFAULT_TOLERANCE_SECONDS) return [];
  return [
    `the sandbox clock is ${formatDuration(lead)} ahead of this machine's: the kit's receiver refuses webhooks signed more than ${DEFAULT_TOLERANCE_SECONDS / 60} minutes off its clock,`,
    'so events reach the kit only by the recovery job (every 5 minutes by default); `npm run gateway -- --fresh` starts the sandbox afresh',
  ];
}

/**
 * `sandbox advance`: the clock before and after (the control answers after; it moved by exactly
 * `seconds`). A kit that embeds the sandbox runs on the sandbox's clock (kit.ts): its time moved too.
 */
export function advanceLines(o: {
  after: string;
  seconds: number;
  machineNow: number;
  kitSharesClock: boolean;
}): string[] {
  const after = Date.parse(o.after);
  const before = after - o.seconds * 1000;
  const lead = Math.round((after - o.machineNow) / 1000);
  const note = o.kitSharesClock
    ? lead > 0
      ? [
          `the kit runs on its embedded sandbox's clock: both are now ${formatDuration(lead)} ahead of real time`,
        ]
      : []
    : aheadLines(after, o.machineNow);
  return [`sandbox clock: ${utc(before)} -> ${utc(after)} (+${formatDuration(o.seconds)})`, ...note];
}

/** What `/sandbox/tick` says it ran (sandbox.md section 10); a field a sandbox leaves out shows `-`. */
export function tickLines(t: TickAnswer): string[] {
  const n = (v: number | undefined) => (v === undefined ? '-' : String(v));
  const rows: [string, string][] = [
    ['webhook attempts', `${n(t.attempted)} (${n(t.delivered)} delivered, ${n(t.failed)} failed)`],
    ['sessions expired', n(t.sessions_expired)],
    ['3DS challenges expired', n(t.challenges_expired)],
    ['auths lapsed', n(t.auths_lapsed)],
    ['events pruned', n(t.events_pruned)],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  const at = t.now === undefined || Number.isNaN(Date.parse(t.now)) ? '' : ` at ${utc(Date.parse(t.now))}`;
  return [`sandbox tick${at}: ran what was due`, ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)];
}

/** `sandbox outage`: whose deliveries fail, and until when on the sandbox clock. */
export function outageLines(o: { merchantId: string; until: string; seconds: number }): string[] {
  return [
    `webhook deliveries to merchant ${o.merchantId} fail (connection_refused) for ${formatDuration(o.seconds)} of sandbox clock, until ${utc(Date.parse(o.until))}`,
    'each failed attempt is retried on the sandbox schedule (1 min, 5 min, 30 min, ... after it); the kit catches up by recovery meanwhile',
  ];
}

/** A money amount as people write it, when the currency is one the kit knows. */
function money(minor: number, currency: string): string {
  return isCurrencyCode(currency) ? formatMoney(minor, currency) : `${minor} (minor) ${currency}`;
}

/** The gateway's answer to a chargeback or its reversal: the transaction's status now. */
export function transactionLine(
  t: { id: string; status: string; currency: string; chargeback_amount?: number },
  control: 'chargeback' | 'reverse',
): string {
  const detail =
    control === 'chargeback'
      ? t.chargeback_amount === undefined
        ? ''
        : ` (${money(t.chargeback_amount, t.currency)} charged back)`
      : ' (chargeback reversed)';
  return `gateway: transaction ${t.id} ${t.status}${detail}`;
}

/** The gateway's answer to a settle: the session's status now, and its transaction. */
export function sessionLine(s: {
  payment_session_id: string;
  status: string;
  transaction_id: string;
}): string {
  return `gateway: payment session ${s.payment_session_id} ${s.status} (transaction ${s.transaction_id})`;
}

/** What the kit's order row shows of the change. */
export interface OrderView {
  id: string;
  status: string;
  currency: string;
  disputedMinor: number;
}

/**
 * The order before and after the webhook landed; `after` null: it had not changed when the command
 * stopped watching. Not changing is no failure: the event is on its way, or will be recovered.
 * `sandboxNow`: the sandbox's time, when the kit runs on its own clock (null: it shares the sandbox's).
 */
export function orderLines(o: {
  before: OrderView;
  after: OrderView | null;
  waitedSeconds: number;
  sandboxNow: number | null;
  machineNow: number;
}): string[] {
  const { before, after } = o;
  if (after !== null) {
    const disputed =
      after.status === 'disputed' && after.disputedMinor > 0
        ? ` (${money(after.disputedMinor, after.currency)} disputed)`
        : '';
    return [`order ${before.id}: ${before.status} -> ${after.status}${disputed}`];
  }
  return [
    `order ${before.id}: still ${before.status} after ${o.waitedSeconds} s; the kit applies the change when the gateway's event arrives (a webhook or its retry, or the recovery job)`,
    ...(o.sandboxNow === null ? [] : aheadLines(o.sandboxNow, o.machineNow)),
  ];
}
