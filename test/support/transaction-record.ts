import type { Transaction } from '../../src/gateway/domain/transactions.js';

/** When the records below were made, unless a test says otherwise. */
export const RECORD_TIME = Date.UTC(2026, 10, 1);

/** A sandbox transaction record for the domain's unit tests: an approved auth of 100.00 EUR, unless overridden. */
export function transactionRecord(overrides: Partial<Transaction> = {}): Transaction {
  return {
    id: 100000,
    relatedId: null,
    merchantId: 1001,
    cardholderId: 1,
    type: 'auth',
    status: 'auth',
    amount: 10_000,
    currency: 'EUR',
    capturedAmount: 0,
    refundedAmount: 0,
    chargebackAmount: 0,
    reference: 'r1',
    description: null,
    statusReason: null,
    acquirerTransId: 'a',
    acquirerAuthCode: 'X',
    acquirerRefNum: 'n',
    ipAddress: '127.0.0.1',
    captureBefore: null,
    vaultToken: null,
    createdAt: RECORD_TIME,
    updatedAt: RECORD_TIME,
    ...overrides,
  };
}
