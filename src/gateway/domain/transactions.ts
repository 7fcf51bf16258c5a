import { withLuhnCheckDigit } from '../../shared/card-numbers.js';
import { isoMicros, isoMicrosOrNull } from '../../shared/clock.js';
import { type RandomSource, randomHex } from '../../shared/ids.js';
import { type CurrencyCode, formatMinor, formatMoney } from '../../shared/money.js';
import { pastDeadline } from './auth-lifetime.js';

/** Transaction statuses the sandbox uses (gateway-api.md, States; sandbox.md sections 6, 7, 10). */
export type TransactionStatus =
  | 'pending'
  | 'auth'
  | 'captured'
  | 'refunded'
  | 'voided'
  | 'failed'
  | 'cancelled'
  | 'chargeback';
export type TransactionType = 'sale' | 'auth' | 'capture' | 'refund' | 'void';

/** What can be done to a payment once it exists (sandbox.md section 6). */
export type Operation = 'capture' | 'refund' | 'void';

export interface Transaction {
  id: number;
  relatedId: number | null;
  merchantId: number;
  cardholderId: number;
  type: TransactionType;
  status: TransactionStatus;
  /** Minor units. For an auth: the authorised amount, which capture does not change. */
  amount: number;
  currency: CurrencyCode;
  /** On a sale or auth (and mirrored on its capture record): what was captured and refunded so far. */
  capturedAmount: number;
  refundedAmount: number;
  /** On a charged-back sale or auth (and its capture record): what the dispute took back; 0 when none. */
  chargebackAmount: number;
  reference: string;
  description: string | null;
  statusReason: string | null;
  acquirerTransId: string;
  acquirerAuthCode: string;
  acquirerRefNum: string;
  ipAddress: string;
  /** An approved auth's deadline for capture or void (auth-lifetime.ts), kept for its life; else null. */
  captureBefore: number | null;
  /**
   * A sale or auth made with a card it saved, or with a vault token: that instrument's token
   * (sandbox.md section 11); null on every other record, as `captureBefore` is on all but auths.
   */
  vaultToken: string | null;
  createdAt: number;
  updatedAt: number;
}

/** The wire record (gateway-api.md, Transaction record), plus additive fields. */
export function transactionView(t: Transaction) {
  return {
    id: t.id,
    related_trans_id: t.relatedId,
    merchant_id: t.merchantId,
    cardholder_id: t.cardholderId,
    amount: t.amount,
    amount_formatted: formatMinor(t.amount, t.currency),
    currency: t.currency,
    status: t.status,
    status_reason: t.statusReason,
    transaction_type: t.type,
    merchant_trans_id: t.reference,
    description: t.description,
    refunded_amount: t.refundedAmount,
    chargeback_amount: t.chargebackAmount, // sandbox.md section 11
    acquirer_trans_id: t.acquirerTransId,
    acquirer_auth_code: t.acquirerAuthCode,
    acquirer_ref_num: t.acquirerRefNum,
    ip_address: t.ipAddress,
    capture_before: isoMicrosOrNull(t.captureBefore), // sandbox.md section 11
    vault_token: t.vaultToken, // sandbox.md section 11
    created_at: isoMicros(t.createdAt),
    updated_at: isoMicros(t.updatedAt),
  };
}

export type TransactionView = ReturnType<typeof transactionView>;

/** Statuses that hold a merchant reference; failed and cancelled ones release it (sandbox.md section 6). */
export function holdsReference(status: TransactionStatus): boolean {
  return status !== 'failed' && status !== 'cancelled';
}

export type OperationCode =
  | 'ERR_INVALID_TRANSACTION'
  | 'ERR_ADAPTER_INVALID_AMOUNT'
  | 'ERR_REFUND_NOT_SUPPORTED';

/** What an operation changes: the child record it creates and the records it moves. */
export type Plan =
  | { ok: true; created: Transaction; updated: Transaction[] }
  | { ok: false; code: OperationCode; message: string };

/** The parts of a child record that the acquirer and the id sequence supply. */
export interface ChildSeed {
  id: number;
  now: number;
  acquirerTransId: string;
  acquirerRefNum: string;
}

function child(
  parent: Transaction,
  type: TransactionType,
  status: TransactionStatus,
  amount: number,
  seed: ChildSeed,
  reason: string | null,
): Transaction {
  return {
    ...parent,
    id: seed.id,
    relatedId: parent.id,
    type,
    status,
    amount,
    capturedAmount: type === 'capture' ? amount : 0,
    refundedAmount: 0,
    chargebackAmount: 0,
    captureBefore: null, // the auth's alone
    vaultToken: null, // the payment's alone, as the instrument it saved or used
    description: reason ?? parent.description,
    statusReason: null,
    acquirerTransId: seed.acquirerTransId,
    acquirerRefNum: seed.acquirerRefNum,
    createdAt: seed.now,
    updatedAt: seed.now,
  };
}

const notAllowed = (op: string, t: Transaction): Plan => ({
  ok: false,
  code: 'ERR_INVALID_TRANSACTION',
  message: `Cannot ${op} ${t.type === 'auth' ? 'an' : 'a'} ${t.type} transaction in status ${t.status}.`,
});

const tooMuch = (message: string): Plan => ({ ok: false, code: 'ERR_ADAPTER_INVALID_AMOUNT', message });

/** sandbox.md section 11: from its deadline on an auth is lapsed, whether or not the clock's sweep has run. */
const lapsedAuth = (op: string, auth: Transaction): Plan => ({
  ok: false,
  code: 'ERR_INVALID_TRANSACTION',
  message: `Cannot ${op} an authorisation that lapsed at ${isoMicros(auth.captureBefore!)}.`,
});

/** sandbox.md section 6, Capture: an `auth` once, up to the authorised amount; the remainder is released. */
export function planCapture(auth: Transaction, amount: number, seed: ChildSeed): Plan {
  if (auth.type !== 'auth' || auth.status !== 'auth') return notAllowed('capture', auth);
  if (pastDeadline(auth, seed.now)) return lapsedAuth('capture', auth);
  if (amount > auth.amount) {
    return tooMuch(`The capture amount exceeds the authorised ${formatMoney(auth.amount, auth.currency)}.`);
  }
  const capture = child(auth, 'capture', 'captured', amount, seed, null);
  capture.acquirerAuthCode = auth.acquirerAuthCode;
  const moved = { ...auth, status: 'captured' as const, capturedAmount: amount, updatedAt: seed.now };
  return { ok: true, created: capture, updated: [moved] };
}

/**
 * sandbox.md section 6, Refund: on a captured sale, or on the auth or the capture record of a captured
 * auth; partial refunds up to the captured amount. `payment` is the sale or auth, `capture` its capture
 * record if any; both carry the running `refundedAmount` and move to `refunded` when it is all refunded.
 * `methodRefunds`: false when the payment was made with a method that never refunds (section 11), which
 * is said before its state: no state of the payment would make it refundable.
 */
export function planRefund(
  target: Transaction,
  payment: Transaction,
  capture: Transaction | undefined,
  amount: number,
  reason: string | null,
  seed: ChildSeed,
  methodRefunds: boolean,
): Plan {
  const refundable = target.type === 'sale' || target.type === 'auth' || target.type === 'capture';
  if (!refundable) return notAllowed('refund', target);
  if (!methodRefunds) {
    return {
      ok: false,
      code: 'ERR_REFUND_NOT_SUPPORTED',
      message: 'The payment method of this payment does not support refunds.',
    };
  }
  if (payment.status !== 'captured') return notAllowed('refund', target);
  const left = payment.capturedAmount - payment.refundedAmount;
  if (amount > left) {
    return tooMuch(`The refund amount exceeds the ${formatMoney(left, payment.currency)} left to refund.`);
  }
  const refundedAmount = payment.refundedAmount + amount;
  const status = refundedAmount === payment.capturedAmount ? 'refunded' : 'captured';
  const updated = [payment, ...(capture ? [capture] : [])].map(
    (t) => ({ ...t, status, refundedAmount, updatedAt: seed.now }) as Transaction,
  );
  const refund = child(target, 'refund', 'refunded', amount, seed, reason);
  refund.refundedAmount = refundedAmount;
  return { ok: true, created: refund, updated };
}

/** sandbox.md section 6, Void: an `auth` only, for exactly the authorised amount. */
export function planVoid(auth: Transaction, amount: number, reason: string | null, seed: ChildSeed): Plan {
  if (auth.type !== 'auth' || auth.status !== 'auth') return notAllowed('void', auth);
  if (pastDeadline(auth, seed.now)) return lapsedAuth('void', auth);
  if (amount !== auth.amount) {
    return tooMuch(`A void must be for the authorised ${formatMoney(auth.amount, auth.currency)}.`);
  }
  const voidRecord = child(auth, 'void', 'voided', amount, seed, reason);
  return { ok: true, created: voidRecord, updated: [{ ...auth, status: 'voided', updatedAt: seed.now }] };
}

/**
 * The acquirer's id of a transaction: 16 hex characters, as drawn. About one in 5,000 holds thirteen
 * digits or more that read as a card number (a brand's first digit, a valid Luhn check), as a real
 * acquirer's numeric ids do far more often: a receiver keeps ids as sent, whatever they read as (the
 * kit's does; it no longer refuses the event). `cardLike`, the seed's
 * `settings.card_like_acquirer_ids` (0 to 1, default 0): the share drawn instead as 16 digits that
 * read as a card number, for tests of a receiver against a gateway whose ids are numeric.
 */
export function acquirerTransactionId(random: RandomSource, cardLike = 0): string {
  if (cardLike > 0 && (cardLike >= 1 || Buffer.from(random(4)).readUInt32BE() / 2 ** 32 < cardLike))
    return cardLikeDigits(random);
  return randomHex(random, 8);
}

/** 16 digits that start as a card brand's do (3 to 6) and end with their Luhn check digit. */
function cardLikeDigits(random: RandomSource): string {
  let digits = String(3 + (random(1)[0]! % 4));
  while (digits.length < 15) {
    // Bytes of 250 and over are drawn again, so that every digit is as likely.
    for (const byte of random(15 - digits.length)) if (byte < 250 && digits.length < 15) digits += byte % 10;
  }
  return withLuhnCheckDigit(digits);
}
