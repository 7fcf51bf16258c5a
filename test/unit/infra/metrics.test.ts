import { expect } from 'chai';
import { KitMetrics, type MetricSources } from '../../../src/infra/metrics.js';

/**
 * The metrics about orders and their money in platform mode (issue 45): a `merchant` label when the
 * kit acts for several merchants, none for a single shop (whose series are as they always were).
 */
const totals = [
  { merchant_id: 1001, currency: 'EUR', orders: 3, in_flight: 1, mismatched: 1, resolved: 0 },
  { merchant_id: 1004, currency: 'EUR', orders: 2, in_flight: 0, mismatched: 0, resolved: 1 },
];
const perCurrency = [{ currency: 'EUR', orders: 5, in_flight: 1, mismatched: 1, resolved: 1 }];
const disputes = [
  { merchant_id: null, currency: 'EUR', open: 1 },
  { merchant_id: 1001, currency: 'EUR', open: 2 },
  { merchant_id: 1004, currency: 'GBP', open: 1 },
];
const watching = (metrics: KitMetrics) =>
  metrics.watch({ disputesOpen: async () => disputes } as Partial<MetricSources> as MetricSources);

describe('infra: the kit metrics per merchant (platform mode)', () => {
  it('several merchants: the report, the open disputes and the expiring authorisations by merchant', async () => {
    const metrics = new KitMetrics({ merchants: [1001, 1004] });
    watching(metrics);
    metrics.reported(perCurrency, totals);
    metrics.authorizationsExpiring({
      expiring: 2,
      acted: 1,
      byMerchant: { 1001: { expiring: 0, acted: 0 }, 1004: { expiring: 2, acted: 1 } },
    });
    const text = await metrics.text();
    for (const line of [
      'kit_report_orders{merchant="1001",currency="EUR",classification="matched"} 1',
      'kit_report_orders{merchant="1001",currency="EUR",classification="mismatched"} 1',
      'kit_report_orders{merchant="1004",currency="EUR",classification="matched"} 1',
      'kit_report_orders{merchant="1004",currency="EUR",classification="resolved"} 1',
      // An order naming no merchant is the first one's: summed into its series.
      'kit_disputes_open{merchant="1001",currency="EUR"} 3',
      'kit_disputes_open{merchant="1004",currency="GBP"} 1',
      'kit_authorizations_expiring{merchant="1001"} 0',
      'kit_authorizations_expiring{merchant="1004"} 1',
    ])
      expect(text).to.contain(line);
    expect(text).to.not.match(/^kit_(report_orders|disputes_open)\{currency=/m);
    expect(text).to.not.match(/^kit_authorizations_expiring \d/m);
  });

  it('one merchant (or none known): no merchant label, the series as before', async () => {
    for (const merchants of [[], [1001]]) {
      const metrics = new KitMetrics({ merchants });
      watching(metrics);
      metrics.reported(perCurrency, totals);
      metrics.authorizationsExpiring({ expiring: 2, acted: 1 });
      const text = await metrics.text();
      for (const line of [
        'kit_report_orders{currency="EUR",classification="matched"} 2',
        'kit_report_orders{currency="EUR",classification="resolved"} 1',
        'kit_disputes_open{currency="EUR"} 3',
        'kit_disputes_open{currency="GBP"} 1',
        'kit_authorizations_expiring 1',
      ])
        expect(text, String(merchants)).to.contain(line);
      expect(text).to.not.contain('merchant="');
    }
  });
});
