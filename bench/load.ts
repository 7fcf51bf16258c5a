/**
 * The load generator, a process of its own (never inside the process it measures): autocannon
 * POSTing signed events, a fresh event id each. Reads its orders from argv as JSON, prints one JSON
 * result line on stdout.
 *
 *   node --import tsx bench/load.ts '{"url":..., "secret":..., "connections":32, "seconds":8}'
 *
 * With `rate`, a fixed number of requests a second overall (the latency run); with `targets` (a file
 * of JSON lines), each request pays the next order of that file, once.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { capturedEvent, signedRequest, type Target } from './events.js';

interface LoadArgs {
  url: string;
  secret: string;
  connections: number;
  seconds?: number;
  /** Requests a second, across all connections. */
  rate?: number;
  /** A JSON-lines file of targets: one request each, then the run ends. */
  targets?: string;
  /** Event ids start with it: unique across the runs of one bench. */
  tag: string;
}

const args = JSON.parse(process.argv[2] ?? '{}') as LoadArgs;
const targets: Target[] | null = args.targets
  ? readFileSync(args.targets, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Target)
  : null;

let sent = 0;
const nobody = (n: number): Target => ({
  transactionId: String(900_000_000 + n),
  reference: `bench-${n}`,
  amountMinor: 1234,
});

const started = performance.now();
const result = await autocannon({
  url: `${args.url}/webhooks/gateway`,
  connections: args.connections,
  ...(args.seconds ? { duration: args.seconds } : {}),
  ...(targets ? { amount: targets.length } : {}),
  ...(args.rate ? { overallRate: args.rate } : {}),
  requests: [
    {
      setupRequest: (request) => {
        const n = sent++;
        const now = Date.now();
        const target = targets ? targets[n % targets.length]! : nobody(n);
        return {
          ...request,
          ...signedRequest(capturedEvent(`evt_${args.tag}_${n}`, target, now), args.secret, now),
        };
      },
    },
  ],
});

console.log(
  JSON.stringify({
    requests: result.requests.total,
    // Over the run's wall time: autocannon's own average is per whole second, and a run of a fixed
    // number of requests ends inside one.
    rps: result.requests.total / ((performance.now() - started) / 1000),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  }),
);
