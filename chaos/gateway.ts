import { SANDBOX_MERCHANT_KEY } from '../src/config.js';
import { delay } from '../test/support/process.js';
import type { PaymentRecord } from '../test/support/truth-rules.js';

/**
 * The run's view of the sandbox gateway, over its HTTP API like any client: the gateway's truth
 * (event history, payloads, transactions, sessions) read with the partner key, whose rate window is
 * its own, so the run's reads never slow the kit's key down; the sandbox controls with the merchant key.
 */

const PARTNER_KEY = 'sk_test_partner_9001';
const MERCHANT_ID = 1001;
const CALL_MS = 30_000;
/** A request its key's rate window refuses (429) is tried again, this many times in all. */
const RATE_LIMITED_TRIES = 5;

export interface EventRow {
  id: string;
  event_type: string;
  transaction_id: number;
  status: string;
  attempts: number;
  created_at: string;
}

export interface EventPayload {
  id: string;
  body: string;
  type: string;
  createdAtMs: number;
  transaction: { id: number; related_trans_id: number | null; transaction_type: string; amount: number };
}

/** A transaction as the gateway records it (gateway-api.md, Transaction record), as much as the run reads. */
export interface GatewayRecord {
  id: number;
  relatedId: number | null;
  type: string;
  status: string;
  amount: number;
  currency: string;
  /** The running total refunded (on a sale or an auth). */
  refunded: number;
  /**
   * `chargeback_amount` (sandbox.md section 11): what a chargeback took, 0 when none; null when the
   * gateway does not say.
   */
  chargeback: number | null;
  /** merchant_trans_id: the order's reference, on children too. */
  reference: string;
  /** An approved auth's deadline (sandbox.md section 11); null or absent otherwise. */
  captureBefore?: string | null;
}

// biome-ignore lint/suspicious/noExplicitAny: envelopes of every shape
type Envelope = { success: boolean; message: string; code: string; data: any };

export class GatewayReader {
  constructor(private readonly url: string) {}

  /** One request; a 429 (refused before anything was done) is tried again after its Retry-After. */
  async #send(method: string, path: string, key: string, body?: unknown) {
    for (let tries = 1; ; tries++) {
      const res = await fetch(this.url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(CALL_MS),
      });
      const envelope = (await res.json()) as Envelope;
      if (res.status !== 429 || tries >= RATE_LIMITED_TRIES) return { status: res.status, envelope };
      await delay(Number(res.headers.get('retry-after') ?? 1) * 1000);
    }
  }

  async #call(method: string, path: string, key: string, body?: unknown): Promise<Envelope> {
    const { status, envelope } = await this.#send(method, path, key, body);
    if (status >= 300) throw new Error(`${method} ${path}: ${status} ${envelope.code} ${envelope.message}`);
    return envelope;
  }

  #read = (path: string) => this.#call('GET', path, PARTNER_KEY);

  /** Every event the gateway recorded for the merchant created at or after `from` (all of them without). */
  async events(from?: string): Promise<EventRow[]> {
    const found: EventRow[] = [];
    for (let page = 1; ; page++) {
      const query = new URLSearchParams({
        merchant_id: String(MERCHANT_ID),
        per_page: '100',
        page: String(page),
      });
      if (from) query.set('from', from);
      const { data } = await this.#read(`/api/v1/webhook/events?${query}`);
      found.push(...(data.events as EventRow[]));
      if (page >= data.pagination.last_page) return found;
    }
  }

  /** The event's payload, as the gateway signed and sent it. */
  async payload(eventId: string): Promise<EventPayload> {
    const { data } = await this.#read(`/api/v1/webhook/events/${eventId}?merchant_id=${MERCHANT_ID}`);
    const body = JSON.stringify(data.payload);
    return {
      id: data.id,
      body,
      type: data.event_type,
      createdAtMs: Date.parse(data.created_at),
      transaction: data.payload.data.transaction,
    };
  }

  async transaction(id: number): Promise<Omit<PaymentRecord, 'captureAmount'>> {
    const { data } = await this.#read(`/api/v1/transactions/${id}/status?merchant_id=${MERCHANT_ID}`);
    return {
      type: data.transaction_type,
      status: data.status,
      amount: data.amount,
      refunded: data.refunded_amount,
      chargeback: data.chargeback_amount ?? null,
      captureBefore: data.capture_before ?? null,
    };
  }

  /** The transaction with this id, or null when the gateway has none. */
  async record(id: number): Promise<GatewayRecord | null> {
    const path = `/api/v1/transactions/${id}/status?merchant_id=${MERCHANT_ID}`;
    const { status, envelope } = await this.#send('GET', path, PARTNER_KEY);
    if (status === 404) return null;
    if (status !== 200) throw new Error(`GET ${path}: ${status} ${envelope.code} ${envelope.message}`);
    const t = envelope.data.transaction ?? envelope.data;
    return {
      id: t.id,
      relatedId: t.related_trans_id,
      type: t.transaction_type,
      status: t.status,
      amount: t.amount,
      currency: t.currency,
      refunded: t.refunded_amount,
      chargeback: t.chargeback_amount ?? null,
      reference: t.merchant_trans_id,
      captureBefore: t.capture_before ?? null,
    };
  }

  async session(id: string): Promise<{ status: string; transactionId: number }> {
    const { data } = await this.#read(`/api/v1/payment-sessions/${id}?merchant_id=${MERCHANT_ID}`);
    return { status: data.payment_session.status, transactionId: data.payment_session.transaction_id };
  }

  /** The payment record an attempt made, with an auth's capture amount from the capture events seen. */
  async payment(
    attempt: { gateway_transaction_id: string | null; payment_session_id: string | null },
    captures: ReadonlyMap<number, number>,
  ): Promise<{ payment: PaymentRecord; sessionStatus?: string } | null> {
    const session = attempt.payment_session_id ? await this.session(attempt.payment_session_id) : undefined;
    const id = session?.transactionId ?? Number(attempt.gateway_transaction_id);
    if (!Number.isInteger(id) || id <= 0) return null;
    const t = await this.transaction(id);
    return { payment: { ...t, captureAmount: captures.get(id) ?? null }, sessionStatus: session?.status };
  }

  /** The vault tokens of the customer's saved cards the gateway holds active (sandbox.md section 11). */
  async activeInstruments(merchantCustomerId: string): Promise<string[]> {
    const query = new URLSearchParams({
      merchant_id: String(MERCHANT_ID),
      merchant_customer_id: merchantCustomerId,
      per_page: '100',
    });
    const { data } = await this.#read(`/api/v1/payment-instruments?${query}`);
    return (data.payment_instruments as { vault_token: string }[]).map((i) => i.vault_token);
  }

  /** sandbox.md section 10: the sandbox's clock moved on by `seconds`; returns its reading after (ms). */
  async advanceClock(seconds: number): Promise<number> {
    const { data } = await this.#call('POST', '/sandbox/clock/advance', SANDBOX_MERCHANT_KEY, { seconds });
    return Date.parse(data.now);
  }

  /** sandbox.md section 10: every delivery fails with connection_refused for `seconds` of sandbox clock. */
  async outage(seconds: number): Promise<{ from: number; until: number }> {
    const { data } = await this.#call('POST', '/sandbox/webhook/outage', SANDBOX_MERCHANT_KEY, { seconds });
    const until = Date.parse(data.until);
    return { from: until - seconds * 1000, until };
  }

  /**
   * sandbox.md section 11: the payment is charged back, for `amount` (major units, as the control
   * takes it) or, without, all that was captured and not refunded.
   */
  async chargeback(transactionId: number, amount?: string): Promise<void> {
    const body = amount === undefined ? undefined : { amount };
    await this.#call('POST', `/sandbox/transactions/${transactionId}/chargeback`, SANDBOX_MERCHANT_KEY, body);
  }

  /** sandbox.md section 11: the merchant won the dispute; the payment is captured again. */
  async reverseChargeback(transactionId: number): Promise<void> {
    await this.#call(
      'POST',
      `/sandbox/transactions/${transactionId}/chargeback/reverse`,
      SANDBOX_MERCHANT_KEY,
    );
  }

  async settle(sessionId: string, outcome: 'paid' | 'failed' | 'cancelled'): Promise<void> {
    await this.#call('POST', `/sandbox/payment-sessions/${sessionId}/settle`, SANDBOX_MERCHANT_KEY, {
      outcome,
    });
  }
}
