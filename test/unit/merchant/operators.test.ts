import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { Context } from 'koa';
import { decodeCursor, encodeCursor } from '../../../src/merchant/http/list-cursor.js';
import {
  actorOf,
  OPS_SESSION_MS,
  opsSession,
  sameSecret,
  validOpsSession,
} from '../../../src/merchant/http/ops-auth.js';
import {
  may,
  OPERATOR_ROLES,
  operatorNameProblem,
  PERMISSIONS,
  type Permission,
  rolesFor,
} from '../../../src/merchant/operators/roles.js';
import {
  looksLikeOperatorToken,
  newOperatorToken,
  sameHash,
  tokenHash,
} from '../../../src/merchant/operators/tokens.js';
import {
  type AttemptFacts,
  decide,
  INITIAL_PAYMENT,
  type PaymentState,
} from '../../../src/merchant/orders/decide.js';
import type { TransactionObservation } from '../../../src/merchant/orders/observation.js';
import { wasResolved, withResolved } from '../../../src/merchant/orders/review.js';
import { seededRandom } from '../../../src/shared/ids.js';

/** Issue, parts 2 and 3: the pure parts of operators, roles, tokens, sessions, reviews and the list. */
describe('operators: roles', () => {
  it('admin holds every permission; each role holds only its own', () => {
    for (const permission of Object.keys(PERMISSIONS) as Permission[]) {
      expect(may('admin', permission), permission).to.equal(true);
      for (const role of OPERATOR_ROLES)
        expect(may(role, permission), `${role} ${permission}`).to.equal(
          (PERMISSIONS[permission] as readonly string[]).includes(role),
        );
    }
    expect(may('operator', 'money.move')).to.equal(true);
    expect(may('finance', 'money.move')).to.equal(false);
    expect(may('operator', 'reviews.resolve')).to.equal(false);
    expect(may('viewer', 'read')).to.equal(true);
    expect(may('viewer', 'reports.read')).to.equal(false);
    expect(rolesFor('audit.read')).to.deep.equal(['finance', 'admin']);
  });

  it("the operations guide's role table says what the code enforces, cell for cell", () => {
    const guide = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
    const start = guide.indexOf('| permission | routes |');
    expect(start, 'the role table in docs/operations.md').to.be.greaterThan(0);
    const lines = guide.slice(start).split('\n').slice(2);
    const rows = lines.slice(
      0,
      lines.findIndex((l) => !l.startsWith('|')),
    );
    const table = Object.fromEntries(
      rows.map((l) => {
        const cells = l.split('|').map((c) => c.trim());
        // | permission | routes | viewer | finance | operator | storefront | admin |
        return [cells[1]!.replace(/`/g, ''), cells.slice(3, 8).map((c) => c === 'yes')];
      }),
    );
    const code = Object.fromEntries(
      (Object.keys(PERMISSIONS) as Permission[]).map((p) => [
        p,
        (['viewer', 'finance', 'operator', 'storefront', 'admin'] as const).map((r) => may(r, p)),
      ]),
    );
    expect(table).to.deep.equal(code);
  });

  it('names: letters, digits, spaces and . _ - @, at most 64; reserved words refused', () => {
    for (const good of ['ada', 'Ada Lovelace', 'ada.l@example.com', 'o_1-2', 'x'.repeat(64)])
      expect(operatorNameProblem(good), good).to.equal(null);
    for (const bad of ['', ' ada', 'ada ', 'x'.repeat(65), 'ada;drop', 'ada\n', 'émile', '-ada'])
      expect(operatorNameProblem(bad), bad).to.be.a('string');
    for (const reserved of ['admin', 'Admin', 'kit', 'gateway', 'cli', 'operator', 'system'])
      expect(operatorNameProblem(reserved)).to.contain('reserved');
    for (const card of ['4242424242424242', '4242 4242 4242 4242', 'ada 4111-1111-1111-1111'])
      expect(operatorNameProblem(card), card).to.equal('must not hold a card number');
  });
});

describe('operators: tokens', () => {
  it('kop_ and 43 base64url characters of 32 random bytes; stored as their SHA-256', () => {
    const random = seededRandom(7);
    const a = newOperatorToken(random);
    const b = newOperatorToken(random);
    expect(a).to.match(/^kop_[A-Za-z0-9_-]{43}$/);
    expect(a).to.not.equal(b);
    expect(looksLikeOperatorToken(a)).to.equal(true);
    for (const other of [
      '',
      'kop_',
      `${a}x`,
      a.slice(0, -1),
      `Kop_${a.slice(4)}`,
      'test-ops-token-0123456789abcdefghij',
    ])
      expect(looksLikeOperatorToken(other), other).to.equal(false);
    expect(tokenHash(a)).to.match(/^[0-9a-f]{64}$/);
    expect(tokenHash(a)).to.not.equal(tokenHash(b));
    expect(sameHash(tokenHash(a), tokenHash(a))).to.equal(true);
    expect(sameHash(tokenHash(a), tokenHash(b))).to.equal(false);
    expect(sameHash(tokenHash(a), '')).to.equal(false);
    expect(sameHash('', '')).to.equal(false);
  });
});

describe('operators: the bootstrap token compared', () => {
  it('compares digests: equal or not, any lengths, never throwing (timingSafeEqual alone throws on lengths)', () => {
    const token = 'local-ops-token-0123456789';
    expect(sameSecret(token, token)).to.equal(true);
    for (const other of ['', 'l', token.slice(0, -1), `${token}0`, token.toUpperCase(), 'x'.repeat(4096)])
      expect(sameSecret(other, token), other.slice(0, 30)).to.equal(false);
  });
});

describe('operators: sessions and who decided', () => {
  const now = Date.UTC(2026, 10, 24, 12);
  it('a session names its subject and a random id, ends on time, and is bound to the bootstrap token', () => {
    const admin = opsSession('boot', now);
    expect(validOpsSession(admin, 'boot', now)).to.deep.include({
      subject: 'admin',
      until: now + OPS_SESSION_MS,
    });
    expect(validOpsSession(opsSession('boot', now), 'boot', now)!.id, 'a new id each time').to.not.equal(
      validOpsSession(admin, 'boot', now)!.id,
    );
    const ada = opsSession('boot', now, 'opr_abc123', 'AAAAAAAAAAAAAAAA');
    expect(validOpsSession(ada, 'boot', now + OPS_SESSION_MS - 1)).to.deep.equal({
      subject: 'opr_abc123',
      id: 'AAAAAAAAAAAAAAAA',
      until: now + OPS_SESSION_MS,
    });
    expect(validOpsSession(ada, 'boot', now + OPS_SESSION_MS)).to.equal(null);
    expect(validOpsSession(ada, 'another', now)).to.equal(null);
    const [, until, id, mac] = ada.split('.');
    expect(validOpsSession(`admin.${until}.${id}.${mac}`, 'boot', now), 'another subject, same MAC').to.equal(
      null,
    );
    expect(
      validOpsSession(`opr_abc123.${until}.BBBBBBBBBBBBBBBB.${mac}`, 'boot', now),
      'another id',
    ).to.equal(null);
    for (const junk of [
      undefined,
      '',
      'admin',
      `${until}.${mac}`,
      `opr_abc123.${until}.${mac}`,
      `opr_x.y.${until}.${id}.${mac}`,
      `../etc.${until}.${id}.${mac}`,
    ])
      expect(validOpsSession(junk, 'boot', now), String(junk)).to.equal(null);
  });

  it('every caller is who their token says: `by` may only repeat it, the bootstrap token signing as admin', () => {
    const ctx = { state: { requestId: 'req-1' } } as unknown as Context;
    const olga = { name: 'olga', role: 'operator' as const, credential: 'opr_1' };
    const admin = { name: 'admin', role: 'admin' as const, credential: 'bootstrap' };
    expect(actorOf(ctx, olga)).to.deep.equal({ ...olga, requestId: 'req-1' });
    expect(actorOf(ctx, olga, 'olga')).to.deep.equal({ ...olga, requestId: 'req-1' });
    expect(() => actorOf(ctx, olga, 'ada')).to.throw('The request is not valid.');
    expect(() => actorOf(ctx, admin, 'ada')).to.throw('The request is not valid.');
    expect(() => actorOf(ctx, admin, 'olga')).to.throw('The request is not valid.');
    expect(actorOf(ctx, admin, 'admin')).to.deep.equal({ ...admin, requestId: 'req-1' });
    expect(actorOf(ctx, admin)).to.deep.equal({ ...admin, requestId: 'req-1' });
  });
});

describe('the review queue: resolved reasons and the list cursor', () => {
  it('a resolved reason is known once, however many were cleared together', () => {
    const once = withResolved(null, 'amount 500 differs; a second capture 7');
    expect(once).to.equal('amount 500 differs; a second capture 7');
    expect(wasResolved(once, 'amount 500 differs')).to.equal(true);
    expect(wasResolved(once, 'a second capture 7')).to.equal(true);
    expect(wasResolved(once, 'amount 500')).to.equal(false);
    expect(wasResolved(null, 'x')).to.equal(false);
    expect(withResolved(once, 'amount 500 differs; new one')).to.equal(
      'amount 500 differs; a second capture 7; new one',
    );
    expect(withResolved(null, '')).to.equal(null);
  });

  it('drops the oldest reasons first when the list outgrows its column', () => {
    let resolved: string | null = null;
    for (let i = 0; i < 50; i++) resolved = withResolved(resolved, `reason number ${i} ${'x'.repeat(30)}`);
    expect(resolved!.length).to.be.at.most(1024);
    expect(wasResolved(resolved, `reason number 49 ${'x'.repeat(30)}`)).to.equal(true);
    expect(wasResolved(resolved, `reason number 0 ${'x'.repeat(30)}`)).to.equal(false);
  });

  it('a cursor names a position and nothing else', () => {
    const at = {
      createdAt: new Date(Date.UTC(2026, 10, 24, 12, 0, 0, 123)),
      id: 'ord_1W3k9Qm2Zx8Yv4Ta7Lp0Rs5N',
    };
    const cursor = encodeCursor(at);
    expect(cursor).to.match(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).to.deep.equal(at);
    const b64 = (s: string) => Buffer.from(s).toString('base64url');
    for (const junk of ['', '!', 'a'.repeat(200), b64('x.ord_1'), b64('12.'), b64('12.ord 1'), b64('1.2.3')])
      expect(decodeCursor(junk), junk).to.equal(null);
  });
});

describe('decide: a finding a person resolved is not asked again', () => {
  const order = { status: 'paid' as const, amountMinor: 1234, currency: 'EUR' };
  const attempt = (state: PaymentState): AttemptFacts => ({
    kind: 'card',
    sale: true,
    transactionId: '900',
    current: true,
    state,
  });
  const poll = (amountMinor: number): TransactionObservation => ({
    source: 'poll',
    sourceId: `poll:att_1:${amountMinor}`,
    observedAt: 1,
    about: { orderId: 'ord_1', attemptId: 'att_1' },
    transaction: {
      id: '900',
      relatedId: null,
      type: 'sale',
      status: 'captured',
      amountMinor,
      currency: 'EUR',
      refundedMinor: 0,
    },
  });
  const reason = "amount 500 differs from the order's 1234";

  it('flags a payment of another amount; once resolved, the same reading is recorded, not flagged', () => {
    const pending = attempt({ ...INITIAL_PAYMENT, status: 'pending' });
    const first = decide({ ...order, status: 'pending' }, pending, poll(500));
    expect(first).to.include({ outcome: 'flagged', review: reason, orderStatus: 'paid' });
    const paid = attempt(first.attempt);
    const again = decide(order, paid, poll(500));
    expect(again).to.include({ outcome: 'flagged', review: reason });
    const settled = decide({ ...order, resolvedReasons: reason }, paid, poll(500));
    expect(settled).to.include({
      outcome: 'duplicate',
      review: null,
      note: `${reason} (resolved by a person before)`,
    });
    // The gateway's truth is still applied when it moves the payment on: applied, not flagged.
    const applied = decide({ ...order, status: 'pending', resolvedReasons: reason }, pending, poll(500));
    expect(applied).to.include({ outcome: 'applied', review: null, orderStatus: 'paid' });
    // Another finding still flags.
    const other = decide({ ...order, resolvedReasons: reason }, paid, poll(700));
    expect(other).to.include({ outcome: 'flagged' });
    expect(other.review).to.contain('700');
  });
});
