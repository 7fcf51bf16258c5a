import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { userInfo } from 'node:os';
import { pipeline } from 'node:stream/promises';
import { Command } from 'commander';
import { kitClock } from './cli/kit-clock.js';
import { whenLockFree, withKit } from './cli/kit-session.js';
import { summaryLines, withProgressBar } from './cli/progress.js';
import { addSandboxTriggers, Refused } from './cli/sandbox-triggers.js';
import { GatewayError, GatewayNetworkError } from './client/errors.js';
import { GatewayClient } from './client/gateway-client.js';
import { SandboxControls } from './client/sandbox-controls.js';
import { type Config, localUrl } from './config.js';
import { removeStateFile } from './gateway/persistence/state-file.js';
import {
  createPool,
  createSequelize,
  createTransitionPool,
  migrate,
  requireDatabase,
} from './infra/database.js';
import { settleEncryptionKeys } from './kit/encryption-keys.js';
import { secretLabel } from './kit/gateway.js';
import { CustomerTokens } from './merchant/customers/customer-token.js';
import { customerIdProblem } from './merchant/customers/saved-card.js';
import { savedCardView } from './merchant/http/saved-cards.js';
import { NO_CARD_NUMBER } from './merchant/http/schemas.js';
import { disputeView } from './merchant/http/views.js';
import {
  type Actor,
  isOperatorRole,
  OPERATOR_ROLES,
  operatorNameProblem,
  reservedNameProblem,
} from './merchant/operators/roles.js';
import { DISPUTE_OUTCOMES, type DisputeOutcome } from './merchant/orders/disputes.js';
import { attachMoney, resolveMoney } from './merchant/reconciler/unmatched-actions.js';
import { reportCsv } from './merchant/reports/csv.js';
import { reconciliationReport } from './merchant/reports/generate.js';
import { unmatchedRow } from './merchant/reports/unmatched.js';
import { createStore, isDispute, OperatorExists, type Store } from './merchant/store/index.js';
import { UNMATCHED_RESOLUTIONS, type UnmatchedResolution } from './merchant/store/records.js';
import { hasCardNumber } from './shared/card-numbers.js';
import { systemClock } from './shared/clock.js';
import { cryptoRandom } from './shared/ids.js';
import { parseIsoTime } from './shared/iso-time.js';
import { SecretBox } from './shared/secret-box.js';
import { configOrExit, settingProblem } from './startup.js';

/** `npm run cli -- <command>`: the operator's tools (merchant.md, Running it). */
const config = (): Config => configOrExit();

/** Without GATEWAY_BASE_URL, the gateway is the embedded sandbox of a running kit, on GATEWAY_PORT. */
const gatewayUrl = (c: Config) => c.gateway.baseUrl ?? `http://127.0.0.1:${c.gateway.sandboxPort}`;

function client(c: Config): GatewayClient {
  return new GatewayClient({
    baseUrl: gatewayUrl(c),
    apiKey: c.gateway.apiKey,
    merchantId: c.gateway.merchantId,
  });
}

/**
 * The kit's store for one command: the database migrated first, and the encryption key settled as
 * start-up settles it (unless `keyCheck` is false: the command that forgets what a lost key sealed),
 * closed after. A database that does not exist is one line, unless the command sets the kit up
 * (`create`: a webhook registered, an operator added, before the kit's first start).
 */
async function withStore<T>(
  c: Config,
  fn: (store: Store) => Promise<T>,
  { keyCheck = true, create = false }: { keyCheck?: boolean; create?: boolean } = {},
): Promise<T> {
  if (!create) await requireDatabase(c.databaseUrl);
  const sequelize = createSequelize(c.databaseUrl);
  const pool = createPool(c.databaseUrl);
  const transitionPool = createTransitionPool(c.databaseUrl);
  try {
    await migrate(c.databaseUrl, sequelize);
    const box = new SecretBox(c.encryptionKey, cryptoRandom, c.previousEncryptionKeys);
    const store = createStore({
      sequelize,
      pool,
      transitionPool,
      clock: systemClock,
      random: cryptoRandom,
      box,
    });
    if (keyCheck) await settleEncryptionKeys(store, { rotating: c.previousEncryptionKeys.length > 0 });
    return await fn(store);
  } finally {
    await sequelize.close();
    await Promise.all([pool.end(), transitionPool.end()]);
  }
}

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));

/** Now, on the clock the kit runs on (cli/kit-clock.ts); `warn`: say when no kit answers. */
const kitNow = async (c: Config, warn?: (line: string) => void) => (await kitClock(c, warn)).now();

const program = new Command('merchant-kit').description('Operator commands of the merchant payment kit');

program
  .command('migrate')
  .description('create the database if missing and apply every pending migration')
  .action(async () => {
    const c = config();
    const sequelize = createSequelize(c.databaseUrl);
    try {
      const applied = await migrate(c.databaseUrl, sequelize);
      console.log(applied.length === 0 ? 'up to date' : `applied: ${applied.join(', ')}`);
    } finally {
      await sequelize.close();
    }
  });

const webhook = program.command('webhook').description("the gateway's webhook endpoint for this kit");

webhook
  .command('register')
  .description('create or update the endpoint; a new signing secret is stored encrypted, never printed')
  .option('--url <url>', 'the receiver URL (default: PUBLIC_BASE_URL/webhooks/gateway)')
  .option('--events <types>', 'comma-separated event types (default: the gateway default set)')
  .action(async (options: { url?: string; events?: string }) => {
    const c = config();
    const base = c.publicBaseUrl ?? localUrl(c.host, c.port);
    const answer = await client(c).putWebhook({
      url: options.url ?? `${base}/webhooks/gateway`,
      events: options.events === undefined ? undefined : options.events.split(',').map((s) => s.trim()),
    });
    if (answer.data.secret) {
      const secret = answer.data.secret;
      await withStore(c, (store) => store.secrets.put(secret, secretLabel(c)), { create: true });
      console.log('endpoint created; its signing secret is stored (encrypted)');
    } else {
      console.log('endpoint updated; the stored secret is unchanged');
    }
    print(answer.data.endpoint);
  });

webhook
  .command('status')
  .description("the endpoint's configuration and delivery health, and the secrets the receiver accepts")
  .action(async () => {
    const c = config();
    const endpoint = await client(c)
      .getWebhook()
      .then((answer) => answer.data)
      .catch((error) => {
        if (!(error instanceof GatewayError && error.status === 404)) throw error;
        console.error('no webhook endpoint at the gateway: `npm run cli -- webhook register` creates one');
        process.exit(1);
      });
    const secrets = await withStore(c, (store) => store.secrets.counts());
    print(endpoint);
    console.log(
      summaryLines('delivery health', [
        ['status', endpoint.delivery_status ?? null],
        ['consecutive failures', endpoint.consecutive_failures],
        ['last failure', endpoint.last_failure_at ?? null],
        ['last success', endpoint.last_success_at ?? null],
        ['secrets accepted', `${secrets.active} active, ${secrets.inGrace} retired in their grace`],
      ]),
    );
  });

webhook
  .command('rotate')
  .description('rotate the signing secret (a hard cutover at the gateway) and store the new one')
  .action(async () => {
    const c = config();
    const answer = await client(c).rotateWebhookSecret();
    await withStore(c, (store) => store.secrets.put(answer.data.secret, secretLabel(c)), {
      create: true,
    });
    console.log(
      'secret rotated and stored; the gateway signs with the new one only, and the receiver still accepts the old one for 5 minutes (deliveries already on their way)',
    );
  });

webhook
  .command('test')
  .description('ask the gateway to send a signed test ping')
  .action(async () => print((await client(config()).testWebhook()).data));

program
  .command('keys')
  .description('what APP_ENCRYPTION_KEY seals: the webhook signing secrets and the saved cards')
  .command('discard-lost')
  .description(
    'forget what a lost key sealed: delete the webhook secrets no key opens, revoke the saved cards whose token no key opens',
  )
  .option('--yes', 'do it (without: only counted)')
  .option('--by <name>', 'who discards them (kept in the audit log for each card; default: this system user)')
  .action(async (options: { yes?: boolean; by?: string }) => {
    const c = config();
    const actor = cliActor(options.by, systemUser);
    await withStore(
      c,
      async (store) => {
        const cards = await store.savedCards.unopened();
        if (options.yes !== true) {
          const secrets = await store.secrets.unopened();
          console.log(
            `${secrets} webhook secret(s) in use and ${cards.length} active saved card(s) do not open under the keys given; --yes discards them`,
          );
          return;
        }
        const secrets = await store.secrets.discardUnopened();
        for (const card of cards) await store.savedCards.revoke(card.customerId, card.id, { actor });
        console.log(`discarded ${secrets} webhook secret(s), revoked ${cards.length} saved card(s)`);
        if (secrets > 0)
          console.log(
            'the gateway still signs with a discarded secret: `npm run cli -- webhook rotate` gets a new one',
          );
      },
      { keyCheck: false },
    );
  });

program
  .command('recover')
  .description(
    "fetch the gateway's events the inbox lacks, store and queue them (default: from the checkpoint)",
  )
  .option(
    '--since <timestamp>',
    'list events created from this ISO 8601 time instead of the stored checkpoint',
  )
  .action(async (options: { since?: string }) => {
    const c = config();
    const since = options.since === undefined ? undefined : timestamp('--since', options.since);
    const s = await withProgressBar((bar) =>
      withKit(c, (_a, jobs) =>
        // Under the job's lock: never beside a scheduler's recovery, which would fetch the same events.
        whenLockFree(jobs, 'recovery', () =>
          jobs.recover({ since, onProgress: (...at) => bar.update(...at) }),
        ),
      ),
    );
    console.log(
      summaryLines(`recovery from ${s.from}`, [
        ['listed', s.listed],
        ['missing', s.missing],
        ['recovered', s.recovered],
        ['replayed', s.replayed],
        ['failed', s.failed],
        ['gateway calls', s.gatewayCalls],
        ['checkpoint', s.checkpoint],
      ]),
    );
  });

program
  .command('poll')
  .description(
    'ask the gateway now about every watched order, whatever its schedule, within the shared budget',
  )
  .action(async () => {
    const c = config();
    const s = await withProgressBar((bar) =>
      withKit(c, (_a, jobs) =>
        // Under the poller's lock: a scheduler's tick beside it would ask about the same orders again.
        whenLockFree(jobs, 'poller', () => jobs.pollAll((done, total) => bar.update('polling', done, total))),
      ),
    );
    console.log(
      summaryLines(`polled ${s.orders} orders`, [
        ['changed', s.changed],
        ['flagged (open 30 days)', s.exhausted],
        ['failed', s.failed],
        ['gateway calls', s.gatewayCalls],
      ]),
    );
    if (s.stopped)
      fail(
        `stopped: the gateway does not answer (${s.stopped}); ${s.total - s.orders} of ${s.total} orders not asked: the poller asks them on its schedule`,
      );
  });

program
  .command('report')
  .description('the reconciliation report of the orders created in [from, to), as CSV; totals on stdout')
  .requiredOption('--from <time>', 'orders created from this ISO 8601 date or time (inclusive)')
  .requiredOption('--to <time>', 'to this one (exclusive): --from 2026-11-23 --to 2026-11-24 is the 23rd')
  .requiredOption('--out <file.csv>', 'where to write the CSV')
  .option('--refresh', 'ask the gateway first about every order not matched (within the shared budget)')
  .action(async (options: { from: string; to: string; out: string; refresh?: boolean }) => {
    const c = config();
    const range = { from: timestamp('--from', options.from), to: timestamp('--to', options.to) };
    if (range.to.getTime() <= range.from.getTime()) {
      console.error('--to: must be after --from');
      process.exit(1);
    }
    // Opened before the report is made: a path it cannot write is said before any work (or gateway call).
    const out = await openForWriting('--out', options.out);
    const report = await withProgressBar((bar) =>
      withKit(c, (a) =>
        reconciliationReport(a.checkout, range, {
          refresh: options.refresh === true,
          caller: 'cli',
          onProgress: (...at) => bar.update(...at),
        }),
      ),
    );
    await pipeline(reportCsv(report.rows, report.unmatched.rows), out);
    const counts = (k: string) => report.rows.filter((r) => r.classification === k).length;
    console.log(
      summaryLines(
        `reconciliation of the orders created from ${report.from.toISOString()} to ${report.to.toISOString()}`,
        [
          ['orders', report.rows.length],
          ['matched', counts('matched')],
          ['in flight', counts('in_flight')],
          ['mismatched', counts('mismatched')],
          ...report.totals.map((t): [string, string] => [
            t.currency,
            `captured ${t.captured_formatted}, refunded ${t.refunded_formatted}, disputed ${t.disputed_formatted}, net ${t.net_formatted}`,
          ]),
          ['gateway money with no order', report.unmatched.rows.length],
          ...report.unmatched.totals.map((t): [string, string] => [
            `  ${t.currency}`,
            `${t.open} open; captured ${t.captured_formatted}, refunded ${t.refunded_formatted}, net ${t.net_formatted}`,
          ]),
          ['written to', options.out],
        ],
      ),
    );
  });

const orderEvents = program
  .command('order-events')
  .description("events sent to the shop's endpoints and handlers: what waits, each event's tries, a replay");

orderEvents
  .command('list')
  .description('newest first; JSON on stdout')
  .option('--order <order_id>', "only this order's events")
  .option('--limit <n>', 'at most this many (1 to 1000)', '100')
  .action(async (options: { order?: string; limit: string }) => {
    const c = config();
    const limit = listLimit(options.limit);
    const events = await withStore(c, (store) => store.outbox.list({ orderId: options.order, limit }));
    print(events.map(({ payload: _payload, ...e }) => e));
  });

orderEvents
  .command('show <event_id>')
  .description('an event, its body, its deliveries and every try of them (JSON on stdout)')
  .action(async (id: string) => {
    const c = config();
    const shown = await withStore(c, async (store) => {
      const event = await store.outbox.event(id);
      return (
        event && { ...event, payload: JSON.parse(event.payload), ...(await store.outbox.history(event.seq)) }
      );
    });
    if (!shown) return fail(`${id}: no order event has this id`);
    print(shown);
  });

orderEvents
  .command('replay <event_id>')
  .description('send an event again, with the same id, to every subscriber it went to')
  .action(async (id: string) => {
    const c = config();
    const n = await withStore(c, (store) => store.outbox.replay(id, new Date()));
    if (n === null) return fail(`${id}: no order event has this id`);
    if (n === 0) return fail(`${id}: not fanned out yet: the dispatcher sends it on its own`);
    print({ event: id, deliveries: n, status: 'pending' });
  });

orderEvents
  .command('status')
  .description(
    'per subscriber: deliveries waiting, given up, the oldest waiting, the last delivered and the last error',
  )
  .action(async () => {
    const c = config();
    print(await withStore(c, (store) => store.outbox.status()));
  });

const disputes = program
  .command('disputes')
  .description('chargebacks of orders: open, won (reversed by the gateway) or lost (an operator said so)');

disputes
  .command('list')
  .description('newest first; JSON on stdout')
  .option('--outcome <outcome>', 'only open, won or lost disputes')
  .option('--limit <n>', 'at most this many (1 to 1000)', '100')
  .action(async (options: { outcome?: string; limit: string }) => {
    const c = config();
    const outcome = options.outcome as DisputeOutcome | undefined;
    if (outcome !== undefined && !DISPUTE_OUTCOMES.includes(outcome))
      return fail(`--outcome: must be open, won or lost (got "${options.outcome}")`);
    const limit = listLimit(options.limit);
    print((await withStore(c, (store) => store.disputes.list({ outcome, limit }))).map(disputeView));
  });

disputes
  .command('lost <id>')
  .description('record an open dispute as lost (the bank ruled for the customer); the order stays disputed')
  .requiredOption('--note <text>', 'what the bank decided (at most 512 characters, no card number)')
  .option('--by <name>', 'who decided (kept with the dispute; default: cli)')
  .action(async (id: string, options: { note: string; by?: string }) => {
    const c = config();
    const note = noteOf(options.note);
    const actor = cliActor(options.by, () => 'cli');
    const outcome = await withStore(c, (store) => store.disputes.lose(id, { actor, note }));
    if (isDispute(outcome)) return print({ dispute: disputeView(outcome) });
    if (outcome.kind === 'not_found') return fail(`${id}: no dispute has this id`);
    return fail(`${id}: this dispute is ${outcome.dispute.outcome} already`);
  });

const unmatched = program
  .command('unmatched')
  .description('gateway money with no order: transactions no payment attempt holds, kept for an operator');

unmatched
  .command('list')
  .description('newest first; JSON on stdout')
  .option('--resolution <resolution>', 'only open, attached or resolved money')
  .option('--limit <n>', 'at most this many (1 to 1000)', '100')
  .action(async (options: { resolution?: string; limit: string }) => {
    const c = config();
    const resolution = options.resolution as UnmatchedResolution | undefined;
    if (resolution !== undefined && !UNMATCHED_RESOLUTIONS.includes(resolution)) {
      console.error(`--resolution: must be open, attached or resolved (got "${options.resolution}")`);
      process.exit(1);
    }
    const limit = listLimit(options.limit);
    const money = await withStore(c, (store) => store.unmatched.list({ resolution, limit }));
    print(money.map(unmatchedRow));
  });

unmatched
  .command('attach <id>')
  .description("apply the money to an order through the apply path: the order's payment (JSON on stdout)")
  .requiredOption('--order <order_id>', 'the order the money belongs to')
  .option('--by <name>', 'who decided (kept with the money; default: cli)')
  .action(async (id: string, options: { order: string; by?: string }) => {
    const c = config();
    const actor = cliActor(options.by, () => 'cli');
    const outcome = await withKit(c, (a) => attachMoney(a.checkout, id, options.order, actor));
    switch (outcome.kind) {
      case 'attached':
        print({
          unmatched_money: unmatchedRow(outcome.money),
          order: {
            id: outcome.order.id,
            status: outcome.order.status,
            needs_review: outcome.order.needs_review,
            review_reason: outcome.order.review_reason,
          },
        });
        return;
      case 'not_found':
        return fail(`${id}: no gateway money with no order has this id`);
      case 'not_open':
        return fail(`${id}: this money is ${outcome.money.resolution} already`);
      case 'no_order':
        return fail(`--order: no order has the id ${options.order}`);
      case 'refused':
        return fail(`--order: the order ${outcome.message}`);
      case 'order_changed':
        return fail('--order: the order took another payment meanwhile; nothing was done: try again');
      default:
        return outcome satisfies never;
    }
  });

unmatched
  .command('resolve <id>')
  .description('resolve the money with a note (what was found); it leaves the open list')
  .requiredOption('--note <text>', 'what was found (at most 512 characters, no card number)')
  .option('--by <name>', 'who decided (kept with the money; default: cli)')
  .action(async (id: string, options: { note: string; by?: string }) => {
    const c = config();
    const note = noteOf(options.note);
    const actor = cliActor(options.by, () => 'cli');
    const outcome = await withStore(c, (store) => resolveMoney({ store }, id, note, actor));
    switch (outcome.kind) {
      case 'resolved':
        print({ unmatched_money: unmatchedRow(outcome.money) });
        return;
      case 'not_found':
        return fail(`${id}: no gateway money with no order has this id`);
      case 'not_open':
        return fail(`${id}: this money is ${outcome.money.resolution} already`);
      default:
        return outcome satisfies never;
    }
  });

const operator = program
  .command('operator')
  .description(
    "named operators' tokens: each person their own, with a role (operator, finance, viewer), and the shop's server (storefront)",
  );

operator
  .command('add <name>')
  .description('a new operator and their token, printed once: only its SHA-256 is stored')
  .requiredOption(
    '--role <role>',
    "operator (capture, refund, void), finance (reports, reviews, audit), viewer, or storefront (the shop's server: customers' tokens)",
  )
  .option('--by <name>', 'who adds them (kept in the audit log; default: this system user)')
  .action(async (name: string, options: { role: string; by?: string }) => {
    const c = config();
    const problem = operatorNameProblem(name);
    if (problem) return fail(`<name>: ${problem}`);
    if (!isOperatorRole(options.role))
      return fail(`--role: must be ${OPERATOR_ROLES.join(', ')} (got "${options.role}")`);
    const role = options.role;
    const actor = cliActor(options.by, systemUser);
    const added = await withStore(c, (store) => store.operators.add({ name, role, by: actor }), {
      create: true,
    }).catch((error: Error) =>
      error instanceof OperatorExists ? fail(`<name>: ${error.message}`) : Promise.reject(error),
    );
    console.log(`operator ${added.operator.name} added: role ${role}, id ${added.operator.id}`);
    console.log('token (shown this once: hand it to them now; it cannot be shown again, only revoked):');
    console.log(added.token);
  });

operator
  .command('list')
  .description('operators with a live token, newest first (JSON on stdout); never a token')
  .option('--all', 'the revoked too')
  .action(async (options: { all?: boolean }) => {
    const c = config();
    const list = await withStore(c, (store) => store.operators.list({ all: options.all === true }));
    print(list.map(({ token_hash: _hash, active_name: _active, ...o }) => o));
  });

operator
  .command('revoke <name>')
  .description("revoke an operator's token (by name, or by id opr_...): refused from the next request on")
  .option('--by <name>', 'who revokes it (kept in the audit log; default: this system user)')
  .action(async (name: string, options: { by?: string }) => {
    const c = config();
    const actor = cliActor(options.by, systemUser);
    const revoked = await withStore(c, (store) => store.operators.revoke(name, actor));
    if (!revoked) return fail(`<name>: no live operator token has the name or id ${name}`);
    console.log(`operator ${revoked.name} (${revoked.role}, ${revoked.id}) revoked`);
  });

const customers = program
  .command('customers')
  .description("customers' saved cards, by the shop's own customer id (merchant_customer_id)");

customers
  .command('token <customer_id>')
  .description(
    "a customer's token (an hour), as POST /customers/{id}/tokens makes it: for trying the API by hand",
  )
  .action(async (customerId: string) => {
    const c = config();
    const problem = customerIdProblem(customerId);
    if (problem) return fail(`<customer_id>: ${problem}`);
    const { token, expiresAt } = new CustomerTokens(c.encryptionKey, c.previousEncryptionKeys).issue(
      customerId,
      // A token: its hour counts on the kit's clock, so a guess is worth saying.
      await kitNow(c, (line) => console.error(line)),
    );
    print({ customer_id: customerId, customer_token: token, expires_at: expiresAt.toISOString() });
  });

customers
  .command('cards <customer_id>')
  .description(
    "the customer's active saved cards as the kit last knew them (JSON); never a number or a token",
  )
  .action(async (customerId: string) => {
    const c = config();
    const cards = await withStore(c, (store) => store.savedCards.list(customerId));
    const now = await kitNow(c);
    print(cards.map((card) => savedCardView(card, now)));
  });

const sandbox = program
  .command('sandbox')
  .description(
    'the sandbox gateway: its state, and its controls (a clock, settlements, chargebacks, outages)',
  );

sandbox
  .command('reset')
  .description(
    'forget the sandbox state (GATEWAY_SANDBOX_STATE) so the next start begins afresh; stop the kit first',
  )
  .action(async () => {
    const c = config();
    const file = c.gateway.sandboxStateFile;
    if (file === null) return console.log('GATEWAY_SANDBOX_STATE=memory: there is no state file to reset');
    // A running sandbox would write its state back on its next change: refuse rather than pretend.
    const running = await fetch(`http://127.0.0.1:${c.gateway.sandboxPort}/`, {
      signal: AbortSignal.timeout(1000),
    })
      .then(() => true)
      .catch(() => false);
    if (running) {
      console.error(
        `a sandbox is running on port ${c.gateway.sandboxPort}: stop the kit (or npm run gateway) first`,
      );
      process.exit(1);
    }
    removeStateFile(file);
    console.log(
      `${file} removed: the next start begins with no transactions (orders the kit already holds stay, and their ids may come again)`,
    );
  });

addSandboxTriggers(sandbox, () => {
  const c = config();
  return {
    config: c,
    controls: new SandboxControls({ baseUrl: gatewayUrl(c), apiKey: c.gateway.apiKey }),
    withStore: (fn) => withStore(c, fn),
    out: (line) => console.log(line),
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
});

program.parseAsync(process.argv).catch((error: Error) => {
  console.error(explain(error));
  process.exit(1);
});

/** One line an operator can act on; a gateway that does not answer is most often a kit not started. */
function explain(error: Error): string {
  if (error instanceof Refused) return error.message;
  if (error instanceof GatewayNetworkError && error.kind === 'connection') {
    const c = config();
    if (c.gateway.baseUrl === null) {
      return (
        `no running kit: the embedded sandbox gateway at http://127.0.0.1:${c.gateway.sandboxPort} does not answer ` +
        '(it runs inside the kit: start it with `npm start`, or set GATEWAY_BASE_URL to use another gateway)'
      );
    }
    return `GATEWAY_BASE_URL: the gateway at ${c.gateway.baseUrl} does not answer (${error.message})`;
  }
  if (error instanceof GatewayError) {
    // The gateway's own words, with the fields it names: `url: must use https` is what to fix.
    const fields = Object.entries(error.details.errors ?? {}).map(
      ([field, why]) => `${field}: ${why.join(', ')}`,
    );
    return `the gateway refused: ${[error.message, ...fields].join(' ')} (HTTP ${error.status} ${error.code})`;
  }
  return settingProblem(error) ?? `${error.name}: ${error.message}`;
}

/** A file opened for writing, or the option's one line (`--out: cannot write x (ENOENT)`) and exit 1. */
async function openForWriting(option: string, path: string): Promise<WriteStream> {
  const stream = createWriteStream(path);
  try {
    await once(stream, 'open');
  } catch (error) {
    fail(
      `${option}: cannot write ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  return stream;
}

/** One line naming what is wrong, on stderr, and exit 1. */
function fail(line: string): never {
  console.error(line);
  process.exit(1);
}

/**
 * `--by` (else `fallback`): kept with the operator's decision, so printable, free of card numbers and
 * not a name the records give the kit's own acts. The command line holds the database's keys: it acts
 * as an administrator, and the audit says `cli`.
 */
function cliActor(by: string | undefined, fallback: () => string): Actor {
  if (by === undefined) return { name: fallback(), role: 'admin', credential: 'cli' };
  if (!/^[\x20-\x7e]{1,64}$/.test(by)) fail('--by: must be 1 to 64 printable characters');
  if (hasCardNumber(by)) fail(`--by: ${NO_CARD_NUMBER}`);
  const reserved = reservedNameProblem(by);
  if (reserved) fail(`--by: ${reserved}; give the name of the person who acted, or leave --by out`);
  return { name: by, role: 'admin', credential: 'cli' };
}

/** Who runs the command, as the system knows them; `cli` when it cannot say, or the name is reserved. */
function systemUser(): string {
  try {
    const name = userInfo().username;
    return /^[\x20-\x7e]{1,64}$/.test(name) && reservedNameProblem(name) === null ? name : 'cli';
  } catch {
    return 'cli';
  }
}

/** `--note`: kept with the decision, so 1 to 512 characters (trimmed) and free of card numbers. */
function noteOf(text: string): string {
  const note = text.trim();
  if (note === '' || note.length > 512) fail('--note: must be 1 to 512 characters');
  if (hasCardNumber(note)) fail(`--note: ${NO_CARD_NUMBER}`);
  return note;
}

/** `--limit`: a whole number from 1 to 1000. */
function listLimit(text: string): number {
  const limit = Number(text);
  if (!/^\d{1,4}$/.test(text) || limit < 1 || limit > 1000)
    fail(`--limit: must be a whole number from 1 to 1000 (got "${text}")`);
  return limit;
}

/** A command-line timestamp, or one line naming the option and exit 1. */
function timestamp(option: string, value: string): Date {
  const at = parseIsoTime(value);
  if (at === null) {
    console.error(
      `${option}: must be a real ISO 8601 date or time, such as 2026-11-23T08:00:00Z (got "${value}")`,
    );
    process.exit(1);
  }
  return at;
}
