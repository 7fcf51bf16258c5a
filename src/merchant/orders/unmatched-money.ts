import { type CurrencyCode, formatMinor, isCurrencyCode } from '../../shared/money.js';
import {
  isFinding,
  type Observation,
  type TransactionFact,
  type TransactionObservation,
} from './observation.js';

/**
 * Gateway money with no order (issue 19, part 1): the pure rules. What counts as such money, the
 * reason an order is flagged with, and which of two readings of one transaction is the furthest.
 */

/**
 * Whether an observation that matched no attempt is money the kit does not hold: a gateway
 * transaction record found by its ids (every record names an amount and a currency). One the kit
 * asked about for an attempt (`about`) is not: that attempt exists, and it declined to take the
 * payment (a superseded attempt asked to adopt one, About.adopt).
 */
export function isMoneyWithNoAttempt(obs: Observation): obs is TransactionObservation {
  return !isFinding(obs) && obs.about === undefined;
}

/** An amount in words: `1.00 EUR`, or minor units when the currency is not one we know. */
export function amountInWords(minor: number, currency: string): string {
  return isCurrencyCode(currency)
    ? `${formatMinor(minor, currency as CurrencyCode)} ${currency}`
    : `${minor} (minor units) ${currency}`;
}

/**
 * The review reason of the order that carries the money's reference: one per transaction and status,
 * so the same news again adds nothing (decide flags once per reason) and a later status is news.
 */
export function noAttemptReason(t: TransactionFact): string {
  const what =
    t.relatedId === null ? `transaction ${t.id}` : `transaction ${t.id} (${t.type} of ${t.relatedId})`;
  return `gateway money with no attempt: ${what} ${t.status} ${amountInWords(t.amountMinor, t.currency)}`;
}

/** How far a gateway transaction has gone: a reading of lower rank is older news. Unknown: -1. */
const RANK: Record<string, number> = {
  pending: 0,
  auth: 1,
  captured: 2,
  failed: 2,
  cancelled: 2,
  voided: 2,
  refunded: 3,
  // A reversed chargeback (captured again, sandbox.md section 11) reads as older news here: telling
  // it from a late copy of the capture needs the event's type, which part 2 of issue 19 brings.
  chargeback: 4,
};

/** What one reading of a transaction says, as a kept row holds it. */
export interface TransactionReading {
  status: string;
  refundedMinor: number;
}

/**
 * Whether `incoming` replaces what is kept of the same transaction: unless it is older news (an
 * earlier status, a smaller running refund total), the last word wins. Events arrive in any order; the
 * row must show the furthest, as an order does. A status we do not know is never taken for older.
 */
export function supersedes(kept: TransactionReading, incoming: TransactionReading): boolean {
  if (incoming.refundedMinor < kept.refundedMinor) return false;
  const a = RANK[kept.status];
  const b = RANK[incoming.status];
  if (a === undefined || b === undefined) return true;
  return b >= a;
}
