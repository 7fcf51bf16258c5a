/**
 * The durable floor: what any receiver that answers 200 only once the event is stored and queued
 * costs on this machine, with nothing else. Node's own request, as the kit's receiver takes it
 * (delivery-endpoint.ts), plus the kit's own pieces for the durable part, from the build: the
 * signature check, JSON.parse and the kit's intake (the inbox's multi-row INSERT, then one queue
 * job for the batch). No validation, no card-number check, no
 * request id, no log line, no metrics: the distance from here to the receiver is what those cost,
 * the distance from the bare route to here is what durability costs.
 *
 * A process of its own, like the bare route; needs the build (`npm run build`) and a migrated
 * database. Prints its port on stdout once it listens.
 *
 *   DATABASE_URL=... REDIS_URL=... REDIS_PREFIX=... WEBHOOK_SECRET=... PORT=0 node bench/floor.mjs
 */
import { createServer } from 'node:http';
import { createPool } from '../dist/src/infra/database.js';
import { BATCHES } from '../dist/src/kit/adapters.js';
import { closeQueue, createObservationQueue, enqueueEvents } from '../dist/src/merchant/reconciler/queue.js';
import { InboxStore } from '../dist/src/merchant/store/inbox.js';
import { inboxIntake } from '../dist/src/merchant/webhooks/intake.js';
import { floorReceiver } from './floor-path.mjs';

const env = process.env;
const pool = createPool(env.DATABASE_URL);
let receipts = 0;
// storeMany is the inbox's pool path: it never touches the ORM models.
const inbox = new InboxStore(null, pool, () => `floor${process.pid}-${receipts++}`.slice(-16));
const queue = createObservationQueue(env.REDIS_URL, env.REDIS_PREFIX);
const silent = { warn: () => {} };
const intake = inboxIntake({ inbox, enqueue: (ids) => enqueueEvents(queue, ids), logger: silent }, BATCHES);

const receive = floorReceiver({ secret: env.WEBHOOK_SECRET, intake });
const server = createServer((req, res) => void receive(req, res));
server.listen(Number(env.PORT ?? 0), '127.0.0.1', () => {
  console.log(JSON.stringify({ port: server.address().port }));
});
process.on('SIGTERM', () =>
  server.close(async () => {
    await closeQueue(queue);
    await pool.end();
    process.exit(0);
  }),
);
