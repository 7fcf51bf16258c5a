import { expect } from 'chai';
import { card } from '../../support/gateway.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { passTime } from '../../support/truth.js';

/**
 * Issue 19, part 3: authorisations that lapse (sandbox.md section 11). The order shows the deadline
 * its gateway record carries; within AUTH_EXPIRY_WARNING of it the kit warns (a log line, a gauge,
 * the report's reason `auth_expiring`), and AUTH_EXPIRY_POLICY captures or voids it, once.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function authorizedOrder(t: TestKit, amount = '40.00') {
  const created = await t.call('POST', '/orders', { body: { amount, currency: 'EUR' } });
  const id = created.body.data.order.id as string;
  const paid = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'auth' } });
  expect(paid.status, paid.text).to.equal(200);
  expect(paid.body.data.order.status).to.equal('authorized');
  return { id, reference: created.body.data.order.reference as string, view: paid.body.data.order };
}

const gatewayRecords = (t: TestKit, reference: string) =>
  [...t.kit.sandbox!.deps.state.transactions.values()].filter((x) => x.reference === reference);

describe('merchant: authorisations that lapse (capture_before, warnings, the expiry policy)', function () {
  this.timeout(30_000);

  describe('AUTH_EXPIRY_POLICY=none (the default): warned of, left alone', () => {
    let t: TestKit;
    before(async () => {
      t = await startTestKit({ env: { ROLES: 'api' } });
    });
    after(async () => {
      await t?.close();
    });

    it('the order shows the deadline the gateway gives; within 48 hours of it, a warning, the gauge and the report say so', async () => {
      const { id, reference } = await authorizedOrder(t);
      const auth = gatewayRecords(t, reference)[0]!;
      expect(auth.captureBefore).to.be.a('number');
      const shown = await getOrder(t, id);
      expect(shown.capture_before).to.equal(new Date(auth.captureBefore!).toISOString());

      // Four days on: nothing to say yet.
      await passTime(t, 4 * DAY, 12 * HOUR);
      expect(await t.kit.jobs.watchAuthorizations()).to.deep.equal({ expiring: 0, acted: 0, failed: 0 });
      // Six days on: within the warning.
      await passTime(t, 2 * DAY, 12 * HOUR);
      const logged = t.logs.length;
      expect(await t.kit.jobs.watchAuthorizations()).to.deep.equal({ expiring: 1, acted: 0, failed: 0 });
      const warning = t.logs
        .slice(logged)
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === 'authorisations expire soon: capture or void them before they lapse');
      expect(warning).to.include({ count: 1, withinHours: 48, policy: 'none' });
      expect(warning.orders).to.deep.equal([{ order: id, capture_before: shown.capture_before }]);
      const metrics = await t.call('GET', '/metrics');
      expect(metrics.text).to.match(/^kit_authorizations_expiring 1$/m);
      const report = await t.call('GET', '/reports/reconciliation?from=2000-01-01&to=2100-01-01', {
        ops: true,
      });
      const row = report.body.data.rows.find((r: { order_id: string }) => r.order_id === id);
      expect(row).to.include({ classification: 'matched', reason: 'auth_expiring' });
      // Nobody acted: still authorized at the gateway.
      expect(gatewayRecords(t, reference).map((x) => x.type)).to.deep.equal(['auth']);
    });
  });

  for (const policy of ['capture', 'void'] as const) {
    describe(`AUTH_EXPIRY_POLICY=${policy}`, () => {
      let t: TestKit;
      before(async () => {
        t = await startTestKit({
          env: { ROLES: 'api', AUTH_EXPIRY_POLICY: policy, AUTH_EXPIRY_WARNING: '24' },
        });
      });
      after(async () => {
        await t?.close();
      });

      it(`${policy}s an authorisation within AUTH_EXPIRY_WARNING of its deadline, once, before it lapses`, async () => {
        const { id, reference } = await authorizedOrder(t);
        await passTime(t, 5 * DAY, 12 * HOUR);
        expect((await t.kit.jobs.watchAuthorizations()).expiring, 'outside 24 hours').to.equal(0);
        await passTime(t, 1 * DAY + HOUR, HOUR);
        expect(await t.kit.jobs.watchAuthorizations()).to.deep.equal({ expiring: 1, acted: 1, failed: 0 });
        const order = await getOrder(t, id);
        expect(order.status).to.equal(policy === 'capture' ? 'paid' : 'voided');
        expect(order.capture_before).to.equal(null);
        // Again: nothing left to act on, and the gateway holds one operation.
        expect(await t.kit.jobs.watchAuthorizations()).to.deep.equal({ expiring: 0, acted: 0, failed: 0 });
        expect(
          gatewayRecords(t, reference)
            .map((x) => x.type)
            .sort(),
        ).to.deep.equal(['auth', policy]);
        if (policy === 'capture') expect(order.captured_amount).to.equal(4000);
        const metrics = await t.call('GET', '/metrics');
        expect(metrics.text).to.match(/^kit_authorizations_expiring 0$/m);
      });
    });
  }
});
