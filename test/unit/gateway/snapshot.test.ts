import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { revoked } from '../../../src/gateway/domain/instruments.js';
import type { Transaction } from '../../../src/gateway/domain/transactions.js';
import { deriveSandboxKeys, keyId } from '../../../src/gateway/persistence/keys.js';
import { restore, SnapshotError, snapshot } from '../../../src/gateway/persistence/snapshot.js';
import { GatewayState } from '../../../src/gateway/state/gateway-state.js';
import { parseSeed } from '../../../src/gateway/state/seed.js';
import { seededRandom } from '../../../src/shared/ids.js';
import { testSeed } from '../../support/gateway.js';

// biome-ignore lint/suspicious/noExplicitAny: snapshots are edited as plain JSON
type Json = any;

const seed = parseSeed(testSeed());
const key = randomBytes(32);
const KEY_ID = keyId(key);
const fresh = () => new GatewayState(seed, seededRandom(1), deriveSandboxKeys(key));

function sale(id: number, overrides: Partial<Transaction> = {}): Transaction {
  return {
    id,
    relatedId: null,
    merchantId: 1001,
    cardholderId: 1,
    type: 'sale',
    status: 'captured',
    amount: 1234,
    currency: 'EUR',
    capturedAmount: 1234,
    refundedAmount: 0,
    chargebackAmount: 0,
    reference: `order-${id}`,
    description: null,
    statusReason: null,
    acquirerTransId: 'a1',
    acquirerAuthCode: 'C0DE',
    acquirerRefNum: 'r1',
    ipAddress: '127.0.0.1',
    captureBefore: null,
    vaultToken: null,
    createdAt: 1,
    updatedAt: 2,
    ...overrides,
  };
}

/** A state with a little of everything, as plain JSON (what the file holds). */
function populated(): Json {
  const state = fresh();
  const id = state.nextTransactionId();
  const fingerprint = state.fingerprint('4242424242424242');
  const card = { number: '4242424242424242', expMonth: 12, expYear: 2034, name: null };
  const kept = state.instruments.keep({
    merchantId: 1001,
    merchantCustomerId: 'c1',
    card,
    fingerprint,
    now: 3,
  });
  const gone = state.instruments.keep({
    merchantId: 1001,
    merchantCustomerId: 'c2',
    card,
    fingerprint,
    now: 3,
  });
  state.instruments.save(revoked(gone, 4));
  state.saveTransaction(
    sale(id, { cardholderId: state.cardholderId(1001, fingerprint), vaultToken: kept.vaultToken }),
  );
  state.webhooks.create(1001, 'https://hooks.example/x', true, null, 5);
  state.webhooks.record('transaction.captured', state.transactions.get(id)!, 'sandbox-acquirer', 6);
  state.doNotRetry.set(`1001:${state.fingerprint('4100000000000019')}`, 99);
  state.outages.set(1001, 50);
  state.idempotency.begin('sk_test', 'done', 'POST /x {}', 7);
  state.idempotency.complete('sk_test', 'done', { status: 200, body: { ok: true } });
  state.idempotency.begin('sk', 'running', 'POST /y {}', 8);
  return JSON.parse(JSON.stringify(snapshot(state, { now: 10, keyId: KEY_ID })));
}

describe('sandbox state snapshot (pure)', () => {
  it('restores what it wrote: a second snapshot is the same JSON', () => {
    const json = populated();
    const state = fresh();
    expect(restore(json, state, { keyId: KEY_ID })).to.deep.equal({ now: 10 });
    expect(JSON.parse(JSON.stringify(snapshot(state, { now: 10, keyId: KEY_ID })))).to.deep.equal(json);
    // The fingerprint and the sealed secret work under the same key in another process.
    expect(state.doNotRetry.has(`1001:${state.fingerprint('4100000000000019')}`)).to.equal(true);
    expect(state.webhooks.secretOf(state.webhooks.endpoints.get(1001)!)).to.match(/^whsec_/);
  });

  it('keeps payment instruments, and finds the active one by its card again after a restore', () => {
    const json = populated();
    expect(json.instruments.map((i: Json) => [i.merchantCustomerId, i.status])).to.deep.equal([
      ['c1', 'active'],
      ['c2', 'revoked'],
    ]);
    expect(JSON.stringify(json.instruments)).to.not.include('4242424242424242');
    const state = fresh();
    restore(json, state, { keyId: KEY_ID });
    const fingerprint = state.fingerprint('4242424242424242');
    expect(state.instruments.forCard(1001, 'c1', fingerprint)?.vaultToken).to.equal(
      json.instruments[0].vaultToken,
    );
    expect(state.instruments.forCard(1001, 'c2', fingerprint)).to.equal(undefined);
    expect(state.transactions.get(100000)!.vaultToken).to.equal(json.instruments[0].vaultToken);
  });

  it('reads a file written before payment instruments: none kept, no record carries a vault token', () => {
    const json = populated();
    delete json.instruments;
    for (const t of json.transactions) delete t.vaultToken;
    const state = fresh();
    restore(json, state, { keyId: KEY_ID });
    expect(state.instruments.records.size).to.equal(0);
    expect(state.transactions.get(100000)!.vaultToken).to.equal(null);
  });

  it('keeps completed idempotency records only: a key still running is free after a restart', () => {
    const json = populated();
    expect(json.idempotency.map((r: Json) => r.key)).to.deep.equal(['done']);
  });

  it('raises the counters past every id present, whatever the file says', () => {
    const json = populated();
    json.counters = { transaction: 1, verification: 1, cardholder: 1, endpoint: 1 };
    const state = fresh();
    restore(json, state, { keyId: KEY_ID });
    expect(state.nextTransactionId()).to.equal(100001);
    expect(state.counters().cardholder).to.equal(2);
    expect(state.counters().endpoint).to.equal(2);
  });

  it('reads a file written before chargeback_amount: a charged-back payment took all that was left', () => {
    const json = populated();
    json.transactions[0].status = 'chargeback';
    json.transactions[0].refundedAmount = 234;
    delete json.transactions[0].chargebackAmount;
    const state = fresh();
    restore(json, state, { keyId: KEY_ID });
    expect(state.transactions.get(100000)).to.include({ status: 'chargeback', chargebackAmount: 1000 });
    const captured = populated();
    delete captured.transactions[0].chargebackAmount;
    const other = fresh();
    restore(captured, other, { keyId: KEY_ID });
    expect(other.transactions.get(100000)!.chargebackAmount).to.equal(0);
  });

  it("reads a file written before capture_before: its approved auths get the seed's lifetime, and can lapse", () => {
    const json = populated();
    const sale = json.transactions[0];
    const auth = (id: number, status: string) => ({
      ...sale,
      id,
      type: 'auth',
      status,
      reference: `a-${id}`,
    });
    json.transactions.push(auth(100001, 'auth'), auth(100002, 'captured'), auth(100003, 'failed'));
    json.counters.transaction = 100004;
    for (const t of json.transactions) delete t.captureBefore;
    const state = fresh();
    restore(json, state, { keyId: KEY_ID });
    const week = 7 * 24 * 3600 * 1000;
    expect(
      [100000, 100001, 100002, 100003].map((id) => state.transactions.get(id)!.captureBefore),
    ).to.deep.equal([null, sale.createdAt + week, sale.createdAt + week, null]);
    expect([...state.openAuths]).to.deep.equal([100001]);
  });

  it('keeps an open auth open after a restore, and a recorded deadline as it was written', () => {
    const json = populated();
    json.transactions.push({
      ...json.transactions[0],
      id: 100001,
      type: 'auth',
      status: 'auth',
      captureBefore: 42,
    });
    const state = fresh();
    restore(json, state, { keyId: KEY_ID });
    expect(state.transactions.get(100001)!.captureBefore).to.equal(42);
    expect([...state.openAuths]).to.deep.equal([100001]);
  });

  it('refuses a dangling reference before filling anything', () => {
    const json = populated();
    json.sessionByTransaction = [[100000, 'ps_missing']];
    const state = fresh();
    expect(() => restore(json, state, { keyId: KEY_ID })).to.throw(SnapshotError, /sessionByTransaction/);
    expect(state.transactions.size).to.equal(0);
  });

  it('refuses a duplicate, a bad field, an unknown field and another key', () => {
    const cases: [(json: Json) => void, RegExp, string?][] = [
      [(j) => j.transactions.push(j.transactions[0]), /transactions: 100000 appears twice/],
      [(j) => (j.transactions[0].status = 'lost'), /transactions\.0\.status/],
      [(j) => (j.transactions[0].cardNumber = '4242424242424242'), /transactions\.0/],
      [(j) => (j.transactions[0].currency = 'XXX'), /transactions\.0\.currency/],
      [(j) => j.instruments.push(j.instruments[0]), /instruments: vt_\w+ appears twice/],
      [(j) => (j.instruments[0].number = '4242424242424242'), /instruments\.0/],
      [
        (j) => (j.transactions[0].vaultToken = 'vt_missing'),
        /transactions: 100000 names a missing payment instrument/,
      ],
      [(j) => delete j.clock, /clock/],
      [() => {}, /another key/, keyId(randomBytes(32))],
    ];
    for (const [edit, pattern, otherKey] of cases) {
      const json = populated();
      edit(json);
      expect(() => restore(json, fresh(), { keyId: otherKey ?? KEY_ID }), String(pattern)).to.throw(
        SnapshotError,
        pattern,
      );
    }
  });
});
