import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Actor, OperatorRole } from '../../../src/merchant/operators/roles.js';
import { row, rows } from '../../support/db.js';
import { referenceSettled } from '../../support/events.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import {
  cliEnv,
  getOrder,
  OPS_TOKEN,
  startSiblingKit,
  startTestKit,
  type TestKit,
} from '../../support/kit.js';
import { exitWithin, freePort, start } from '../../support/process.js';
import { keepStraySale } from '../../support/unmatched.js';

/**
 * Issue, part 2, through HTTP against a running kit: named operators with roles. Each role is allowed
 * and refused at each boundary (401 for no token or one nobody holds, 403 `FORBIDDEN` naming the roles
 * that may), a revoked token is refused at once by every process, `by` cannot put words in another's
 * mouth, /metrics and the queue board follow the roles, and the CLI adds, lists and revokes.
 */
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const METRICS_TOKEN = 'metrics-token-0123456789';
const someToken = () => `kop_${randomBytes(32).toString('base64url')}`;
/** A live token with its last character changed (to another one: a random token may end in either). */
const altered = (token: string) => `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;

describe('merchant: operators with names and roles (issue, part 2)', function () {
  this.timeout(120_000);
  let t: TestKit;
  const token: Record<OperatorRole, string> = { operator: '', finance: '', viewer: '', storefront: '' };
  const NAMES: Record<OperatorRole, string> = {
    operator: 'olga',
    finance: 'fred',
    viewer: 'vera',
    storefront: 'shop-web',
  };

  before(async () => {
    // Wrong tokens by the dozen from one address: their limit is token-failures.test.ts's to try.
    t = await startTestKit({ env: { METRICS_TOKEN, LIMIT_TOKEN_FAILURES_PER_ADDRESS: 'off' } });
    for (const role of ['operator', 'finance', 'viewer', 'storefront'] as const)
      token[role] = (await t.kit.store.operators.add({ name: NAMES[role], role, by: CLI })).token;
  });
  after(async () => {
    await t?.close();
  });

  /** An order paid by card: `auth` waits for a capture, `sale` is paid. */
  const order = async (mode: 'auth' | 'sale', amount = '20.00') => {
    const created = await t.call('POST', '/orders', { body: { amount, currency: 'EUR' } });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.data.order.id as string;
    const paid = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode } });
    expect(paid.status, paid.text).to.equal(200);
    return {
      id,
      reference: created.body.data.order.reference as string,
      transaction: (await getOrder(t, id)).payment.gateway_transaction_id as string,
    };
  };
  const as = (role: OperatorRole | 'admin', method: string, path: string, body?: unknown, key?: string) =>
    t.call(method, path, {
      ...(role === 'admin' ? { ops: true } : { token: token[role] }),
      body,
      ...(key ? { headers: { 'idempotency-key': key } } : {}),
    });
  // biome-ignore lint/suspicious/noExplicitAny: an answer of any route
  const expectForbidden = (answer: any, role: OperatorRole, allowed: string[]) => {
    expect(answer.status, answer.text).to.equal(403);
    expect(answer.body.code).to.equal('FORBIDDEN');
    expect(answer.body.data).to.deep.equal({ role, allowed });
    expect(answer.body.message).to.equal(
      `This needs the role ${allowed.join(' or ')}; this token's role is ${role}.`,
    );
  };
  const flagged = async (reason: string) => {
    const created = await t.call('POST', '/orders', { body: { amount: '3.00', currency: 'EUR' } });
    const id = created.body.data.order.id as string;
    await t.kit.store.orders.flagWithoutAttempt(id, { reason, source: 'api', sourceId: `test:${reason}` });
    return id;
  };
  const keepMoney = async (id: string) =>
    (await keepStraySale(t, { id, amountMinor: 300, sourceId: `evt_roles_${id}` })).money.id;
  const day = new Date().toISOString().slice(0, 10);
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

  it('no token, or a token nobody holds (unknown, or a live one altered), is 401 on every operator route', async () => {
    const { id } = await order('auth');
    const routes: [string, string][] = [
      ['GET', '/orders'],
      ['GET', '/disputes'],
      ['GET', '/unmatched-money'],
      ['POST', `/orders/${id}/capture`],
      ['POST', `/orders/${id}/review`],
      ['GET', `/reports/reconciliation?from=${day}&to=${tomorrow}`],
      ['GET', `/audit?from=${day}&to=${tomorrow}`],
    ];
    for (const [method, path] of routes) {
      for (const presented of [undefined, someToken(), `${OPS_TOKEN}x`, altered(token.operator)]) {
        const answer = await t.call(method, path, {
          ...(method === 'POST' ? { body: {} } : {}),
          ...(presented ? { token: presented } : {}),
        });
        expect(answer.status, `${method} ${path} with ${presented}`).to.equal(401);
        expect(answer.body.code).to.equal('UNAUTHORIZED');
      }
    }
    expect((await getOrder(t, id)).status, 'nothing captured').to.equal('authorized');
  });

  it('capture, refund and void: the operator may (the history names them and why); finance and viewer are 403', async () => {
    const moneyRoles = ['operator', 'admin'];
    const auth = await order('auth');
    expectForbidden(await as('finance', 'POST', `/orders/${auth.id}/capture`, {}), 'finance', moneyRoles);
    expectForbidden(await as('viewer', 'POST', `/orders/${auth.id}/capture`, {}), 'viewer', moneyRoles);
    const captured = await as('operator', 'POST', `/orders/${auth.id}/capture`, { note: 'shipped today' });
    expect(captured.status, captured.text).to.equal(200);
    expect(captured.body.data.order.status).to.equal('paid');

    expectForbidden(
      await as('viewer', 'POST', `/orders/${auth.id}/refund`, { amount: '1.00' }, 'r-viewer'),
      'viewer',
      moneyRoles,
    );
    expectForbidden(
      await as('finance', 'POST', `/orders/${auth.id}/refund`, { amount: '1.00' }, 'r-finance'),
      'finance',
      moneyRoles,
    );
    const refunded = await as(
      'operator',
      'POST',
      `/orders/${auth.id}/refund`,
      { amount: '2.50', reason: 'damaged box' },
      'r-1',
    );
    expect(refunded.status, refunded.text).to.equal(200);
    expect(refunded.body.data.order.status).to.equal('partially_refunded');

    const voidable = await order('auth');
    expectForbidden(await as('finance', 'POST', `/orders/${voidable.id}/void`, {}), 'finance', moneyRoles);
    expectForbidden(await as('viewer', 'POST', `/orders/${voidable.id}/void`, {}), 'viewer', moneyRoles);
    const voided = await as('operator', 'POST', `/orders/${voidable.id}/void`, { reason: 'out of stock' });
    expect(voided.status, voided.text).to.equal(200);
    expect(voided.body.data.order.status).to.equal('voided');

    // Each operation's history: who asked and why (`requested`), before the gateway's answer (`applied`).
    const lines = (await getOrder(t, auth.id)).history.filter((h: { outcome: string }) =>
      ['requested', 'applied'].includes(h.outcome),
    );
    const requested = lines.filter((h: { outcome: string }) => h.outcome === 'requested');
    expect(requested.map((h: { detail: string }) => h.detail)).to.deep.equal([
      'capture of 20.00 EUR by olga (operator): shipped today',
      'refund of 2.50 EUR by olga (operator): damaged box',
    ]);
    for (const line of requested) expect(line.status_before).to.equal(line.status_after);
    const voidLine = (await getOrder(t, voidable.id)).history.find(
      (h: { outcome: string }) => h.outcome === 'requested',
    );
    expect(voidLine.detail).to.equal('void of 20.00 EUR by olga (operator): out of stock');
    // A refusal before any operation is stored (a 403) left no line and no operation.
    expect(await rows(t, 'gateway_operations', { order_id: voidable.id })).to.have.length(1);
  });

  it('the report and the audit export: finance may; operator and viewer are 403', async () => {
    const financeRoles = ['finance', 'admin'];
    for (const path of [
      `/reports/reconciliation?from=${day}&to=${tomorrow}`,
      `/audit?from=${day}&to=${tomorrow}`,
    ]) {
      expectForbidden(await as('operator', 'GET', path), 'operator', financeRoles);
      expectForbidden(await as('viewer', 'GET', path), 'viewer', financeRoles);
      expect((await as('finance', 'GET', path)).status, path).to.equal(200);
      expect((await as('admin', 'GET', path)).status, path).to.equal(200);
    }
  });

  it('a review, gateway money and a dispute lost: finance decides; operator and viewer are 403', async () => {
    const financeRoles = ['finance', 'admin'];
    const review = { resolution: 'false_alarm', note: 'checked with the bank' };
    const flaggedId = await flagged('a reason to look');
    expectForbidden(
      await as('operator', 'POST', `/orders/${flaggedId}/review`, review),
      'operator',
      financeRoles,
    );
    expectForbidden(
      await as('viewer', 'POST', `/orders/${flaggedId}/review`, review),
      'viewer',
      financeRoles,
    );
    expect((await as('finance', 'POST', `/orders/${flaggedId}/review`, review)).status).to.equal(200);

    const [one, two] = [await keepMoney('900700001'), await keepMoney('900700002')];
    const target = (await t.call('POST', '/orders', { body: { amount: '3.00', currency: 'EUR' } })).body.data
      .order.id as string;
    const attach = `/unmatched-money/${one}/attach`;
    expectForbidden(await as('operator', 'POST', attach, { order_id: target }), 'operator', financeRoles);
    expectForbidden(await as('viewer', 'POST', attach, { order_id: target }), 'viewer', financeRoles);
    const attached = await as('finance', 'POST', attach, { order_id: target });
    expect(attached.status, attached.text).to.equal(200);
    expect(attached.body.data.unmatched_money.resolved_by).to.equal('fred');
    const resolve = `/unmatched-money/${two}/resolve`;
    expectForbidden(await as('operator', 'POST', resolve, { note: 'a test' }), 'operator', financeRoles);
    expectForbidden(await as('viewer', 'POST', resolve, { note: 'a test' }), 'viewer', financeRoles);
    expect(
      (await as('finance', 'POST', resolve, { note: 'a test' })).body.data.unmatched_money.resolved_by,
    ).to.equal('fred');

    const paid = await order('sale');
    const chargeback = await fetch(
      `${t.kit.gatewayUrl}/sandbox/transactions/${paid.transaction}/chargeback`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
        body: '{}',
      },
    );
    expect(chargeback.status).to.equal(200);
    await referenceSettled(t, paid.reference);
    const [dispute] = (await getOrder(t, paid.id)).disputes;
    const lost = `/disputes/${dispute.id}/lost`;
    expectForbidden(await as('operator', 'POST', lost, { note: 'bank ruled' }), 'operator', financeRoles);
    expectForbidden(await as('viewer', 'POST', lost, { note: 'bank ruled' }), 'viewer', financeRoles);
    const closed = await as('finance', 'POST', lost, { note: 'bank ruled' });
    expect(closed.status, closed.text).to.equal(200);
    expect(closed.body.data.dispute).to.include({ outcome: 'lost', closed_by: 'fred' });
    const line = (await getOrder(t, paid.id)).history.at(-1);
    expect(line.detail).to.equal(`dispute ${dispute.id} lost, by fred (finance): bank ruled`);
  });

  it('the lists: every role reads the orders, the disputes and the money with no order', async () => {
    for (const role of ['operator', 'finance', 'viewer', 'admin'] as const)
      for (const path of ['/orders?limit=5', '/disputes', '/unmatched-money', '/orders?needs_review=true']) {
        const answer = await as(role, 'GET', path);
        expect(answer.status, `${role} ${path}: ${answer.text}`).to.equal(200);
      }
  });

  it('`by`: every caller is who their token says, OPS_API_TOKEN included (it signs as admin)', async () => {
    const a = await order('auth');
    const other = await as('operator', 'POST', `/orders/${a.id}/capture`, { by: 'someone-else' });
    expect(other.status, other.text).to.equal(422);
    expect(other.body.errors.by[0]).to.contain('must be your own operator name (olga)');
    expect((await getOrder(t, a.id)).status, 'nothing captured').to.equal('authorized');
    expect((await as('operator', 'POST', `/orders/${a.id}/capture`, { by: 'olga' })).status).to.equal(200);

    // The shared bootstrap token proves no person: it cannot sign as a named operator, nor as anyone.
    const b = await order('auth');
    const posing = await as('admin', 'POST', `/orders/${b.id}/capture`, { by: 'olga' });
    expect(posing.status, posing.text).to.equal(422);
    expect(Object.keys(posing.body.errors)).to.deep.equal(['by']);
    expect(posing.body.errors.by[0]).to.contain('must be admin or left out');
    expect((await getOrder(t, b.id)).status, 'nothing captured').to.equal('authorized');
    expect((await as('admin', 'POST', `/orders/${b.id}/capture`, { by: 'admin' })).status).to.equal(200);
    const c = await order('auth');
    expect((await as('admin', 'POST', `/orders/${c.id}/void`, {})).status).to.equal(200);
    const requested = async (id: string) =>
      (await getOrder(t, id)).history.find((h: { outcome: string }) => h.outcome === 'requested').detail;
    expect(await requested(a.id)).to.equal('capture of 20.00 EUR by olga (operator)');
    expect(await requested(b.id)).to.equal('capture of 20.00 EUR by admin (admin)');
    expect(await requested(c.id)).to.equal('void of 20.00 EUR by admin (admin)');

    // A name the records give the kit's own acts (or another credential) is nobody's own: 422 on `by`.
    const d = await order('sale');
    for (const by of ['kit', 'System', 'cli', 'gateway', 'operator', ' kit', 'Admin', 'ada']) {
      const refund = await as(
        'admin',
        'POST',
        `/orders/${d.id}/refund`,
        { amount: '0.10', reason: 'x', by },
        `refund-by-${by}`,
      );
      expect(refund.status, by).to.equal(422);
      expect(Object.keys(refund.body.errors), by).to.deep.equal(['by']);
    }
    expect((await getOrder(t, d.id)).refunded_amount, 'nothing refunded').to.equal(0);
  });

  it('/metrics with METRICS_TOKEN: that token or any role reads it; another token or none is 401', async () => {
    const metrics = (o: { token?: string }) => t.call('GET', '/metrics', o);
    expect((await metrics({})).status).to.equal(401);
    expect((await metrics({ token: someToken() })).status).to.equal(401);
    expect((await metrics({ token: METRICS_TOKEN })).status).to.equal(200);
    for (const role of ['operator', 'finance', 'viewer'] as const) {
      const answer = await metrics({ token: token[role] });
      expect(answer.status, role).to.equal(200);
      expect(answer.text).to.contain('kit_queue_jobs');
    }
    expect((await metrics({ token: OPS_TOKEN })).status).to.equal(200);
  });

  it('the queue board: every role reads it; only operator and admin act on jobs (finance and viewer get it read only)', async () => {
    const login = async (presented: string) => {
      const answer = await fetch(`${t.url}/ops/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${encodeURIComponent(presented)}`,
        redirect: 'manual',
      });
      expect(answer.status).to.equal(303);
      return answer.headers.get('set-cookie')!.split(';')[0]!;
    };
    // As the board's own page sends them: with the kit's Origin (an action from elsewhere is refused).
    const board = (cookie: string, method = 'GET', path = '/api/queues') =>
      fetch(`${t.url}/ops/queues${path}`, {
        method,
        headers: { cookie, accept: 'application/json', origin: t.url },
      });
    const retry = '/api/queues/observations/retry/failed';
    for (const role of ['finance', 'viewer'] as const) {
      const cookie = await login(token[role]);
      const read = await board(cookie);
      expect(read.status, role).to.equal(200);
      expect(JSON.stringify(await read.json())).to.match(/"readOnlyMode":true/);
      const act = await board(cookie, 'PUT', retry);
      expect(act.status, role).to.equal(403);
      expect(await act.json()).to.deep.include({
        code: 'FORBIDDEN',
        data: { role, allowed: ['operator', 'admin'] },
      });
    }
    const operatorCookie = await login(token.operator);
    const read = await board(operatorCookie);
    expect(JSON.stringify(await read.json())).to.match(/"readOnlyMode":false/);
    expect((await board(operatorCookie, 'PUT', retry)).status).to.equal(200);
    // The bearer token opens it too, by role.
    const viewerBearer = await fetch(`${t.url}/ops/queues${retry}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token.viewer}` },
    });
    expect(viewerBearer.status).to.equal(403);
  });

  it('a revoked token is refused at once, by this process and by another, and its board session ends', async () => {
    const { token: kept } = await t.kit.store.operators.add({ name: 'rita', role: 'viewer', by: CLI });
    const sibling = await startSiblingKit(t, 'api');
    try {
      const asRita = (base: string) =>
        fetch(`${base}/orders?limit=1`, { headers: { authorization: `Bearer ${kept}` } }).then(
          (r) => r.status,
        );
      expect(await asRita(t.url)).to.equal(200);
      expect(await asRita(sibling.url!)).to.equal(200);
      const login = await fetch(`${t.url}/ops/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${encodeURIComponent(kept)}`,
        redirect: 'manual',
      });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const boardStatus = () =>
        fetch(`${t.url}/ops/queues/api/queues`, { headers: { cookie, accept: 'application/json' } }).then(
          (r) => r.status,
        );
      expect(await boardStatus()).to.equal(200);

      const revoked = await t.kit.store.operators.revoke('rita', CLI);
      expect(revoked).to.include({ name: 'rita', revoked_by: 'root' });
      // No cache to outlive it: the very next request, on either process.
      expect(await asRita(t.url)).to.equal(401);
      expect(await asRita(sibling.url!)).to.equal(401);
      expect(await boardStatus()).to.equal(401);
      // Told that the token it sent is not known, not asked to send one; an unknown token reads alike.
      const refused = await t.call('GET', '/orders?limit=1', { token: kept });
      expect(refused.body).to.include({ code: 'UNAUTHORIZED' });
      expect(refused.body.message).to.match(/^This token is not one the kit knows: unknown, or revoked/);
      const unknown = await t.call('GET', '/orders?limit=1', { token: `kop_${'x'.repeat(43)}` });
      expect(unknown.body.message).to.equal(refused.body.message);
      const none = await fetch(`${t.url}/orders?limit=1`).then((r) => r.json());
      expect(none.message).to.match(/need Authorization: Bearer <token>/);
      // The name is free again; the old token stays dead.
      const again = await t.kit.store.operators.add({ name: 'rita', role: 'viewer', by: CLI });
      expect(again.token).to.not.equal(kept);
      expect(await asRita(t.url)).to.equal(401);
      const fresh = await t.call('GET', '/orders?limit=1', { token: again.token });
      expect(fresh.status).to.equal(200);
    } finally {
      await sibling.close();
    }
  });

  it('stores only a hash of each token: no token in any table', async () => {
    const dump = await t.dump();
    for (const role of ['operator', 'finance', 'viewer'] as const) expect(dump).to.not.contain(token[role]);
    const stored = await row(t, 'operators', { name: 'olga' });
    expect(stored!.token_hash).to.match(/^[0-9a-f]{64}$/);
  });
});

describe('merchant: the operator CLI (issue, part 2)', function () {
  this.timeout(120_000);
  let t: TestKit;
  let env: Record<string, string>;
  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
    env = { ...cliEnv(t), GATEWAY_PORT: String(await freePort()) };
  });
  after(async () => {
    await t?.close();
  });

  const cli = async (...args: string[]) => {
    const p = start('src/cli.ts', ['operator', ...args], env);
    const { code } = await exitWithin(p, 60_000);
    return { code, out: p.stdout(), err: p.stderr() };
  };

  it('add prints the token once; list never shows it; revoke ends it; bad input is one line naming it', async () => {
    const added = await cli('add', 'Ada L', '--role', 'finance', '--by', 'grace');
    expect(added.code, added.err).to.equal(0);
    const issued = /^(kop_[A-Za-z0-9_-]{43})$/m.exec(added.out)?.[1];
    expect(issued, added.out).to.be.a('string');
    expect(added.out).to.match(/operator Ada L added: role finance, id opr_\w+/);
    expect((await t.call('GET', `/audit?from=2020-01-01&to=2100-01-01`, { token: issued })).status).to.equal(
      200,
    );

    const again = await cli('add', 'Ada L', '--role', 'viewer');
    expect(again.code).to.equal(1);
    expect(again.err.trim()).to.equal('<name>: Ada L has a live token already: revoke it first');
    const badRole = await cli('add', 'bob', '--role', 'boss');
    expect(badRole.code).to.equal(1);
    expect(badRole.err.trim()).to.equal('--role: must be operator, finance, viewer, storefront (got "boss")');
    const reserved = await cli('add', 'admin', '--role', 'viewer');
    expect(reserved.code).to.equal(1);
    expect(reserved.err).to.contain('<name>: "admin" is reserved');
    // Nor may whoever adds them be recorded as the kit: one line naming --by, and no operator added.
    const byKit = await cli('add', 'zed', '--role', 'viewer', '--by', 'kit');
    expect(byKit.code).to.equal(1);
    expect(byKit.err.trim().split('\n')).to.have.length(1);
    expect(byKit.err).to.match(/^--by: "kit" is reserved/);

    const listed = await cli('list');
    expect(listed.code, listed.err).to.equal(0);
    const [entry] = JSON.parse(listed.out);
    expect(entry).to.include({ name: 'Ada L', role: 'finance', created_by: 'grace', revoked_at: null });
    expect(listed.out).to.not.contain(issued!);
    expect(listed.out).to.not.contain('token_hash');

    const revoked = await cli('revoke', 'Ada L', '--by', 'grace');
    expect(revoked.code, revoked.err).to.equal(0);
    expect(revoked.out).to.match(/operator Ada L \(finance, opr_\w+\) revoked/);
    expect((await t.call('GET', '/orders', { token: issued })).status).to.equal(401);
    expect(JSON.parse((await cli('list')).out)).to.deep.equal([]);
    expect(JSON.parse((await cli('list', '--all')).out)[0]).to.include({
      name: 'Ada L',
      revoked_by: 'grace',
    });
    const none = await cli('revoke', 'Ada L');
    expect(none.code).to.equal(1);
    expect(none.err.trim()).to.equal('<name>: no live operator token has the name or id Ada L');

    const audit = await t.call('GET', '/audit?from=2020-01-01&to=2100-01-01&format=json', { ops: true });
    expect(
      audit.body.data.entries.map((e: { action: string; actor: string; credential: string }) => [
        e.action,
        e.actor,
        e.credential,
      ]),
    ).to.deep.equal([
      ['operator.add', 'grace', 'cli'],
      ['operator.revoke', 'grace', 'cli'],
    ]);
  });
});
