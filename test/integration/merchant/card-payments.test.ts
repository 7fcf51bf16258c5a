import { expect } from 'chai';
import { ManualClock } from '../../../src/shared/clock.js';
import { count, row } from '../../support/db.js';
import { card } from '../../support/gateway.js';
import { getOrder, landingStatus, pressButton, startTestKit, type TestKit } from '../../support/kit.js';

/** merchant.md, Orders and HTTP interface: card payments end to end against the embedded sandbox. */

const FRICTIONLESS = '4242424242424242';
const CHALLENGE = '4000000000003220';
const ATTEMPTED = '4000000000003063';
const MINUTE = 60_000;

let refCounter = 0;
const ref = (prefix: string) => `${prefix}-${process.pid}-${Date.now()}-${++refCounter}`;

/** The sandbox's transactions carrying a reference (sale, auth, and any child records). */
function sandboxTransactions(t: TestKit, reference: string) {
  return [...t.kit.sandbox!.deps.state.transactions.values()].filter((x) => x.reference === reference);
}

async function createOrder(t: TestKit, body: Record<string, unknown> = {}) {
  // A reference of the shop's own: the shop's token names it (an operator's here).
  const res = await t.call('POST', '/orders', {
    ops: true,
    body: { amount: '12.34', currency: 'EUR', reference: ref('card'), ...body },
  });
  expect(res.status, res.text).to.equal(201);
  return res.body.data.order as { id: string; reference: string; status: string; amount: number };
}

async function attemptRow(t: TestKit, orderId: string) {
  const order = await getOrder(t, orderId);
  expect(order.payment, 'the order names its current attempt').to.not.equal(null);
  const attempt = await row(t, 'payment_attempts', { id: order.payment.attempt_id });
  expect(attempt).to.not.equal(null);
  return attempt!;
}

/** Opens a challenge for a new order: the order waits on the hosted page. */
async function openChallenge(
  t: TestKit,
  mode: 'sale' | 'auth' = 'sale',
  extra: Record<string, unknown> = {},
) {
  const order = await createOrder(t, extra);
  const pay = await t.call('POST', `/orders/${order.id}/pay/card`, { body: { card: card(CHALLENGE), mode } });
  expect(pay.status, pay.text).to.equal(200);
  expect(pay.body.data.order.status).to.equal('requires_action');
  return { order, url: pay.body.data.next_action.url as string };
}

describe('merchant: card payments (merchant.md, Orders and HTTP interface)', function () {
  this.timeout(30_000);
  let t: TestKit;
  /** A kit whose merchant clock only moves when told: the 3DS hold's lifetime. */
  let timed: TestKit;
  let clock: ManualClock;

  before(async () => {
    t = await startTestKit({
      // The merchant takes KWD at the gateway, and the kit is told so (ORDER_CURRENCIES). Every order
      // here comes from one address, more than a minute's worth: the limit has its own tests.
      env: { ORDER_CURRENCIES: 'EUR,USD,GBP,JPY,KWD', LIMIT_ORDERS_PER_ADDRESS: 'off' },
      seed: (s) => {
        s.merchants[0]!.currencies.push('KWD');
      },
    });
    clock = new ManualClock(Date.now());
    timed = await startTestKit({ clock });
  });
  after(async () => {
    await t?.close();
    await timed?.close();
  });

  describe('POST /orders and GET /orders/{id}', () => {
    it('creates an EUR order: "12.34" is 1234 minor units with amount_formatted beside', async () => {
      const reference = ref('eur');
      const res = await t.call('POST', '/orders', {
        ops: true,
        body: { amount: '12.34', currency: 'EUR', reference, description: 'Two mugs' },
      });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.success).to.equal(true);
      const order = res.body.data.order;
      expect(order).to.include({
        amount: 1234,
        amount_formatted: '12.34',
        currency: 'EUR',
        reference,
        status: 'pending',
        description: 'Two mugs',
      });
      expect(order.id).to.be.a('string').and.not.equal('');
    });

    it('converts amounts exactly, per currency exponent (JPY 500, EUR 0.29 as a number)', async () => {
      const jpy = await t.call('POST', '/orders', { body: { amount: '500', currency: 'JPY' } });
      expect(jpy.status, jpy.text).to.equal(201);
      expect(jpy.body.data.order).to.include({ amount: 500, amount_formatted: '500', currency: 'JPY' });
      const eur = await t.call('POST', '/orders', { body: { amount: 0.29, currency: 'EUR' } });
      expect(eur.status, eur.text).to.equal(201);
      expect(eur.body.data.order).to.include({ amount: 29, amount_formatted: '0.29' });
    });

    it('creates a KWD order: "1.234" is 1234 (three decimals), and it can be paid', async () => {
      const res = await t.call('POST', '/orders', { body: { amount: '1.234', currency: 'KWD' } });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.data.order).to.include({ amount: 1234, amount_formatted: '1.234', currency: 'KWD' });
      const id = res.body.data.order.id;
      const pay = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'sale' } });
      expect(pay.status, pay.text).to.equal(200);
      expect(pay.body.data.order).to.include({ status: 'paid', captured_amount: 1234 });
      const [txn] = sandboxTransactions(t, res.body.data.order.reference);
      expect(txn).to.include({ amount: 1234, currency: 'KWD', status: 'captured' });
    });

    it('makes the reference optional: each order without one still gets its own', async () => {
      const a = await t.call('POST', '/orders', { body: { amount: '1.00', currency: 'EUR' } });
      const b = await t.call('POST', '/orders', { body: { amount: '1.00', currency: 'EUR' } });
      expect(a.status, a.text).to.equal(201);
      expect(b.status, b.text).to.equal(201);
      expect(a.body.data.order.reference).to.be.a('string').and.not.equal('');
      expect(a.body.data.order.reference).to.not.equal(b.body.data.order.reference);
    });

    it("a reference of one's own needs the storefront's or an operator's token: a stranger cannot take the shop's next one", async () => {
      const by = { name: 'test', role: 'admin' as const, credential: 'cli' };
      const store = (
        await t.kit.store.operators.add({ name: `shop-web-${refCounter}`, role: 'storefront', by })
      ).token;
      const viewer = (await t.kit.store.operators.add({ name: `shop-eye-${refCounter}`, role: 'viewer', by }))
        .token;
      const reference = ref('claimed');
      const before = await count(t, 'orders');
      const stranger = await t.call('POST', '/orders', {
        body: { amount: '5.00', currency: 'EUR', reference },
      });
      expect(stranger.status, stranger.text).to.equal(401);
      expect(stranger.body.message).to.contain('leave reference out');
      const reader = await t.call('POST', '/orders', {
        token: viewer,
        body: { amount: '5.00', currency: 'EUR', reference },
      });
      expect(reader.status, reader.text).to.equal(403);
      expect(await count(t, 'orders'), 'nothing made, the reference still free').to.equal(before);
      const shop = await t.call('POST', '/orders', {
        token: store,
        body: { amount: '5.00', currency: 'EUR', reference },
      });
      expect(shop.status, shop.text).to.equal(201);
      expect(shop.body.data.order.reference).to.equal(reference);
    });

    it('refuses a reference already used with 409 DUPLICATE_REFERENCE, creating nothing', async () => {
      const reference = ref('dup');
      const first = await t.call('POST', '/orders', {
        ops: true,
        body: { amount: '5.00', currency: 'EUR', reference },
      });
      expect(first.status).to.equal(201);
      const before = await count(t, 'orders');
      const second = await t.call('POST', '/orders', {
        ops: true,
        body: { amount: '7.00', currency: 'EUR', reference },
      });
      expect(second.status, second.text).to.equal(409);
      expect(second.body).to.include({ success: false, code: 'DUPLICATE_REFERENCE' });
      expect(second.body.errors).to.have.property('reference');
      expect(await count(t, 'orders')).to.equal(before);
      expect((await getOrder(t, first.body.data.order.id)).amount).to.equal(500);
    });

    it('GET /orders/{id} answers the order with its history', async () => {
      const order = await createOrder(t);
      const fresh = await getOrder(t, order.id);
      expect(fresh).to.include({ id: order.id, reference: order.reference, status: 'pending', amount: 1234 });
      expect(fresh.history).to.be.an('array');
      await t.call('POST', `/orders/${order.id}/pay/card`, { body: { card: card(), mode: 'sale' } });
      const paid = await getOrder(t, order.id);
      expect(paid.history.length).to.be.greaterThan(fresh.history.length);
    });

    it('answers 404 for an unknown order id', async () => {
      const res = await t.call('GET', '/orders/ord_doesnotexist000000000000');
      expect(res.status, res.text).to.equal(404);
      expect(res.body).to.include({ success: false, code: 'NOT_FOUND' });
    });
  });

  describe('frictionless cards', () => {
    it('a sale with 4242... is paid, captured_amount = amount, history from source api', async () => {
      const order = await createOrder(t);
      const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(), mode: 'sale' },
      });
      expect(pay.status, pay.text).to.equal(200);
      expect(pay.body.success).to.equal(true);
      expect(pay.body.data.next_action).to.equal(null);
      expect(pay.body.data.order).to.include({ status: 'paid', captured_amount: 1234 });
      const got = await getOrder(t, order.id);
      expect(got).to.include({ status: 'paid', captured_amount: 1234, failure_code: null });
      expect(got.history.length).to.be.greaterThan(0);
      for (const h of got.history) {
        // The gateway's webhook for the same transaction may land too: one truth, any source.
        expect(h.source).to.be.oneOf(['api', 'webhook', 'replay', 'poll', 'recovery']);
        expect(h.outcome).to.be.oneOf(['applied', 'duplicate', 'stale', 'flagged']);
        expect(h.status_before).to.be.a('string');
        expect(h.status_after).to.be.a('string');
        expect(h.source_id).to.be.a('string').and.not.equal('');
      }
      const api = got.history.filter((h: { source: string }) => h.source === 'api');
      expect(api.length, 'the attempt and the API answer are recorded').to.be.at.least(2);
      const answer = api[api.length - 1];
      expect(answer.status_after).to.equal('paid');
      expect(answer.outcome).to.be.oneOf(['applied', 'duplicate']);
      const intoPaid = got.history.filter(
        (h: { status_before: string; status_after: string; outcome: string }) =>
          h.status_after === 'paid' && h.status_before !== 'paid',
      );
      expect(intoPaid, 'exactly one observation moved the order to paid').to.have.length(1);
      expect(intoPaid[0].outcome).to.equal('applied');
      expect(got.history.some((h: { outcome: string }) => h.outcome === 'flagged')).to.equal(false);
      const txns = sandboxTransactions(t, order.reference);
      expect(txns).to.have.length(1);
      expect(txns[0]).to.include({ type: 'sale', status: 'captured', amount: 1234, currency: 'EUR' });
      expect(got.payment.gateway_transaction_id).to.equal(String(txns[0]!.id));
    });

    it('an auth with 4242... is authorized, nothing captured', async () => {
      const order = await createOrder(t);
      const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(), mode: 'auth' },
      });
      expect(pay.status, pay.text).to.equal(200);
      expect(pay.body.data.next_action).to.equal(null);
      expect(pay.body.data.order.status).to.equal('authorized');
      expect(pay.body.data.order.captured_amount ?? 0).to.equal(0);
      expect((await getOrder(t, order.id)).status).to.equal('authorized');
      const txns = sandboxTransactions(t, order.reference);
      expect(txns).to.have.length(1);
      expect(txns[0]).to.include({ type: 'auth', status: 'auth' });
    });

    it('an attempted 3DS card (4000000000003063) is paid', async () => {
      const order = await createOrder(t);
      const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(ATTEMPTED), mode: 'sale' },
      });
      expect(pay.status, pay.text).to.equal(200);
      expect(pay.body.data.next_action).to.equal(null);
      expect(pay.body.data.order).to.include({ status: 'paid', captured_amount: 1234 });
    });
  });

  describe('3D Secure challenge (4000000000003220)', () => {
    it('answers requires_action with next_action redirecting to the sandbox challenge page', async () => {
      const order = await createOrder(t);
      const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(CHALLENGE), mode: 'sale' },
      });
      expect(pay.status, pay.text).to.equal(200);
      expect(pay.body.data.order.status).to.equal('requires_action');
      const next = pay.body.data.next_action;
      expect(next.type).to.equal('redirect');
      expect(next.url).to.match(new RegExp(`^${t.kit.gatewayUrl}/hosted/3ds/tds_[A-Za-z0-9]{24}$`));
      const page = await fetch(next.url);
      expect(page.status).to.equal(200);
      expect(await page.text()).to.contain('value="authenticate"');
      expect(sandboxTransactions(t, order.reference), 'nothing charged before the challenge').to.have.length(
        0,
      );
      expect((await getOrder(t, order.id)).status).to.equal('requires_action');
    });

    it('Authenticate (sale): back to the kit 3DS return, whose landing shows paid', async () => {
      const { order, url } = await openChallenge(t, 'sale');
      const back = await pressButton(url, 'authenticate');
      expect(back.startsWith(`${t.kit.publicBaseUrl}/checkout/3ds-return?`), back).to.equal(true);
      expect(new URL(back).searchParams.get('card_verification_id')).to.match(/^tds_/);
      const landing = await fetch(back);
      expect(landing.status).to.equal(200);
      expect(landing.headers.get('content-type')).to.contain('text/html');
      const html = await landing.text();
      expect(landingStatus(html)).to.equal('paid');
      expect(html).to.contain(order.reference);
      const got = await getOrder(t, order.id);
      expect(got).to.include({ status: 'paid', captured_amount: 1234 });
      const txns = sandboxTransactions(t, order.reference);
      expect(txns).to.have.length(1);
      expect(txns[0]).to.include({ type: 'sale', status: 'captured' });
    });

    it('Authenticate (auth): the landing and the order show authorized', async () => {
      const { order, url } = await openChallenge(t, 'auth');
      const back = await pressButton(url, 'authenticate');
      const html = await (await fetch(back)).text();
      expect(landingStatus(html)).to.equal('authorized');
      expect((await getOrder(t, order.id)).status).to.equal('authorized');
      const txns = sandboxTransactions(t, order.reference);
      expect(txns).to.have.length(1);
      expect(txns[0]).to.include({ type: 'auth', status: 'auth' });
    });

    it('Fail on the hosted page: the order fails with ERR_3DS_FAILED and nothing is charged', async () => {
      const { order, url } = await openChallenge(t, 'sale');
      const back = await pressButton(url, 'fail');
      expect(back.startsWith(`${t.kit.publicBaseUrl}/checkout/3ds-return?`), back).to.equal(true);
      const landing = await fetch(back);
      expect(landing.status).to.equal(200);
      expect(landingStatus(await landing.text())).to.equal('failed');
      const got = await getOrder(t, order.id);
      expect(got).to.include({ status: 'failed', failure_code: 'ERR_3DS_FAILED' });
      expect(sandboxTransactions(t, order.reference).filter((x) => x.status !== 'failed')).to.have.length(0);
    });

    it('the browser does not decide: a forged status=full_auth on the return of a failed challenge is still failed', async () => {
      const { order, url } = await openChallenge(t, 'sale');
      const back = new URL(await pressButton(url, 'fail'));
      back.searchParams.set('status', 'full_auth');
      const html = await (await fetch(back)).text();
      expect(landingStatus(html)).to.equal('failed');
      expect((await getOrder(t, order.id)).status).to.equal('failed');
      expect(sandboxTransactions(t, order.reference).filter((x) => x.status === 'captured')).to.have.length(
        0,
      );
    });

    it('reloading the 3DS return charges once', async () => {
      const { order, url } = await openChallenge(t, 'sale');
      const back = await pressButton(url, 'authenticate');
      const [first, second] = [await fetch(back), await fetch(back)];
      expect(landingStatus(await first.text())).to.equal('paid');
      expect(landingStatus(await second.text())).to.equal('paid');
      const third = await fetch(back);
      expect(landingStatus(await third.text())).to.equal('paid');
      expect(sandboxTransactions(t, order.reference)).to.have.length(1);
      const got = await getOrder(t, order.id);
      expect(got).to.include({ status: 'paid', captured_amount: 1234, needs_review: false });
    });

    it('two tabs returning at once charge once, and the order ends paid', async () => {
      const { order, url } = await openChallenge(t, 'sale');
      const back = await pressButton(url, 'authenticate');
      const pages = await Promise.all([fetch(back), fetch(back), fetch(back)]);
      const statuses: (string | undefined)[] = [];
      for (const p of pages) {
        expect(p.status, 'every tab gets the landing page').to.equal(200);
        expect(p.headers.get('content-type')).to.contain('text/html');
        statuses.push(landingStatus(await p.text()));
      }
      expect(statuses, 'no tab may call the payment failed').to.not.include('failed');
      expect(sandboxTransactions(t, order.reference)).to.have.length(1);
      const got = await getOrder(t, order.id);
      expect(got).to.include({
        status: 'paid',
        captured_amount: 1234,
        needs_review: false,
        failure_code: null,
      });
    });

    it('a 3DS return for an unknown verification is a 404 page and changes nothing', async () => {
      const res = await fetch(`${t.kit.publicBaseUrl}/checkout/3ds-return?card_verification_id=tds_nope`);
      expect(res.status).to.equal(404);
      const none = await fetch(`${t.kit.publicBaseUrl}/checkout/3ds-return`);
      expect(none.status).to.equal(404);
    });
  });

  describe('the 3DS hold (merchant.md, Card data)', () => {
    it('is sealed ciphertext with at most 15 minutes of life while the challenge is open, erased after the return', async () => {
      const { order, url } = await openChallenge(timed, 'sale');
      const open = await attemptRow(timed, order.id);
      expect(open.hold_sealed).to.be.a('string');
      expect(open.hold_sealed!.startsWith('v1.'), open.hold_sealed!).to.equal(true);
      expect(open.hold_sealed).to.not.contain(CHALLENGE);
      expect(open.hold_expires_at).to.be.instanceOf(Date);
      const ahead = open.hold_expires_at!.getTime() - clock.now();
      expect(ahead)
        .to.be.at.most(15 * MINUTE)
        .and.at.least(14 * MINUTE);
      await fetch(await pressButton(url, 'authenticate'));
      const done = await attemptRow(timed, order.id);
      expect(done.hold_sealed).to.equal(null);
      expect(done.hold_expires_at).to.equal(null);
      expect((await getOrder(timed, order.id)).status).to.equal('paid');
    });

    it('is erased after a failed challenge too', async () => {
      const { order, url } = await openChallenge(timed, 'sale');
      expect((await attemptRow(timed, order.id)).hold_sealed).to.be.a('string');
      await fetch(await pressButton(url, 'fail'));
      const done = await attemptRow(timed, order.id);
      expect(done.hold_sealed).to.equal(null);
      expect(done.hold_expires_at).to.equal(null);
    });

    it('an expired hold (return after 16 minutes) fails the order with ERR_3DS_TIMEOUT and charges nothing', async () => {
      const { order, url } = await openChallenge(timed, 'sale');
      const back = await pressButton(url, 'authenticate');
      clock.advance(16 * MINUTE);
      const landing = await fetch(back);
      expect(landing.status).to.equal(200);
      expect(landingStatus(await landing.text())).to.equal('failed');
      const got = await getOrder(timed, order.id);
      expect(got).to.include({ status: 'failed', failure_code: 'ERR_3DS_TIMEOUT' });
      expect(sandboxTransactions(timed, order.reference)).to.have.length(0);
      const row = await attemptRow(timed, order.id);
      expect(row.hold_sealed).to.equal(null);
      // A reload still charges nothing.
      expect(landingStatus(await (await fetch(back)).text())).to.equal('failed');
      expect(sandboxTransactions(timed, order.reference)).to.have.length(0);
    });
  });

  describe('declines (sandbox.md section 4)', () => {
    const DECLINES: [string, string][] = [
      ['4000000000000002', 'ERR_CARD_DO_NOT_HONOR'],
      ['4000000000009995', 'ERR_CARD_INSUFFICIENT_FUNDS'],
      ['4000000000000069', 'ERR_EXPIRED_CARD'],
      ['4000000000000127', 'ERR_CARD_SECURITY_VIOLATION'],
      ['4000000000000119', 'ERR_CARD_SYSTEM_ERROR'],
      ['4000000000000259', 'ERR_CARD_ISSUER_UNAVAILABLE'],
      ['4100000000000019', 'ERR_CARD_FRAUD_SUSPECTED'],
      ['4000000000009987', 'ERR_CARD_LOST_OR_STOLEN'],
    ];

    async function expectDeclined(
      orderId: string,
      body: Record<string, unknown>,
      code: string,
      number: string,
      status: string[] = ['failed'],
    ) {
      const pay = await t.call('POST', `/orders/${orderId}/pay/card`, { body });
      expect(pay.status, pay.text).to.equal(402);
      expect(pay.body.success).to.equal(false);
      expect(pay.body.code).to.equal(code);
      expect(pay.body.message).to.be.a('string');
      expect(pay.body.message.length).to.be.greaterThan(10);
      expect(pay.body.message).to.not.contain('ERR_');
      expect(pay.text).to.not.contain(number);
      expect(pay.body.data.order.status).to.be.oneOf(status);
      const got = await getOrder(t, orderId);
      expect(got.status).to.be.oneOf(status);
      return { pay, got };
    }

    for (const [number, code] of DECLINES) {
      it(`${number} -> 402 ${code}, the order failed with that failure_code`, async () => {
        const order = await createOrder(t);
        const { pay, got } = await expectDeclined(
          order.id,
          { card: card(number), mode: 'sale' },
          code,
          number,
        );
        // The answer's own code says why; the order's failure_code is the operator's to read.
        expect(pay.body.data.order).to.not.have.property('failure_code');
        expect(got.failure_code).to.equal(code);
        expect(got.captured_amount ?? 0).to.equal(0);
        expect(pay.body.data.next_action).to.equal(null);
      });
    }

    it('the fraud card again within 24 h -> 402 ERR_DO_NOT_RETRY', async () => {
      const order = await createOrder(t);
      const { got } = await expectDeclined(
        order.id,
        { card: card('4100000000000019'), mode: 'sale' },
        'ERR_DO_NOT_RETRY',
        '4100000000000019',
      );
      expect(got.failure_code).to.equal('ERR_DO_NOT_RETRY');
    });

    for (const [number, code] of [
      ['4000000000003097', 'ERR_3DS_TECHNICAL_ERROR'],
      ['4000000000003089', 'ERR_3DS_NOT_ENROLLED'],
      ['4000000000003055', 'ERR_3DS_NOT_SUPPORTED'],
    ] as const) {
      it(`3DS error ${number} -> 402 ${code}, the order failed`, async () => {
        const order = await createOrder(t);
        const { pay, got } = await expectDeclined(
          order.id,
          { card: card(number), mode: 'sale' },
          code,
          number,
        );
        // The answer's own code says why; the order's failure_code is the operator's to read.
        expect(pay.body.data.order).to.not.have.property('failure_code');
        expect(got.failure_code).to.equal(code);
        expect(sandboxTransactions(t, order.reference).filter((x) => x.status === 'captured')).to.have.length(
          0,
        );
      });
    }

    it('the risk rule (@risk.test) -> 402 ERR_RISK_REJECTED, and the order keeps that failure_code', async () => {
      const order = await createOrder(t);
      const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(), mode: 'sale', customer: { email: 'mallory@risk.test' } },
      });
      expect(pay.status, pay.text).to.equal(402);
      expect(pay.body.code).to.equal('ERR_RISK_REJECTED');
      expect(pay.body.message).to.match(/risk/i);
      expect((await getOrder(t, order.id)).failure_code).to.equal('ERR_RISK_REJECTED');
    });

    it('the risk rule: the gateway records the attempt cancelled; the order is not paid (failed or cancelled)', async () => {
      const order = await createOrder(t);
      const pay = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(), mode: 'sale', customer: { email: 'trudy@Risk.Test' } },
      });
      expect(pay.status, pay.text).to.equal(402);
      // merchant.md: "failed, cancelled, expired: the last attempt failed, was abandoned or timed out".
      // A risk block is not clearly one or the other: either is accepted, paid is not.
      const got = await getOrder(t, order.id);
      expect(got.status).to.be.oneOf(['failed', 'cancelled']);
      expect(pay.body.data.order.status).to.equal(got.status);
      expect(got.captured_amount ?? 0).to.equal(0);
      const txns = sandboxTransactions(t, order.reference);
      expect(txns).to.have.length(1);
      expect(txns[0]).to.include({ status: 'cancelled', statusReason: 'ERR_RISK_REJECTED' });
    });

    it('a new attempt after a declined one succeeds with the same reference', async () => {
      const order = await createOrder(t);
      const declined = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card('4000000000000002'), mode: 'sale' },
      });
      expect(declined.status, declined.text).to.equal(402);
      const again = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(), mode: 'sale' },
      });
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.order).to.include({
        status: 'paid',
        reference: order.reference,
        captured_amount: 1234,
      });
      const txns = sandboxTransactions(t, order.reference);
      expect(txns.map((x) => x.status).sort()).to.deep.equal(['captured', 'failed']);
      expect(await getOrder(t, order.id)).to.include({ needs_review: false, failure_code: null });
    });

    it('a new attempt after a risk-cancelled one succeeds with the same reference', async () => {
      const order = await createOrder(t);
      const blocked = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(), mode: 'sale', customer: { email: 'eve@risk.test' } },
      });
      expect(blocked.status, blocked.text).to.equal(402);
      const again = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(), mode: 'sale', customer: { email: 'eve@example.com' } },
      });
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.order).to.include({ status: 'paid', reference: order.reference });
    });

    it('a new attempt after a failed challenge succeeds with the same reference', async () => {
      const { order, url } = await openChallenge(t, 'sale');
      await fetch(await pressButton(url, 'fail'));
      expect((await getOrder(t, order.id)).status).to.equal('failed');
      const again = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(), mode: 'sale' },
      });
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.order).to.include({ status: 'paid', reference: order.reference });
    });
  });

  describe('state rules', () => {
    it('a paid order refuses a new payment with 409 INVALID_STATE naming its status, charging nothing', async () => {
      const order = await createOrder(t);
      const first = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(), mode: 'sale' },
      });
      expect(first.body.data.order.status).to.equal('paid');
      const apiHistory = async () =>
        (await getOrder(t, order.id)).history.filter((h: { source: string }) => h.source === 'api').length;
      const historyBefore = await apiHistory();
      const again = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(), mode: 'sale' },
      });
      expect(again.status, again.text).to.equal(409);
      expect(again.body).to.include({ success: false, code: 'INVALID_STATE' });
      expect(again.body.message).to.contain('paid');
      const got = await getOrder(t, order.id);
      expect(got).to.include({ status: 'paid', captured_amount: 1234 });
      expect(await apiHistory()).to.equal(historyBefore);
      expect(sandboxTransactions(t, order.reference)).to.have.length(1);
    });

    it('an authorized order refuses a new payment with 409 INVALID_STATE naming its status', async () => {
      const order = await createOrder(t);
      await t.call('POST', `/orders/${order.id}/pay/card`, { body: { card: card(), mode: 'auth' } });
      const again = await t.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card(), mode: 'sale' },
      });
      expect(again.status, again.text).to.equal(409);
      expect(again.body.code).to.equal('INVALID_STATE');
      expect(again.body.message).to.contain('authorized');
      expect((await getOrder(t, order.id)).status).to.equal('authorized');
      expect(sandboxTransactions(t, order.reference)).to.have.length(1);
    });

    it('paying an unknown order is a 404', async () => {
      const res = await t.call('POST', '/orders/ord_doesnotexist000000000000/pay/card', {
        body: { card: card(), mode: 'sale' },
      });
      expect(res.status, res.text).to.equal(404);
      expect(res.body.code).to.equal('NOT_FOUND');
    });
  });

  describe('bad input: 422 VALIDATION_FAILED naming the field, changing nothing', () => {
    const sandboxCounts = () => ({
      transactions: t.kit.sandbox!.deps.state.transactions.size,
      verifications: t.kit.sandbox!.deps.state.verifications.size,
    });

    const PAY_CASES: [string, { body?: unknown; rawBody?: string }, string][] = [
      ['a missing card', { body: { mode: 'sale' } }, 'card'],
      ['card.number with letters', { body: { card: card('4242abcd42424242'), mode: 'sale' } }, 'card.number'],
      [
        'exp_month 13',
        { body: { card: card(FRICTIONLESS, { exp_month: 13 }), mode: 'sale' } },
        'card.exp_month',
      ],
      ['cvv "12"', { body: { card: card(FRICTIONLESS, { cvv: '12' }), mode: 'sale' } }, 'card.cvv'],
      ['mode "capture"', { body: { card: card(), mode: 'capture' } }, 'mode'],
      ['malformed JSON', { rawBody: '{"card": {"number": "4242424242424242", ' }, 'body'],
      ['a non-object body (array)', { rawBody: '[1,2,3]' }, 'body'],
      ['a non-object body (string)', { rawBody: '"4242424242424242"' }, 'body'],
      [
        'a bad customer.email',
        { body: { card: card(), mode: 'sale', customer: { email: 'not-an-email' } } },
        'customer.email',
      ],
    ];

    for (const [name, request, field] of PAY_CASES) {
      it(`POST /orders/{id}/pay/card with ${name} -> 422 naming ${field}`, async () => {
        const order = await createOrder(t);
        const before = await getOrder(t, order.id);
        const counts = sandboxCounts();
        const res = await t.call('POST', `/orders/${order.id}/pay/card`, request);
        expect(res.status, res.text).to.equal(422);
        expect(res.body).to.include({ success: false, code: 'VALIDATION_FAILED' });
        expect(res.body.errors, res.text).to.have.property(field);
        expect(res.body.errors[field]).to.be.an('array').that.is.not.empty;
        expect(res.text).to.not.contain(FRICTIONLESS);
        const after = await getOrder(t, order.id);
        expect(after).to.deep.equal(before);
        expect(sandboxCounts()).to.deep.equal(counts);
      });
    }

    const ORDER_CASES: [string, { body?: unknown; rawBody?: string }, string][] = [
      ['amount "12.345" EUR', { body: { amount: '12.345', currency: 'EUR' } }, 'amount'],
      ['amount "-1"', { body: { amount: '-1', currency: 'EUR' } }, 'amount'],
      ['amount -1 as a number', { body: { amount: -1, currency: 'EUR' } }, 'amount'],
      ['amount "0"', { body: { amount: '0', currency: 'EUR' } }, 'amount'],
      ['a missing amount', { body: { currency: 'EUR' } }, 'amount'],
      ['currency "XYZ"', { body: { amount: '1.00', currency: 'XYZ' } }, 'currency'],
      [
        'a bad customer.email',
        { body: { amount: '1.00', currency: 'EUR', customer: { email: 'nope@' } } },
        'customer.email',
      ],
      ['malformed JSON', { rawBody: '{"amount": "1.00",' }, 'body'],
      ['a non-object body', { rawBody: '42' }, 'body'],
    ];

    for (const [name, request, field] of ORDER_CASES) {
      it(`POST /orders with ${name} -> 422 naming ${field}, no order stored`, async () => {
        const before = await count(t, 'orders');
        const res = await t.call('POST', '/orders', request);
        expect(res.status, res.text).to.equal(422);
        expect(res.body).to.include({ success: false, code: 'VALIDATION_FAILED' });
        expect(res.body.errors, res.text).to.have.property(field);
        expect(await count(t, 'orders')).to.equal(before);
      });
    }
  });
});
