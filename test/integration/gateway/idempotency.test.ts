import { expect } from 'chai';
import type { Transaction } from '../../../src/gateway/domain/transactions.js';
import {
  type Answer,
  type CallOptions,
  MERCHANT_KEY,
  OTHER_MERCHANT_KEY,
  PARTNER_KEY,
  startGateway,
  type TestGateway,
  transactionBody,
} from '../../support/gateway.js';

/** gateway-api.md, Idempotency contract (capture, refund, void), rules 1-6. */

type Op = 'capture' | 'refund' | 'void';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

async function initiate(gw: TestGateway, type: 'sale' | 'auth', key = MERCHANT_KEY): Promise<number> {
  const answer = await gw.call('POST', '/api/v1/transactions', {
    key,
    body: transactionBody({ transaction_type: type, amount: 12.34, currency: 'EUR' }),
  });
  expect(answer.status, answer.text).to.equal(200);
  return answer.body.data.id as number;
}

interface OpCase {
  /** Makes a transaction the operation succeeds on, for the merchant of `key`. */
  target(gw: TestGateway, key?: string): Promise<number>;
  body: Record<string, unknown>;
  /** The same JSON value as `body`, with other key order and whitespace. */
  sameBodyRaw: string;
  /** A different body that would also be valid. */
  otherBody: Record<string, unknown>;
  /** Fails validation: more decimals than EUR has. */
  tooPrecise: Record<string, unknown>;
  /** What a fresh execution of `body` answers once the operation already ran on the target. */
  secondRunStatus: number;
}

const CASES: Record<Op, OpCase> = {
  capture: {
    target: (gw, key) => initiate(gw, 'auth', key),
    body: { amount: 12.34 },
    sameBodyRaw: '{\n    "amount" :   12.34\n}\n',
    otherBody: { amount: 10 },
    tooPrecise: { amount: 12.345 },
    secondRunStatus: 400,
  },
  refund: {
    target: (gw, key) => initiate(gw, 'sale', key),
    body: { amount: 1, reason: 'customer request' },
    sameBodyRaw: ' { "reason" : "customer request",\n\t"amount": 1 } ',
    otherBody: { amount: 1, reason: 'another reason' },
    tooPrecise: { amount: 1.001, reason: 'customer request' },
    secondRunStatus: 200,
  },
  void: {
    target: (gw, key) => initiate(gw, 'auth', key),
    body: { amount: 12.34, reason: 'order cancelled' },
    sameBodyRaw: '{"reason":"order cancelled" ,\n "amount":12.34}',
    otherBody: { amount: 12.34, reason: 'changed mind' },
    tooPrecise: { amount: 12.341, reason: 'order cancelled' },
    secondRunStatus: 400,
  },
};

const OPS = Object.keys(CASES) as Op[];

function childrenOf(gw: TestGateway, parentId: number, op: Op): Transaction[] {
  return [...gw.gateway.deps.state.transactions.values()].filter(
    (t) => t.relatedId === parentId && t.type === op,
  );
}

function post(gw: TestGateway, op: Op, id: number, idempotencyKey: string | undefined, options: CallOptions) {
  const headers: Record<string, string> =
    idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey };
  return gw.call('POST', `/api/v1/transactions/${id}/${op}`, {
    ...options,
    headers: { ...headers, ...options.headers },
  });
}

function replayed(answer: Answer): boolean {
  return answer.headers.get('idempotency-replayed') === 'true';
}

function expectExecuted(answer: Answer, status = 200): void {
  expect(answer.status, answer.text).to.equal(status);
  expect(answer.headers.get('idempotency-replayed'), 'not a replay').to.equal(null);
}

function expectReplayOf(answer: Answer, original: Answer): void {
  expect(answer.status, answer.text).to.equal(original.status);
  expect(replayed(answer), 'Idempotency-Replayed: true').to.equal(true);
  expect(answer.body).to.deep.equal(original.body);
}

function expectCode(answer: Answer, status: number, code: string): void {
  expect(answer.status, answer.text).to.equal(status);
  expect(answer.body.success).to.equal(false);
  expect(answer.body.code).to.equal(code);
}

for (const op of OPS) {
  const c = CASES[op];

  describe(`gateway: idempotency on ${op}`, () => {
    let gw: TestGateway;
    let target: number;
    const send = (key: string | undefined, options: CallOptions = { body: c.body }, id = target) =>
      post(gw, op, id, key, options);

    beforeEach(async () => {
      gw = await startGateway();
      target = await c.target(gw);
    });
    afterEach(async () => {
      await gw.close();
    });

    describe('rule 1: up to 255 characters, scoped to the API key, kept 24 hours', () => {
      it('a 256-character key is 422, executes nothing and consumes nothing; 255 characters is accepted', async () => {
        const long = 'k'.repeat(256);
        const refused = await send(long);
        expectCode(refused, 422, 'ERR_VALIDATION_FAILED');
        expect(Object.keys(refused.body.errors ?? {})).to.have.length.greaterThan(0);
        expect(childrenOf(gw, target, op)).to.have.length(0);
        const limit = long.slice(0, 255);
        const first = await send(limit);
        expectExecuted(first);
        expectReplayOf(await send(limit), first);
        expect(childrenOf(gw, target, op)).to.have.length(1);
      });

      it('an empty key is 422 and executes nothing; the request then executes with a proper key', async () => {
        const refused = await send('');
        expectCode(refused, 422, 'ERR_VALIDATION_FAILED');
        expect(childrenOf(gw, target, op)).to.have.length(0);
        expectExecuted(await send('proper-key'));
        expect(childrenOf(gw, target, op)).to.have.length(1);
      });

      it('the same key string from another API key, on its own transaction, executes', async () => {
        const key = `shared-${op}-key`;
        const mine = await send(key);
        expectExecuted(mine);
        const otherTarget = await c.target(gw, OTHER_MERCHANT_KEY);
        const theirs = await send(key, { key: OTHER_MERCHANT_KEY, body: c.body }, otherTarget);
        expectExecuted(theirs);
        expect(theirs.body.data.transaction.merchant_id).to.equal(1002);
        expect(theirs.body.data.transaction.id).to.not.equal(mine.body.data.transaction.id);
        expect(childrenOf(gw, otherTarget, op)).to.have.length(1);
        expect(childrenOf(gw, target, op)).to.have.length(1);
        // And each key still replays its own original.
        expectReplayOf(await send(key, { key: OTHER_MERCHANT_KEY, body: c.body }, otherTarget), theirs);
        expectReplayOf(await send(key), mine);
      });

      it('replays for just under 24 hours of sandbox clock, and executes afresh after 24 hours', async () => {
        const key = `expiring-${op}`;
        const first = await send(key);
        expectExecuted(first);
        gw.clock.advance(DAY_MS - 1000);
        expectReplayOf(await send(key), first);
        gw.clock.advance(2000);
        const fresh = await send(key);
        expectExecuted(fresh, c.secondRunStatus);
        expect(fresh.body).to.not.deep.equal(first.body);
        if (c.secondRunStatus === 200) expect(childrenOf(gw, target, op)).to.have.length(2);
        else {
          expect(fresh.body.code).to.equal('ERR_INVALID_TRANSACTION');
          expect(childrenOf(gw, target, op)).to.have.length(1);
        }
        // The fresh execution took the key again: it now replays.
        expectReplayOf(await send(key), fresh);
      });
    });

    describe('rule 2: same key and identical body replays the stored original', () => {
      it('answers the original response with Idempotency-Replayed: true; the operation runs once however many replays', async () => {
        const key = `replay-${op}`;
        const first = await send(key);
        expectExecuted(first);
        expect(first.body.success).to.equal(true);
        expect(first.body.data.transaction.transaction_type).to.equal(op);
        expect(first.body.data.transaction.related_trans_id).to.equal(target);
        const storeSize = gw.gateway.deps.state.transactions.size;
        for (let i = 0; i < 5; i++) expectReplayOf(await send(key), first);
        expect(childrenOf(gw, target, op), `one ${op} record`).to.have.length(1);
        expect(gw.gateway.deps.state.transactions.size).to.equal(storeSize);
      });

      it('bodies equal up to JSON key order and whitespace count as identical', async () => {
        const key = `order-${op}`;
        const first = await send(key);
        expectExecuted(first);
        expectReplayOf(await send(key, { rawBody: c.sameBodyRaw }), first);
        expect(childrenOf(gw, target, op)).to.have.length(1);
      });

      it('the replay shows the state at first execution, not the state now', async () => {
        const key = `then-${op}`;
        const first = await send(key);
        expectExecuted(first);
        gw.clock.advance(HOUR_MS);
        const replay = await send(key);
        expectReplayOf(replay, first);
        expect(replay.body.data.transaction.updated_at).to.equal(first.body.data.transaction.updated_at);
      });
    });

    describe('rule 3: same key, different body', () => {
      it('is 409 ERR_IDEMPOTENCY_CONFLICT and executes nothing; the original still replays', async () => {
        const key = `conflict-${op}`;
        const first = await send(key);
        expectExecuted(first);
        const conflict = await send(key, { body: c.otherBody });
        expectCode(conflict, 409, 'ERR_IDEMPOTENCY_CONFLICT');
        expect(replayed(conflict)).to.equal(false);
        expect(childrenOf(gw, target, op)).to.have.length(1);
        expectReplayOf(await send(key), first);
      });

      it('also after the original was a decline', async () => {
        const key = `conflict-after-decline-${op}`;
        const closed = await initiate(gw, op === 'refund' ? 'auth' : 'sale');
        const declined = await send(key, { body: c.body }, closed);
        expectCode(declined, 400, 'ERR_INVALID_TRANSACTION');
        expectCode(await send(key, { body: c.otherBody }, closed), 409, 'ERR_IDEMPOTENCY_CONFLICT');
      });
    });

    describe('rule 5: validation and authorization failures do not consume the key', () => {
      it('a body failing validation (too many decimals) is 422; the same key then executes normally', async () => {
        const key = `invalid-${op}`;
        const invalid = await send(key, { body: c.tooPrecise });
        expectCode(invalid, 422, 'ERR_VALIDATION_FAILED');
        expect(invalid.body.errors.amount).to.be.an('array').that.is.not.empty;
        expect(childrenOf(gw, target, op)).to.have.length(0);
        const ok = await send(key);
        expectExecuted(ok);
        expect(ok.body.success).to.equal(true);
        expect(childrenOf(gw, target, op)).to.have.length(1);
      });

      it('a malformed body and a missing amount are 422 and consume nothing', async () => {
        const key = `malformed-${op}`;
        expectCode(await send(key, { rawBody: '{"amount":' }), 422, 'ERR_VALIDATION_FAILED');
        expectCode(await send(key, { body: { reason: 'no amount' } }), 422, 'ERR_VALIDATION_FAILED');
        expectExecuted(await send(key));
      });

      it('a missing transaction (404) consumes nothing', async () => {
        const key = `missing-${op}`;
        expectCode(await send(key, { body: c.body }, 999_999), 404, 'ERR_NOT_FOUND');
        expectExecuted(await send(key));
      });

      it('another merchant (404): that key then executes for that merchant on its own transaction', async () => {
        const key = `foreign-${op}`;
        const foreign = await send(key, { key: OTHER_MERCHANT_KEY, body: c.body });
        expectCode(foreign, 404, 'ERR_NOT_FOUND');
        expect(childrenOf(gw, target, op)).to.have.length(0);
        const own = await c.target(gw, OTHER_MERCHANT_KEY);
        const ok = await send(key, { key: OTHER_MERCHANT_KEY, body: c.body }, own);
        expectExecuted(ok);
        expect(childrenOf(gw, own, op)).to.have.length(1);
      });

      it('a partner key (403) consumes nothing: it stays 403 (never 409 or a replay) and the merchant key executes', async () => {
        const key = `partner-${op}`;
        expectCode(await send(key, { key: PARTNER_KEY, body: c.body }), 403, 'ERR_AUTH_FAILED');
        const again = await send(key, { key: PARTNER_KEY, body: c.otherBody });
        expectCode(again, 403, 'ERR_AUTH_FAILED');
        expect(replayed(again)).to.equal(false);
        expect(childrenOf(gw, target, op)).to.have.length(0);
        expectExecuted(await send(key));
      });
    });

    describe('rule 6: without the header every POST executes', () => {
      it('two identical requests both execute (the second is never a replay)', async () => {
        const first = await send(undefined);
        expectExecuted(first);
        const second = await send(undefined);
        expectExecuted(second, c.secondRunStatus);
        if (op === 'refund') {
          expect(second.body.data.transaction.id).to.not.equal(first.body.data.transaction.id);
          expect(childrenOf(gw, target, op)).to.have.length(2);
          expect(second.body.data.transaction.refunded_amount).to.equal(200);
        } else {
          // Executed against the new state: the auth is no longer open.
          expect(second.body.code).to.equal('ERR_INVALID_TRANSACTION');
          expect(childrenOf(gw, target, op)).to.have.length(1);
        }
      });
    });
  });

  describe(`gateway: idempotency on ${op}, rule 4 (repeat while the original runs)`, () => {
    let gw: TestGateway;
    let entered: Promise<number>;
    let markEntered: (ms: number) => void;
    let release: () => void;
    const asked: number[] = [];

    beforeEach(async () => {
      asked.length = 0;
      entered = new Promise((resolve) => {
        markEntered = resolve;
      });
      gw = await startGateway({
        sleep: (ms) => {
          asked.push(ms);
          markEntered(ms);
          return new Promise<void>((resolve) => {
            release = resolve;
          });
        },
      });
    });
    afterEach(async () => {
      release?.();
      await gw.close();
    });

    it('is 409 ERR_IDEMPOTENT_REQUEST_IN_PROGRESS; the original then succeeds and a third request replays it', async () => {
      const target = await c.target(gw);
      gw.gateway.controls.setLatency(op, 1000);
      const key = `in-flight-${op}`;
      const firstPromise = post(gw, op, target, key, { body: c.body });
      expect(await entered).to.equal(1000);
      expect(childrenOf(gw, target, op), 'not executed yet').to.have.length(0);

      const second = await post(gw, op, target, key, { body: c.body });
      expectCode(second, 409, 'ERR_IDEMPOTENT_REQUEST_IN_PROGRESS');
      expect(replayed(second)).to.equal(false);
      const reordered = await post(gw, op, target, key, { rawBody: c.sameBodyRaw });
      expectCode(reordered, 409, 'ERR_IDEMPOTENT_REQUEST_IN_PROGRESS');

      release();
      const first = await firstPromise;
      expectExecuted(first);
      expect(first.body.success).to.equal(true);
      expect(childrenOf(gw, target, op)).to.have.length(1);

      gw.gateway.controls.setLatency(op, 0);
      expectReplayOf(await post(gw, op, target, key, { body: c.body }), first);
      expect(childrenOf(gw, target, op), `only one ${op}`).to.have.length(1);
      expect(asked).to.deep.equal([1000]);
    });
  });
}

describe('gateway: idempotency, rule 2 in detail (state at first execution, declines replay)', () => {
  let gw: TestGateway;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.close();
  });

  it('refund: a replay after a later refund still shows the first running total', async () => {
    const sale = await initiate(gw, 'sale');
    const first = await post(gw, 'refund', sale, 'refund-a', { body: { amount: 1, reason: 'first' } });
    expectExecuted(first);
    expect(first.body.data.transaction.refunded_amount).to.equal(100);
    const later = await post(gw, 'refund', sale, undefined, { body: { amount: 2, reason: 'second' } });
    expectExecuted(later);
    expect(later.body.data.transaction.refunded_amount).to.equal(300);

    const replay = await post(gw, 'refund', sale, 'refund-a', { body: { amount: 1, reason: 'first' } });
    expectReplayOf(replay, first);
    expect(replay.body.data.transaction.refunded_amount).to.equal(100);
    expect(replay.body.data.transaction.id).to.equal(first.body.data.transaction.id);
    const status = await gw.call('GET', `/api/v1/transactions/${sale}/status`);
    expect(status.body.data.refunded_amount).to.equal(300);
    expect(childrenOf(gw, sale, 'refund')).to.have.length(2);
  });

  it('capture: a replay after the capture was refunded still shows the capture as it was', async () => {
    const auth = await initiate(gw, 'auth');
    const first = await post(gw, 'capture', auth, 'capture-a', { body: { amount: 10 } });
    expectExecuted(first);
    const captureId = first.body.data.transaction.id as number;
    expectExecuted(await post(gw, 'refund', captureId, undefined, { body: { amount: 10, reason: 'all' } }));
    expect(gw.gateway.deps.state.transactions.get(captureId)?.status).to.equal('refunded');

    const replay = await post(gw, 'capture', auth, 'capture-a', { body: { amount: 10 } });
    expectReplayOf(replay, first);
    expect(replay.body.data.transaction.status).to.equal('captured');
    expect(replay.body.data.transaction.refunded_amount).to.equal(0);
    expect(childrenOf(gw, auth, 'capture')).to.have.length(1);
  });

  it('refund: a 400 decline replays as the same 400 although the request would now succeed', async () => {
    const auth = await initiate(gw, 'auth');
    const body = { amount: 1, reason: 'early' };
    const declined = await post(gw, 'refund', auth, 'refund-early', { body });
    expectCode(declined, 400, 'ERR_INVALID_TRANSACTION');
    expectExecuted(declined, 400);
    expectExecuted(await post(gw, 'capture', auth, undefined, { body: { amount: 12.34 } }));
    // A fresh request now succeeds...
    expectExecuted(await post(gw, 'refund', auth, 'refund-fresh', { body }));
    // ...but the original key replays its decline.
    expectReplayOf(await post(gw, 'refund', auth, 'refund-early', { body }), declined);
    expect(childrenOf(gw, auth, 'refund')).to.have.length(1);
  });

  it('capture: a 400 decline replays as the same 400 although a fresh request now fails differently', async () => {
    const auth = await initiate(gw, 'auth');
    const body = { amount: 20 };
    const declined = await post(gw, 'capture', auth, 'capture-too-much', { body });
    expectCode(declined, 400, 'ERR_ADAPTER_INVALID_AMOUNT');
    expectExecuted(await post(gw, 'void', auth, undefined, { body: { amount: 12.34, reason: 'x' } }));
    expectCode(await post(gw, 'capture', auth, 'capture-fresh', { body }), 400, 'ERR_INVALID_TRANSACTION');
    const replay = await post(gw, 'capture', auth, 'capture-too-much', { body });
    expectReplayOf(replay, declined);
    expect(replay.body.code).to.equal('ERR_ADAPTER_INVALID_AMOUNT');
  });

  it('void: a 400 decline replays as the same 400 although a fresh request now fails differently', async () => {
    const auth = await initiate(gw, 'auth');
    const body = { amount: 10, reason: 'partial void' };
    const declined = await post(gw, 'void', auth, 'void-partial', { body });
    expectCode(declined, 400, 'ERR_ADAPTER_INVALID_AMOUNT');
    expectExecuted(await post(gw, 'capture', auth, undefined, { body: { amount: 12.34 } }));
    expectCode(await post(gw, 'void', auth, 'void-fresh', { body }), 400, 'ERR_INVALID_TRANSACTION');
    const replay = await post(gw, 'void', auth, 'void-partial', { body });
    expectReplayOf(replay, declined);
    expect(replay.body.code).to.equal('ERR_ADAPTER_INVALID_AMOUNT');
    expect(childrenOf(gw, auth, 'void')).to.have.length(0);
  });

  it('void: a success replays as success after the auth can no longer be voided', async () => {
    const auth = await initiate(gw, 'auth');
    const body = { amount: 12.34, reason: 'cancel' };
    const first = await post(gw, 'void', auth, 'void-ok', { body });
    expectExecuted(first);
    expectCode(await post(gw, 'void', auth, undefined, { body }), 400, 'ERR_INVALID_TRANSACTION');
    expectReplayOf(await post(gw, 'void', auth, 'void-ok', { body }), first);
    expect(childrenOf(gw, auth, 'void')).to.have.length(1);
  });
});
