/**
 * Signed `transaction.captured` events as the gateway sends them (gateway-api.md, Webhooks), for the
 * load generator. With a target, the event pays that order; without, it names a transaction nobody
 * holds (the receiver stores it all the same: the receiver's cost does not depend on it).
 */
import { sign } from '../src/shared/signature.js';

export interface Target {
  transactionId: string;
  reference: string;
  amountMinor: number;
}

export function capturedEvent(id: string, target: Target, sentAt: number): string {
  const at = new Date(sentAt).toISOString();
  return JSON.stringify({
    id,
    type: 'transaction.captured',
    // The send time travels in the event: event-to-order latency is measured from it.
    created_at: at,
    api_version: '2026-11-01',
    data: {
      transaction: {
        id: Number(target.transactionId),
        merchant_trans_id: target.reference,
        related_trans_id: null,
        transaction_type: 'sale',
        status: 'captured',
        amount: target.amountMinor,
        currency: 'EUR',
        acquirer_provider: 'sandbox-acquirer',
        acquirer_trans_id: `acq-${target.transactionId}`,
        acquirer_auth_code: 'BENCH1',
        description: null,
        created_at: at,
        updated_at: at,
        refunded_amount: 0,
      },
    },
  });
}

export function signedRequest(body: string, secret: string, nowMs: number) {
  return {
    method: 'POST' as const,
    body,
    headers: {
      'content-type': 'application/json',
      'x-service-signature': sign(body, secret, Math.floor(nowMs / 1000)),
    },
  };
}
