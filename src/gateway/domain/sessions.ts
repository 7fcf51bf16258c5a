import { isoMicros, isoMicrosOrNull } from '../../shared/clock.js';
import { type CurrencyCode, formatMinor } from '../../shared/money.js';
import type { TransactionStatus } from './transactions.js';
import type { EventType } from './webhooks.js';

/** gateway-api.md, Payment session statuses. `created` is never entered: creation answers with pending_redirect. */
export type SessionStatus =
  | 'created'
  | 'pending_redirect'
  | 'pending_provider'
  | 'paid'
  | 'failed'
  | 'cancelled'
  | 'chargeback'
  | 'expired';

export const SESSION_LIFETIME_MS = 15 * 60 * 1000;

/** What moves a session: the hosted page's buttons, the provider's settle, the clock, a chargeback. */
export type SessionTrigger = 'pending' | 'paid' | 'failed' | 'cancelled' | 'expired' | 'chargeback';

export interface SessionMove {
  to: SessionStatus;
  transaction: TransactionStatus;
  event: EventType;
}

const OPEN: readonly SessionStatus[] = ['pending_redirect', 'pending_provider'];

/**
 * The transition table (gateway-api.md, States; sandbox.md sections 7 and 10). Only
 * pending_redirect expires: a session handed to the provider waits for its report.
 */
export function moveSession(from: SessionStatus, trigger: SessionTrigger): SessionMove | null {
  switch (trigger) {
    case 'pending':
      return from === 'pending_redirect'
        ? { to: 'pending_provider', transaction: 'pending', event: 'transaction.pending' }
        : null;
    case 'paid':
      return OPEN.includes(from)
        ? { to: 'paid', transaction: 'captured', event: 'transaction.captured' }
        : null;
    case 'failed':
      return OPEN.includes(from)
        ? { to: 'failed', transaction: 'failed', event: 'transaction.failed' }
        : null;
    case 'cancelled':
      return OPEN.includes(from)
        ? { to: 'cancelled', transaction: 'cancelled', event: 'transaction.cancelled' }
        : null;
    case 'expired':
      return from === 'pending_redirect'
        ? { to: 'expired', transaction: 'cancelled', event: 'transaction.cancelled' }
        : null;
    case 'chargeback':
      return from === 'paid'
        ? { to: 'chargeback', transaction: 'chargeback', event: 'transaction.chargeback' }
        : null;
    default:
      return trigger satisfies never;
  }
}

export function isFinal(status: SessionStatus): boolean {
  return !OPEN.includes(status) && status !== 'created';
}

export interface PaymentSession {
  id: string;
  transactionId: number;
  merchantId: number;
  reference: string;
  provider: string;
  paymentMethod: string;
  /** What the hosted page shows the customer, e.g. iDEAL. */
  methodLabel: string;
  status: SessionStatus;
  amount: number;
  currency: CurrencyCode;
  returnUrl: string;
  cancelUrl: string;
  providerSessionId: string;
  providerTransactionId: string | null;
  customerReference: string;
  statusReason: string | null;
  createdAt: number;
  updatedAt: number;
  finalisedAt: number | null;
}

export function expiresAt(session: PaymentSession): number {
  return session.createdAt + SESSION_LIFETIME_MS;
}

/** The wire record (gateway-api.md, Payment session record). */
export function sessionView(s: PaymentSession, checkoutUrl: string) {
  return {
    payment_session_id: s.id,
    transaction_id: s.transactionId,
    merchant_id: s.merchantId,
    merchant_reference: s.reference,
    provider: s.provider,
    payment_method: s.paymentMethod,
    status: s.status,
    status_reason: s.statusReason,
    amount: s.amount,
    amount_formatted: formatMinor(s.amount, s.currency),
    currency: s.currency,
    checkout_url: checkoutUrl,
    return_url: s.returnUrl,
    cancel_url: s.cancelUrl,
    provider_session_id: s.providerSessionId,
    provider_transaction_id: s.providerTransactionId,
    customer_reference: s.customerReference,
    expires_at: isoMicros(expiresAt(s)),
    finalised_at: isoMicrosOrNull(s.finalisedAt),
    created_at: isoMicros(s.createdAt),
    updated_at: isoMicros(s.updatedAt),
  };
}
