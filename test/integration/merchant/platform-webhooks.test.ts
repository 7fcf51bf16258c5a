import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { ONE_MERCHANT, secretOwner } from '../../../src/merchant/store/secrets.js';
import { generateSecret, sign } from '../../../src/shared/signature.js';
import { count, row, rows } from '../../support/db.js';
import { event, inboxRow, processed, sandboxCall, stateOf, wire } from '../../support/events.js';
import { card } from '../../support/gateway.js';
import { cliEnv, getOrder, pressButton, startTestKit, type TestKit } from '../../support/kit.js';
import { LINKED, PLATFORM_ENV, PLATFORM_PARTNER_KEY, platformSeed } from '../../support/platform.js';
import { exitWithin, start, waitFor } from '../../support/process.js';

/**
 * Issue 45, webhooks per merchant: a kit acting for merchants 1001 and 1004 through a partner key has
 * one webhook endpoint per merchant at the gateway, `/webhooks/gateway/{merchant_id}`, each with its
 * own signing secret; the receiver verifies a merchant's deliveries with that merchant's secrets only,
 * keeps each event as its merchant's, and applies it to that merchant's orders only; recovery lists
 * each merchant's events from its own checkpoint; `webhook ... --merchant` acts on one endpoint.
 * Against the embedded sandbox, over HTTP. 1004 has no merchant key of its own: it pays by redirect.
 */

const [FIRST, OUTLET] = LINKED;
const MINUTE = 60_000;

describe('merchant: webhooks per merchant (platform mode)', function () {
  this.timeout(120_000);
  let t: TestKit;
  /** A GATEWAY_WEBHOOK_SECRETS secret given for the outlet only (`1004=...`). */
  const outletExtra = generateSecret((n) => randomBytes(n));

  before(async () => {
    t = await startTestKit({
      seed: platformSeed,
      env: { ...PLATFORM_ENV, GATEWAY_WEBHOOK_SECRETS: `${OUTLET}=${outletExtra}` },
    });
  });
  after(async () => {
    await t?.close();
  });

  /** The secrets the kit keeps for a merchant's endpoint, newest first (without the extra ones). */
  const secretsOf = (id: number) => t.kit.store.secrets.active([], secretOwner(LINKED, id));
  const endpointOf = (id: number) => stateOf(t).webhooks.endpoints.get(id)!;
  /** The API of the embedded sandbox with the partner key, acting for `merchant`. */
  const asPartner = (method: string, path: string, body: Record<string, unknown> = {}) =>
    sandboxCall(t, method, path, body, { authorization: `Bearer ${PLATFORM_PARTNER_KEY}` });

  /** POSTs `body` to the receiver at `path`, signed with `secret` now. */
  const deliver = async (path: string, body: string, secret: string) => {
    const res = await fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'X-Service-Signature': sign(body, secret, Math.floor(t.clock.now() / 1000)),
      },
      body,
    });
    return { status: res.status, text: await res.text() };
  };

  const newOrder = async (merchant: number, amount = '12.34') => {
    const created = await t.call('POST', '/orders', {
      body: { amount, currency: 'EUR', merchant_id: merchant },
    });
    expect(created.status, created.text).to.equal(201);
    return created.body.data.order.id as string;
  };

  /** A card payment of merchant 1001 (its own key makes the 3DS check); `mode` sale or auth. */
  const cardPayment = async (mode: 'sale' | 'auth' = 'sale') => {
    const id = await newOrder(FIRST);
    const pay = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode } });
    expect(pay.status, pay.text).to.equal(200);
    const transactionId = Number((await getOrder(t, id)).payment.gateway_transaction_id);
    return { id, transaction: { ...stateOf(t).transactions.get(transactionId)! } };
  };

  /** A redirect payment of `merchant`, paid on the hosted page; the kit is not told but by the gateway. */
  const redirectPaid = async (merchant: number) => {
    const id = await newOrder(merchant, '9.99');
    const method =
      merchant === OUTLET
        ? { payment_method: 'psc', customer: { country_code: 'AT' } }
        : { payment_method: 'ideal', customer: { country_code: 'NL' } };
    const pay = await t.call('POST', `/orders/${id}/pay/redirect`, { body: method });
    expect(pay.status, pay.text).to.equal(200);
    await pressButton(pay.body.data.next_action.url as string, 'pay');
    return id;
  };

  /** The order's history lines that came from a gateway event (a webhook or a recovered one). */
  const eventLines = async (orderId: string) =>
    (await rows(t, 'order_history', { order_id: orderId })).filter((h) =>
      ['webhook', 'replay', 'recovery'].includes(h.source),
    );

  const settledByEvent = (orderId: string) =>
    waitFor(`order ${orderId} changed by an event`, async () => {
      const lines = await eventLines(orderId);
      return lines.some((h) => h.outcome === 'applied') ? lines : null;
    });

  describe('at start and at the receiver', () => {
    it('one endpoint per merchant is registered at start, each at its own URL with its own secret', async () => {
      for (const id of LINKED) {
        const endpoint = endpointOf(id);
        expect(endpoint, `merchant ${id}'s endpoint`).to.not.equal(undefined);
        expect(endpoint.url).to.equal(`${t.kit.publicBaseUrl}/webhooks/gateway/${id}`);
        expect(await secretsOf(id), `merchant ${id}'s secrets`).to.have.length(1);
      }
      expect((await secretsOf(FIRST))[0]).to.not.equal((await secretsOf(OUTLET))[0]);
      const stored = await rows(t, 'webhook_secrets', {}, 'id');
      expect(stored.map((r) => r.merchant_id).sort()).to.deep.equal([...LINKED].sort());
    });

    it("a secret stored before platform mode (naming no merchant) is the first merchant's, never another's", async () => {
      const before = await secretsOf(FIRST);
      await t.kit.store.secrets.put(
        'whsec_kept_from_a_kit_of_one_0123',
        'embedded-sandbox',
        false,
        ONE_MERCHANT,
      );
      try {
        expect(await secretsOf(FIRST)).to.deep.equal(['whsec_kept_from_a_kit_of_one_0123', ...before]);
        expect(await secretsOf(OUTLET)).to.not.include('whsec_kept_from_a_kit_of_one_0123');
      } finally {
        await t.kit.sequelize.query('DELETE FROM webhook_secrets WHERE merchant_id IS NULL');
      }
    });

    it("a payment of each merchant settles through its own endpoint's delivery, kept as that merchant's event", async () => {
      const sale = await cardPayment('sale');
      const outlet = await redirectPaid(OUTLET);
      const first = await redirectPaid(FIRST);
      for (const [orderId, merchant] of [
        [outlet, OUTLET],
        [first, FIRST],
      ] as const) {
        const lines = await settledByEvent(orderId);
        expect((await getOrder(t, orderId)).status).to.equal('paid');
        const applied = lines.find((h) => h.outcome === 'applied')!;
        expect((await inboxRow(t, applied.source_id))!.merchant_id, `order of ${merchant}`).to.equal(
          merchant,
        );
        // The gateway delivered it to that merchant's URL, at its first attempt.
        const delivered = stateOf(t).webhooks.events.get(applied.source_id)!;
        expect(delivered.merchantId).to.equal(merchant);
        expect(delivered.attempts[0]!.statusCode).to.equal(200);
      }
      // The card sale's own event came to 1001's endpoint too.
      await waitFor('the sale event delivered', async () =>
        [...stateOf(t).webhooks.events.values()].some(
          (e) => e.transactionId === sale.transaction.id && e.status === 'delivered',
        ),
      );
    });

    it("an event signed with 1001's secret posted to 1004's URL is a 401 and nothing is stored", async () => {
      const sale = await cardPayment('sale');
      const e = event('transaction.captured', wire(sale.transaction));
      const before = await count(t, 'webhook_inbox');
      const [firstSecret] = await secretsOf(FIRST);
      const refused = await deliver(`/webhooks/gateway/${OUTLET}`, e.body, firstSecret!);
      expect(refused.status, refused.text).to.equal(401);
      expect(JSON.parse(refused.text)).to.include({ code: 'INVALID_SIGNATURE' });
      // And the other way round, and the outlet's GATEWAY_WEBHOOK_SECRETS secret at 1001's URL.
      const [outletSecret] = await secretsOf(OUTLET);
      expect((await deliver(`/webhooks/gateway/${FIRST}`, e.body, outletSecret!)).status).to.equal(401);
      expect((await deliver(`/webhooks/gateway/${FIRST}`, e.body, outletExtra)).status).to.equal(401);
      expect(await inboxRow(t, e.id)).to.equal(null);
      expect(await count(t, 'webhook_inbox')).to.equal(before);
      // Signed with 1001's own, at its URL: stored as its event.
      expect((await deliver(`/webhooks/gateway/${FIRST}`, e.body, firstSecret!)).status).to.equal(200);
      await processed(t, e.id);
      expect((await inboxRow(t, e.id))!.merchant_id).to.equal(FIRST);
    });

    it('a merchant the kit does not act for is a 404 at the receiver, nothing read or stored; /webhooks/gateway is the first merchant', async () => {
      const sale = await cardPayment('sale');
      const e = event('transaction.captured', wire(sale.transaction));
      const [firstSecret] = await secretsOf(FIRST);
      const [outletSecret] = await secretsOf(OUTLET);
      for (const path of ['/webhooks/gateway/1002', '/webhooks/gateway/99999']) {
        const answer = await deliver(path, e.body, firstSecret!);
        expect(answer.status, path).to.equal(404);
        expect(JSON.parse(answer.text)).to.include({ code: 'NOT_FOUND' });
      }
      expect(await inboxRow(t, e.id)).to.equal(null);
      // The URL without a merchant keeps working, as the first merchant's, with its secrets only.
      expect((await deliver('/webhooks/gateway', e.body, outletSecret!)).status).to.equal(401);
      expect((await deliver('/webhooks/gateway', e.body, firstSecret!)).status).to.equal(200);
      await processed(t, e.id);
      expect((await inboxRow(t, e.id))!.merchant_id).to.equal(FIRST);
    });

    it("GATEWAY_WEBHOOK_SECRETS' `1004=...` secret verifies 1004's deliveries only", async () => {
      const sale = await cardPayment('sale');
      const e = event('transaction.captured', wire(sale.transaction));
      expect((await deliver(`/webhooks/gateway/${OUTLET}`, e.body, outletExtra)).status).to.equal(200);
      expect((await inboxRow(t, e.id))!.merchant_id).to.equal(OUTLET);
    });

    it("an event from 1004's endpoint about 1001's order does not change it: kept as money with no order, and said", async () => {
      const auth = await cardPayment('auth');
      expect((await getOrder(t, auth.id)).status).to.equal('authorized');
      const captured = { ...wire(auth.transaction), status: 'captured' };
      const e = event('transaction.captured', captured);
      const [outletSecret] = await secretsOf(OUTLET);
      expect((await deliver(`/webhooks/gateway/${OUTLET}`, e.body, outletSecret!)).status).to.equal(200);
      await processed(t, e.id);
      expect((await inboxRow(t, e.id))!).to.include({ merchant_id: OUTLET, outcome: 'unmatched' });
      const order = await getOrder(t, auth.id);
      expect(order.status).to.equal('authorized');
      expect(order.needs_review).to.equal(false);
      expect((await rows(t, 'order_history', { source_id: e.id })).length).to.equal(0);
      const kept = await row(t, 'unmatched_money', { transaction_id: String(auth.transaction.id) });
      // The event's merchant's money, not the order's merchant's.
      expect(kept, 'kept as money with no order').to.include({ order_id: null, merchant_id: OUTLET });
      expect(t.logs.join('')).to.contain("webhook about another merchant's order");
    });
  });

  describe('recovery after an outage of both merchants', () => {
    let orders: [number, string][];
    before(async () => {
      // A partner key names the merchant whose deliveries fail; one not linked to it is refused.
      for (const body of [{ seconds: 60 }, { seconds: 60, merchant_id: 1002 }]) {
        const refused = await asPartner('POST', '/sandbox/webhook/outage', body);
        expect(refused.status, JSON.stringify(body)).to.equal(400);
        expect(refused.body.code).to.equal('ERR_AUTH_FAILED');
      }
      for (const id of LINKED) {
        const outage = await asPartner('POST', '/sandbox/webhook/outage', { seconds: 3600, merchant_id: id });
        expect(outage.status, JSON.stringify(outage.body)).to.equal(200);
        expect(outage.body.data.merchant_id).to.equal(id);
      }
      orders = [
        [FIRST, await redirectPaid(FIRST)],
        [OUTLET, await redirectPaid(OUTLET)],
      ];
      const references = await Promise.all(orders.map(async ([, id]) => (await getOrder(t, id)).reference));
      // Each first attempt fails (connection_refused): the kit does not know.
      await waitFor('both payments attempted and failed', async () =>
        references.every((reference) =>
          [...stateOf(t).webhooks.events.values()].some(
            (e) =>
              e.reference === reference && e.attempts.some((a) => a.errorReason === 'connection_refused'),
          ),
        ),
      );
    });

    it('the health check sees each endpoint: both degraded', async () => {
      const health = await t.kit.jobs.checkHealth();
      expect(Object.keys(health.merchants ?? {})).to.deep.equal(LINKED.map(String));
      for (const id of LINKED) expect(health.merchants![String(id)]!.status, `${id}`).to.equal('degraded');
      expect(health.status).to.equal('degraded');
      const metrics = await t.call('GET', '/metrics', { ops: true });
      for (const id of LINKED)
        expect(metrics.text).to.match(
          new RegExp(`^kit_webhook_delivery_status\\{status="degraded",merchant="${id}"\\} 1$`, 'm'),
        );
    });

    it("recovery lists each merchant's events through its own gateway, stores them as its, and the orders become paid", async () => {
      for (const [, id] of orders) expect((await getOrder(t, id)).status).to.equal('requires_action');
      const s = await t.kit.jobs.recover();
      expect(Object.keys(s.merchants ?? {})).to.deep.equal(LINKED.map(String));
      for (const id of LINKED) {
        const mine = s.merchants![String(id)]!;
        expect(mine.recovered, `${id} recovered`).to.be.greaterThan(0);
        expect(mine.failed).to.equal(0);
        // Its own checkpoint.
        expect((await row(t, 'kit_checkpoints', { name: `recovery:${id}` }))!.value).to.equal(
          mine.checkpoint,
        );
      }
      expect(s.recovered).to.equal(LINKED.reduce((n, id) => n + s.merchants![String(id)]!.recovered, 0));
      for (const [merchant, id] of orders) {
        const lines = await settledByEvent(id);
        const recovered = lines.find((h) => h.source === 'recovery' && h.outcome === 'applied')!;
        expect(recovered, `order of ${merchant} recovered`).to.not.equal(undefined);
        expect((await inboxRow(t, recovered.source_id))!.merchant_id).to.equal(merchant);
        expect((await getOrder(t, id)).status).to.equal('paid');
      }
      // Again: nothing missing at either merchant.
      const again = await t.kit.jobs.recover();
      expect(again).to.include({ missing: 0, recovered: 0 });
    });

    it("the gateway's own retries, after the outage, are duplicates", async () => {
      t.sandboxClock.advance(61 * MINUTE);
      await t.kit.sandbox!.controls.tick();
      await waitFor('every event delivered', async () =>
        [...stateOf(t).webhooks.events.values()].every((e) => e.status === 'delivered'),
      );
      for (const [, id] of orders) {
        const lines = await eventLines(id);
        expect(lines.filter((h) => h.outcome === 'applied')).to.have.length(1);
      }
    });
  });

  describe('the CLI: webhook ... --merchant', () => {
    const cli = async (args: string[]) => {
      const port = new URL(t.kit.gatewayUrl).port;
      const p = start('src/cli.ts', args, {
        ...cliEnv(t),
        ...PLATFORM_ENV,
        GATEWAY_PORT: port,
        PUBLIC_BASE_URL: t.kit.publicBaseUrl,
      });
      const { code } = await exitWithin(p, 60_000);
      return { code, stdout: p.stdout(), stderr: p.stderr() };
    };

    it('--merchant is required when the kit acts for several: one line, exit 1, nothing done', async () => {
      const done = await cli(['webhook', 'rotate']);
      expect(done.code).to.equal(1);
      expect(done.stderr.trim()).to.equal('--merchant: is required: this kit acts for merchants 1001, 1004');
      const unknown = await cli(['webhook', 'status', '--merchant', '1002']);
      expect(unknown.code).to.equal(1);
      expect(unknown.stderr.trim()).to.equal(
        '--merchant: must be one of the merchants this kit acts for: 1001, 1004',
      );
    });

    it("status --merchant 1004: that endpoint's health and secrets", async () => {
      const done = await cli(['webhook', 'status', '--merchant', String(OUTLET)]);
      expect(done.code, done.stderr).to.equal(0);
      expect(JSON.parse(done.stdout.slice(0, done.stdout.indexOf('\n}') + 2))).to.include({
        url: `${t.kit.publicBaseUrl}/webhooks/gateway/${OUTLET}`,
      });
      expect(done.stdout).to.match(/merchant\s+1004\n/);
      expect(done.stdout).to.match(/secrets accepted\s+1 active, 0 retired in their grace/);
    });

    it("rotate --merchant 1004: the outlet's deliveries verify with the new secret, 1001's still with its own", async () => {
      const [firstBefore] = await secretsOf(FIRST);
      const [outletBefore] = await secretsOf(OUTLET);
      const done = await cli(['webhook', 'rotate', '--merchant', String(OUTLET)]);
      expect(done.code, done.stderr).to.equal(0);
      expect(done.stdout).to.contain('secret of merchant 1004 rotated and stored');
      const [outletNew, outletOld] = await secretsOf(OUTLET);
      expect(outletOld, "the outlet's old secret, within its grace").to.equal(outletBefore);
      expect(outletNew).to.not.equal(outletBefore);
      expect(await secretsOf(FIRST), "1001's secrets untouched").to.deep.equal([firstBefore]);

      // The gateway signs the outlet's next delivery with the new secret: accepted at its first attempt.
      const outlet = await redirectPaid(OUTLET);
      const first = await redirectPaid(FIRST);
      for (const id of [outlet, first]) {
        const applied = (await settledByEvent(id)).find((h) => h.outcome === 'applied')!;
        expect(applied.source, `order ${id}`).to.equal('webhook');
        expect(stateOf(t).webhooks.events.get(applied.source_id)!.attempts[0]!.statusCode).to.equal(200);
      }
      // The outlet's old secret is still accepted for the overlap, at its URL only.
      const sale = await cardPayment('sale');
      const e = event('transaction.captured', wire(sale.transaction));
      expect((await deliver(`/webhooks/gateway/${FIRST}`, e.body, outletOld!)).status).to.equal(401);
      expect((await deliver(`/webhooks/gateway/${OUTLET}`, e.body, outletOld!)).status).to.equal(200);
    });

    it("test --merchant 1001: the ping reaches 1001's URL and verifies", async () => {
      const done = await cli(['webhook', 'test', '--merchant', String(FIRST)]);
      expect(done.code, done.stderr).to.equal(0);
      expect(JSON.parse(done.stdout)).to.include({ success: true, status_code: 200 });
    });
  });
});
