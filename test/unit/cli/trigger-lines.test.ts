import { expect } from 'chai';
import {
  advanceLines,
  aheadLines,
  orderLines,
  outageLines,
  sessionLine,
  tickLines,
  transactionLine,
  utc,
} from '../../../src/cli/trigger-lines.js';

/** What a sandbox trigger prints: what changed, in lines a person reads. */
describe('CLI: the sandbox triggers’ lines', () => {
  const T0 = Date.UTC(2026, 10, 25, 2, 24, 22, 174);
  const order = { id: 'ord_1', status: 'paid', currency: 'EUR', disputedMinor: 0 };

  it('utc: to the second, marked UTC', () => {
    expect(utc(T0)).to.equal('2026-11-25 02:24:22 UTC');
  });

  describe('advanceLines', () => {
    it('the clock before and after, and the move; the kit that embeds the sandbox moved with it', () => {
      const after = new Date(T0 + 7200_000).toISOString();
      expect(advanceLines({ after, seconds: 7200, machineNow: T0, kitSharesClock: true })).to.deep.equal([
        'sandbox clock: 2026-11-25 02:24:22 UTC -> 2026-11-25 04:24:22 UTC (+2h)',
        "the kit runs on its embedded sandbox's clock: both are now 2h ahead of real time",
      ]);
    });

    it('a lead already there (an earlier advance) is counted in', () => {
      const after = new Date(T0 + 5400_000 + 90_000).toISOString();
      const lines = advanceLines({ after, seconds: 90, machineNow: T0, kitSharesClock: true });
      expect(lines[0]).to.equal('sandbox clock: 2026-11-25 03:54:22 UTC -> 2026-11-25 03:55:52 UTC (+1m30s)');
      expect(lines[1]).to.include('both are now 1h31m30s ahead of real time');
    });

    it('a standalone sandbox within the signature tolerance: the move alone', () => {
      const after = new Date(T0 + 300_000).toISOString();
      expect(advanceLines({ after, seconds: 300, machineNow: T0, kitSharesClock: false })).to.deep.equal([
        'sandbox clock: 2026-11-25 02:24:22 UTC -> 2026-11-25 02:29:22 UTC (+5m)',
      ]);
    });

    it('a standalone sandbox past it: says that the kit will refuse its webhooks, and what still works', () => {
      const after = new Date(T0 + 301_000).toISOString();
      const lines = advanceLines({ after, seconds: 301, machineNow: T0, kitSharesClock: false });
      expect(lines).to.have.length(3);
      expect(lines[1]).to.equal(
        "the sandbox clock is 5m1s ahead of this machine's: the kit's receiver refuses webhooks signed more than 5 minutes off its clock,",
      );
      expect(lines[2]).to.include('recovery job');
    });
  });

  it('aheadLines: nothing for a sandbox behind, level or within 300 s', () => {
    for (const lead of [-3600, 0, 299, 300]) expect(aheadLines(T0 + lead * 1000, T0)).to.deep.equal([]);
    expect(aheadLines(T0 + 86_400_000, T0)[0]).to.include('1d ahead');
  });

  it('tickLines: what the tick ran, aligned; a field the sandbox left out is -', () => {
    const lines = tickLines({
      now: new Date(T0).toISOString(),
      attempted: 3,
      delivered: 2,
      failed: 1,
      sessions_expired: 1,
      challenges_expired: 0,
      auths_lapsed: 0,
      events_pruned: 4,
    });
    expect(lines).to.deep.equal([
      'sandbox tick at 2026-11-25 02:24:22 UTC: ran what was due',
      '  webhook attempts        3 (2 delivered, 1 failed)',
      '  sessions expired        1',
      '  3DS challenges expired  0',
      '  auths lapsed            0',
      '  events pruned           4',
    ]);
    expect(tickLines({})).to.deep.equal([
      'sandbox tick: ran what was due',
      '  webhook attempts        - (- delivered, - failed)',
      '  sessions expired        -',
      '  3DS challenges expired  -',
      '  auths lapsed            -',
      '  events pruned           -',
    ]);
  });

  it('outageLines: whose deliveries fail, for how long, until when', () => {
    const lines = outageLines({ merchantId: '1001', until: new Date(T0).toISOString(), seconds: 600 });
    expect(lines[0]).to.equal(
      'webhook deliveries to merchant 1001 fail (connection_refused) for 10m of sandbox clock, until 2026-11-25 02:24:22 UTC',
    );
    expect(lines).to.have.length(2);
  });

  it("the gateway's answers: the transaction or session as it is now", () => {
    const t = { id: '100000', currency: 'EUR' };
    expect(transactionLine({ ...t, status: 'chargeback', chargeback_amount: 500 }, 'chargeback')).to.equal(
      'gateway: transaction 100000 chargeback (5.00 EUR charged back)',
    );
    // A gateway without the additive field (sandbox.md section 11) says less, never something wrong.
    expect(transactionLine({ ...t, status: 'chargeback' }, 'chargeback')).to.equal(
      'gateway: transaction 100000 chargeback',
    );
    expect(
      transactionLine(
        { id: '7', currency: 'JPY', status: 'chargeback', chargeback_amount: 500 },
        'chargeback',
      ),
    ).to.equal('gateway: transaction 7 chargeback (500 JPY charged back)');
    expect(transactionLine({ ...t, status: 'captured', chargeback_amount: 0 }, 'reverse')).to.equal(
      'gateway: transaction 100000 captured (chargeback reversed)',
    );
    expect(sessionLine({ payment_session_id: 'ps_x', status: 'paid', transaction_id: '100001' })).to.equal(
      'gateway: payment session ps_x paid (transaction 100001)',
    );
  });

  describe('orderLines', () => {
    const base = { waitedSeconds: 5, sandboxNow: null, machineNow: T0 };

    it('a change: before -> after, with what a chargeback took', () => {
      expect(
        orderLines({ ...base, before: order, after: { ...order, status: 'disputed', disputedMinor: 1234 } }),
      ).to.deep.equal(['order ord_1: paid -> disputed (12.34 EUR disputed)']);
      expect(
        orderLines({ ...base, before: { ...order, status: 'disputed', disputedMinor: 1234 }, after: order }),
      ).to.deep.equal(['order ord_1: disputed -> paid']);
    });

    it('no change yet: says so, and that the kit will apply it; no failure', () => {
      expect(orderLines({ ...base, before: order, after: null })).to.deep.equal([
        "order ord_1: still paid after 5 s; the kit applies the change when the gateway's event arrives (a webhook or its retry, or the recovery job)",
      ]);
    });

    it('no change, and a standalone sandbox far ahead of the kit: says why webhooks cannot land', () => {
      const lines = orderLines({ ...base, before: order, after: null, sandboxNow: T0 + 7200_000 });
      expect(lines).to.have.length(3);
      expect(lines[1]).to.include('2h ahead');
    });
  });
});
