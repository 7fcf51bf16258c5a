import type { Command } from 'commander';
import { listLimit } from './input.js';
import { kitAction } from './kit-session.js';
import { fail, print } from './output.js';

/** `order-events list|show|replay|status`: the outbox of events sent to the shop, read and replayed. */
export function addOrderEvents(program: Command): void {
  const orderEvents = program
    .command('order-events')
    .description(
      "events sent to the shop's endpoints and handlers: what waits, each event's tries, a replay",
    );

  orderEvents
    .command('list')
    .description('newest first; JSON on stdout')
    .option('--order <order_id>', "only this order's events")
    .option('--limit <n>', 'at most this many (1 to 1000)', '100')
    .action(
      kitAction(async (kit, options: { order?: string; limit: string }) => {
        const limit = listLimit(options.limit);
        const events = await (await kit.store()).outbox.list({ orderId: options.order, limit });
        print(events.map(({ payload: _payload, ...e }) => e));
      }),
    );

  orderEvents
    .command('show <event_id>')
    .description('an event, its body, its deliveries and every try of them (JSON on stdout)')
    .action(
      kitAction(async (kit, id: string) => {
        const store = await kit.store();
        const event = await store.outbox.event(id);
        if (!event) return fail(`${id}: no order event has this id`);
        print({ ...event, payload: JSON.parse(event.payload), ...(await store.outbox.history(event.seq)) });
      }),
    );

  orderEvents
    .command('replay <event_id>')
    .description('send an event again, with the same id, to every subscriber it went to')
    .action(
      kitAction(async (kit, id: string) => {
        const n = await (await kit.store()).outbox.replay(id, new Date());
        if (n === null) return fail(`${id}: no order event has this id`);
        if (n === 0) return fail(`${id}: not fanned out yet: the dispatcher sends it on its own`);
        print({ event: id, deliveries: n, status: 'pending' });
      }),
    );

  orderEvents
    .command('status')
    .description(
      'per subscriber: deliveries waiting, given up, the oldest waiting, the last delivered and the last error',
    )
    .action(kitAction(async (kit) => print(await (await kit.store()).outbox.status())));
}
