import { expect } from 'chai';
import type { EventRow, GatewayReader } from '../../../chaos/gateway.js';
import { lookAtEvents } from '../../../chaos/measure.js';
import {
  failures,
  type MerchantLine,
  type PlatformVerdict,
  type Result,
  table,
} from '../../../chaos/report.js';
import type { InboxRow, KitTables } from '../../../chaos/tables.js';

/**
 * The storm in platform mode judges each merchant apart: a harness that lumped them together would
 * pass a kit that files one merchant's money or events as another's.
 */
describe('chaos: the storm’s verdict per merchant', () => {
  const line = (merchant: number, over: Partial<MerchantLine> = {}): MerchantLine => ({
    merchant,
    events: 40,
    lost: 0,
    asked: 20,
    orders: 20,
    checked: 18,
    untrue: 0,
    currencies: 4,
    differing: 0,
    ...over,
  });
  const platform = (over: Partial<PlatformVerdict> = {}): PlatformVerdict => ({
    lines: [line(1001), line(1002)],
    wrongMerchant: 0,
    misfiled: 0,
    forged: { posted: 9, answers: { 200: 9 } },
    rotated: [1002],
    ...over,
  });
  const result = (over: Partial<Result> = {}): Result => ({
    orders: 40,
    checked: 36,
    gatewayEvents: 80,
    deliveries: 100,
    duplicates: 320,
    stored: 80,
    applied: 80,
    changed: 20,
    recovered: 10,
    appliedTwice: 0,
    lost: 0,
    untrue: 0,
    convergeSeconds: 20,
    lapseConvergence: null,
    crashed: 0,
    chargebacks: 5,
    reversals: 2,
    lapsed: 1,
    money: {
      currencies: 4,
      differing: 0,
      merchantLines: { lines: 8, differing: 0 },
      compared: ['captured', 'refunded', 'disputed', 'net'],
      reportOrders: 40,
    },
    closed: { cancelled: 3, expired: 1 },
    erasure: null,
    platform: platform(),
    ...over,
  });
  const platformFailures = (r: Result) => failures(r).filter((f) => !f.includes('erasure'));

  it('passes two merchants whose orders, events and totals each hold, with a line each in the table', () => {
    expect(platformFailures(result())).to.deep.equal([]);
    const printed = table(result());
    expect(printed).to.contain('| merchant 1001: ');
    expect(printed).to.contain('| merchant 1002: ');
    expect(printed).to.contain('8 of 8 merchant and currency lines');
    expect(printed).to.contain("merchant 1002's only");
  });

  it('fails a merchant with untrue orders, differing totals or no order with a payment', () => {
    const r = result({
      platform: platform({
        lines: [line(1001, { untrue: 2 }), line(1002, { differing: 1, checked: 0 })],
      }),
    });
    expect(platformFailures(r)).to.deep.equal([
      '2 orders of merchant 1001 not equal to the truth',
      'merchant 1002 had no order with a payment',
      "1 currencies of merchant 1002 where the report's totals differ",
    ]);
  });

  it('fails orders or events kept as another merchant’s, and a report without totals per merchant', () => {
    const r = result({
      platform: platform({ wrongMerchant: 1, misfiled: 3 }),
      money: { ...result().money!, merchantLines: null },
    });
    expect(platformFailures(r)).to.deep.equal([
      'the report has no totals per merchant',
      "1 orders kept as another merchant's than asked",
      "3 gateway events kept as another merchant's",
    ]);
  });

  it('adds nothing for a kit of one merchant', () => {
    const r = result({ platform: null });
    expect(platformFailures(r)).to.deep.equal([]);
    expect(table(r)).not.to.contain('merchant 1001');
  });

  it('reads an event the inbox keeps as another merchant’s than the gateway’s as misfiled', async () => {
    const event = (id: string, merchant: number): EventRow => ({
      id,
      merchant_id: merchant,
      event_type: 'transaction.chargeback',
      transaction_id: 100000,
      status: 'delivered',
      attempts: 1,
      created_at: '2026-11-28T08:00:00.000000Z',
    });
    const kept = (id: string, merchant: number | null): InboxRow => ({
      event_id: id,
      merchant_id: merchant,
      source: 'webhook',
      processed: 1,
      outcome: 'applied',
    });
    const reader = { events: async () => [event('e1', 1001), event('e2', 1002), event('e3', 1001)] };
    const tables = {
      inbox: async () => [kept('e1', 1001), kept('e2', 1001), kept('e3', null)],
      history: async () => [],
      orders: async () => [],
    };
    const look = await lookAtEvents(tables as unknown as KitTables, reader as unknown as GatewayReader);
    expect(look.misfiled).to.deep.equal([
      "event e2 (transaction.chargeback) of merchant 1002 kept as merchant 1001's",
    ]);
    expect(look.lost).to.deep.equal([]);
  });
});
