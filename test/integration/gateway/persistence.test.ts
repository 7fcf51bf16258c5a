import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import { createGateway, type GatewayPersistence } from '../../../src/gateway/app.js';
import { deriveSandboxKeys } from '../../../src/gateway/persistence/keys.js';
import { SandboxStateError } from '../../../src/gateway/persistence/state-file.js';
import { parseSeed, type SeedInput } from '../../../src/gateway/state/seed.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { seededRandom } from '../../../src/shared/ids.js';
import {
  card,
  DECLINING_CARDS,
  expectStatus,
  liftRateLimits,
  nowSeconds,
  startGateway,
  type TestGateway,
  testSeed,
  transactionBody,
  uniqueReference,
} from '../../support/gateway.js';
import { allowPrivateUrls, type Receiver, startReceiver, verifies } from '../../support/receiver.js';

/**
 * Issue 8: the sandbox keeps its state across restarts in a JSON file, so no transaction id is handed
 * out twice while the merchant's database still holds the old ones.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read records field by field
type Json = any;

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const CHALLENGE_CARD = '4000000000003220';
const FRAUD_CARD = '4100000000000019';
/** sandbox.md section 4, and another Luhn-valid number. */
const TEST_CARDS = [
  '4242424242424242',
  CHALLENGE_CARD,
  '4000000000003063',
  '4000000000003097',
  '4000000000003089',
  '4000000000003055',
  ...DECLINING_CARDS,
  '5555555555554444',
];

const seedFor = (seed: SeedInput) => {
  allowPrivateUrls(seed);
  liftRateLimits(seed);
};

/** A temporary folder for one suite, removed afterwards. */
function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-state-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Every transaction id that exists, from the state (the API has no list). */
const transactionIds = (gw: TestGateway) => [...gw.gateway.deps.state.transactions.keys()];

describe('gateway: state kept across restarts (persistence)', () => {
  describe('a restart on the same file', () => {
    const tmp = tempDir();
    const persistence: GatewayPersistence = {
      file: join(tmp.dir, 'var', 'nested', 'state.json'),
      key: randomBytes(32),
    };
    let first: TestGateway;
    let second: TestGateway;
    let rx: Receiver;
    let secret: string;
    let auth: Json;
    let captureBody: Json;
    let captureAnswer: Json;
    let challenge: Json;
    let session: Json;
    let endpointBefore: Json;
    let eventsBefore: Json[];
    let pendingEventId: string;
    let maxIdBefore: number;
    let fileAfterFirst: string;
    let endpointAfter: Json;
    const captureKey = `capture-${uniqueReference()}`;

    before(async () => {
      rx = await startReceiver();
      rx.behave({ kind: 'answer', status: 503, body: 'down for maintenance' });
      first = await startGateway({ seed: seedFor, persistence, random: seededRandom(1) });
      const put = await first.call('PUT', '/api/v1/webhook', { body: { url: rx.url } });
      expectStatus(put, 201);
      secret = put.body.data.secret;

      const authAnswer = await first.call('POST', '/api/v1/transactions', {
        body: transactionBody({ transaction_type: 'auth' }),
      });
      expectStatus(authAnswer, 200);
      auth = authAnswer.body.data;
      captureBody = { amount: 12.34 };
      const capture = await first.call('POST', `/api/v1/transactions/${auth.id}/capture`, {
        body: captureBody,
        headers: { 'Idempotency-Key': captureKey },
      });
      expectStatus(capture, 200);
      captureAnswer = capture.body;

      // The receiver is down: the captured event stays pending, its next attempt a minute later.
      const tick = await first.gateway.controls.tick();
      expect(tick.attempted).to.be.greaterThan(0);
      const events = await first.call(
        'GET',
        `/api/v1/webhook/events?transaction_id=${captureAnswer.data.transaction.id}`,
      );
      pendingEventId = events.body.data.events[0].id;
      expect(events.body.data.events[0].status).to.equal('pending');

      const verify = await first.call('POST', '/api/v1/3ds/verify', {
        body: {
          amount: 20,
          currency: 'EUR',
          card: card(CHALLENGE_CARD),
          auth_url: 'https://shop.example/3ds',
        },
      });
      expectStatus(verify, 200);
      challenge = verify.body.data;
      expect(challenge.status).to.equal('pending');

      const created = await first.call('POST', '/api/v1/payment-sessions', {
        body: {
          amount: 30,
          currency: 'EUR',
          reference: uniqueReference('ps'),
          payment_method: 'ideal',
          customer: { country_code: 'NL', email: 'ada@example.com' },
          success_url: 'https://shop.example/ok',
          cancel_url: 'https://shop.example/cancel',
        },
      });
      expectStatus(created, 201);
      session = created.body.data.payment_session;

      const fraud = await first.call('POST', '/api/v1/transactions', {
        body: transactionBody({ card: card(FRAUD_CARD) }),
      });
      expect(fraud.body.code).to.equal('ERR_CARD_FRAUD_SUSPECTED');

      endpointBefore = (await first.call('GET', '/api/v1/webhook')).body.data;
      expect(endpointBefore.consecutive_failures).to.be.greaterThan(0);
      eventsBefore = (await first.call('GET', '/api/v1/webhook/events')).body.data.events;
      maxIdBefore = Math.max(...transactionIds(first));
      await first.close();
      fileAfterFirst = readFileSync(persistence.file, 'utf8');

      // Another random seed, as another process would have: the same seed would draw the same ids again.
      second = await startGateway({ seed: seedFor, persistence, random: seededRandom(2) });
      endpointAfter = (await second.call('GET', '/api/v1/webhook')).body.data;
    });

    after(async () => {
      await second?.close();
      await rx?.close();
      tmp.remove();
    });

    it('creates the file and its folder, with a format version', () => {
      const json = JSON.parse(fileAfterFirst);
      expect(json.version).to.equal(1);
      expect(json.transactions.length).to.be.greaterThan(2);
    });

    it('answers the same transaction and session as before', async () => {
      const status = await second.call('GET', `/api/v1/transactions/${auth.id}/status`);
      expectStatus(status, 200);
      expect(status.body.data).to.deep.equal({
        ...auth,
        status: 'captured',
        updated_at: status.body.data.updated_at,
      });
      const capture = await second.call(
        'GET',
        `/api/v1/transactions/${captureAnswer.data.transaction.id}/status`,
      );
      expect(capture.body.data).to.deep.equal(captureAnswer.data.transaction);
      const s = await second.call('GET', `/api/v1/payment-sessions/${session.payment_session_id}`);
      expectStatus(s, 200);
      // The same record; only the origin of checkout_url is the new server's (it follows each request's host).
      const { checkout_url: url, ...rest } = s.body.data.payment_session;
      expect(new URL(url).pathname).to.equal(new URL(session.checkout_url).pathname);
      expect({ ...rest, checkout_url: session.checkout_url }).to.deep.equal(session);
    });

    it('keeps the webhook endpoint with its health, and every event', async () => {
      expect(endpointAfter).to.deep.equal(endpointBefore);
      const events = (await second.call('GET', '/api/v1/webhook/events')).body.data.events;
      expect(events).to.deep.equal(eventsBefore);
    });

    it('replays the idempotent capture with the stored answer', async () => {
      const replay = await second.call('POST', `/api/v1/transactions/${auth.id}/capture`, {
        body: captureBody,
        headers: { 'Idempotency-Key': captureKey },
      });
      expectStatus(replay, 200);
      expect(replay.headers.get('idempotency-replayed')).to.equal('true');
      expect(replay.body).to.deep.equal(captureAnswer);
    });

    it('still refuses the card marked do-not-retry', async () => {
      const again = await second.call('POST', '/api/v1/transactions', {
        body: transactionBody({ card: card(FRAUD_CARD) }),
      });
      expectStatus(again, 400);
      expect(again.body.code).to.equal('ERR_DO_NOT_RETRY');
    });

    it('never hands out an id again: the next transaction id is above every earlier one', async () => {
      const sale = await second.call('POST', '/api/v1/transactions', { body: transactionBody() });
      expectStatus(sale, 200);
      expect(sale.body.data.id).to.be.greaterThan(maxIdBefore);
      // The same card is the same cardholder: fingerprints still match under the persisted key.
      expect(sale.body.data.cardholder_id).to.equal(auth.cardholder_id);
    });

    it('lets the 3DS challenge be finished, and the verification pays for the same card', async () => {
      const path = new URL(challenge.challenge_url).pathname;
      const page = await second.call('GET', path, { key: null });
      expectStatus(page, 200);
      expect(page.text).to.include('Authenticate');
      const done = await second.call('POST', path, {
        key: null,
        rawBody: 'action=authenticate',
        headers: FORM,
      });
      expectStatus(done, 303);
      expect(done.headers.get('location')).to.include('status=full_auth');
      const paid = await second.call('POST', '/api/v1/transactions', {
        body: transactionBody({
          amount: 20,
          card: card(CHALLENGE_CARD),
          card_verification_data: { id: challenge.public_id },
        }),
      });
      expectStatus(paid, 200);
    });

    it('delivers the pending event after the restart, signed with the secret the endpoint had', async () => {
      rx.behave({ kind: 'answer', status: 200, body: 'ok' });
      second.clock.advance(60_000); // the retry a minute after the failed attempt
      await second.gateway.controls.tick();
      const got = rx.received.filter((r) => (r.json as { id?: string }).id === pendingEventId);
      expect(got.length).to.equal(2); // the failed attempt before the restart, the retry after
      expect(verifies(got[1]!, secret, nowSeconds(second))).to.equal(true);
      const event = await second.call('GET', `/api/v1/webhook/events/${pendingEventId}`);
      expect(event.body.data.status).to.equal('delivered');
      expect(event.body.data.delivery_attempts).to.have.length(2);
    });

    it('writes neither the key nor a plaintext secret nor a card number into the file', () => {
      const text = readFileSync(persistence.file, 'utf8');
      const key = Buffer.from(persistence.key);
      const derived = deriveSandboxKeys(persistence.key);
      const forbidden = [
        key.toString('base64'),
        key.toString('base64url'),
        key.toString('hex'),
        Buffer.from(derived.secrets).toString('hex'),
        Buffer.from(derived.secrets).toString('base64'),
        Buffer.from(derived.fingerprints).toString('hex'),
        Buffer.from(derived.fingerprints).toString('base64'),
        secret,
        ...TEST_CARDS,
      ];
      for (const file of [fileAfterFirst, text]) {
        expect(file).to.include('sealedSecret');
        expect(file).not.to.include('whsec_');
        for (const needle of forbidden) expect(file.includes(needle), needle).to.equal(false);
      }
      expect(statSync(persistence.file).mode & 0o077, 'only the owner reads it').to.equal(0);
    });
  });

  describe('when it saves', () => {
    const tmp = tempDir();
    const persistence: GatewayPersistence = { file: join(tmp.dir, 'state.json'), key: randomBytes(32) };
    let gw: TestGateway;
    before(async () => {
      gw = await startGateway({ seed: seedFor, persistence, random: seededRandom(3) });
    });
    after(async () => {
      await gw.close();
      tmp.remove();
    });

    it('has the file from the start, before any request', () => {
      expect(existsSync(persistence.file)).to.equal(true);
      expect(existsSync(`${persistence.file}.tmp`)).to.equal(false);
    });

    it('has written a change before its answer arrives, declines included', async () => {
      const sale = await gw.call('POST', '/api/v1/transactions', { body: transactionBody() });
      let saved = JSON.parse(readFileSync(persistence.file, 'utf8'));
      expect(saved.transactions.map((t: Json) => t.id)).to.include(sale.body.data.id);
      const declined = await gw.call('POST', '/api/v1/transactions', {
        body: transactionBody({ card: card('4000000000000002') }),
      });
      expectStatus(declined, 400);
      saved = JSON.parse(readFileSync(persistence.file, 'utf8'));
      expect(saved.transactions.map((t: Json) => t.id)).to.include(declined.body.data.id);
    });

    it('does not write when nothing changed', async () => {
      const before = statSync(persistence.file, { bigint: true });
      const sale = await gw.call('POST', '/api/v1/transactions', { body: transactionBody() });
      const written = statSync(persistence.file, { bigint: true });
      expect(
        written.ino !== before.ino || written.mtimeNs !== before.mtimeNs,
        'a change is written',
      ).to.equal(true);
      await gw.call('GET', `/api/v1/transactions/${sale.body.data.id}/status`);
      await gw.call('GET', '/api/v1/transactions/1/status');
      await gw.gateway.controls.tick();
      const after = statSync(persistence.file, { bigint: true });
      expect([after.ino, after.mtimeNs]).to.deep.equal([written.ino, written.mtimeNs]);
    });

    it('writes a clock advance at once, before answering', async () => {
      const answer = await gw.call('POST', '/sandbox/clock/advance', { body: { seconds: 3600 } });
      expectStatus(answer, 200);
      const saved = JSON.parse(readFileSync(persistence.file, 'utf8'));
      expect(saved.clock.now).to.equal(gw.clock.now());
    });
  });

  it('resumes a queued replay after a crash', async () => {
    const tmp = tempDir();
    const persistence: GatewayPersistence = { file: join(tmp.dir, 'state.json'), key: randomBytes(32) };
    const rx = await startReceiver();
    const first = await startGateway({ seed: seedFor, persistence, random: seededRandom(4) });
    let second: TestGateway | undefined;
    try {
      const put = await first.call('PUT', '/api/v1/webhook', { body: { url: rx.url } });
      await first.call('POST', '/api/v1/transactions', { body: transactionBody() });
      await first.gateway.controls.tick();
      expect(rx.received).to.have.length(1);
      const eventId = (rx.received[0]!.json as { id: string }).id;
      const replay = await first.call('POST', `/api/v1/webhook/events/${eventId}/replay`, { body: {} });
      expectStatus(replay, 200);
      // A crash now: the file as it was when the answer went out, no close, no final save.
      const crashed = join(tmp.dir, 'crashed.json');
      copyFileSync(persistence.file, crashed);
      second = await startGateway({
        seed: seedFor,
        persistence: { ...persistence, file: crashed },
        random: seededRandom(5),
      });
      await second.gateway.controls.tick();
      expect(rx.received).to.have.length(2);
      expect(rx.received[1]!.headers['x-service-replay']).to.equal('true');
      expect(verifies(rx.received[1]!, put.body.data.secret, nowSeconds(second))).to.equal(true);
    } finally {
      await second?.close();
      await first.close();
      await rx.close();
      tmp.remove();
    }
  });

  describe('the clock', () => {
    const tmp = tempDir();
    after(() => tmp.remove());

    it('does not go back across a restart (advanced through the API)', async () => {
      const persistence = { file: join(tmp.dir, 'api.json'), key: randomBytes(32) };
      const first = await startGateway({ persistence });
      await first.call('POST', '/sandbox/clock/advance', { body: { seconds: 86_400 } });
      const then = first.clock.now();
      await first.close();
      const second = await startGateway({ persistence, random: seededRandom(6) });
      try {
        expect(second.clock.now()).to.be.at.least(then);
      } finally {
        await second.close();
      }
    });

    it('does not go back when the clock was moved directly: the final save on close keeps it', async () => {
      const persistence = { file: join(tmp.dir, 'direct.json'), key: randomBytes(32) };
      const first = await startGateway({ persistence });
      first.clock.advance(7 * 86_400_000);
      const then = first.clock.now();
      await first.close();
      const clock = new ManualClock();
      const second = await startGateway({ persistence, clock, random: seededRandom(7) });
      try {
        expect(clock.now()).to.equal(then);
      } finally {
        await second.close();
      }
    });

    it('does not go back on the default clock (real time plus advances)', async () => {
      const persistence = { file: join(tmp.dir, 'offset.json'), key: randomBytes(32) };
      const seed = parseSeed(testSeed());
      const first = createGateway({ seed, persistence, logger: pino({ level: 'silent' }) });
      first.controls.advance(30 * 86_400);
      const then = first.deps.clock.now();
      const listening = await first.listen(0);
      await listening.close();
      const second = createGateway({ seed, persistence });
      expect(second.deps.clock.now()).to.be.at.least(then);
      expect(second.deps.clock.now() - then).to.be.below(60_000);
    });
  });

  it('without a file, keeps state in memory only, as before: ids start at 100000 again', async () => {
    for (let run = 0; run < 2; run++) {
      const gw = await startGateway();
      try {
        const sale = await gw.call('POST', '/api/v1/transactions', { body: transactionBody() });
        expect(sale.body.data.id).to.equal(100000);
      } finally {
        await gw.close();
      }
    }
  });

  describe('a file it cannot use stops start-up, never a silent reset', () => {
    const tmp = tempDir();
    after(() => tmp.remove());
    const seed = parseSeed(testSeed());
    const key = randomBytes(32);

    const startOn =
      (file: string, k: Uint8Array = key) =>
      () =>
        createGateway({ seed, persistence: { file, key: k } });
    const expectRefused = (file: string, pattern: RegExp, k?: Uint8Array) => {
      let caught: unknown;
      try {
        startOn(file, k)();
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(SandboxStateError);
      const message = (caught as Error).message;
      expect(message).to.include(file);
      expect(message).to.match(pattern);
      expect(message).not.to.include('\n');
      return message;
    };

    it('corrupt JSON, and an empty file', () => {
      const file = join(tmp.dir, 'corrupt.json');
      writeFileSync(file, '{"version": 1, "transactions": [\n  {"id": 100000,');
      expectRefused(file, /not valid JSON/);
      writeFileSync(file, '');
      expectRefused(file, /not valid JSON/);
      expect(readFileSync(file, 'utf8'), 'left as it was').to.equal('');
    });

    it('a shape it does not expect, naming the field', () => {
      const good = join(tmp.dir, 'good.json');
      createGateway({ seed, persistence: { file: good, key } });
      const json = JSON.parse(readFileSync(good, 'utf8'));
      const bad = join(tmp.dir, 'shape.json');
      writeFileSync(bad, JSON.stringify({ ...json, transactions: [{ id: 'one' }] }));
      expectRefused(bad, /transactions\.0\.id/);
      writeFileSync(bad, JSON.stringify([1, 2, 3]));
      expectRefused(bad, /not a JSON object/);
    });

    it('another format version', () => {
      const file = join(tmp.dir, 'version.json');
      writeFileSync(file, JSON.stringify({ version: 2 }));
      expectRefused(file, /version 2/);
    });

    it('a file written under another key', () => {
      const file = join(tmp.dir, 'other-key.json');
      createGateway({ seed, persistence: { file, key } });
      expectRefused(file, /another key/, randomBytes(32));
    });

    it('a key that is not 32 bytes', () => {
      expect(startOn(join(tmp.dir, 'short.json'), randomBytes(16))).to.throw(RangeError, /32 bytes/);
    });
  });
});
