import type { Logger } from 'pino';
import { GatewayError } from '../../client/errors.js';
import type { GatewayClient } from '../../client/gateway-client.js';
import type { Clock } from '../../shared/clock.js';

/** gateway-api.md, Webhook endpoint record; `missing`: the gateway has no endpoint for us. */
export type DeliveryStatus = 'healthy' | 'degraded' | 'failing' | 'paused' | 'missing' | (string & {});

export interface WebhookHealth {
  status: DeliveryStatus;
  consecutiveFailures: number;
  lastFailureAt: string | null;
  lastSuccessAt: string | null;
  checkedAt: string;
  /** When the last warning about this state was logged (ISO); null while healthy. */
  warnedAt?: string | null;
}

/** While the state stays the same, a warning is repeated this often, not at every check. */
export const WARN_AGAIN_MS = 15 * 60_000;

/** Where the last health is kept between runs (Redis: shared by the schedulers, read by the metrics). */
export interface HealthMemory {
  get(): Promise<WebhookHealth | null>;
  set(health: WebhookHealth): Promise<void>;
}

export interface HealthDeps {
  /** The gateway as the endpoint's merchant sees it (platform mode: each merchant has its own endpoint). */
  gateway: Pick<GatewayClient, 'getWebhook'>;
  /** Whose endpoint, in the log lines (platform mode); absent: the kit's one endpoint. */
  merchantId?: number;
  memory: HealthMemory;
  /** Runs event recovery now. */
  recover: () => Promise<unknown>;
  clock: Clock;
  logger: Logger;
}

const UNWELL = new Set<string>(['degraded', 'failing', 'paused', 'missing']);

/**
 * The webhook health check (node-cron): reads the endpoint's delivery health, warns while it is not
 * healthy, and when it comes back to healthy after a failure streak runs recovery at once, so what
 * the gateway gave up delivering meanwhile is fetched without waiting for recovery's own schedule.
 */
export async function checkWebhookHealth(deps: HealthDeps): Promise<WebhookHealth & { recovered: boolean }> {
  const before = await deps.memory.get();
  const now = await current(deps);
  const unwell = UNWELL.has(now.status);
  const warnedAt = before?.status === now.status ? (before.warnedAt ?? null) : null;
  const warn = unwell && (warnedAt === null || deps.clock.now() - Date.parse(warnedAt) >= WARN_AGAIN_MS);
  now.warnedAt = warn ? now.checkedAt : unwell ? warnedAt : null;
  await deps.memory.set(now);
  const whose = deps.merchantId === undefined ? {} : { merchant: deps.merchantId };
  if (warn) {
    deps.logger.warn(
      {
        ...whose,
        deliveryStatus: now.status,
        consecutiveFailures: now.consecutiveFailures,
        lastFailureAt: now.lastFailureAt,
      },
      now.status === 'missing'
        ? 'no webhook endpoint at the gateway: no events are sent; the poller keeps orders true'
        : `webhook deliveries ${now.status}`,
    );
  }
  const cameBack = now.status === 'healthy' && before !== null && UNWELL.has(before.status);
  if (cameBack) {
    deps.logger.info(
      { ...whose, was: before.status },
      'webhook deliveries healthy again: recovering missed events now',
    );
    await deps.recover();
  }
  return { ...now, recovered: cameBack };
}

async function current(deps: HealthDeps): Promise<WebhookHealth> {
  const checkedAt = new Date(deps.clock.now()).toISOString();
  try {
    const endpoint = (await deps.gateway.getWebhook('health')).data;
    return {
      status: endpoint.delivery_status ?? 'healthy',
      consecutiveFailures: endpoint.consecutive_failures ?? 0,
      lastFailureAt: endpoint.last_failure_at ?? null,
      lastSuccessAt: endpoint.last_success_at ?? null,
      checkedAt,
    };
  } catch (error) {
    if (error instanceof GatewayError && error.status === 404)
      return {
        status: 'missing',
        consecutiveFailures: 0,
        lastFailureAt: null,
        lastSuccessAt: null,
        checkedAt,
      };
    throw error;
  }
}
