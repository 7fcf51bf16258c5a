import { listLimit } from '../input.js';
import type { KitSession } from '../kit-session.js';
import { fail, print } from '../output.js';

/** `order-events list|show|replay|status` (registered in ../order-events.ts). */

export async function list(kit: KitSession, options: { order?: string; limit: string }) {
  const limit = listLimit(options.limit);
  const events = await (await kit.store()).outbox.list({ orderId: options.order, limit });
  print(events.map(({ payload: _payload, ...e }) => e));
}

export async function show(kit: KitSession, id: string) {
  const store = await kit.store();
  const event = await store.outbox.event(id);
  if (!event) return fail(`${id}: no order event has this id`);
  print({ ...event, payload: JSON.parse(event.payload), ...(await store.outbox.history(event.seq)) });
}

export async function replay(kit: KitSession, id: string) {
  const store = await kit.store();
  // Due now on the kit's clock, which its dispatcher reckons with (ahead after `sandbox advance`).
  const n = await store.outbox.replay(id, new Date((await kit.clock()).now()));
  if (n === null) return fail(`${id}: no order event has this id`);
  if (n === 0) return fail(`${id}: not fanned out yet: the dispatcher sends it on its own`);
  print({ event: id, deliveries: n, status: 'pending' });
}

/**
 * Per subscriber, as the deliveries stand (JSON on stdout). Events are fanned out to the subscribers
 * configured when the dispatcher (worker role) comes to them: with no endpoint configured
 * (SHOP_WEBHOOK_URLS) and no handler in the kit's code, to no one, and they wait in the outbox, which
 * an empty list would hide. So with no endpoint the answer says so first, and how many wait; with
 * endpoints, events not fanned out yet are counted on stderr, the JSON left as it is.
 */
export async function status(kit: KitSession) {
  const store = await kit.store();
  const [subscribers, waiting] = await Promise.all([store.outbox.status(), store.outbox.unfannedCount()]);
  const events = `${waiting} event${waiting === 1 ? '' : 's'}`;
  if (kit.config.shopWebhooks.urls.length === 0) {
    console.log(
      `no order-events endpoint is configured (SHOP_WEBHOOK_URLS): ${events} wait${waiting === 1 ? 's' : ''} in the outbox, to go to the first endpoint (or handler in the kit's code) configured`,
    );
    if (subscribers.length > 0) print(subscribers);
    return;
  }
  print(subscribers);
  if (waiting > 0)
    console.error(`${events} not fanned out yet: the dispatcher (worker role) makes their deliveries`);
}
