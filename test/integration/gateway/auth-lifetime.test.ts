import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { SeedInput } from '../../../src/gateway/state/seed.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { seededRandom } from '../../../src/shared/ids.js';
import {
  card,
  expectStatus,
  liftRateLimits,
  startGateway,
  type TestGateway,
  transactionBody,
  uniqueReference,
} from '../../support/gateway.js';
import { allowPrivateUrls, type Receiver, startReceiver } from '../../support/receiver.js';

/**
 * sandbox.md section 11, Authorisation lifetime: an auth neither captured nor voided
 * `auth_lifetime_s` of sandbox clock after its creation lapses (cancelled, transaction.cancelled,
 * reference released); its record carries `capture_before`; a capture or void after that is 400.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read records field by field
type Json = any;

const WEEK_S = 7 * 24 * 3600;
const ms = (iso: string) => Date.parse(iso);

const seedWith =
  (lifetimeS?: number) =>
  (s: SeedInput): void => {
    allowPrivateUrls(s);
    liftRateLimits(s);
    if (lifetimeS !== undefined) s.settings = { ...s.settings, auth_lifetime_s: lifetimeS };
  };

async function authorise(gw: TestGateway, overrides: Record<string, unknown> = {}): Promise<Json> {
  const answer = await gw.call('POST', '/api/v1/transactions', {
    body: transactionBody({ transaction_type: 'auth', amount: 10, ...overrides }),
  });
  expectStatus(answer, 200);
  expect(answer.body.data.status).to.equal('auth');
  return answer.body.data;
}

async function statusOf(gw: TestGateway, id: number): Promise<Json> {
  const answer = await gw.call('GET', `/api/v1/transactions/${id}/status`);
  expectStatus(answer, 200);
  return answer.body.data;
}

describe('gateway: authorisation lifetime (sandbox.md section 11)', () => {
  describe('capture_before on the records', () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startGateway({ seed: seedWith() });
    });
    after(async () => {
      await gw.close();
    });

    it('an auth carries created_at plus the default 7 days, in the answer and on status', async () => {
      const auth = await authorise(gw);
      expect(auth.capture_before).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect(ms(auth.capture_before) - ms(auth.created_at)).to.equal(WEEK_S * 1000);
      expect((await statusOf(gw, auth.id)).capture_before).to.equal(auth.capture_before);
    });

    it('the auth keeps it once captured; the capture, refund and void records, sales and sessions carry null', async () => {
      const auth = await authorise(gw);
      const capture = await gw.call('POST', `/api/v1/transactions/${auth.id}/capture`, {
        body: { amount: 10 },
      });
      expectStatus(capture, 200);
      expect(capture.body.data.transaction.capture_before).to.equal(null);
      expect(await statusOf(gw, auth.id)).to.include({
        status: 'captured',
        capture_before: auth.capture_before,
      });
      const refund = await gw.call('POST', `/api/v1/transactions/${auth.id}/refund`, { body: { amount: 1 } });
      expect(refund.body.data.transaction.capture_before).to.equal(null);

      const other = await authorise(gw);
      const voided = await gw.call('POST', `/api/v1/transactions/${other.id}/void`, { body: { amount: 10 } });
      expectStatus(voided, 200);
      expect(voided.body.data.transaction.capture_before).to.equal(null);
      expect((await statusOf(gw, other.id)).capture_before).to.equal(other.capture_before);

      const sale = await gw.call('POST', '/api/v1/transactions', { body: transactionBody() });
      expect(sale.body.data.capture_before).to.equal(null);
      const declined = await gw.call('POST', '/api/v1/transactions', {
        body: transactionBody({ transaction_type: 'auth', card: card('4000000000000002') }),
      });
      expectStatus(declined, 400);
      expect(declined.body.data).to.include({ status: 'failed', capture_before: null });
      const session = await gw.call('POST', '/api/v1/payment-sessions', {
        body: {
          amount: 10,
          currency: 'EUR',
          reference: uniqueReference('ps'),
          payment_method: 'ideal',
          success_url: 'https://shop.example/ok',
          cancel_url: 'https://shop.example/cancel',
        },
      });
      expectStatus(session, 201);
      expect((await statusOf(gw, session.body.data.payment_session.transaction_id)).capture_before).to.equal(
        null,
      );
    });
  });

  describe('lapsing, with auth_lifetime_s 3600', () => {
    let gw: TestGateway;
    let rx: Receiver;
    beforeEach(async () => {
      rx = await startReceiver();
      gw = await startGateway({ seed: seedWith(3600) });
      expectStatus(await gw.call('PUT', '/api/v1/webhook', { body: { url: rx.url } }), 201); // default set
    });
    afterEach(async () => {
      await gw.close();
      await rx.close();
    });
    const advance = (seconds: number) => gw.call('POST', '/sandbox/clock/advance', { body: { seconds } });
    // The control itself, not POST /sandbox/tick: a request lapses what is due before its route runs,
    // so the HTTP tick's own count would always be 0.
    const tick = () => gw.gateway.controls.tick();
    const payloadsOf = (type: string) =>
      rx.received.map((r) => r.json as Json).filter((p) => p.type === type);

    it('an auth left open lapses on tick at its capture_before: cancelled, transaction.cancelled delivered, reference free', async () => {
      const reference = uniqueReference('lapse');
      const auth = await authorise(gw, { reference });
      expect(ms(auth.capture_before) - ms(auth.created_at)).to.equal(3_600_000);
      expectStatus(await advance(3599), 200);
      expect((await tick()).auths_lapsed).to.equal(0);
      expect((await statusOf(gw, auth.id)).status).to.equal('auth');
      const duplicate = await gw.call('POST', '/api/v1/transactions', {
        body: transactionBody({ transaction_type: 'auth', reference }),
      });
      expectStatus(duplicate, 409);

      expectStatus(await advance(1), 200);
      const report = await tick();
      expect(report.auths_lapsed).to.equal(1);
      const after = await statusOf(gw, auth.id);
      expect(after).to.include({ status: 'cancelled', capture_before: auth.capture_before });
      expect(after.status_reason)
        .to.be.a('string')
        .and.match(/lapsed/);
      expect(ms(after.updated_at)).to.equal(ms(auth.capture_before));
      const [payload, ...more] = payloadsOf('transaction.cancelled');
      expect(more).to.deep.equal([]);
      expect(payload.data.transaction).to.include({
        id: auth.id,
        status: 'cancelled',
        transaction_type: 'auth',
      });
      expect((await tick()).auths_lapsed).to.equal(0);

      // The reference is released: a new payment may use it.
      const again = await gw.call('POST', '/api/v1/transactions', {
        body: transactionBody({ transaction_type: 'auth', reference }),
      });
      expectStatus(again, 200);
    });

    it('no tick needed: the first request after the deadline already sees it lapsed', async () => {
      const auth = await authorise(gw);
      gw.clock.advance(3_600_000);
      expect((await statusOf(gw, auth.id)).status).to.equal('cancelled');
      expect((await tick()).auths_lapsed).to.equal(0);
      await tick();
      expect(payloadsOf('transaction.cancelled')).to.have.length(1);
    });

    it('a capture or void after the lapse: 400 ERR_INVALID_TRANSACTION, nothing recorded', async () => {
      const auth = await authorise(gw);
      await advance(3600);
      const count = gw.gateway.deps.state.transactions.size;
      for (const operation of ['capture', 'void']) {
        const answer = await gw.call('POST', `/api/v1/transactions/${auth.id}/${operation}`, {
          body: { amount: 10 },
        });
        expectStatus(answer, 400);
        expect(answer.body.code, operation).to.equal('ERR_INVALID_TRANSACTION');
      }
      expect(gw.gateway.deps.state.transactions.size).to.equal(count);
      expect((await statusOf(gw, auth.id)).status).to.equal('cancelled');
    });

    it('captured or voided in time, an auth never lapses', async () => {
      const captured = await authorise(gw);
      const voided = await authorise(gw);
      await advance(3599);
      expectStatus(
        await gw.call('POST', `/api/v1/transactions/${captured.id}/capture`, { body: { amount: 4 } }),
        200,
      );
      expectStatus(
        await gw.call('POST', `/api/v1/transactions/${voided.id}/void`, { body: { amount: 10 } }),
        200,
      );
      await advance(30 * 24 * 3600);
      expect((await tick()).auths_lapsed).to.equal(0);
      expect((await statusOf(gw, captured.id)).status).to.equal('captured');
      expect((await statusOf(gw, voided.id)).status).to.equal('voided');
      expect(payloadsOf('transaction.cancelled')).to.deep.equal([]);
    });

    it('each auth lapses on its own deadline', async () => {
      const first = await authorise(gw);
      await advance(1800);
      const second = await authorise(gw);
      await advance(1800);
      expect((await tick()).auths_lapsed).to.equal(1);
      expect((await statusOf(gw, first.id)).status).to.equal('cancelled');
      expect((await statusOf(gw, second.id)).status).to.equal('auth');
      await advance(1800);
      expect((await tick()).auths_lapsed).to.equal(1);
      expect((await statusOf(gw, second.id)).status).to.equal('cancelled');
    });
  });

  describe('across a restart', () => {
    const dir = mkdtempSync(join(tmpdir(), 'auth-lifetime-'));
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('the deadline is kept in the state file and the auth lapses after the restart', async () => {
      const persistence = { file: join(dir, 'state.json'), key: randomBytes(32) };
      const first = await startGateway({ seed: seedWith(3600), persistence, random: seededRandom(11) });
      const auth = await authorise(first);
      const open = await authorise(first);
      await first.call('POST', '/sandbox/clock/advance', { body: { seconds: 1800 } });
      await first.close();
      const saved = JSON.parse(readFileSync(persistence.file, 'utf8'));
      expect(saved.transactions.find((t: Json) => t.id === auth.id).captureBefore).to.equal(
        ms(auth.capture_before),
      );

      // Restarted with a longer lifetime: what was recorded keeps its own deadline.
      const clock = new ManualClock();
      const second = await startGateway({
        seed: seedWith(WEEK_S),
        persistence,
        clock,
        random: seededRandom(12),
      });
      try {
        expect((await statusOf(second, auth.id)).capture_before).to.equal(auth.capture_before);
        expectStatus(
          await second.call('POST', `/api/v1/transactions/${open.id}/capture`, { body: { amount: 10 } }),
          200,
        );
        const later = await authorise(second);
        expect(ms(later.capture_before) - ms(later.created_at)).to.equal(WEEK_S * 1000);
        clock.advance(1800 * 1000);
        expect((await second.gateway.controls.tick()).auths_lapsed).to.equal(1);
        expect((await statusOf(second, auth.id)).status).to.equal('cancelled');
        expect((await statusOf(second, open.id)).status).to.equal('captured');
        expect((await statusOf(second, later.id)).status).to.equal('auth');
      } finally {
        await second.close();
      }
    });
  });
});
