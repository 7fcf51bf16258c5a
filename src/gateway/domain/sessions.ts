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

/** What moves a session: the hosted page's buttons, the provider's settle, the clock, a chargeback and its reversal. */
export type SessionTrigger =
  | 'pending'
  | 'paid'
  | 'failed'
  | 'cancelled'
  | 'expired'
  | 'chargeback'
  | 'chargeback_reversed';

export interface SessionMove {
  to: SessionStatus;
  transaction: TransactionStatus;
  event: EventType;
}

const OPEN: readonly SessionStatus[] = ['pending_redirect', 'pending_provider'];

/**
 * The transition table (gateway-api.md, States; sandbox.md sections 7, 10 and 11): the states each
 * trigger applies in, and where it leads. Only pending_redirect expires: a session handed to the
 * provider waits for its report.
 */
const MOVES: Readonly<Record<SessionTrigger, SessionMove & { from: readonly SessionStatus[] }>> = {
  pending: {
    from: ['pending_redirect'],
    to: 'pending_provider',
    transaction: 'pending',
    event: 'transaction.pending',
  },
  paid: { from: OPEN, to: 'paid', transaction: 'captured', event: 'transaction.captured' },
  failed: { from: OPEN, to: 'failed', transaction: 'failed', event: 'transaction.failed' },
  cancelled: { from: OPEN, to: 'cancelled', transaction: 'cancelled', event: 'transaction.cancelled' },
  expired: {
    from: ['pending_redirect'],
    to: 'expired',
    transaction: 'cancelled',
    event: 'transaction.cancelled',
  },
  chargeback: {
    from: ['paid'],
    to: 'chargeback',
    transaction: 'chargeback',
    event: 'transaction.chargeback',
  },
  // sandbox.md section 11: a won dispute leaves the session paid again, as it was before.
  chargeback_reversed: {
    from: ['chargeback'],
    to: 'paid',
    transaction: 'captured',
    event: 'transaction.chargeback_reversed',
  },
};

/** Where `trigger` moves a session in state `from`, or null when it does not apply there. */
export function moveSession(from: SessionStatus, trigger: SessionTrigger): SessionMove | null {
  const { from: allowed, ...move } = MOVES[trigger];
  return allowed.includes(from) ? move : null;
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

/** The wire record (gateway-api.md, Payment session record); `baseUrl` is where the hosted pages are reached. */
export function sessionView(s: PaymentSession, baseUrl: string) {
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
    checkout_url: `${baseUrl}/hosted/checkout/${s.id}`, // sandbox.md section 7
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
