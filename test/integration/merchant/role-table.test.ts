import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { Actor, OperatorRole } from '../../../src/merchant/operators/roles.js';
import { OPS_TOKEN, startTestKit, type TestKit } from '../../support/kit.js';
import { PLATFORM_ENV, platformSeed } from '../../support/platform.js';

/**
 * The role table of docs/operations.md, cell for cell, against the routes themselves (issue 41): for
 * each permission one request of its routes is sent with a token of each role, and a "no" must be refused
 * (401 or 403) while a "yes" must get past the door (whatever the request then meets: a 404 for an
 * order that does not exist, a 422 for a body left out). The unit test holds the same table against
 * roles.ts; this one holds it against what the kit answers, money routes first.
 */
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const ROLES = ['viewer', 'finance', 'operator', 'storefront', 'admin'] as const;
type TableRole = (typeof ROLES)[number];

function guideTable(): Record<string, Record<TableRole, boolean>> {
  const guide = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
  const lines = guide.slice(guide.indexOf('| permission | routes |')).split('\n').slice(2);
  const rows = lines.slice(
    0,
    lines.findIndex((l) => !l.startsWith('|')),
  );
  return Object.fromEntries(
    rows.map((l) => {
      const cells = l.split('|').map((c) => c.trim());
      const said = cells.slice(3, 8).map((c) => c === 'yes');
      return [cells[1]!.replace(/`/g, ''), Object.fromEntries(ROLES.map((r, i) => [r, said[i]!]))];
    }),
  ) as Record<string, Record<TableRole, boolean>>;
}

describe("merchant: the operations guide's role table against the routes (issue 41)", function () {
  this.timeout(60_000);
  let t: TestKit;
  const tokens = {} as Record<TableRole, string>;

  before(async () => {
    t = await startTestKit({ env: { METRICS_TOKEN: 'm'.repeat(40) } });
    for (const role of ROLES.filter((r): r is OperatorRole => r !== 'admin'))
      tokens[role] = (await t.kit.store.operators.add({ name: `${role}-1`, role, by: CLI })).token;
    tokens.admin = OPS_TOKEN;
  });
  after(async () => {
    await t?.close();
  });

  const requests = requestsOf(() => t);

  it('every permission of the table has a request here, and the table names every permission', () => {
    expect(Object.keys(guideTable()).sort()).to.deep.equal(Object.keys(requests).sort());
  });

  for (const [permission, request] of Object.entries(requests))
    it(`${permission}: each role is let in or refused as the guide's table says`, async () => {
      const said = guideTable()[permission]!;
      for (const role of ROLES) {
        const res = await request(tokens[role]);
        const refused = res.status === 401 || res.status === 403;
        expect(refused, `${role}: ${res.status} ${res.text.slice(0, 300)}`).to.equal(!said[role]);
      }
    });

  it('no role pays with a saved card by its bearer token: only a customer token minted for the order pays', async () => {
    const made = await t.call('POST', '/orders', {
      body: { amount: '5.00', currency: 'EUR', customer: { merchant_customer_id: 'cus-table' } },
    });
    expect(made.status, made.text).to.equal(201);
    for (const role of ROLES) {
      const res = await t.call('POST', `/orders/${made.body.data.order.id}/pay/saved`, {
        token: tokens[role],
        body: { card: 'card_nobody000000000000000000', mode: 'sale' },
      });
      expect(res.status, `${role}: ${res.text}`).to.equal(401);
      expect(res.body.code).to.equal('CUSTOMER_TOKEN_REQUIRED');
    }
  });
});

/** The table's `scoped` column: what a token scoped to some merchants may still do of its role. */
function scopedColumn(): Record<string, boolean> {
  const guide = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
  const lines = guide.slice(guide.indexOf('| permission | routes |')).split('\n').slice(2);
  const rows = lines.slice(
    0,
    lines.findIndex((l) => !l.startsWith('|')),
  );
  return Object.fromEntries(
    rows.map((l) => {
      const cells = l.split('|').map((c) => c.trim());
      return [cells[1]!.replace(/`/g, ''), cells[8] === 'yes'];
    }),
  );
}

describe("merchant: the role table's `scoped` column against the routes (issue 45, part 2)", function () {
  this.timeout(60_000);
  let t: TestKit;
  const tokens = {} as Record<OperatorRole, string>;
  const NAMED = ROLES.filter((r): r is OperatorRole => r !== 'admin');

  before(async () => {
    // Platform mode, every role's token scoped to merchant 1004 alone.
    t = await startTestKit({ seed: platformSeed, env: { ...PLATFORM_ENV, METRICS_TOKEN: 'm'.repeat(40) } });
    for (const role of NAMED)
      tokens[role] = (
        await t.kit.store.operators.add({ name: `${role}-1004`, role, merchants: [1004], by: CLI })
      ).token;
  });
  after(async () => {
    await t?.close();
  });

  const requests = requestsOf(() => t);

  for (const permission of Object.keys(requests))
    it(`${permission}: a scoped token of each role is let in where its role and the column say yes`, async () => {
      const role = guideTable()[permission]!;
      const scoped = scopedColumn()[permission]!;
      for (const name of NAMED) {
        const res = await requests[permission]!(tokens[name]);
        const refused = res.status === 401 || res.status === 403;
        expect(refused, `${name}: ${res.status} ${res.text.slice(0, 300)}`).to.equal(!(role[name] && scoped));
      }
    });
});

/** One request of each permission's routes: the door it meets is the permission's. */
function requestsOf(
  kit: () => TestKit,
): Record<string, (token: string) => Promise<{ status: number; text: string }>> {
  const t = { call: (...a: Parameters<TestKit['call']>) => kit().call(...a) };
  return {
    read: (token) => t.call('GET', '/orders', { token }),
    'money.move': (token) => t.call('POST', '/orders/ord_nobody0000000000000000/refund', { token, body: {} }),
    'cards.manage': (token) =>
      t.call('DELETE', '/customers/cus-table/cards/card_nobody000000000000000000', { token }),
    'customers.vouch': (token) => t.call('POST', '/customers/cus-table/tokens', { token }),
    'orders.reference': (token) =>
      t.call('POST', '/orders', {
        token,
        body: { amount: '1.00', currency: 'EUR', reference: `ref-${Math.random().toString(36).slice(2)}` },
      }),
    'reports.read': (token) => t.call('GET', '/reports/reconciliation', { token }),
    'audit.read': (token) => t.call('GET', '/audit', { token }),
    'reviews.resolve': (token) =>
      t.call('POST', '/orders/ord_nobody0000000000000000/review', { token, body: {} }),
    'unmatched.decide': (token) =>
      t.call('POST', '/unmatched-money/umn_nobody000000000000000000/resolve', { token, body: {} }),
    'disputes.decide': (token) =>
      t.call('POST', '/disputes/dsp_nobody000000000000000000/lost', { token, body: {} }),
    'queues.read': (token) =>
      t.call('GET', '/ops/queues/api/queues', { token, headers: { accept: 'application/json' } }),
    'queues.act': (token) =>
      t.call('PUT', '/ops/queues/api/queues/nobody/pause', {
        token,
        headers: { accept: 'application/json' },
      }),
    'metrics.read': (token) => t.call('GET', '/metrics', { token }),
    'customers.erase': (token) => t.call('POST', '/customers/cus-table-erased/erase', { token }),
  };
}
