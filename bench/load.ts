/**
 * The load generator, a process of its own (never inside the process it measures), POSTing signed
 * events, a fresh event id each. Reads its orders from argv as JSON, prints one JSON result line on
 * stdout.
 *
 *   node --import tsx bench/load.ts '{"url":..., "secret":..., "connections":32, "seconds":8}'
 *
 * Without `rate`, a closed loop (autocannon): `connections` requests in flight at all times, each
 * sent as the one before it on its connection is answered; for `seconds`, or with `targets` (a file
 * of JSON lines) until each request has paid the next order of that file, once.
 *
 * With `rate` (the latency run), an open loop, evenly paced: request n leaves at start + n * 1000/rate
 * ms (scheduled against the start, so the pace does not drift), over keep-alive sockets (at most
 * `connections`), whether or not the ones before it are answered; for `seconds`, or once per target.
 * Each is timed from its send to its answer's end: with `connections` already in flight it waits for
 * a socket, and that wait is in its time.
 * A gateway sends each event as it happens. autocannon's overallRate sends each second's share in one
 * burst at the top of the second and then waits: the latency it yields is the burst's (the last of a
 * thousand events queued behind the 999 before it), not the pipeline's at that rate.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import autocannon from 'autocannon';
import { capturedEvent, signedRequest, type Target } from './events.js';

interface LoadArgs {
  url: string;
  secret: string;
  connections: number;
  seconds?: number;
  /** Requests a second, across all connections, evenly paced. */
  rate?: number;
  /** A JSON-lines file of targets: one request each, then the run ends. */
  targets?: string;
  /** Event ids start with it: unique across the runs of one bench. */
  tag: string;
}

/** What a run answers, on its last line of stdout (bench/run.ts reads it). */
export interface LoadResult {
  requests: number;
  /** Over the run's wall time. */
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** The load generator's own CPU time over the run, µs (user and system). */
  cpuUs: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as LoadArgs;
const targets: Target[] | null = args.targets
  ? readFileSync(args.targets, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Target)
  : null;

const nobody = (n: number): Target => ({
  transactionId: String(900_000_000 + n),
  reference: `bench-${n}`,
  amountMinor: 1234,
});
/** The n-th request: the next target's capture event (or nobody's), signed now. */
const nth = (n: number) => {
  const now = Date.now();
  const target = targets ? targets[n % targets.length]! : nobody(n);
  return signedRequest(capturedEvent(`evt_${args.tag}_${n}`, target, now), args.secret, now);
};

/** The closed loop: autocannon, as many requests in flight as connections. */
async function closedLoop(): Promise<Omit<LoadResult, 'cpuUs'>> {
  let sent = 0;
  const started = performance.now();
  const result = await autocannon({
    url: `${args.url}/webhooks/gateway`,
    connections: args.connections,
    ...(args.seconds ? { duration: args.seconds } : {}),
    ...(targets ? { amount: targets.length } : {}),
    requests: [{ setupRequest: (r) => ({ ...r, ...nth(sent++) }) }],
  });
  return {
    requests: result.requests.total,
    // Over the run's wall time: autocannon's own average is per whole second, and a run of a fixed
    // number of requests ends inside one.
    rps: result.requests.total / ((performance.now() - started) / 1000),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

const TIMEOUT_MS = 10_000;

/** The open loop: one request every 1000/rate ms, each timed from its send to its answer's end. */
async function paced(rate: number): Promise<Omit<LoadResult, 'cpuUs'>> {
  const count = targets ? targets.length : Math.round(rate * (args.seconds ?? 10));
  const agent = new Agent({ keepAlive: true, maxSockets: args.connections });
  const url = new URL('/webhooks/gateway', args.url);
  const timings: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });

  const send = (n: number) => {
    const { method, body, headers } = nth(n);
    const sentAt = performance.now();
    let over = false;
    const end = (failed: boolean, status?: number) => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      if (failed) errors += 1;
      else {
        timings.push(performance.now() - sentAt);
        if (status === undefined || status < 200 || status >= 300) non2xx += 1;
      }
      done += 1;
      if (done === count) finish();
    };
    const req = request(url, {
      method,
      agent,
      headers: { ...headers, 'content-length': Buffer.byteLength(body) },
    });
    const timer = setTimeout(() => req.destroy(new Error('timed out')), TIMEOUT_MS);
    req.on('response', (res) => {
      res.on('error', () => end(true));
      res.on('end', () => end(false, res.statusCode));
      res.resume();
    });
    req.on('error', () => end(true));
    req.end(body);
  };

  const interval = 1000 / rate;
  const started = performance.now();
  let next = 0;
  // Every request whose time has come, then sleep until the next one's: scheduled against the start.
  const tick = () => {
    const elapsed = performance.now() - started;
    while (next < count && next * interval <= elapsed) send(next++);
    if (next < count) setTimeout(tick, Math.max(0, next * interval - (performance.now() - started)));
  };
  if (count === 0) finish();
  else tick();
  await finished;
  const wall = (performance.now() - started) / 1000;
  agent.destroy();
  const sorted = timings.sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
  return { requests: timings.length, rps: timings.length / wall, p50: at(50), p99: at(99), non2xx, errors };
}

const cpu = process.cpuUsage();
const result = args.rate ? await paced(args.rate) : await closedLoop();
const spent = process.cpuUsage(cpu);
console.log(JSON.stringify({ ...result, cpuUs: spent.user + spent.system }));
