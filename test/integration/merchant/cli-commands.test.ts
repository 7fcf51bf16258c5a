import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import mysql from 'mysql2/promise';
import {
  ADMIN_URL,
  databaseName,
  exitWithin,
  freePort,
  healthy,
  leftovers,
  lines,
  type Proc,
  start,
  startNpm,
} from '../../support/process.js';

const HOUR = 3_600_000;

/**
 * CLI commands as an operator runs them, on a database of their own: `order-events status` with and
 * without the shop's endpoint configured, the audit lines the CLI writes while the kit is stopped
 * after `sandbox advance`, and `npm run cli` itself (the compiled CLI, built when the sources change).
 */
describe('merchant: the CLI’s order-events status and audit lines, and npm run cli', function () {
  this.timeout(180_000);
  const { databases, track, cleanUp } = leftovers();
  const database = databaseName('clicmd', 'main');
  databases.push(database);
  const dir = mkdtempSync(join(tmpdir(), 'kit-cli-'));
  let env: Record<string, string>;
  let db: mysql.Connection;

  const run = async (p: Proc) => {
    const { code } = await exitWithin(p, 90_000);
    // The JSON log lines aside: what the operator reads.
    return { code, out: p.stdout(), err: lines(p.stderr()).filter((l) => !l.startsWith('{')) };
  };
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    run(track(start('src/cli.ts', args, { ...env, ...extra })));
  const shop = {
    SHOP_WEBHOOK_URLS: 'https://shop.example/hooks/payments',
    SHOP_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
  };

  before(async () => {
    const port = await freePort();
    env = {
      PORT: String(port),
      GATEWAY_PORT: String(await freePort([port])),
      DATABASE_URL: `${ADMIN_URL}/${database}`,
      GATEWAY_SANDBOX_STATE: join(dir, 'sandbox-state.json'),
    };
    const migrated = await cli(['migrate']);
    expect(migrated.code, migrated.err.join('\n')).to.equal(0);
    db = await mysql.createConnection(env.DATABASE_URL!);
  });
  after(async () => {
    await db?.end();
    await cleanUp();
    rmSync(dir, { recursive: true, force: true });
  });

  it('order-events status with no endpoint configured says so and how many events wait; with one, the status', async () => {
    const none = await cli(['order-events', 'status']);
    expect(none.code, none.err.join('\n')).to.equal(0);
    expect(lines(none.out)).to.deep.equal([
      "no order-events endpoint is configured (SHOP_WEBHOOK_URLS): 0 events wait in the outbox, to go to the first endpoint (or handler in the kit's code) configured",
    ]);

    // Two events written by orders' changes, fanned out to no one: there is no one to fan them out to.
    for (const n of [1, 2])
      await db.query(
        `INSERT INTO order_events (id, order_id, type, payload, created_at) VALUES (?, 'ord_1', 'order.paid', '{}', NOW(3))`,
        [`oev_waiting${n}`],
      );
    const waiting = await cli(['order-events', 'status']);
    expect(waiting.code, waiting.err.join('\n')).to.equal(0);
    expect(lines(waiting.out)).to.deep.equal([
      "no order-events endpoint is configured (SHOP_WEBHOOK_URLS): 2 events wait in the outbox, to go to the first endpoint (or handler in the kit's code) configured",
    ]);

    // An endpoint configured: the status as JSON on stdout, what is not fanned out yet on stderr.
    const configured = await cli(['order-events', 'status'], shop);
    expect(configured.code, configured.err.join('\n')).to.equal(0);
    expect(JSON.parse(configured.out)).to.deep.equal([]);
    expect(configured.err).to.deep.equal([
      '2 events not fanned out yet: the dispatcher (worker role) makes their deliveries',
    ]);

    // Fanned out, as the dispatcher does: each waits for the endpoint, per subscriber.
    await db.query(
      `INSERT INTO order_event_deliveries (event_seq, order_id, subscriber, status, attempts, next_attempt_at, created_at)
         SELECT seq, order_id, ?, 'pending', 0, NOW(3), NOW(3) FROM order_events`,
      [`url:${shop.SHOP_WEBHOOK_URLS}`],
    );
    await db.query('UPDATE order_events SET fanned_out_at = NOW(3)');
    const fanned = await cli(['order-events', 'status'], shop);
    expect(fanned.code, fanned.err.join('\n')).to.equal(0);
    expect(fanned.err).to.deep.equal([]);
    expect(JSON.parse(fanned.out)).to.have.length(1);
    expect(JSON.parse(fanned.out)[0]).to.include({
      subscriber: `url:${shop.SHOP_WEBHOOK_URLS}`,
      pending: 2,
      failed: 0,
      last_delivered_at: null,
    });
  });

  it('npm run cli: the compiled CLI, built when needed, answers as the source does', async () => {
    const p = track(startNpm(['run', '-s', 'cli', '--', 'order-events', 'status'], { ...env, ...shop }));
    const answer = await run(p);
    expect(answer.code, answer.err.join('\n')).to.equal(0);
    expect(JSON.parse(answer.out)[0]).to.include({ subscriber: `url:${shop.SHOP_WEBHOOK_URLS}`, pending: 2 });
  });

  it('after sandbox advance, audit lines the CLI writes while the kit is stopped come after the kit’s, not hours before', async () => {
    const startKit = async () => {
      const kit = track(start('src/main.ts', [], env));
      await healthy(kit, `http://127.0.0.1:${env.PORT}`, 60_000);
      return kit;
    };
    const stop = async (kit: Proc) => {
      kit.child.kill('SIGTERM');
      expect((await exitWithin(kit, 30_000)).code, kit.stderr()).to.equal(0);
    };
    const addOperator = async (name: string) => {
      const added = await cli(['operator', 'add', name, '--role', 'viewer']);
      expect(added.code, added.err.join('\n')).to.equal(0);
    };

    const kit = await startKit();
    const advanced = await cli(['sandbox', 'advance', '2h']);
    expect(advanced.code, advanced.err.join('\n')).to.equal(0);
    await addOperator('ada'); // beside the running kit: its sandbox's clock, asked
    await stop(kit); // the sandbox's state file keeps its clock's last reading
    await addOperator('bob'); // no kit answering: the time the kit resumes from
    const again = await startKit();
    await addOperator('cy');
    await stop(again);

    const [rows] = await db.query<mysql.RowDataPacket[]>(
      `SELECT at FROM audit_log WHERE action = 'operator.add' ORDER BY id`,
    );
    expect(rows).to.have.length(3);
    const at = rows.map((r) => (r.at as Date).getTime());
    // In the order written, which is the audit export's order, and all on the kit's clock, ahead.
    expect(at, at.map((t) => new Date(t).toISOString()).join(', ')).to.deep.equal(
      [...at].sort((a, b) => a - b),
    );
    for (const t of at) expect(t - Date.now()).to.be.above(HOUR);
  });
});
