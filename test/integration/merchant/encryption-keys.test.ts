import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import mysql from 'mysql2/promise';
import type { Sequelize } from 'sequelize';
import { createPool, createSequelize, createTransitionPool, migrate } from '../../../src/infra/database.js';
import { EncryptionKeyError, settleEncryptionKeys } from '../../../src/kit/encryption-keys.js';
import { createStore, type Store } from '../../../src/merchant/store/index.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { seededRandom } from '../../../src/shared/ids.js';
import { SecretBox } from '../../../src/shared/secret-box.js';
import { ADMIN_URL, dropDatabases, exitWithin, freePort, lines, start } from '../../support/process.js';

const KEY_A = Buffer.alloc(32, 0xa1);
const KEY_B = Buffer.alloc(32, 0xb2);
const KEY_C = Buffer.alloc(32, 0xc3);
const VISA = { vaultToken: 'tok_visa_a', brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 };
const MASTERCARD = { vaultToken: 'tok_mc_a', brand: 'mastercard', last4: '4444', expMonth: 1, expYear: 2031 };

/**
 * APP_ENCRYPTION_KEY over a database that holds what it sealed (merchant.md, Configuration: "encrypts
 * stored secrets"): another key stops start-up with one line, instead of a kit that answers every
 * webhook 503 and every saved card 500; APP_ENCRYPTION_KEY_PREVIOUS replaces a key without losing
 * anything; `keys discard-lost` forgets what a lost key sealed.
 */
describe('merchant: the encryption key over what the database holds sealed', function () {
  this.timeout(60_000);
  const database = `merchant_keys_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = `${ADMIN_URL}/${database}`;
  let sequelize: Sequelize;
  const closers: (() => Promise<unknown>)[] = [];
  // Set from the real clock before each test, not a fixed date nor the time the file was loaded (a
  // full run reaches these tests minutes later): the processes below read the retired secret's
  // five-minute grace on the real clock.
  let clock: ManualClock;

  /** The store with a box of these keys, as a process started with them has it. */
  const storeUnder = (key: Buffer, previous: Buffer[] = []): Store => {
    const pool = createPool(url);
    const transitionPool = createTransitionPool(url);
    closers.push(
      () => pool.end(),
      () => transitionPool.end(),
    );
    const random = seededRandom(11);
    const box = new SecretBox(key, random, previous);
    return createStore({ sequelize, pool, transitionPool, clock, random, box });
  };
  const refusal = async (promise: Promise<unknown>): Promise<EncryptionKeyError> => {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error, 'start-up refused').to.be.instanceOf(EncryptionKeyError);
    return error as EncryptionKeyError;
  };

  let cardIds: string[];
  before(async () => {
    sequelize = createSequelize(url);
    await migrate(url, sequelize);
  });
  beforeEach(async () => {
    clock = new ManualClock(Date.now());
    await sequelize.query('DELETE FROM webhook_secrets');
    await sequelize.query('DELETE FROM saved_cards');
    await sequelize.query('DELETE FROM audit_log');
    await sequelize.query('DELETE FROM order_requests');
    await sequelize.query('DELETE FROM merchant_keys');
    // What a kit running under key A left: a secret rotated away (still in its grace), the active one,
    // two saved cards.
    const a = storeUnder(KEY_A);
    await a.secrets.put('whsec_first', 'embedded-sandbox');
    clock.advance(1000);
    await a.secrets.put('whsec_second', 'embedded-sandbox');
    cardIds = [(await a.savedCards.remember('cus-1', VISA))!.id];
    clock.advance(1000);
    cardIds.push((await a.savedCards.remember('cus-1', MASTERCARD))!.id);
  });
  after(async () => {
    for (const close of closers) await close();
    await sequelize?.close();
    await dropDatabases([database]);
  });

  it('another key: start-up refused with one line naming APP_ENCRYPTION_KEY and what to do', async () => {
    const error = await refusal(settleEncryptionKeys(storeUnder(KEY_B), { rotating: false }));
    const line = error.line();
    expect(line.split('\n')).to.have.length(1);
    expect(line).to.match(/^APP_ENCRYPTION_KEY: does not open 2 of the webhook signing secrets stored/);
    expect(line).to.contain('APP_ENCRYPTION_KEY_PREVIOUS');
    expect(line).to.contain('keys discard-lost');
    expect(line, 'never a key or a secret').to.not.match(/whsec_|tok_|[A-Za-z0-9+/]{43}=/);
    await settleEncryptionKeys(storeUnder(KEY_A), { rotating: false });
  });

  it('the saved cards are checked too: with no secret stored, their newest active one', async () => {
    await sequelize.query('DELETE FROM webhook_secrets');
    const error = await refusal(settleEncryptionKeys(storeUnder(KEY_B), { rotating: false }));
    expect(error.line()).to.match(/^APP_ENCRYPTION_KEY: does not open the saved cards stored/);
    await sequelize.query('DELETE FROM saved_cards');
    await settleEncryptionKeys(storeUnder(KEY_B), { rotating: false });
  });

  it('a new key with the old one in APP_ENCRYPTION_KEY_PREVIOUS: everything sealed again under the new one', async () => {
    const told: unknown[] = [];
    const logger = { info: (fields: unknown) => void told.push(fields) };
    await settleEncryptionKeys(storeUnder(KEY_B, [KEY_C, KEY_A]), { rotating: true, logger });
    expect(told).to.deep.equal([{ webhook_secrets: 2, saved_cards: 2, order_secrets: 0, merchant_keys: 0 }]);

    // The new key alone now opens all of it; the old one nothing.
    const b = storeUnder(KEY_B);
    await settleEncryptionKeys(b, { rotating: false });
    expect(await b.secrets.active()).to.deep.equal(['whsec_second', 'whsec_first']);
    expect(await b.savedCards.vaultToken(cardIds[0]!)).to.equal('tok_visa_a');
    expect(await b.savedCards.vaultToken(cardIds[1]!)).to.equal('tok_mc_a');
    await refusal(settleEncryptionKeys(storeUnder(KEY_A), { rotating: false }));

    // A second start with the same settings finds nothing left to move.
    await settleEncryptionKeys(storeUnder(KEY_B, [KEY_A]), { rotating: true, logger });
    expect(told).to.have.length(1);
  });

  it("an order's client secret kept for an Idempotency-Key replay: checked at start-up, sealed again, forgotten when lost", async () => {
    const key = { scope: 'bootstrap', keyDigest: 'd'.repeat(43), requestDigest: 'r'.repeat(43) };
    const made = await storeUnder(KEY_A).orderRequests.create(key, { amountMinor: 500, currency: 'EUR' });
    expect(made.kind).to.equal('created');
    const secret = made.kind === 'created' ? made.clientSecret : '';
    // Only the order's secret left under key A: start-up under B is refused, naming it.
    await sequelize.query('DELETE FROM webhook_secrets');
    await sequelize.query('DELETE FROM saved_cards');
    const error = await refusal(settleEncryptionKeys(storeUnder(KEY_B), { rotating: false }));
    expect(error.line()).to.match(/^APP_ENCRYPTION_KEY: does not open the orders' client secrets kept/);
    expect(error.line()).to.not.contain(secret);

    const told: unknown[] = [];
    await settleEncryptionKeys(storeUnder(KEY_B, [KEY_A]), {
      rotating: true,
      logger: { info: (fields: unknown) => void told.push(fields) },
    });
    expect(told).to.deep.equal([{ webhook_secrets: 0, saved_cards: 0, order_secrets: 1, merchant_keys: 0 }]);
    const replay = await storeUnder(KEY_B).orderRequests.earlier(key);
    expect(replay).to.deep.include({ kind: 'replayed', clientSecret: secret });

    // Under a key that opens nothing: counted, then forgotten.
    const lost = storeUnder(KEY_C);
    expect(await lost.orderRequests.unopened()).to.deep.equal([key.keyDigest]);
    expect(await lost.orderRequests.discardUnopened()).to.equal(1);
    expect(await lost.orderRequests.earlier(key)).to.equal(null);
  });

  it("a merchant's stored gateway key: checked at start-up, sealed again, bound to its merchant, forgotten when lost", async () => {
    const KEY = 'sk_test_merchant_1004';
    await sequelize.query('DELETE FROM webhook_secrets');
    await sequelize.query('DELETE FROM saved_cards');
    await storeUnder(KEY_A).merchantKeys.put(1004, KEY);
    const [[row]] = (await sequelize.query('SELECT key_sealed FROM merchant_keys')) as [
      { key_sealed: string }[],
      unknown,
    ];
    expect(row!.key_sealed, 'never in clear').to.not.contain(KEY);

    // Under another key: start-up refused, naming the merchant, never the key.
    const error = await refusal(settleEncryptionKeys(storeUnder(KEY_B), { rotating: false }));
    expect(error.line().split('\n')).to.have.length(1);
    expect(error.line()).to.match(
      /^APP_ENCRYPTION_KEY: does not open the gateway key of merchant 1004 stored in this database .*merchant-key remove --merchant <id>/,
    );
    expect(error.line()).to.not.contain(KEY);

    // Rotated: sealed again under the new key, which alone opens it now.
    const told: unknown[] = [];
    await settleEncryptionKeys(storeUnder(KEY_B, [KEY_A]), {
      rotating: true,
      logger: { info: (fields: unknown) => void told.push(fields) },
    });
    expect(told).to.deep.equal([{ webhook_secrets: 0, saved_cards: 0, order_secrets: 0, merchant_keys: 1 }]);
    const b = storeUnder(KEY_B);
    await settleEncryptionKeys(b, { rotating: false });
    expect([...(await b.merchantKeys.all())]).to.deep.equal([[1004, KEY]]);
    await refusal(settleEncryptionKeys(storeUnder(KEY_A), { rotating: false }));

    // The sealed key copied into another merchant's row does not open there: the kit would never
    // send 1004's key for 1001's orders.
    await sequelize.query(
      'INSERT INTO merchant_keys (merchant_id, key_sealed, created_at, updated_at) SELECT 1001, key_sealed, created_at, updated_at FROM merchant_keys WHERE merchant_id = 1004',
    );
    expect(await b.merchantKeys.unopened()).to.deep.equal([1001]);
    const moved = await b.merchantKeys.all().then(
      () => null,
      (e: Error) => e,
    );
    expect(moved?.message).to.match(/^the key of merchant 1001 does not open under APP_ENCRYPTION_KEY/);
    expect(moved?.message).to.not.contain(KEY);
    expect(await b.merchantKeys.discardUnopened()).to.deep.equal([1001]);
    expect((await b.merchantKeys.list()).map((k) => k.merchantId)).to.deep.equal([1004]);
  });

  it('counting what no key opens changes nothing, even what a previous key would seal again', async () => {
    const rotating = storeUnder(KEY_B, [KEY_A]);
    expect(await rotating.savedCards.unopened()).to.deep.equal([]);
    expect(await storeUnder(KEY_C).savedCards.unopened()).to.have.length(2);
    const a = storeUnder(KEY_A);
    expect(await a.savedCards.vaultToken(cardIds[0]!), 'still under key A').to.equal('tok_visa_a');
    expect(await a.savedCards.vaultToken(cardIds[1]!)).to.equal('tok_mc_a');
  });

  it('previous keys that do not include the one that sealed: refused, naming both settings', async () => {
    const error = await refusal(settleEncryptionKeys(storeUnder(KEY_B, [KEY_C]), { rotating: true }));
    expect(error.line()).to.match(
      /^APP_ENCRYPTION_KEY: neither it nor APP_ENCRYPTION_KEY_PREVIOUS opens 2 of the webhook signing secrets/,
    );
  });

  it("a secret another key sealed after start-up: the receiver's read names it and the setting", async () => {
    const a = storeUnder(KEY_A);
    await storeUnder(KEY_B).secrets.put('whsec_elsewhere', 'embedded-sandbox', false);
    const error = await a.secrets.active().then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).to.match(/^webhook secret \d+ does not open under APP_ENCRYPTION_KEY/);
    expect(error?.message).to.not.contain('whsec_');
  });

  describe('as processes', () => {
    const env = (key: Buffer) => ({
      DATABASE_URL: url,
      APP_ENCRYPTION_KEY: key.toString('base64'),
    });

    it('npm start under another key exits 1 with that one line, before it listens', async () => {
      const port = await freePort();
      const p = start('src/main.ts', [], {
        ...env(KEY_B),
        PORT: String(port),
        GATEWAY_PORT: String(await freePort([port])),
      });
      const { code } = await exitWithin(p, 30_000);
      expect(code, p.stderr()).to.equal(1);
      const errLines = lines(p.stderr());
      expect(errLines, p.stderr()).to.have.length(1);
      expect(errLines[0]).to.match(/^APP_ENCRYPTION_KEY: does not open 2 of the webhook signing secrets/);
      expect(await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null), 'never listened').to.equal(
        null,
      );
    });

    it('the key lost: `keys discard-lost` counts, then with --yes deletes the secrets and revokes the cards, audited', async () => {
      const count = start('src/cli.ts', ['keys', 'discard-lost'], env(KEY_C));
      expect((await exitWithin(count, 30_000)).code, count.stderr()).to.equal(0);
      expect(count.stdout()).to.contain('2 webhook secret(s) in use and 2 active saved card(s) do not open');
      const [[untouched]] = (await sequelize.query('SELECT COUNT(*) AS n FROM webhook_secrets')) as [
        { n: number }[],
        unknown,
      ];
      expect(Number(untouched!.n), 'without --yes nothing changes').to.equal(2);

      const discard = start('src/cli.ts', ['keys', 'discard-lost', '--yes', '--by', 'ada'], env(KEY_C));
      expect((await exitWithin(discard, 30_000)).code, discard.stderr()).to.equal(0);
      expect(discard.stdout()).to.contain('discarded 2 webhook secret(s), revoked 2 saved card(s)');
      expect(discard.stdout()).to.contain('webhook rotate');

      const admin = await mysql.createConnection(url);
      try {
        const [secrets] = await admin.query<mysql.RowDataPacket[]>('SELECT id FROM webhook_secrets');
        expect(secrets).to.have.length(0);
        const [cards] = await admin.query<mysql.RowDataPacket[]>(
          'SELECT status, revoked_by FROM saved_cards ORDER BY created_at',
        );
        expect(cards.map((c) => [c.status, c.revoked_by])).to.deep.equal([
          ['revoked', 'ada'],
          ['revoked', 'ada'],
        ]);
        const [audit] = await admin.query<mysql.RowDataPacket[]>('SELECT action FROM audit_log');
        expect(audit.map((a) => a.action)).to.deep.equal(['card.revoke', 'card.revoke']);
      } finally {
        await admin.end();
      }
      // Key C starts now: nothing it cannot open is left in use.
      await settleEncryptionKeys(storeUnder(KEY_C), { rotating: false });
    });
  });
});
