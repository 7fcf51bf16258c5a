import type { Logger } from 'pino';
import { type Clock, isoMicros, unixSeconds } from '../../shared/clock.js';
import { type RandomSource, randomId } from '../../shared/ids.js';
import { sign } from '../../shared/signature.js';
import {
  API_VERSION,
  deliveryStatus,
  type Endpoint,
  nextAttemptAt,
  type WebhookEvent,
} from '../domain/webhooks.js';
import type { WebhookStore } from '../state/webhook-store.js';
import { type Resolver, type SendResult, sendWebhook } from './send.js';

export interface DispatcherDeps {
  registry: WebhookStore;
  clock: Clock;
  random: RandomSource;
  logger: Logger;
  allowPrivate: boolean;
  resolve: Resolver;
  /** What sends each attempt and ping. */
  fetch: typeof fetch;
  timeoutMs: number;
  /** merchant id -> until when every delivery fails with connection_refused (sandbox.md section 10). */
  outages: Map<number, number>;
}

export interface DeliveryReport {
  attempted: number;
  delivered: number;
  failed: number;
}

/**
 * The webhook dispatcher (sandbox.md section 8). Every due attempt runs at once, in parallel, so a
 * receiver that hangs costs only its own timeout; an event in flight is never picked twice.
 */
export class Dispatcher {
  readonly #inFlight = new Set<string>();
  constructor(private readonly deps: DispatcherDeps) {}

  /** Runs every attempt due at the current clock: scheduled ones and queued replays. */
  async deliverDue(): Promise<DeliveryReport> {
    const { registry, clock } = this.deps;
    const now = clock.now();
    const due = [...registry.events.values()].filter((e) => {
      if (this.#inFlight.has(e.id) || !registry.retained(e, now)) return false;
      if (!registry.endpoints.get(e.merchantId)?.isActive) return false; // paused: nothing delivered or retried
      return (
        e.queuedReplays > 0 || (e.status === 'pending' && e.nextAttemptAt !== null && e.nextAttemptAt <= now)
      );
    });
    const report: DeliveryReport = { attempted: 0, delivered: 0, failed: 0 };
    await Promise.all(
      due.map(async (event) => {
        this.#inFlight.add(event.id);
        try {
          // Every queued replay, then the scheduled attempt if one is due: one event's sends never overlap.
          // A replay stays queued until attempted, so one in flight when the state is saved is sent
          // again after a restart (at least once); a delete meanwhile may have zeroed the queue.
          while (event.queuedReplays > 0) {
            await this.#counted(event, true, report);
            event.queuedReplays = Math.max(0, event.queuedReplays - 1);
          }
          if (event.status === 'pending' && event.nextAttemptAt !== null && event.nextAttemptAt <= now) {
            await this.#counted(event, false, report);
          }
        } finally {
          this.#inFlight.delete(event.id);
        }
      }),
    );
    return report;
  }

  async #counted(event: WebhookEvent, isReplay: boolean, report: DeliveryReport): Promise<void> {
    const before = event.status;
    await this.#attempt(event, isReplay);
    report.attempted += 1;
    if (event.status === 'delivered' && before !== 'delivered') report.delivered += 1;
    if (event.status === 'failed' && before !== 'failed') report.failed += 1;
  }

  /** Rule 5: a signed ping outside history; success sets `last_success_at` and ends the failure streak. */
  async ping(endpoint: Endpoint) {
    const now = this.deps.clock.now();
    const body = JSON.stringify({
      id: randomId('evt_test_', this.deps.random),
      type: 'webhook.ping',
      created_at: isoMicros(now),
      api_version: API_VERSION,
      data: {},
    });
    const result = await this.#send(endpoint, body, false);
    if (result.ok && this.deps.registry.endpoints.get(endpoint.merchantId) === endpoint) {
      endpoint.lastSuccessAt = this.deps.clock.now();
      endpoint.consecutiveFailures = 0;
    }
    return {
      success: result.ok,
      status_code: result.statusCode,
      duration_ms: result.durationMs,
      error: result.errorReason,
      delivery_status: deliveryStatus(endpoint.isActive, endpoint.consecutiveFailures),
    };
  }

  async #attempt(event: WebhookEvent, isReplay: boolean): Promise<void> {
    const { registry, clock, random } = this.deps;
    const endpoint = registry.endpoints.get(event.merchantId);
    if (!endpoint?.isActive) return; // deleted or paused since this event was picked
    const startedAt = clock.now();
    const result = await this.#send(endpoint, event.body, isReplay);
    const now = clock.now();
    event.attempts.push({
      deliveryId: randomId('whd_', random),
      attempt: event.attempts.length + 1,
      statusCode: result.statusCode,
      errorReason: result.errorReason,
      responseExcerpt: result.responseExcerpt,
      durationMs: result.durationMs,
      isReplay,
      createdAt: startedAt,
    });
    // Deleted (or deleted and registered anew) while in flight: the delete already settled the event.
    if (registry.endpoints.get(event.merchantId) !== endpoint) return;
    if (result.ok) {
      endpoint.lastSuccessAt = now;
      endpoint.consecutiveFailures = 0;
      event.status = 'delivered';
      event.deliveredAt ??= now;
      event.nextAttemptAt = null;
    } else {
      endpoint.lastFailureAt = now;
      endpoint.consecutiveFailures += 1;
    }
    if (isReplay) return; // a replay is one attempt: it never schedules retries, nor demotes a delivered event
    event.scheduledAttempts += 1;
    if (result.ok) return;
    const next = nextAttemptAt(event.scheduledAttempts, now);
    if (next === null) {
      event.status = 'failed';
      event.failedAt = now;
    }
    event.nextAttemptAt = next;
  }

  async #send(endpoint: Endpoint, body: string, isReplay: boolean): Promise<SendResult> {
    const { clock, registry } = this.deps;
    const outageUntil = this.deps.outages.get(endpoint.merchantId) ?? 0;
    if (clock.now() < outageUntil) {
      return {
        ok: false,
        statusCode: null,
        errorReason: 'connection_refused',
        responseExcerpt: null,
        durationMs: 0,
      };
    }
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': 'SandboxGateway-Webhooks/1',
      // Signed afresh for every attempt, with the secret of this moment (rule 7: rotation is a hard cutover).
      'X-Service-Signature': sign(body, registry.secretOf(endpoint), unixSeconds(clock.now())),
    };
    if (isReplay) headers['X-Service-Replay'] = 'true';
    const result = await sendWebhook({
      url: endpoint.url,
      body,
      headers,
      timeoutMs: this.deps.timeoutMs,
      allowPrivate: this.deps.allowPrivate,
      resolve: this.deps.resolve,
      fetch: this.deps.fetch,
      now: () => performance.now(),
    });
    this.deps.logger.debug(
      { merchant: endpoint.merchantId, ok: result.ok, status: result.statusCode, reason: result.errorReason },
      'webhook attempt',
    );
    return result;
  }
}
