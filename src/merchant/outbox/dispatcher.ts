import type { Logger } from 'pino';
import type { Clock } from '../../shared/clock.js';
import type { Claimed, OutboxStore, Subscriber, TryResult } from '../store/outbox.js';
import { SEND_TIMEOUT_MS, type Sent } from './endpoint.js';
import type { OrderEvent, OrderEventHandlers } from './handlers.js';
import { nextTryAt } from './retry-schedule.js';

export interface DispatcherDeps {
  outbox: Pick<OutboxStore, 'fanOut' | 'claimDue' | 'settle'>;
  /** The shop's endpoints (SHOP_WEBHOOK_URLS) and how to send to one; none: handlers only. */
  endpoints: readonly string[];
  send: ((url: string, eventId: string, body: string) => Promise<Sent>) | null;
  handlers: OrderEventHandlers;
  clock: Clock;
  logger: Logger;
  /** Told of every try (the metrics). */
  onTry?: (kind: 'endpoint' | 'handler', result: 'delivered' | 'failed' | 'given_up') => void;
}

/** A claim lasts past the send's own timeout: a live dispatcher never loses its claim mid-send. */
const LEASE_MS = SEND_TIMEOUT_MS * 3;
const BATCH = 50;

/**
 * The outbox's dispatcher (issue 20): fans new order events out to the subscribers, then sends what
 * is due, each order's events in order. One pass; `startDispatcher` runs it on a loop.
 */
export async function dispatchOnce(deps: DispatcherDeps): Promise<number> {
  const subscribers: Subscriber[] = [
    ...(deps.send ? deps.endpoints.map((url) => ({ id: `url:${url}`, types: null })) : []),
    ...deps.handlers.subscribers(),
  ];
  if (subscribers.length === 0) return 0;
  const now = () => new Date(deps.clock.now());
  while ((await deps.outbox.fanOut(subscribers, now())) > 0);
  const due = await deps.outbox.claimDue(
    subscribers.map((s) => s.id),
    now(),
    LEASE_MS,
    BATCH,
  );
  await Promise.all(due.map((c) => deliver(deps, c)));
  return due.length;
}

async function deliver(deps: DispatcherDeps, claimed: Claimed): Promise<void> {
  const { delivery, event } = claimed;
  const started = Date.now();
  const isUrl = delivery.subscriber.startsWith('url:');
  let sent: Sent;
  if (isUrl) sent = await deps.send!(delivery.subscriber.slice(4), event.id, event.payload);
  else {
    try {
      const body = JSON.parse(event.payload) as Omit<OrderEvent, 'id'>;
      await deps.handlers.run(delivery.subscriber, { ...body, id: event.id });
      sent = { ok: true, httpStatus: null, error: null };
    } catch (error) {
      sent = { ok: false, httpStatus: null, error: (error as Error)?.message ?? String(error) };
    }
  }
  const ms = Date.now() - started;
  const at = deps.clock.now();
  const result: TryResult = sent.ok
    ? { ok: true, httpStatus: sent.httpStatus, ms }
    : {
        ok: false,
        httpStatus: sent.httpStatus,
        error: sent.error ?? 'failed',
        ms,
        nextAt: nullableDate(nextTryAt(delivery.attempts + 1, at, event.created_at.getTime())),
      };
  await deps.outbox.settle(claimed, result, new Date(at));
  const kind = isUrl ? 'endpoint' : 'handler';
  deps.onTry?.(kind, result.ok ? 'delivered' : result.nextAt === null ? 'given_up' : 'failed');
  if (!result.ok)
    deps.logger[result.nextAt === null ? 'error' : 'warn'](
      {
        event: event.id,
        type: event.type,
        order: event.order_id,
        subscriber: delivery.subscriber,
        attempts: delivery.attempts + 1,
        error: result.error,
        next: result.nextAt?.toISOString() ?? null,
      },
      result.nextAt === null ? 'order event given up' : 'order event not delivered; tried again later',
    );
}

const nullableDate = (ms: number | null) => (ms === null ? null : new Date(ms));

/**
 * Runs the dispatcher every `everyMs` until stopped; `stop` resolves once the pass in hand is done
 * (its sends have their own timeout). A pass that sent anything is followed at once by another: an
 * order's next event becomes due only when the one before it is delivered, so an order that changed
 * three times in a second reaches the shop within that second, not one event a tick. A pass whose
 * sends all failed costs one more pass that finds nothing due (their next try is seconds away).
 */
export function startDispatcher(deps: DispatcherDeps, everyMs = 1000): { stop(): Promise<void> } {
  let stopped = false;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    while (!stopped) {
      try {
        if ((await dispatchOnce(deps)) > 0) continue;
      } catch (error) {
        deps.logger.warn(
          { err: { message: (error as Error).message } },
          'order event dispatch failed; trying again',
        );
      }
      // A stop that came while the pass ran found no sleep to cut short: checked again here, or the
      // loop would sleep a whole tick (an hour, in a test) before it saw it.
      if (stopped) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, everyMs).unref();
      });
      wake = null;
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
