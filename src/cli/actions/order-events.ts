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
  const n = await (await kit.store()).outbox.replay(id, new Date());
  if (n === null) return fail(`${id}: no order event has this id`);
  if (n === 0) return fail(`${id}: not fanned out yet: the dispatcher sends it on its own`);
  print({ event: id, deliveries: n, status: 'pending' });
}

/** Per subscriber: what waits, what was given up, the oldest waiting, the last delivered, the last error. */
export async function status(kit: KitSession) {
  print(await (await kit.store()).outbox.status());
}
