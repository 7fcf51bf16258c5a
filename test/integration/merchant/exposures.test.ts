import { expect } from 'chai';
import * as inboxVaultTokens from '../../../migrations/2026-11-28-17-inbox-vault-tokens.js';
import { CustomerTokens } from '../../../src/merchant/customers/customer-token.js';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import { rows } from '../../support/db.js';
import { event, poster, referenceSettled, stateOf, storedSecret, wire } from '../../support/events.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { getOrder, landingStatus, pressButton, startTestKit, type TestKit } from '../../support/kit.js';

const CLI: Actor = { name: 'test', role: 'admin', credential: 'cli' };

/**
 * The smaller findings of a security review (issue 41, part 5), each through HTTP against the real
 * kit (its MySQL, Redis and embedded sandbox).
 */
describe('merchant: the smaller exposures (issue 41, part 5)', function () {
  this.timeout(60_000);
  let t: TestKit;

  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
  });
  after(async () => {
    await t?.close();
  });

  describe('HOST', () => {
    /** Whether anything answers at `url`: an HTTP answer of any status, or the connection refused. */
    const answers = async (url: string) => {
      try {
        await fetch(url);
        return true;
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code;
        if (code === 'ECONNREFUSED') return false;
        throw error;
      }
    };

    it('outside production the kit listens on 127.0.0.1 alone: another address of this machine gets no answer', async () => {
      const port = new URL(t.url).port;
      expect(await answers(`http://127.0.0.1:${port}/healthz`)).to.equal(true);
      // Linux routes all of 127.0.0.0/8 to this machine: a kit on every interface answers there too.
      expect(await answers(`http://127.0.0.2:${port}/healthz`)).to.equal(false);
      expect(t.config.host).to.equal('127.0.0.1');
    });
  });

  describe('/readyz', () => {
    it('without a token says only ready or not; the dependencies and the gateway key are a reader’s', async () => {
      const probe = await t.call('GET', '/readyz');
      expect(probe.status, probe.text).to.equal(200);
      expect(probe.body.data).to.deep.equal({ status: 'ready' });
      expect(probe.text).to.not.contain('gateway_key').and.not.contain('merchant_id');
      expect(probe.headers.get('vary')).to.match(/Authorization/i);
      const { token: viewer } = await t.kit.store.operators.add({
        name: 'ready-reader',
        role: 'viewer',
        by: { name: 'test', role: 'admin', credential: 'cli' },
      });
      const read = await t.call('GET', '/readyz', { token: viewer });
      expect(read.status, read.text).to.equal(200);
      expect(read.body.data).to.deep.include({
        status: 'ready',
        database: 'ok',
        redis: 'ok',
        gateway: 'ok',
        gateway_key: {
          key_type: 'merchant',
          merchant_id: 1001,
          merchant_ids: [1001],
          scopes: ['webhooks:manage'],
        },
      });
      // A token that is sent must be good, and a role that reads.
      expect((await t.call('GET', '/readyz', { token: `${viewer}x` })).status).to.equal(401);
      const { token: storefront } = await t.kit.store.operators.add({
        name: 'ready-shop',
        role: 'storefront',
        by: { name: 'test', role: 'admin', credential: 'cli' },
      });
      expect((await t.call('GET', '/readyz', { token: storefront })).status).to.equal(403);
    });
  });

  describe('customer tokens', () => {
    const HOUR = 3_600_000;
    /** A token signed with the kit's own key, as if made at `at`: what a leaked or mis-made one looks like. */
    const signedAt = (customerId: string, at: number) =>
      new CustomerTokens(t.config.encryptionKey).issue(customerId, at).token;
    const cards = (customerId: string, token: string) =>
      t.call('GET', `/customers/${customerId}/cards`, { headers: { 'Customer-Token': token } });

    it('one whose expiry lies further ahead than one lifetime from the kit’s clock is refused, however well signed', async () => {
      const decades = await cards('cus-far', signedAt('cus-far', t.clock.now() + 30 * 365 * 24 * HOUR));
      expect(decades.status, decades.text).to.equal(401);
      expect(decades.body.code).to.equal('CUSTOMER_TOKEN_INVALID');
      const twoHours = await cards('cus-far', signedAt('cus-far', t.clock.now() + HOUR));
      expect(twoHours.status, twoHours.text).to.equal(401);
      // One the kit makes now, and one made a minute ahead (another process's clock), are good.
      expect((await cards('cus-far', signedAt('cus-far', t.clock.now()))).status).to.equal(200);
      expect((await cards('cus-far', signedAt('cus-far', t.clock.now() + 30_000))).status).to.equal(200);
    });
  });

  describe('landings', () => {
    const pollLines = async (orderId: string) =>
      (
        (await getOrder(t, orderId)).history as { source: string; outcome: string; status_after: string }[]
      ).filter((h) => h.source === 'poll');

    it('write a history line only when the gateway’s answer changed something: reloads while a payment is confirmed leave none', async () => {
      const created = await t.call('POST', '/orders', { body: { amount: '12.34', currency: 'EUR' } });
      const order = created.body.data.order as { id: string };
      const pay = await t.call('POST', `/orders/${order.id}/pay/redirect`, {
        body: { payment_method: 'ideal', customer: { country_code: 'NL' } },
      });
      expect(pay.status, pay.text).to.equal(200);
      const page = pay.body.data.next_action.url as string;
      const sessionId = page.split('/').pop()!;
      // The provider has not confirmed yet: the page reloads itself, asking the gateway each time.
      const back = await pressButton(page, 'pending');
      const look = async (n: number) => {
        const res = await fetch(
          `${t.kit.publicBaseUrl}/checkout/return?payment_session_id=${sessionId}&n=${n}`,
        );
        return landingStatus(await res.text());
      };
      expect(landingStatus(await (await fetch(back)).text())).to.equal('requires_action');
      const afterFirst = (await pollLines(order.id)).length;
      expect(afterFirst, 'the first look may learn something (the shopper left the page)').to.be.at.most(1);
      for (let n = 1; n <= 4; n++) expect(await look(n)).to.equal('requires_action');
      expect(await pollLines(order.id), 'four reloads that learnt nothing').to.have.length(afterFirst);

      // The provider confirms: the next look is news, and a line.
      const settled = await fetch(`${t.kit.gatewayUrl}/sandbox/payment-sessions/${sessionId}/settle`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ outcome: 'paid' }),
      });
      expect(settled.status).to.equal(200);
      expect(await look(5)).to.equal('paid');
      const lines = await pollLines(order.id);
      expect(lines).to.have.length(afterFirst + 1);
      expect(lines.at(-1)).to.include({ outcome: 'applied', status_after: 'paid' });
    });
  });

  describe('stored webhook payloads', () => {
    /** A kit with its worker: the stored events are read back and applied. */
    let w: TestKit;
    before(async () => {
      w = await startTestKit();
    });
    after(async () => {
      await w?.close();
    });

    /** Every inbox row of the events the sandbox sent for `reference`, once stored and processed. */
    const storedEvents = async (reference: string) => {
      await referenceSettled(w, reference);
      const ids = [...stateOf(w).webhooks.events.values()]
        .filter((e) => e.reference === reference)
        .map((e) => e.id);
      return rows(w, 'webhook_inbox', { event_id: ids });
    };

    it('keep no vault token: the event of a payment that saved its card is stored masked, and still applied', async () => {
      const { token: storefront } = await w.kit.store.operators.add({
        name: 'shop',
        role: 'storefront',
        by: CLI,
      });
      const customerId = 'cus-vault';
      const minted = await w.call('POST', `/customers/${customerId}/tokens`, { token: storefront });
      expect(minted.status, minted.text).to.equal(201);
      const created = await w.call('POST', '/orders', {
        body: { amount: '9.99', currency: 'EUR', customer: { merchant_customer_id: customerId } },
      });
      const order = created.body.data.order as { id: string; reference: string };
      const paid = await w.call('POST', `/orders/${order.id}/pay/card`, {
        body: { card: card('4242424242424242'), mode: 'sale', save_card: true },
        headers: { 'Customer-Token': minted.body.data.customer_token },
      });
      expect(paid.status, paid.text).to.equal(200);
      const [instrument] = [...stateOf(w).instruments.records.values()].filter(
        (i) => i.merchantCustomerId === customerId,
      );
      const vaultToken = instrument!.vaultToken;
      expect(vaultToken).to.match(/^vt_/);

      const stored = await storedEvents(order.reference);
      expect(stored.length).to.be.at.least(1);
      for (const row of stored) {
        expect(row.payload).to.not.contain(vaultToken);
        expect(row.outcome, `${row.event_id} applied from its stored copy`).to.be.oneOf([
          'applied',
          'duplicate',
        ]);
      }
      const saving = stored
        .map((r) => JSON.parse(String(r.payload)))
        .find((p) => p.data.transaction.vault_token);
      expect(saving?.data.transaction.vault_token).to.equal('[vault token]');
      // Nowhere in the kit's database in clear: the saved card keeps it sealed.
      expect(await w.dump()).to.not.contain(vaultToken);
      const [saved] = await w.kit.store.savedCards.list(customerId);
      expect(await w.kit.store.savedCards.vaultToken(saved!.id)).to.equal(vaultToken);
    });

    it('mask a vault token wherever the payload holds one: a payment instrument beside the transaction, an escaped key, a token in text', async () => {
      const created = await w.call('POST', '/orders', { body: { amount: '1.00', currency: 'EUR' } });
      const order = created.body.data.order as { id: string };
      const tx = {
        ...wire([...stateOf(w).transactions.values()][0]!),
        id: '990000001',
        merchant_trans_id: `unplaced-${order.id}`,
        status_reason: 'saved as vt_AAAAbbbbCCCCdddd11112222 for later',
      };
      const token = 'vt_ZZZZyyyyXXXXwwww99998888';
      const crafted = event('transaction.captured', tx);
      const body = crafted.body.replace(
        '"data":{',
        `"data":{"payment_instrument":{"vault\\u005ftoken":"${token}","last4":"4242"},`,
      );
      expect(JSON.parse(body).data.payment_instrument.vault_token).to.equal(token);
      const answer = await poster(w)(body, { secret: await storedSecret(w) });
      expect(answer.status, answer.text).to.equal(200);
      const [row] = await rows(w, 'webhook_inbox', { event_id: crafted.id });
      const kept = String(row!.payload);
      expect(kept).to.not.contain(token).and.not.contain('vt_AAAAbbbbCCCCdddd11112222');
      const payload = JSON.parse(kept);
      expect(payload.data.payment_instrument).to.deep.equal({ vault_token: '[vault token]', last4: '4242' });
      expect(payload.data.transaction.status_reason).to.equal('saved as [vault token] for later');
      expect(payload.id).to.equal(crafted.id);
    });

    it('kept before the kit masked them: the migration masks them, and leaves the other rows as they were', async () => {
      const token = 'vt_MigratedMigratedMigrated';
      const insert = (id: string, payload: string) =>
        w.kit.sequelize.query(
          `INSERT INTO webhook_inbox (event_id, event_type, transaction_id, source, payload, received_at, attempts, receipt)
           VALUES (?, 'transaction.captured', '1', 'webhook', ?, NOW(3), 0, 'r')`,
          { replacements: [id, payload] },
        );
      const holding = `{"id":"evt_old_1","data":{"transaction":{"id":"1","vault_token":"${token}"}}}`;
      const plain = '{"id":"evt_old_2",  "data":{"transaction":{"id":"1","vault_token":null}}}';
      await insert('evt_old_1', holding);
      await insert('evt_old_2', plain);
      await inboxVaultTokens.up({ context: w.kit.sequelize.getQueryInterface() });
      const kept = await rows(w, 'webhook_inbox', { event_id: ['evt_old_1', 'evt_old_2'] });
      const one = kept.find((r) => r.event_id === 'evt_old_1');
      const two = kept.find((r) => r.event_id === 'evt_old_2');
      expect(JSON.parse(String(one!.payload)).data.transaction.vault_token).to.equal('[vault token]');
      expect(two!.payload).to.equal(plain);
    });
  });
});
