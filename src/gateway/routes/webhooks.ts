import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { randomId } from '../../shared/ids.js';
import { addressesOf } from '../delivery/send.js';
import type { GatewayDeps } from '../deps.js';
import { allPublic } from '../domain/addresses.js';
import {
  type Endpoint,
  EVENT_TYPES,
  endpointView,
  eventDetailView,
  eventRowView,
  nextSubscription,
  type WebhookEvent,
  webhookUrlProblem,
} from '../domain/webhooks.js';
import { canSee, principalOf, rateLimited, requireScope, resolveMerchantId } from '../http/auth.js';
import { readJsonObject } from '../http/body.js';
import { respond } from '../http/envelope.js';
import { ApiError, authFailed, notFound, validationFailed } from '../http/errors.js';
import { pageOf, pageQuery } from '../http/pagination.js';
import { merchantIdField } from '../http/schemas.js';
import { parseOr422 } from '../http/validate.js';

const eventType = z.enum(EVENT_TYPES, { message: `must be one of ${EVENT_TYPES.join(', ')}` });

export const putSchema = z.object({
  url: z.string({ message: 'is required' }).min(1, 'is required'),
  is_active: z.boolean({ message: 'must be a boolean' }).optional(),
  events: z
    .array(eventType)
    .min(1, 'must list at least one event type, or be null for the default set')
    .nullable()
    .optional(),
  merchant_id: merchantIdField,
});

export const merchantOnlyBody = z.object({ merchant_id: merchantIdField });

const isoDate = z
  .string()
  .refine((s) => boundOf(s, 'from') !== null, 'must be an ISO 8601 date or timestamp');

/**
 * A `from`/`to` bound in ms. A date alone covers its whole day ("on or before" 2026-11-01 includes its
 * evening); a timestamp without a zone is UTC, like every timestamp the gateway writes.
 */
function boundOf(text: string, side: 'from' | 'to'): number | null {
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return null;
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const ms = Date.parse(dateOnly || /(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`);
  if (Number.isNaN(ms)) return null;
  return dateOnly && side === 'to' ? ms + 24 * 60 * 60 * 1000 - 1 : ms;
}
export const listQuery = z.object({
  status: z
    .enum(['pending', 'delivered', 'failed'], { message: 'must be pending, delivered or failed' })
    .optional(),
  event_type: eventType.optional(),
  from: isoDate.optional(),
  to: isoDate.optional(),
  transaction_id: z
    .string()
    .regex(/^\d{1,15}$/, 'must be an integer')
    .transform(Number)
    .optional(),
  ...pageQuery,
});

/** gateway-api.md, Webhook management (with sandbox.md section 8). */
export function webhookRoutes(router: Router, deps: GatewayDeps): void {
  const { state, clock } = deps;
  const registry = state.webhooks;

  /** Partner keys name the merchant: in the query on GET and DELETE, in the body on writes. */
  const merchantFrom = (ctx: Context, requested: unknown): number => {
    requireScope(ctx, 'webhooks:manage');
    let id: number | null | undefined;
    if (typeof requested === 'string') {
      if (!/^\d{1,15}$/.test(requested))
        throw authFailed(400, 'merchant_id is not a merchant linked to this partner.');
      id = Number(requested);
    } else {
      id = requested as number | null | undefined;
    }
    return resolveMerchantId(state, principalOf(ctx), id);
  };
  const endpointOf = (merchantId: number): Endpoint => {
    const endpoint = registry.endpoints.get(merchantId);
    if (!endpoint) throw notFound('Webhook endpoint');
    return endpoint;
  };
  const queryMerchant = (ctx: Context) => merchantFrom(ctx, ctx.query.merchant_id);
  const bodyMerchant = async (ctx: Context) => {
    requireScope(ctx, 'webhooks:manage');
    const body = parseOr422(merchantOnlyBody, await readJsonObject(ctx));
    return merchantFrom(ctx, body.merchant_id);
  };

  router.get('/api/v1/webhook', (ctx) => {
    respond(ctx, endpointView(endpointOf(queryMerchant(ctx))), 'Webhook endpoint.');
  });

  router.put('/api/v1/webhook', async (ctx) => {
    requireScope(ctx, 'webhooks:manage');
    const body = parseOr422(putSchema, await readJsonObject(ctx));
    const merchantId = merchantFrom(ctx, body.merchant_id);
    await checkUrl(deps, body.url);
    const now = clock.now();
    const existing = registry.endpoints.get(merchantId);
    if (!existing) {
      const { endpoint, secret } = registry.create(
        merchantId,
        body.url,
        body.is_active ?? true,
        nextSubscription(null, body.events),
        now,
      );
      return respond(
        ctx,
        { endpoint: endpointView(endpoint), secret },
        'Webhook endpoint created. Store the secret: it is shown once.',
        201,
      );
    }
    const resumed = body.is_active === true && !existing.isActive;
    existing.url = body.url;
    if (body.is_active !== undefined) existing.isActive = body.is_active;
    existing.events = nextSubscription(existing.events, body.events);
    existing.updatedAt = now;
    if (resumed) {
      // Rule 4: what waited while paused is delivered after reactivation.
      for (const event of registry.events.values()) {
        if (event.merchantId === merchantId && event.status === 'pending' && event.nextAttemptAt === null)
          event.nextAttemptAt = now;
      }
      deps.kick();
    }
    respond(ctx, endpointView(existing), 'Webhook endpoint updated.');
  });

  router.delete('/api/v1/webhook', (ctx) => {
    const merchantId = queryMerchant(ctx);
    endpointOf(merchantId);
    const now = clock.now();
    // Rule 8: deliveries stop, queued events fail, URL and secret are erased; history stays.
    registry.endpoints.delete(merchantId);
    for (const event of registry.events.values()) {
      if (event.merchantId !== merchantId) continue;
      event.queuedReplays = 0;
      if (event.status !== 'pending') continue;
      event.attempts.push({
        deliveryId: randomId('whd_', deps.random),
        attempt: event.attempts.length + 1,
        statusCode: null,
        errorReason: 'endpoint_deleted',
        responseExcerpt: null,
        durationMs: 0,
        isReplay: false,
        createdAt: now,
      });
      event.status = 'failed';
      event.failedAt = now;
      event.nextAttemptAt = null;
    }
    respond(ctx, null, 'Webhook endpoint deleted.');
  });

  router.post('/api/v1/webhook/rotate-secret', async (ctx) => {
    const endpoint = endpointOf(await bodyMerchant(ctx));
    const secret = registry.rotate(endpoint, clock.now());
    respond(
      ctx,
      { endpoint: endpointView(endpoint), secret },
      'Signing secret rotated. The old secret no longer signs.',
    );
  });

  router.post('/api/v1/webhook/test', async (ctx) => {
    const endpoint = endpointOf(await bodyMerchant(ctx));
    const decision = state.pingRate.admit(principalOf(ctx).key, clock.now());
    if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds);
    const outcome = await deps.dispatcher.ping(endpoint);
    respond(
      ctx,
      outcome,
      outcome.success ? 'The endpoint answered 2xx.' : 'The endpoint did not answer 2xx.',
    );
  });

  router.get('/api/v1/webhook/events', (ctx) => {
    const merchantId = queryMerchant(ctx);
    const query = parseOr422(listQuery, ctx.query);
    const now = clock.now();
    const from = query.from === undefined ? -Infinity : boundOf(query.from, 'from')!;
    const to = query.to === undefined ? Infinity : boundOf(query.to, 'to')!;
    const matching = [...registry.events.values()]
      .filter(
        (e) =>
          e.merchantId === merchantId &&
          registry.retained(e, now) &&
          (query.status === undefined || e.status === query.status) &&
          (query.event_type === undefined || e.type === query.event_type) &&
          (query.transaction_id === undefined || e.transactionId === query.transaction_id) &&
          e.createdAt >= from &&
          e.createdAt <= to,
      )
      .reverse(); // newest first: events are kept in the order they were recorded
    const { items, pagination } = pageOf(matching, query);
    respond(ctx, { events: items.map(eventRowView), pagination }, 'Webhook events.');
  });

  /** An event the key may see, inside the retention window; anything else is 404. */
  const visibleEvent = (ctx: Context): WebhookEvent => {
    requireScope(ctx, 'webhooks:manage');
    const event = registry.events.get(ctx.params.eventId ?? '');
    if (
      !event ||
      !registry.retained(event, clock.now()) ||
      !canSee(state, principalOf(ctx), event.merchantId)
    ) {
      throw notFound('Webhook event');
    }
    return event;
  };

  router.get('/api/v1/webhook/events/:eventId', (ctx) => {
    respond(ctx, eventDetailView(visibleEvent(ctx)), 'Webhook event.');
  });

  router.post('/api/v1/webhook/events/:eventId/replay', async (ctx) => {
    const event = visibleEvent(ctx);
    const merchantId = await bodyMerchant(ctx);
    if (event.merchantId !== merchantId) throw notFound('Webhook event');
    const endpoint = registry.endpoints.get(merchantId);
    if (!endpoint?.isActive) {
      throw new ApiError(
        400,
        'ERR_WEBHOOK_NOT_CONFIGURED',
        'There is no active webhook endpoint to replay to.',
      );
    }
    if (event.status === 'pending') {
      throw new ApiError(
        409,
        'ERR_REPLAY_NOT_ALLOWED',
        'The event is still being delivered; replay it once delivered or failed.',
      );
    }
    const decision = state.replayRate.admit(principalOf(ctx).key, clock.now());
    if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds);
    event.queuedReplays += 1;
    deps.kick();
    respond(ctx, { event: { ...eventRowView(event), last_attempt: null } }, 'Replay queued.');
  });
}

/** Rule 1, and in strict mode the host must resolve, and only to public addresses. */
async function checkUrl(deps: GatewayDeps, url: string): Promise<void> {
  const allowPrivate = deps.seed.settings.allow_private_webhook_urls;
  const problem = webhookUrlProblem(url, allowPrivate);
  if (problem) throw validationFailed({ url: [problem] });
  if (allowPrivate) return;
  let addresses: string[];
  try {
    addresses = await addressesOf(new URL(url).hostname, deps.resolve);
  } catch {
    throw validationFailed({ url: ['must be a publicly resolvable host'] });
  }
  if (!allPublic(addresses)) throw validationFailed({ url: ['must resolve to public addresses only'] });
}
