import { ORDER_EVENT_TYPES, type OrderEventType } from '../orders/order-events.js';
import type { orderEventPayload } from '../orders/order-view.js';
import type { Subscriber } from '../store/outbox.js';

/** An order event as a handler receives it: the body the shop's endpoints get, and its id. */
export type OrderEvent = ReturnType<typeof orderEventPayload> & { id: string };
export type OrderEventHandler = (event: OrderEvent) => unknown;

/**
 * Handlers in a fork's own code (`kit.events.on('order.paid', handler)`), fed from the same outbox as
 * the shop's endpoints: each handler is a subscriber with its own deliveries, so one that throws is
 * tried again on the endpoints' schedule, events of an order reach it in order, and a crash loses
 * nothing (at least once: a handler deduplicates by `event.id`). Register before the kit starts (or
 * pass the registry to it): events fanned out before a handler exists are not sent to it.
 */
export class OrderEventHandlers {
  readonly #handlers = new Map<string, { types: ReadonlySet<string> | null; run: OrderEventHandler }>();

  /**
   * `name` identifies the handler's deliveries across restarts; by default the event type and the
   * order of registration (`order.paid#1`). A name used twice is refused.
   */
  on(type: OrderEventType | '*', handler: OrderEventHandler, name?: string): this {
    if (type !== '*' && !ORDER_EVENT_TYPES.includes(type))
      throw new Error(`unknown order event type ${type}`);
    const id = `handler:${name ?? `${type}#${[...this.#handlers.keys()].filter((k) => k.startsWith(`handler:${type}#`)).length + 1}`}`;
    if (this.#handlers.has(id)) throw new Error(`an order event handler is named ${id.slice(8)} already`);
    this.#handlers.set(id, { types: type === '*' ? null : new Set([type]), run: handler });
    return this;
  }

  subscribers(): Subscriber[] {
    return [...this.#handlers].map(([id, h]) => ({ id, types: h.types }));
  }

  /** Runs the handler a delivery is for. */
  async run(subscriber: string, event: OrderEvent): Promise<void> {
    const handler = this.#handlers.get(subscriber);
    if (!handler) throw new Error(`no handler ${subscriber} in this process`);
    await handler.run(event);
  }
}
