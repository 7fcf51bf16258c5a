import { SANDBOX_MERCHANT_KEY } from '../src/config.js';
import { delay } from '../test/support/process.js';
import type { PaymentRecord } from '../test/support/truth-rules.js';

/**
 * The run's view of the sandbox gateway, over its HTTP API like any client: the gateway's truth
 * (event history, payloads, transactions, sessions) read with a partner key whose rate window is its
 * own, so the run's reads never slow the kit's key down, for the merchants the kit acts for; the
 * sandbox controls with a key that sees them all.
 */

const PARTNER_KEY = 'sk_test_partner_9001';
const MERCHANT_ID = 1001;

/** Whose gateway the run reads, and with which keys. */
export interface ReaderSettings {
  /** The merchants whose events and instruments the run lists; default the first seeded one (1001). */
  merchants?: readonly number[];
  /**
   * The partner key the run reads with, linked to every one of `merchants`, and not the kit's (its
   * rate window is its own); default the seed's partner key, sk_test_partner_9001.
   */
  readKey?: string;
  /**
   * The key of the sandbox controls (chargebacks, settling a session, the outage, the clock): one that
   * sees every one of `merchants`; default the first merchant's own key.
   */
  controlKey?: string;
}
const CALL_MS = 30_000;
/** A request its key's rate window refuses (429) is tried again, this many times in all. */
const RATE_LIMITED_TRIES = 5;

export interface EventRow {
  id: string;
  /** The merchant whose events listed it (the endpoint it is delivered to). */
  merchant_id: number;
  event_type: string;
  transaction_id: number;
  status: string;
  attempts: number;
  created_at: string;
}

export interface EventPayload {
  id: string;
  /** The merchant whose event it is: the one whose events listed it (the payload does not say). */
  merchantId: number;
  body: string;
  type: string;
  createdAtMs: number;
  transaction: { id: number; related_trans_id: number | null; transaction_type: string; amount: number };
}

/** A transaction as the gateway records it (gateway-api.md, Transaction record), as much as the run reads. */
export interface GatewayRecord {
  id: number;
  /** The merchant whose transaction it is. */
  merchantId: number;
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
  readonly merchants: readonly number[];
  readonly #readKey: string;
  readonly #controlKey: string;

  constructor(
    private readonly url: string,
    settings: ReaderSettings = {},
  ) {
    this.merchants = settings.merchants ?? [MERCHANT_ID];
    if (this.merchants.length === 0) throw new Error('the gateway reader needs a merchant');
    this.#readKey = settings.readKey ?? PARTNER_KEY;
    this.#controlKey = settings.controlKey ?? SANDBOX_MERCHANT_KEY;
  }

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

  #read = (path: string) => this.#call('GET', path, this.#readKey);

  /**
   * Every event the gateway recorded for each merchant created at or after `from` (all of them
   * without), each row tagged with its merchant, oldest first.
   */
  async events(from?: string): Promise<EventRow[]> {
    const found: EventRow[] = [];
    for (const merchant of this.merchants) found.push(...(await this.#eventsOf(merchant, from)));
    return found.sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  async #eventsOf(merchant: number, from?: string): Promise<EventRow[]> {
    const found: EventRow[] = [];
    for (let page = 1; ; page++) {
      const query = new URLSearchParams({
        merchant_id: String(merchant),
        per_page: '100',
        page: String(page),
      });
      if (from) query.set('from', from);
      const { data } = await this.#read(`/api/v1/webhook/events?${query}`);
      found.push(
        ...(data.events as Omit<EventRow, 'merchant_id'>[]).map((e) => ({ ...e, merchant_id: merchant })),
      );
      if (page >= data.pagination.last_page) return found;
    }
  }

  /**
   * The payload of the event `row` lists, as the gateway signed and sent it (read by id: the gateway
   * checks whose it is).
   */
  async payload(row: Pick<EventRow, 'id' | 'merchant_id'>): Promise<EventPayload> {
    const { data } = await this.#read(`/api/v1/webhook/events/${row.id}`);
    return {
      id: data.id,
      merchantId: row.merchant_id,
      body: JSON.stringify(data.payload),
      type: data.event_type,
      createdAtMs: Date.parse(data.created_at),
      transaction: data.payload.data.transaction,
    };
  }

  async transaction(id: number): Promise<Omit<PaymentRecord, 'captureAmount'> & { merchantId: number }> {
    const { data } = await this.#read(`/api/v1/transactions/${id}/status`);
    return {
      merchantId: Number(data.merchant_id),
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
    const path = `/api/v1/transactions/${id}/status`;
    const { status, envelope } = await this.#send('GET', path, this.#readKey);
    if (status === 404) return null;
    if (status !== 200) throw new Error(`GET ${path}: ${status} ${envelope.code} ${envelope.message}`);
    const t = envelope.data.transaction ?? envelope.data;
    return {
      id: t.id,
      merchantId: Number(t.merchant_id),
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
    const { data } = await this.#read(`/api/v1/payment-sessions/${id}`);
    return { status: data.payment_session.status, transactionId: data.payment_session.transaction_id };
  }

  /** The payment record an attempt made, with an auth's capture amount from the capture events seen. */
  async payment(
    attempt: { gateway_transaction_id: string | null; payment_session_id: string | null },
    captures: ReadonlyMap<number, number>,
  ): Promise<{ payment: PaymentRecord; merchantId: number; sessionStatus?: string } | null> {
    const session = attempt.payment_session_id ? await this.session(attempt.payment_session_id) : undefined;
    const id = session?.transactionId ?? Number(attempt.gateway_transaction_id);
    if (!Number.isInteger(id) || id <= 0) return null;
    const { merchantId, ...t } = await this.transaction(id);
    return {
      payment: { ...t, captureAmount: captures.get(id) ?? null },
      merchantId,
      sessionStatus: session?.status,
    };
  }

  /**
   * The vault tokens of the customer's saved cards the gateway holds active for `merchant` (default
   * the first one) (sandbox.md section 11).
   */
  async activeInstruments(merchantCustomerId: string, merchant = this.merchants[0]!): Promise<string[]> {
    const query = new URLSearchParams({
      merchant_id: String(merchant),
      merchant_customer_id: merchantCustomerId,
      per_page: '100',
    });
    const { data } = await this.#read(`/api/v1/payment-instruments?${query}`);
    return (data.payment_instruments as { vault_token: string }[]).map((i) => i.vault_token);
  }

  /** sandbox.md section 10: the sandbox's clock moved on by `seconds`; returns its reading after (ms). */
  async advanceClock(seconds: number): Promise<number> {
    const { data } = await this.#call('POST', '/sandbox/clock/advance', this.#controlKey, { seconds });
    return Date.parse(data.now);
  }

  /**
   * sandbox.md section 10: every delivery to each merchant's endpoint fails with connection_refused
   * for `seconds` of sandbox clock, the merchants cut off one after the other; the window covers them all.
   */
  async outage(seconds: number): Promise<{ from: number; until: number }> {
    let window: { from: number; until: number } | null = null;
    for (const merchant of this.merchants) {
      const body = { seconds, merchant_id: merchant };
      const { data } = await this.#call('POST', '/sandbox/webhook/outage', this.#controlKey, body);
      const until = Date.parse(data.until);
      const from = until - seconds * 1000;
      window =
        window === null
          ? { from, until }
          : { from: Math.min(window.from, from), until: Math.max(window.until, until) };
    }
    return window!;
  }

  /**
   * sandbox.md section 11: the payment is charged back, for `amount` (major units, as the control
   * takes it) or, without, all that was captured and not refunded.
   */
  async chargeback(transactionId: number, amount?: string): Promise<void> {
    const body = amount === undefined ? undefined : { amount };
    await this.#call('POST', `/sandbox/transactions/${transactionId}/chargeback`, this.#controlKey, body);
  }

  /** sandbox.md section 11: the merchant won the dispute; the payment is captured again. */
  async reverseChargeback(transactionId: number): Promise<void> {
    await this.#call('POST', `/sandbox/transactions/${transactionId}/chargeback/reverse`, this.#controlKey);
  }

  async settle(sessionId: string, outcome: 'paid' | 'failed' | 'cancelled'): Promise<void> {
    await this.#call('POST', `/sandbox/payment-sessions/${sessionId}/settle`, this.#controlKey, {
      outcome,
    });
  }
}
