import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** What the gauges read at each scrape: shared state (the queue, the inbox, the budget, the health). */
export interface MetricSources {
  /** Seconds since the oldest inbox row still unprocessed was stored; 0 when none is. */
  inboxLagSeconds(): Promise<number>;
  queueJobs(): Promise<Record<'waiting' | 'active' | 'delayed' | 'failed', number>>;
  /** Calls (and waits) by caller in the last complete minute, and the gateway's last remaining. */
  budget(): Promise<{
    calls: Record<string, number>;
    waits: Record<string, number>;
    remaining: number | null;
  }>;
  /** Each webhook endpoint's last health: `merchant` names a merchant's endpoint in platform mode (issue 45). */
  webhookHealth(): Promise<{ status: string; consecutiveFailures: number; merchant?: number }[]>;
  /**
   * Gateway money with no order still open (issue 19), by currency and the merchant whose endpoint
   * its event came to (null: the kit's first, or a kit that does not know its merchant's id).
   */
  unmatchedOpen(): Promise<{ merchant_id: number | null; currency: string; open: number }[]>;
  /**
   * Disputes not yet won or lost, by currency and the merchant whose order it is (null: an order that
   * names none, or a kit that does not know its merchant's id).
   */
  disputesOpen(): Promise<{ merchant_id: number | null; currency: string; open: number }[]>;
  /** Order event deliveries still to be made, given up, and how long the oldest waiting has waited (issue 20). */
  orderEvents(): Promise<{ pending: number; failed: number; oldestPendingSeconds: number }>;
}

/** What a kit's metrics are told of its settings. */
export interface KitMetricsOptions {
  /**
   * The merchants the kit acts for (GATEWAY_MERCHANTS). With several (platform mode, issue 45), the
   * metrics about orders and their money carry a `merchant` label: these merchants, and any other
   * whose orders the kit still holds (one it acted for before), so the label stays bounded. With one,
   * or none, they carry no such label, as before.
   */
  merchants?: readonly number[];
}

/** A report's counts as the gauge reads them: per currency, and per merchant in platform mode. */
export interface ReportedCounts {
  merchant_id?: number | null;
  currency: string;
  orders: number;
  in_flight: number;
  mismatched: number;
  resolved: number;
}

/**
 * The kit's Prometheus metrics (prom-client), one registry per kit: the process's own, the counters
 * this process adds to, and gauges that read shared state when scraped. Names start with `kit_`.
 */
export class KitMetrics {
  readonly registry = new Registry();
  /** Platform mode: the merchants served, whose series the order metrics carry; null for a single shop. */
  readonly #merchants: readonly number[] | null;
  readonly #receiver: Counter<'outcome'>;
  readonly #receiverSeconds: Histogram;
  readonly #observations: Counter<'source' | 'outcome'>;
  readonly #polls: Counter<'result'>;
  readonly #recovery: Counter<'result'>;
  readonly #report: Gauge<'merchant' | 'currency' | 'classification'>;
  readonly #expiring: Gauge<'merchant'>;
  readonly #unmatched: Counter<'merchant' | 'currency'>;
  readonly #orderEvents: Counter<'kind' | 'result'>;
  readonly #rateLimited: Counter<'limit'>;
  readonly #rateLimitFallbacks: Counter<'limit'>;
  readonly #aged: Counter<'what'>;
  readonly #expiry: Counter<'result'>;
  #sources: MetricSources | null = null;

  constructor(options: KitMetricsOptions = {}) {
    const merchants = options.merchants ?? [];
    this.#merchants = merchants.length > 1 ? [...merchants] : null;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.#receiver = new Counter({
      name: 'kit_webhook_requests_total',
      help: 'Webhook deliveries answered by the receiver, by outcome',
      labelNames: ['outcome'],
      registers,
    });
    this.#receiverSeconds = new Histogram({
      name: 'kit_webhook_request_duration_seconds',
      help: 'Time the receiver took to answer a delivery',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.#observations = new Counter({
      name: 'kit_observations_total',
      help: 'Observations applied through the one apply path, by source and outcome',
      labelNames: ['source', 'outcome'],
      registers,
    });
    this.#polls = new Counter({
      name: 'kit_poll_orders_total',
      help: 'Orders the poller asked the gateway about, by result (polled, changed, exhausted, failed)',
      labelNames: ['result'],
      registers,
    });
    this.#recovery = new Counter({
      name: 'kit_recovery_events_total',
      help: 'Events recovery listed, found missing, recovered, replayed or failed to recover',
      labelNames: ['result'],
      registers,
    });
    this.#report = new Gauge({
      name: 'kit_report_orders',
      help: 'Orders of the last daily reconciliation report, by currency and classification (and merchant, in platform mode)',
      labelNames: ['merchant', 'currency', 'classification'],
      registers,
    });
    this.#expiring = new Gauge({
      name: 'kit_authorizations_expiring',
      help: 'Authorized orders whose authorisation lapses within AUTH_EXPIRY_WARNING, at the last check (after the policy acted; by merchant, in platform mode)',
      labelNames: ['merchant'],
      registers,
    });
    this.#unmatched = new Counter({
      name: 'kit_unmatched_money_total',
      help: 'Gateway transactions naming money that no attempt holds, kept for an operator when first seen, by currency (and merchant, in platform mode)',
      labelNames: ['merchant', 'currency'],
      registers,
    });
    this.#orderEvents = new Counter({
      name: 'kit_order_event_deliveries_total',
      help: 'Tries of order event deliveries by this process: to shop endpoints or handlers, delivered, failed (tried again) or given up',
      labelNames: ['kind', 'result'],
      registers,
    });
    this.#rateLimited = new Counter({
      name: 'kit_rate_limited_total',
      help: 'Requests a limit on the public routes turned away (429, or a landing shown without asking the gateway), by limit',
      labelNames: ['limit'],
      registers,
    });
    this.#rateLimitFallbacks = new Counter({
      name: 'kit_rate_limit_fallbacks_total',
      help: 'Limit decisions this process took alone because Redis did not answer, by limit',
      labelNames: ['limit'],
      registers,
    });
    this.#aged = new Counter({
      name: 'kit_retention_removed_total',
      help: 'What the retention job removed after RETENTION_DAYS: webhook payloads cleared, webhook event ids deleted, order events, their deliveries and tries',
      labelNames: ['what'],
      registers,
    });
    this.#expiry = new Counter({
      name: 'kit_order_expiry_total',
      help: 'Orders past ORDER_TTL the expiry job looked at, asked the gateway about, and closed (expired)',
      labelNames: ['result'],
      registers,
    });
    const metrics = this;
    new Gauge({
      name: 'kit_order_event_deliveries',
      help: 'Order event deliveries still to be made (pending) and given up (failed: a replay sends them), every process',
      labelNames: ['status'],
      registers,
      async collect() {
        const state = await metrics.#read((s) => s.orderEvents());
        if (state === null) return;
        this.set({ status: 'pending' }, state.pending);
        this.set({ status: 'failed' }, state.failed);
      },
    });
    new Gauge({
      name: 'kit_order_events_oldest_pending_seconds',
      help: 'How long the oldest order event delivery still to be made has waited; 0 when none waits',
      registers,
      async collect() {
        const state = await metrics.#read((s) => s.orderEvents());
        if (state !== null) this.set(state.oldestPendingSeconds);
      },
    });
    new Gauge({
      name: 'kit_unmatched_money_open',
      help: 'Gateway money with no order that no operator has attached or resolved yet, by currency (and merchant, in platform mode)',
      labelNames: ['merchant', 'currency'],
      registers,
      async collect() {
        const open = await metrics.#read((s) => s.unmatchedOpen());
        if (open === null) return;
        // A currency whose last open row was settled must read 0, not its last count.
        this.reset();
        for (const { labels, n } of metrics.#perSeries(open)) this.set(labels, n);
      },
    });
    new Gauge({
      name: 'kit_disputes_open',
      help: 'Chargebacks of orders not yet won (reversed by the gateway) or lost (an operator said so), by currency (and merchant, in platform mode)',
      labelNames: ['merchant', 'currency'],
      registers,
      async collect() {
        const open = await metrics.#read((s) => s.disputesOpen());
        if (open === null) return;
        this.reset();
        for (const { labels, n } of metrics.#perSeries(open)) this.set(labels, n);
      },
    });
    new Gauge({
      name: 'kit_inbox_oldest_unprocessed_seconds',
      help: 'How long the oldest stored, unprocessed webhook event has waited',
      registers,
      async collect() {
        const lag = await metrics.#read((s) => s.inboxLagSeconds());
        if (lag !== null) this.set(lag);
      },
    });
    new Gauge({
      name: 'kit_queue_jobs',
      help: "The reconciler queue's jobs by state (a job carries one event, or a batch the receiver stored together: the inbox lag counts events)",
      labelNames: ['state'],
      registers,
      async collect() {
        const jobs = await metrics.#read((s) => s.queueJobs());
        for (const [state, n] of Object.entries(jobs ?? {})) this.set({ state }, n);
      },
    });
    const budget = () => this.#read((s) => s.budget());
    new Gauge({
      name: 'kit_gateway_calls_last_minute',
      help: 'Gateway calls of the API key in the last complete minute, all processes, by caller',
      labelNames: ['caller'],
      registers,
      async collect() {
        for (const [caller, n] of Object.entries((await budget())?.calls ?? {})) this.set({ caller }, n);
      },
    });
    new Gauge({
      name: 'kit_gateway_budget_waits_last_minute',
      help: 'Times a caller was told to wait by the shared budget in the last complete minute',
      labelNames: ['caller'],
      registers,
      async collect() {
        for (const [caller, n] of Object.entries((await budget())?.waits ?? {})) this.set({ caller }, n);
      },
    });
    new Gauge({
      name: 'kit_gateway_rate_limit_remaining',
      help: "The gateway's last X-RateLimit-Remaining for the key (absent when none was seen in a minute)",
      registers,
      async collect() {
        this.reset();
        const remaining = (await budget())?.remaining;
        if (remaining !== null && remaining !== undefined) this.set(remaining);
      },
    });
    new Gauge({
      name: 'kit_webhook_delivery_status',
      help: "The endpoint's delivery health at the last check: 1 for the current status (platform mode: per merchant)",
      labelNames: ['status', 'merchant'],
      registers,
      async collect() {
        this.reset();
        for (const health of (await metrics.#read((s) => s.webhookHealth())) ?? [])
          this.set({ status: health.status, ...merchantLabel(health.merchant) }, 1);
      },
    });
    new Gauge({
      name: 'kit_webhook_consecutive_failures',
      help: 'Consecutive failed deliveries at the last health check (platform mode: per merchant)',
      labelNames: ['merchant'],
      registers,
      async collect() {
        this.reset();
        for (const health of (await metrics.#read((s) => s.webhookHealth())) ?? [])
          this.set(merchantLabel(health.merchant), health.consecutiveFailures);
      },
    });
  }

  /** Gives the gauges what they read; until then (or if reading fails) they say nothing. */
  watch(sources: MetricSources): void {
    this.#sources = sources;
  }

  /** A delivery the receiver answered: its outcome (accepted, duplicate, bad_signature, ...) and time. */
  receiver(outcome: string, seconds: number): void {
    this.#receiver.inc({ outcome });
    this.#receiverSeconds.observe(seconds);
  }

  /** A request a limit turned away. */
  rateLimited(limit: string): void {
    this.#rateLimited.inc({ limit });
  }

  /** A limit decision taken without Redis. */
  rateLimitFallback(limit: string): void {
    this.#rateLimitFallbacks.inc({ limit });
  }

  /**
   * The authorisations job's count: those still expiring once its policy acted; per merchant in
   * platform mode (the job counts each merchant it acts for, from 0).
   */
  authorizationsExpiring(summary: {
    expiring: number;
    acted: number;
    byMerchant?: Record<string, { expiring: number; acted: number }>;
  }): void {
    if (this.#merchants && summary.byMerchant) {
      this.#expiring.reset();
      for (const [merchant, n] of Object.entries(summary.byMerchant))
        this.#expiring.set({ merchant }, n.expiring - n.acted);
      return;
    }
    this.#expiring.set(summary.expiring - summary.acted);
  }

  /** A retention run's removals, by kind (issue 43, part 5). */
  aged(s: {
    webhookPayloads: number;
    webhookEvents: number;
    orderEvents: number;
    orderEventDeliveries: number;
    orderEventTries: number;
  }): void {
    this.#aged.inc({ what: 'webhook_payloads' }, s.webhookPayloads);
    this.#aged.inc({ what: 'webhook_events' }, s.webhookEvents);
    this.#aged.inc({ what: 'order_events' }, s.orderEvents);
    this.#aged.inc({ what: 'order_event_deliveries' }, s.orderEventDeliveries);
    this.#aged.inc({ what: 'order_event_tries' }, s.orderEventTries);
  }

  observed(source: string, outcome: string): void {
    this.#observations.inc({ source, outcome });
  }

  orderEventTried(kind: 'endpoint' | 'handler', result: 'delivered' | 'failed' | 'given_up'): void {
    this.#orderEvents.inc({ kind, result });
  }

  /**
   * A gateway transaction with no attempt, kept for the first time (reconciler/unmatched.ts).
   * `merchantId`: whose endpoint its event came to (null: the kit's first); a label in platform mode only.
   */
  unmatchedMoney(currency: string, merchantId: number | null = null): void {
    this.#unmatched.inc({ ...this.#merchantLabel(merchantId), currency });
  }

  polled(summary: { orders: number; changed: number; exhausted: number; failed: number }): void {
    this.#polls.inc({ result: 'polled' }, summary.orders);
    this.#polls.inc({ result: 'changed' }, summary.changed);
    this.#polls.inc({ result: 'exhausted' }, summary.exhausted);
    this.#polls.inc({ result: 'failed' }, summary.failed);
  }

  /** An ORDER_TTL run (merchant/jobs/order-expiry.ts). */
  expired(summary: { looked: number; asked: number; closed: number }): void {
    this.#expiry.inc({ result: 'looked' }, summary.looked);
    this.#expiry.inc({ result: 'asked' }, summary.asked);
    this.#expiry.inc({ result: 'closed' }, summary.closed);
  }

  recovered(summary: {
    listed: number;
    missing: number;
    recovered: number;
    replayed: number;
    failed: number;
  }): void {
    for (const result of ['listed', 'missing', 'recovered', 'replayed', 'failed'] as const)
      this.#recovery.inc({ result }, summary[result]);
  }

  /**
   * The daily report's counts by classification: per currency (`totals`), or, in platform mode, per
   * merchant and currency (`byMerchant`, each naming its `merchant_id`).
   */
  reported(totals: readonly ReportedCounts[], byMerchant: readonly ReportedCounts[] = totals): void {
    this.#report.reset();
    for (const t of this.#merchants ? byMerchant : totals) {
      const labels = this.#merchantLabel(t.merchant_id ?? null);
      const set = (classification: string, n: number) =>
        this.#report.set({ ...labels, currency: t.currency, classification }, n);
      set('matched', t.orders - t.in_flight - t.mismatched - t.resolved);
      set('in_flight', t.in_flight);
      set('mismatched', t.mismatched);
      set('resolved', t.resolved);
    }
  }

  /**
   * The `merchant` label of a series about an order of `merchantId`: in platform mode only (a single
   * shop's series carry none); an order that names no merchant is the first one's.
   */
  #merchantLabel(merchantId: number | null): { merchant?: string } {
    if (!this.#merchants) return {};
    const merchant = merchantId ?? this.#merchants[0] ?? null;
    return merchant === null ? {} : { merchant: String(merchant) };
  }

  /**
   * Counts per merchant and currency summed per series: a single shop's per currency (its rows may
   * name no merchant or its one), a platform's per merchant and currency.
   */
  #perSeries(counts: readonly { merchant_id: number | null; currency: string; open: number }[]) {
    const sums = new Map<string, { labels: Record<string, string>; n: number }>();
    for (const c of counts) {
      const labels = { ...this.#merchantLabel(c.merchant_id), currency: c.currency };
      const key = JSON.stringify(labels);
      const sum = sums.get(key) ?? { labels, n: 0 };
      sum.n += c.open;
      sums.set(key, sum);
    }
    return sums.values();
  }

  /** The Prometheus text of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** A scrape must not fail because Redis or the database does: that gauge is left out this time. */
  async #read<T>(read: (s: MetricSources) => Promise<T>): Promise<T | null> {
    if (!this.#sources) return null;
    try {
      return await read(this.#sources);
    } catch {
      return null;
    }
  }
}

/** The `merchant` label of a merchant's endpoint (platform mode); none for the kit's one endpoint. */
const merchantLabel = (merchant: number | undefined): { merchant?: string } =>
  merchant === undefined ? {} : { merchant: String(merchant) };
