import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/**
 * `order-events list|show|replay|status`: the outbox of events sent to the shop, read and replayed.
 * What runs is in actions/order-events.ts, loaded by the command that runs.
 */
export function addOrderEvents(program: Command): void {
  const run = () => import('./actions/order-events.js');
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
    .action(kitAction(async (kit, o: { order?: string; limit: string }) => (await run()).list(kit, o)));

  orderEvents
    .command('show <event_id>')
    .description('an event, its body, its deliveries and every try of them (JSON on stdout)')
    .action(kitAction(async (kit, id: string) => (await run()).show(kit, id)));

  orderEvents
    .command('replay <event_id>')
    .description('send an event again, with the same id, to every subscriber it went to')
    .action(kitAction(async (kit, id: string) => (await run()).replay(kit, id)));

  orderEvents
    .command('status')
    .description(
      'per subscriber: deliveries waiting, given up, the oldest waiting, the last delivered and the last error; with no endpoint configured, says so and how many events wait',
    )
    .action(kitAction(async (kit) => (await run()).status(kit)));
}
