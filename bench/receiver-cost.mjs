/**
 * What the receiver's own work costs a delivery beside the durable floor's, in one process and
 * without a socket or a database, so that the figure does not move with a shared machine's load the
 * way `npm run bench`'s do: the kit's delivery listener (delivery-endpoint.ts, as the API mounts it:
 * its JSON security headers, request id, metrics, log check, signature, event check, card-number
 * scan) and the floor's path (bench/floor.mjs: raw-body, the signature, JSON.parse), each handed
 * Node's own request and answer objects for signed `transaction.captured` events, their intake a
 * promise that answers at once. Prints µs of CPU a delivery for each, medians of alternating rounds.
 * Needs the build (`npm run build`).
 *
 *   node bench/receiver-cost.mjs [rounds] [deliveries a round]
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { pino } from 'pino';
import { KitMetrics } from '../dist/src/infra/metrics.js';
import { jsonSecurityHeaderList } from '../dist/src/infra/security-headers.js';
import { prepareEventShape } from '../dist/src/merchant/orders/event-shape.js';
import { deliveryListener } from '../dist/src/merchant/webhooks/delivery-endpoint.js';
import { SecretCache } from '../dist/src/merchant/webhooks/secret-cache.js';
import { sign } from '../dist/src/shared/signature.js';
import { floorReceiver } from './floor-path.mjs';

const ROUNDS = Number(process.argv[2] ?? 7);
const DELIVERIES = Number(process.argv[3] ?? 20_000);
const SECRET = `whsec_${'k'.repeat(43)}`;
const clock = { now: () => Date.now() };

/** The load generator's event (bench/events.ts), a thousand of them, signed now. */
const signedAt = Math.floor(Date.now() / 1000);
const deliveries = Array.from({ length: 1000 }, (_, n) => {
  const at = new Date().toISOString();
  const body = JSON.stringify({
    id: `evt_cost_${n}`,
    type: 'transaction.captured',
    created_at: at,
    api_version: '2026-11-01',
    data: {
      transaction: {
        id: 900_000_000 + n,
        merchant_trans_id: `bench-${n}`,
        related_trans_id: null,
        transaction_type: 'sale',
        status: 'captured',
        amount: 1234,
        currency: 'EUR',
        acquirer_provider: 'sandbox-acquirer',
        acquirer_trans_id: `acq-${900_000_000 + n}`,
        acquirer_auth_code: 'BENCH1',
        description: null,
        created_at: at,
        updated_at: at,
        refunded_amount: 0,
      },
    },
  });
  return { body: Buffer.from(body), signature: sign(body, SECRET, signedAt) };
});

const intake = async () => 'queued';
/** bench/floor.mjs's path, its intake the same promise. */
const floor = floorReceiver({ secret: SECRET, intake });

prepareEventShape();
const metrics = new KitMetrics();
const kit = deliveryListener({
  intake,
  secrets: new SecretCache(async () => [SECRET], clock),
  clock,
  logger: pino({ level: 'info' }),
  observe: (outcome, seconds) => metrics.receiver(outcome, seconds),
  securityHeaders: jsonSecurityHeaderList(),
});

/** One delivery: a request as Node's parser leaves it (body pushed, complete), an answer with no socket. */
const deliver = (handler, n) =>
  new Promise((resolve, reject) => {
    const { body, signature } = deliveries[n % deliveries.length];
    const req = new IncomingMessage(new Socket());
    req.method = 'POST';
    req.url = '/webhooks/gateway';
    req.headers = {
      'content-type': 'application/json',
      'content-length': String(body.length),
      'x-service-signature': signature,
    };
    req.push(body);
    req.push(null);
    req.complete = true;
    const res = new ServerResponse(req);
    const end = res.end;
    res.end = function (...args) {
      if (this.statusCode !== 200) reject(new Error(`answered ${this.statusCode}`));
      resolve();
      return end.apply(this, args);
    };
    handler(req, res);
  });

/** `count` deliveries, 16 in flight at a time. */
async function run(handler, count) {
  for (let n = 0; n < count; n += 16)
    await Promise.all(Array.from({ length: 16 }, (_, k) => deliver(handler, n + k)));
}

const sides = { floor, kit };
for (const handler of Object.values(sides)) await run(handler, DELIVERIES); // optimised first
const spent = { floor: [], kit: [] };
for (let round = 0; round < ROUNDS; round += 1)
  for (const [name, handler] of Object.entries(sides)) {
    const before = process.cpuUsage();
    await run(handler, DELIVERIES);
    const { user, system } = process.cpuUsage(before);
    spent[name].push((user + system) / DELIVERIES);
  }
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
const [f, k] = [median(spent.floor), median(spent.kit)];
console.log(
  `µs of CPU a delivery, median of ${ROUNDS} rounds of ${DELIVERIES}: floor's path ${f.toFixed(1)}, kit's receiver ${k.toFixed(1)} (${(k - f).toFixed(1)} more)`,
);
