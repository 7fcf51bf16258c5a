import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDeadline } from '../src/shared/deadline.js';
import { delay } from '../test/support/process.js';
import { Cleanup, cleanUpOnSignal } from './cleanup.js';
import { crashPoints } from './crash-points.js';
import { Duplicates } from './duplicates.js';
import { type ErasureRun, eraseMidStorm, StormCustomers } from './erasure.js';
import { checkErasure, erasureDetails } from './erasure-verdict.js';
import { FAULTS, type Fault, type FaultDeps, outage } from './faults.js';
import { GatewayReader } from './gateway.js';
import { KitProcesses, type PlatformSettings } from './kit.js';
import { type Convergence, converge, type Look, settledLook } from './measure.js';
import { OrderMerchants } from './merchants.js';
import { checkMoney, type MoneyCheck, moneyTable } from './money.js';
import { OUTBOX_SCALES, outboxPart } from './outbox.js';
import { type Random, seeded } from './random.js';
import { RedisLossTimes } from './redis-loss.js';
import {
  failures,
  type MerchantLine,
  type MoneyVerdict,
  type PlatformVerdict,
  type Result,
  table,
} from './report.js';
import { type MariaDb, type PrivateRedis, privateMariaDb, privateRedis, removeFolder } from './services.js';
import { KitApi, type StreamResult, startStream } from './stream.js';
import { KitTables } from './tables.js';

/**
 * `npm run chaos` (`-- --short`, or CHAOS_SCALE=short, for CI): the storm, the crash points, then the
 * outbox, on one private MariaDB and Redis.
 *
 * The storm: payments and shuffled duplicate events through the kit's processes while the run kills
 * the worker, flushes and restarts Redis, restarts MariaDB, rotates a webhook secret and cuts the
 * receiver off, while the shop cancels orders and ORDER_TTL (a minute, here) ends the unpaid ones,
 * and, halfway through the payments, the shop's admin erases a customer some of them name
 * (chaos/erasure.ts); then it waits for the kit to converge and prints the table. The kit runs in
 * platform mode (issue 45): a partner key acting for merchants 1001 and 1002, each with its own key,
 * each order one merchant's (half each), each event posted to its merchant's receiver URL signed with
 * its secret (and now and then, forged, to the other's), the secret rotated one merchant's, the
 * outage every merchant's, the erased customer one merchant's. It passes only when nothing was lost
 * or applied twice, every order equals the gateway's truth in time (a closed one: a payment without
 * money) and is the merchant it was made for there and in the kit, every event is kept as its
 * merchant's, the kit's reconciliation report totals, in every currency and per merchant and
 * currency, what the gateway's own records add up to, and nothing of the erased customer is left in
 * the kit's database while their orders' money is as it was (chaos/erasure-verdict.ts).
 *
 * The crash points (chaos/crash-points.ts): the api SIGKILLed in the middle of each kind of payment
 * and operation, the shopper or operator trying again; a table row per case.
 *
 * The outbox (chaos/outbox.ts): the kit's order events to a shop endpoint the run serves and verifies,
 * through an hour of that endpoint down and a SIGKILL of the dispatcher mid-delivery; every event must
 * reach it, in order per order.
 *
 * `-- --storm-only` (or CHAOS_ONLY=storm), `--crash-only` (crash), `--outbox-only` (outbox) run only
 * that part; several such flags (or a comma-separated CHAOS_ONLY) run those parts. Exit 0 only when
 * every part that ran passed.
 */

interface Scale {
  name: 'full' | 'short';
  /** How many times each crash point runs. */
  crashRounds: number;
  /** About this many orders, spread over the faults. */
  orders: number;
  /** Between one fault and the next (and before the first). */
  gapMs: number;
  outageSeconds: number;
  /** From the end of the last fault, and from the last lapse, how long the kit has to converge. */
  convergeMs: number;
  /**
   * The sandbox's `auth_lifetime_s` (sandbox.md section 11): longer than the longest fault (the
   * outage), so that a capture a fault holds up still comes in time; short enough that the auths
   * left open lapse within the run.
   */
  authLifetimeSeconds: number;
}

const SCALES: Record<Scale['name'], Scale> = {
  full: {
    name: 'full',
    crashRounds: 2,
    orders: 400,
    gapMs: 20_000,
    outageSeconds: 90,
    convergeMs: 240_000,
    authLifetimeSeconds: 120,
  },
  short: {
    name: 'short',
    crashRounds: 1,
    orders: 80,
    gapMs: 5_000,
    outageSeconds: 65,
    convergeMs: 150_000,
    authLifetimeSeconds: 90,
  },
};
/** After an auth's deadline, until the sandbox's ticker (every second) has lapsed it. */
const LAPSE_TICK_MS = 2000;
/** What the faults themselves take, about (restarts, a new worker, the CLI): to pace the orders. */
const FAULT_TIME_MS = 20_000;
const DATABASE = 'merchant_chaos';
const COPIES = 4;
/** The share of events of which one more copy is forged to the other merchant's URL. */
const FORGED_SHARE = 0.1;

/**
 * The storm's kit in platform mode (docs/platform.md): the default seed's partner key acting for its
 * two linked merchants, each with its own key, so that every story can happen for either.
 */
const PLATFORM: PlatformSettings = {
  partnerKey: 'sk_test_partner_9001',
  merchants: [1001, 1002],
  merchantKeys: { 1001: 'sk_test_merchant_1001', 1002: 'sk_test_merchant_1002' },
};
/**
 * The run's own partner key, linked to the same merchants, added to the storm's seed: the run reads
 * the gateway's truth and works its controls with it, and its reads have a rate window of their own,
 * so they never slow the kit's partner key down.
 */
const RUN_PARTNER = { id: 9901, key: 'sk_test_partner_chaos_run' };

const runStarted = Date.now();
const log = (line: string) =>
  console.log(`[chaos ${((Date.now() - runStarted) / 1000).toFixed(1)} s] ${line}`);

function scaleOf(argv: string[], env: NodeJS.ProcessEnv): Scale {
  return argv.includes('--short') || env.CHAOS_SCALE === 'short' ? SCALES.short : SCALES.full;
}

const PARTS = ['storm', 'crash', 'outbox'] as const;
type Part = (typeof PARTS)[number];

/** Which parts run: every one unless some are asked for alone (`--storm-only`, CHAOS_ONLY=storm,outbox). */
function partsOf(argv: string[], env: NodeJS.ProcessEnv): Record<Part, boolean> {
  const only = new Set(env.CHAOS_ONLY?.split(',').map((p) => p.trim()) ?? []);
  for (const part of PARTS) if (argv.includes(`--${part}-only`)) only.add(part);
  const unknown = [...only].filter((p) => !PARTS.includes(p as Part));
  if (unknown.length > 0) throw new Error(`no such chaos part: ${unknown.join(', ')} (${PARTS.join(', ')})`);
  return {
    storm: only.size === 0 || only.has('storm'),
    crash: only.size === 0 || only.has('crash'),
    outbox: only.size === 0 || only.has('outbox'),
  };
}

interface Services {
  db: MariaDb;
  redis: PrivateRedis;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const scale = scaleOf(argv, process.env);
  const parts = partsOf(argv, process.env);
  const seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const names: Record<Part, string> = { storm: 'the storm', crash: 'the crash points', outbox: 'the outbox' };
  const which = PARTS.filter((part) => parts[part]).map((part) => names[part]);
  const withSeed = parts.storm || parts.outbox;
  log(`the ${scale.name} form: ${which.join(', ')}${withSeed ? `, CHAOS_SEED=${seed}` : ''}`);
  const cleanup = new Cleanup();
  cleanUpOnSignal(cleanup, log);
  let passed = false;
  try {
    const services = await privateServices(cleanup);
    let stormPassed = true;
    if (parts.storm) {
      // The storm's kit stops before the crash points start theirs: the machine has two cores.
      const stormCleanup = new Cleanup();
      cleanup.add("stop the storm's kit", () => stormCleanup.run(log));
      stormPassed = await chaos(scale, seed, services, stormCleanup);
      await stormCleanup.run(log);
    }
    const logDir = process.env.CHAOS_LOG_DIR;
    let crashPassed = true;
    if (parts.crash) {
      // Like the storm's, the crash points' kit stops before the next part starts its own.
      const crashCleanup = new Cleanup();
      cleanup.add("stop the crash points' kit", () => crashCleanup.run(log));
      crashPassed = await crashPoints({
        ...services,
        cleanup: crashCleanup,
        log,
        logDir,
        rounds: scale.crashRounds,
      });
      await crashCleanup.run(log);
    }
    let outboxPassed = true;
    if (parts.outbox) {
      const outboxCleanup = new Cleanup();
      cleanup.add("stop the outbox part's kit", () => outboxCleanup.run(log));
      const outboxScale = OUTBOX_SCALES[scale.name];
      outboxPassed = await outboxPart({
        ...services,
        cleanup: outboxCleanup,
        log,
        logDir,
        seed,
        scale: outboxScale,
      });
      await outboxCleanup.run(log);
    }
    passed = stormPassed && crashPassed && outboxPassed;
    const verdicts = { storm: stormPassed, crash: crashPassed, outbox: outboxPassed };
    if (which.length > 1)
      log(
        PARTS.filter((part) => parts[part])
          .map((part) => `${names[part]} ${verdicts[part] ? 'passed' : 'FAILED'}`)
          .join(', '),
      );
  } catch (error) {
    log(`the run broke off: ${(error as Error).stack ?? error}`);
  } finally {
    await cleanup.run(log);
  }
  log(`${passed ? 'passed' : 'FAILED'}, ${((Date.now() - runStarted) / 1000).toFixed(0)} s in all`);
  process.exit(passed ? 0 : 1);
}

/** The private MariaDB and Redis both parts run on, in a folder of their own: each undone at the end. */
async function privateServices(cleanup: Cleanup): Promise<Services> {
  const dir = await mkdtemp(join(tmpdir(), 'kit-chaos-'));
  cleanup.add('remove the private folder', () => removeFolder(dir));
  const db = await privateMariaDb(dir);
  cleanup.add('stop the private MariaDB', () => db.stop());
  await db.start();
  const redis = await privateRedis(dir);
  cleanup.add('stop the private Redis', () => redis.stop());
  await redis.start();
  log(`private MariaDB on ${db.port}, Redis on ${redis.port}`);
  return { db, redis };
}

async function chaos(scale: Scale, seed: number, services: Services, cleanup: Cleanup): Promise<boolean> {
  const random = seeded(seed);
  const startedAt = new Date();
  const parts = await setUp(services, cleanup, random, scale);
  try {
    return await stormAndVerdict(scale, parts, random, startedAt);
  } catch (error) {
    // Whatever broke the run off, a kit process that died on its own is likely why: say which, and how.
    const died = parts.kit.crashed();
    if (died.length > 0) log(`kit processes that died on their own:\n  ${died.join('\n  ')}`);
    throw error;
  }
}

/** The storm on the kit `parts` holds, then its verdict; true when it passed. */
async function stormAndVerdict(
  scale: Scale,
  parts: FaultDeps,
  random: Random,
  startedAt: Date,
): Promise<boolean> {
  const merchants = new OrderMerchants(PLATFORM.merchants, random);
  const customers = new StormCustomers(random, merchants);
  log(`the erased customer is merchant ${customers.merchant}'s`);
  const { lastFaultAt, stream, erasure } = await storm(scale, parts, random, customers, merchants, startedAt);
  // Convergence is timed while the copies still flow; the verdict is read once every copy was sent.
  const { tables, reader, duplicates, kit } = parts;
  const sides = { tables, reader, duplicates, withinMs: scale.convergeMs, log };
  const convergence = await converge({ ...sides, since: lastFaultAt });
  const afterLapse = await lastLapse(stream, (since) => converge({ ...sides, since }));
  const unsent = await duplicates.finish(120_000);
  const answers = JSON.stringify(Object.fromEntries(duplicates.answers));
  log(
    `duplicates done: ${duplicates.posted} posted (${unsent} never sent), the receiver's answers ${answers}; ` +
      `${duplicates.forged} of them forged to another merchant's URL, answered ` +
      JSON.stringify(Object.fromEntries(duplicates.forgedAnswers)),
  );
  const look = await settledLook({ tables, reader, duplicates });
  const money = await checkMoney({
    api: { url: kit.apiUrl, opsToken: kit.opsToken },
    reader,
    from: startedAt,
  }).catch((error: Error) => {
    log(`the money check could not run: ${error.message}`);
    return null;
  });
  const closed = await tables.closed();
  const erased =
    erasure &&
    (await checkErasure({ run: erasure, customers, tables, reader, captures: duplicates.captures() }).catch(
      (error: Error) => {
        log(`the erasure's check could not run: ${error.message}`);
        return null;
      },
    ));
  const result = resultOf(look, duplicates.posted, convergence.seconds, afterLapse, kit.crashed(), money, {
    closed,
    erasure: erased,
  });
  const wrongMerchant = await ordersOfAnotherMerchant(tables, merchants);
  result.platform = platformVerdict(look, money, merchants, wrongMerchant.length, duplicates, parts.rotated);
  explain(look, kit.crashed(), erasureDetails(erased), wrongMerchant);
  if (money && money.notes.length > 0)
    log(`gateway money the report may not hold (${money.notes.length}):\n  ${money.notes.join('\n  ')}`);
  result.redisLoss = parts.redisLoss.times;
  console.log(`\n${table(result)}\n`);
  if (money) console.log(`${moneyTable(money)}\n`);
  log(`the storm: ${scale.name} form, ${((Date.now() - runStarted) / 1000).toFixed(0)} s`);
  const why = failures(result);
  if (why.length > 0) log(`failed: ${why.join('; ')}`);
  return why.length === 0;
}

/** The kit's processes on the private MariaDB and Redis, and the run's readers: each undone at the end. */
async function setUp(
  { db, redis }: Services,
  cleanup: Cleanup,
  random: Random,
  scale: Scale,
): Promise<FaultDeps> {
  const sandboxSeed = await seedWithAuthLifetime(cleanup, scale.authLifetimeSeconds);
  const kit = await KitProcesses.start(
    {
      databaseUrl: db.url(DATABASE),
      redisUrl: redis.url,
      logDir: process.env.CHAOS_LOG_DIR,
      sandboxSeed,
      // Orders end in the middle of the traffic (issue 43): the unpaid ones a minute old, every 10 s.
      env: { ORDER_TTL: '1m' },
      jobSchedules: 'expiry=*/10 * * * * *',
      platform: PLATFORM,
      onDeath: log,
    },
    cleanup,
  );
  log(
    `kit up: api ${kit.apiUrl} (sandbox ${kit.gatewayUrl}), a worker, a scheduler; ` +
      `partner key for merchants ${PLATFORM.merchants.join(' and ')}`,
  );
  const tables = new KitTables(db.url(DATABASE));
  cleanup.add('close the table reader', () => tables.close());
  const reader = new GatewayReader(kit.gatewayUrl, {
    merchants: PLATFORM.merchants,
    readKey: RUN_PARTNER.key,
    controlKey: RUN_PARTNER.key,
  });
  const secrets = new Map<number, string>();
  for (const merchant of PLATFORM.merchants)
    secrets.set(
      merchant,
      await tables.signingSecret(kit.encryptionKey, { merchant, served: PLATFORM.merchants }),
    );
  const duplicates = new Duplicates({
    reader,
    receiverUrl: (merchant) => `${kit.apiUrl}/webhooks/gateway/${merchant}`,
    random,
    copies: COPIES,
    secrets,
    forgedShare: FORGED_SHARE,
    stored: (ids) => tables.stored(ids),
    log,
  });
  return {
    kit,
    db,
    redis,
    tables,
    reader,
    duplicates,
    redisLoss: new RedisLossTimes(),
    merchants: PLATFORM.merchants,
    random,
    rotated: [],
  };
}

/**
 * The kit's sandbox seed with auths that lapse after `seconds`, and the run's own partner key, in a
 * folder of its own removed at the end.
 */
async function seedWithAuthLifetime(cleanup: Cleanup, seconds: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kit-chaos-seed-'));
  cleanup.add('remove the seed folder', () => removeFolder(dir));
  const seed = JSON.parse(await readFile('config/gateway-seed.json', 'utf8'));
  seed.settings = { ...seed.settings, auth_lifetime_s: seconds };
  seed.partners.push({ id: RUN_PARTNER.id, merchant_ids: [...PLATFORM.merchants] });
  seed.api_keys.push({
    key: RUN_PARTNER.key,
    partner_id: RUN_PARTNER.id,
    scopes: ['webhooks:manage'],
    active: true,
  });
  const file = join(dir, 'gateway-seed.json');
  await writeFile(file, JSON.stringify(seed, null, 2));
  return file;
}

/**
 * Payments and duplicates flowing while the faults happen one after another; the payments stop when
 * the last fault ends. Returns when that was, and what the payments did.
 */
async function storm(
  scale: Scale,
  parts: FaultDeps,
  random: Random,
  customers: StormCustomers,
  merchants: OrderMerchants,
  from: Date,
): Promise<{ lastFaultAt: number; stream: StreamResult; erasure: ErasureRun | null }> {
  const faults = [...FAULTS, outage(scale.outageSeconds)];
  const streamMs = (faults.length + 1) * scale.gapMs + FAULT_TIME_MS + scale.outageSeconds * 1000;
  const api = new KitApi(parts.kit.apiUrl, parts.kit.opsToken);
  const unsaved = await customers.saveCard(api, (id, merchant) =>
    parts.reader.activeInstruments(id, merchant),
  );
  if (unsaved) log(`the card of the customer to be erased was not saved: ${unsaved}`);
  const stream = startStream({
    api: { url: parts.kit.apiUrl, opsToken: parts.kit.opsToken },
    gateway: parts.reader,
    random,
    everyMs: streamMs / scale.orders,
    concurrency: 16,
    customers,
    merchants,
  });
  parts.duplicates.start();
  // Halfway through the payments, beside whichever fault is under way then.
  const erasing = eraseMidStorm({
    api,
    tables: parts.tables,
    customers,
    from,
    atMs: streamMs / 2,
    log,
  }).catch((error: Error) => {
    log(`the erasure broke off: ${error.stack ?? error}`);
    return null;
  });
  await runFaults(faults, parts, scale.gapMs);
  const lastFaultAt = Date.now();
  stream.stop();
  const erasure = await withDeadline(erasing, 300_000, 'the erasure');
  const s = await withDeadline(stream.done, 120_000, 'the last payments');
  log(
    `payments done: ${s.orders} orders, ${s.cutShort} stories cut short by a fault, ${s.notCreated} orders not created, ` +
      `${s.leftToLapse} auths left to lapse; the stories: ` +
      Object.entries(s.told)
        .sort(([, a], [, b]) => b - a)
        .map(([name, count]) => `${count} ${name}`)
        .join(', '),
  );
  return { lastFaultAt, stream: s, erasure };
}

/**
 * When the last auth the payments left open lapses after the kit converged from the faults (the
 * sandbox's clock is real time here), waits for it, and times convergence again from its deadline, so
 * that the verdict sees every lapse. Null: every lapse came before.
 */
async function lastLapse(
  stream: StreamResult,
  convergeFrom: (since: number) => Promise<Convergence>,
): Promise<Convergence | null> {
  if (stream.leftToLapse === 0 || stream.lastLapseAt + LAPSE_TICK_MS <= Date.now()) return null;
  const wait = stream.lastLapseAt + LAPSE_TICK_MS - Date.now();
  log(`waiting ${(wait / 1000).toFixed(0)} s for the last auth left open to lapse`);
  await delay(wait);
  return convergeFrom(stream.lastLapseAt);
}

function resultOf(
  look: Look,
  duplicates: number,
  convergeSeconds: number | null,
  afterLapse: Convergence | null,
  crashed: string[],
  money: MoneyCheck | null,
  { closed, erasure }: Pick<Result, 'closed' | 'erasure'>,
): Result {
  return {
    orders: look.orders,
    checked: look.checked,
    gatewayEvents: look.events.length,
    deliveries: look.events.reduce((sum, e) => sum + e.attempts, 0),
    duplicates,
    stored: look.stored,
    applied: look.applied,
    changed: look.changed,
    recovered: look.recovered,
    appliedTwice: look.appliedTwice.length,
    lost: look.lost.length,
    untrue: look.untrue?.length ?? null,
    convergeSeconds,
    lapseConvergence: afterLapse && { seconds: afterLapse.seconds },
    crashed: crashed.length,
    chargebacks: look.events.filter((e) => e.event_type === 'transaction.chargeback').length,
    reversals: look.events.filter((e) => e.event_type === 'transaction.chargeback_reversed').length,
    lapsed: money?.lapsed ?? null,
    money: money && moneyVerdict(money),
    closed,
    erasure,
  };
}

function moneyVerdict(m: MoneyCheck): MoneyVerdict {
  return {
    currencies: m.rows.length,
    differing: m.rows.filter((r) => !r.equal).length,
    merchantLines: m.merchantRows && {
      lines: m.merchantRows.length,
      differing: m.merchantRows.filter((r) => !r.equal).length,
    },
    compared: m.compared,
    reportOrders: m.reportOrders,
  };
}

/** The orders the kit keeps as another merchant's than the run asked for, a line each. */
async function ordersOfAnotherMerchant(tables: KitTables, merchants: OrderMerchants): Promise<string[]> {
  const kept = new Map((await tables.orders()).map((o) => [o.id, o.merchant_id]));
  return [...merchants.ofOrder].flatMap(([id, asked]) => {
    const is = kept.get(id);
    if (is === undefined) return [`order ${id}, made for merchant ${asked}: not in the kit's tables`];
    return Number(is) === asked ? [] : [`order ${id}, made for merchant ${asked}: the kit's merchant ${is}`];
  });
}

/** The storm merchant by merchant: each one's orders, truth and report totals, and the checks across them. */
function platformVerdict(
  look: Look,
  money: MoneyCheck | null,
  merchants: OrderMerchants,
  wrongMerchant: number,
  duplicates: Duplicates,
  rotated: readonly number[],
): PlatformVerdict {
  const asked = new Map<number, number>();
  for (const merchant of merchants.ofOrder.values()) asked.set(merchant, (asked.get(merchant) ?? 0) + 1);
  const lost = new Set(look.lost);
  const lines = PLATFORM.merchants.map((merchant): MerchantLine => {
    const events = look.events.filter((e) => e.merchant_id === merchant);
    const counts = look.merchants[String(merchant)] ?? { orders: 0, checked: 0, untrue: 0 };
    const rows = money?.merchantRows?.filter((r) => r.merchant === merchant);
    return {
      merchant,
      events: events.length,
      lost: events.filter((e) => lost.has(e.id)).length,
      asked: asked.get(merchant) ?? 0,
      ...counts,
      currencies: rows?.length ?? null,
      differing: rows?.filter((r) => !r.equal).length ?? null,
    };
  });
  return {
    lines,
    wrongMerchant,
    misfiled: look.misfiled.length,
    forged: { posted: duplicates.forged, answers: Object.fromEntries(duplicates.forgedAnswers) },
    rotated: [...rotated],
  };
}

/** Each fault after a gap, in order; a line each for the report. */
async function runFaults(faults: Fault[], deps: FaultDeps, gapMs: number): Promise<void> {
  for (const fault of faults) {
    await delay(gapMs);
    const started = Date.now();
    log(`fault: ${fault.name}`);
    const what = await fault.run(deps);
    log(`fault: ${fault.name}: ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
}

/** The details behind a failing count: the first few of each. */
function explain(
  look: { lost: string[]; misfiled: string[]; appliedTwice: string[]; untrue: string[] | null },
  crashed: string[],
  erasure: string[],
  wrongMerchant: string[],
): void {
  const first = (what: string, lines: string[]) => {
    if (lines.length > 0) log(`${what} (${lines.length}):\n  ${lines.slice(0, 10).join('\n  ')}`);
  };
  first('lost events', look.lost);
  first("events kept as another merchant's", look.misfiled);
  first("orders kept as another merchant's than asked", wrongMerchant);
  first('applied twice', look.appliedTwice);
  first('orders not equal to the truth', look.untrue ?? []);
  first('kit processes that died', crashed);
  first("the erasure's failures", erasure);
}

await main();
