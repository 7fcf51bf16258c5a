import { z } from 'zod';
import { GatewayNetworkError } from './errors.js';
import { type ClientDeps, defaultDeps, Requester, type RequesterOptions } from './request.js';
import {
  type GatewayPaymentSession,
  type GatewayTransaction,
  paymentSessionData,
  transactionData,
} from './schemas.js';

const clockSchema = z.object({ now: z.string() });
const outageSchema = z.object({
  merchant_id: z.union([z.string(), z.number()]).transform(String),
  until: z.string(),
});
/** What a tick says it ran (sandbox.md section 10); every field optional: another sandbox may say less. */
const tickSchema = z.object({
  now: z.string().optional(),
  attempted: z.number().optional(),
  delivered: z.number().optional(),
  failed: z.number().optional(),
  sessions_expired: z.number().optional(),
  challenges_expired: z.number().optional(),
  auths_lapsed: z.number().optional(),
  events_pruned: z.number().optional(),
});
export type TickAnswer = z.output<typeof tickSchema>;

/** The part of an OpenAPI document the probe reads: the operations of each path. */
const documentSchema = z.object({ paths: z.record(z.string(), z.record(z.string(), z.unknown())) });

/** What the probe found at the gateway's address. */
export type SandboxProbe = { sandbox: true } | { sandbox: false; why: string };

/**
 * The sandbox controls of sandbox.md section 10: outside /api/v1, behind the same bearer key as the
 * API, and found on no real gateway. Over the client's one request builder (auth, envelope, errors),
 * but never retried: a control is a deliberate act, and a repeat after a lost answer would act twice
 * (a second chargeback is refused, a second advance moves the clock again).
 */
export class SandboxControls {
  readonly #requester: Requester;
  readonly #baseUrl: string;
  readonly #deps: ClientDeps;

  constructor(options: RequesterOptions) {
    this.#requester = new Requester({ ...options, retry: { maxAttempts: 1 } });
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#deps = { ...defaultDeps, ...options.deps };
  }

  /**
   * Whether the address serves the sandbox, asked before any control: the sandbox's API document
   * (`GET /openapi.json`, open to anyone) lists its controls marked `x-sandbox-only`, and a real
   * gateway has none of them. A read that needs no key and changes nothing, so a real gateway is
   * refused before anything is sent to it. No answer at all throws GatewayNetworkError (`connection`
   * or `timeout`), as every gateway call does.
   */
  async probe(): Promise<SandboxProbe> {
    let response: Response;
    let text: string;
    try {
      response = await this.#deps.fetch(`${this.#baseUrl}/openapi.json`, {
        headers: { Accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      });
      text = await response.text();
    } catch (error) {
      const e = error as { name?: string; code?: string; cause?: { code?: string } };
      if (e?.name === 'TimeoutError' || e?.name === 'AbortError')
        throw new GatewayNetworkError('timeout', 'GET /openapi.json: no answer in time', false);
      const code = e?.cause?.code ?? e?.code ?? 'unknown';
      throw new GatewayNetworkError('connection', `GET /openapi.json: connection failed (${code})`, true);
    }
    if (!response.ok) return { sandbox: false, why: `GET /openapi.json answers HTTP ${response.status}` };
    let document: z.output<typeof documentSchema> | null = null;
    try {
      const parsed = documentSchema.safeParse(JSON.parse(text));
      document = parsed.success ? parsed.data : null;
    } catch {
      document = null;
    }
    if (document === null) return { sandbox: false, why: 'GET /openapi.json is not an API document' };
    const controls = Object.entries(document.paths).filter(
      ([path, operations]) =>
        path.startsWith('/sandbox/') &&
        Object.values(operations).some(
          (o) =>
            o !== null && typeof o === 'object' && (o as Record<string, unknown>)['x-sandbox-only'] === true,
        ),
    );
    return controls.length > 0
      ? { sandbox: true }
      : { sandbox: false, why: 'its API document lists no sandbox controls' };
  }

  /** `GET /sandbox/clock`: the sandbox's time (real time, plus every advance so far). */
  async clock(): Promise<{ now: string }> {
    return (
      await this.#requester.send({
        method: 'GET',
        path: '/sandbox/clock',
        schema: clockSchema,
        caller: 'operator',
      })
    ).data;
  }

  /** `POST /sandbox/clock/advance`: the sandbox's time after the move. */
  async advance(seconds: number): Promise<{ now: string }> {
    return (await this.#post('/sandbox/clock/advance', { seconds }, clockSchema)).data;
  }

  /** `POST /sandbox/tick`: runs every delivery, expiry and retry due now, and says what it ran. */
  async tick(): Promise<TickAnswer> {
    return (await this.#post('/sandbox/tick', undefined, tickSchema)).data;
  }

  /** `POST /sandbox/payment-sessions/{id}/settle`: the provider reports, as after Pending. */
  async settle(sessionId: string, outcome: 'paid' | 'failed' | 'cancelled'): Promise<GatewayPaymentSession> {
    const path = `/sandbox/payment-sessions/${encodeURIComponent(sessionId)}/settle`;
    return (await this.#post(path, { outcome }, paymentSessionData)).data;
  }

  /** `POST /sandbox/transactions/{id}/chargeback`; `amount` in major units (default: all that is left). */
  async chargeback(transactionId: string, amount?: number): Promise<GatewayTransaction> {
    const path = `/sandbox/transactions/${encodeURIComponent(transactionId)}/chargeback`;
    return (await this.#post(path, amount === undefined ? {} : { amount }, transactionData)).data;
  }

  /** `POST /sandbox/transactions/{id}/chargeback/reverse`: the dispute won, `captured` again. */
  async reverse(transactionId: string): Promise<GatewayTransaction> {
    const path = `/sandbox/transactions/${encodeURIComponent(transactionId)}/chargeback/reverse`;
    return (await this.#post(path, undefined, transactionData)).data;
  }

  /**
   * `POST /sandbox/webhook/outage`: the key's merchant's deliveries fail for `seconds` of sandbox
   * clock; `merchantId`: the linked merchant a partner key acts for.
   */
  async outage(seconds: number, merchantId?: number): Promise<{ merchant_id: string; until: string }> {
    const body = merchantId === undefined ? { seconds } : { seconds, merchant_id: merchantId };
    return (await this.#post('/sandbox/webhook/outage', body, outageSchema)).data;
  }

  #post<T>(path: string, body: Record<string, unknown> | undefined, schema: z.ZodType<T>) {
    // Controls count against no budget at the sandbox; `operator` waits for the client's own, if ever.
    return this.#requester.send({ method: 'POST', path, body, schema, caller: 'operator' });
  }
}
