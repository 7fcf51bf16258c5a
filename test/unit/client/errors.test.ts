import { expect } from 'chai';
import { duplicateHolder, GatewayError, GatewayNetworkError } from '../../../src/client/errors.js';

/** Pure tests of what the client reads out of its errors: no I/O. */

const duplicate = (data: unknown) =>
  new GatewayError(409, 'ERR_DUPLICATE', 'An active transaction already uses this reference.', { data });

describe('client/errors: duplicateHolder', () => {
  it('names the holding transaction, as a string whether the gateway sent a number or a string', () => {
    expect(duplicateHolder(duplicate({ transaction_id: 100123 }))).to.deep.equal({
      transactionId: '100123',
      paymentSessionId: null,
    });
    expect(duplicateHolder(duplicate({ transaction_id: 'txn_9f' }))).to.deep.equal({
      transactionId: 'txn_9f',
      paymentSessionId: null,
    });
  });

  it("names the session too when the holder is a session's transaction (sandbox.md section 11)", () => {
    expect(
      duplicateHolder(
        duplicate({ transaction_id: 100124, payment_session_id: 'ps_4fP2kQ9sVx1Lm7Zc3Ba8Ny0R' }),
      ),
    ).to.deep.equal({ transactionId: '100124', paymentSessionId: 'ps_4fP2kQ9sVx1Lm7Zc3Ba8Ny0R' });
  });

  it('gives no session for a session id that is not a non-empty string, and keeps the transaction', () => {
    for (const payment_session_id of [null, 42, '', { id: 'ps_x' }]) {
      expect(
        duplicateHolder(duplicate({ transaction_id: 7, payment_session_id })),
        String(payment_session_id),
      ).to.deep.equal({ transactionId: '7', paymentSessionId: null });
    }
  });

  it('is null for a duplicate that names no usable transaction', () => {
    for (const data of [
      null,
      undefined,
      'transaction 7',
      {},
      { transaction_id: '' },
      { transaction_id: null },
      { transaction_id: true },
      { transaction_id: { id: 7 } },
      { payment_session_id: 'ps_4fP2kQ9sVx1Lm7Zc3Ba8Ny0R' },
    ]) {
      expect(duplicateHolder(duplicate(data)), JSON.stringify(data)).to.equal(null);
    }
  });

  it('is null for anything but an ERR_DUPLICATE GatewayError, whatever its data', () => {
    const data = { transaction_id: 100125, payment_session_id: 'ps_4fP2kQ9sVx1Lm7Zc3Ba8Ny0R' };
    expect(duplicateHolder(new GatewayError(409, 'ERR_IDEMPOTENCY_CONFLICT', 'conflict', { data }))).to.equal(
      null,
    );
    expect(duplicateHolder(new GatewayError(400, 'ERR_CARD_DECLINED', 'declined', { data }))).to.equal(null);
    expect(duplicateHolder(new GatewayNetworkError('timeout', 'no answer', false))).to.equal(null);
    // The same shape outside a GatewayError is not an answer of the gateway.
    expect(duplicateHolder({ code: 'ERR_DUPLICATE', details: { data } })).to.equal(null);
    expect(duplicateHolder(null)).to.equal(null);
  });
});
