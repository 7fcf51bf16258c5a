import { expect } from 'chai';
import type { GatewayRecord } from '../../../chaos/gateway.js';
import { gatewaySums, merchantCurrency } from '../../../chaos/money.js';

/** The storm's money check adds these up: a harness that misreads the gateway would blame the kit wrongly. */
describe('chaos: the money check’s sums over the gateway’s records', () => {
  const record = (over: Partial<GatewayRecord>): GatewayRecord => ({
    id: 100000,
    merchantId: 1001,
    relatedId: null,
    type: 'sale',
    status: 'captured',
    amount: 1000,
    currency: 'EUR',
    refunded: 0,
    chargeback: 0,
    reference: 'ord-1',
    ...over,
  });
  const order = (reference: string, id: string | null) => ({
    order_id: `o-${reference}`,
    reference,
    gateway_transaction_id: id,
  });

  it('adds captured, refunded and charged back per currency, a captured auth by its capture record', () => {
    const { sums, notes } = gatewaySums(
      [
        record({ id: 1, refunded: 200 }),
        record({ id: 2, reference: 'ord-2', type: 'auth', amount: 5000 }),
        record({ id: 3, reference: 'ord-2', relatedId: 2, type: 'capture', amount: 3000 }),
        record({ id: 4, reference: 'ord-3', status: 'chargeback', refunded: 100, chargeback: 450 }),
        record({
          id: 5,
          reference: 'ord-4',
          currency: 'JPY',
          amount: 700,
          status: 'refunded',
          refunded: 700,
        }),
        record({ id: 6, reference: 'ord-4', relatedId: 5, type: 'refund', status: 'refunded', amount: 700 }),
      ],
      [order('ord-1', '1'), order('ord-2', '2'), order('ord-3', '4'), order('ord-4', '5')],
    );
    expect(sums.get('EUR')).to.deep.equal({ captured: 5000, refunded: 300, disputed: 450, net: 4250 });
    expect(sums.get('JPY')).to.deep.equal({ captured: 700, refunded: 700, disputed: 0, net: 0 });
    expect(notes).to.deep.equal([]);
  });

  it('counts nothing for payments that hold no money, or that belong to no order of the report', () => {
    const { sums } = gatewaySums(
      [
        record({ id: 1, status: 'failed' }),
        record({ id: 2, type: 'auth', status: 'cancelled', captureBefore: '2026-11-24T10:00:00Z' }),
        record({ id: 3, type: 'auth', status: 'voided' }),
        record({ id: 4, status: 'pending' }),
        record({ id: 5, reference: 'another shop' }),
      ],
      [order('ord-1', '4')],
    );
    expect(sums.size).to.equal(0);
  });

  it('counts money on a payment the order no longer holds, and names it', () => {
    const { sums, notes } = gatewaySums([record({ id: 1 }), record({ id: 2 })], [order('ord-1', '2')]);
    expect(sums.get('EUR')?.captured).to.equal(2000);
    expect(notes).to.have.length(1);
    expect(notes[0]).to.contain('payment 1 captured 1000 EUR is not the one its current attempt holds (2)');
  });

  it('takes a reversed chargeback as captured again, with nothing disputed', () => {
    const { sums } = gatewaySums([record({ id: 1, refunded: 100, chargeback: 0 })], [order('ord-1', '1')]);
    expect(sums.get('EUR')).to.deep.equal({ captured: 1000, refunded: 100, disputed: 0, net: 900 });
  });

  it('adds the same per merchant and currency, by the merchant each gateway record is', () => {
    const { sums, byMerchant } = gatewaySums(
      [
        record({ id: 1, refunded: 200 }),
        record({ id: 2, merchantId: 1002, reference: 'ord-2', amount: 3000 }),
        record({ id: 3, merchantId: 1002, reference: 'ord-3', type: 'auth', amount: 5000 }),
        record({ id: 4, merchantId: 1002, reference: 'ord-3', relatedId: 3, type: 'capture', amount: 4000 }),
        record({
          id: 5,
          merchantId: 1002,
          reference: 'ord-4',
          currency: 'USD',
          status: 'chargeback',
          chargeback: 600,
        }),
      ],
      [order('ord-1', '1'), order('ord-2', '2'), order('ord-3', '3'), order('ord-4', '5')],
    );
    expect(sums.get('EUR')).to.deep.equal({ captured: 8000, refunded: 200, disputed: 0, net: 7800 });
    expect(byMerchant.get(merchantCurrency(1001, 'EUR'))).to.deep.equal({
      captured: 1000,
      refunded: 200,
      disputed: 0,
      net: 800,
    });
    expect(byMerchant.get(merchantCurrency(1002, 'EUR'))).to.deep.equal({
      captured: 7000,
      refunded: 0,
      disputed: 0,
      net: 7000,
    });
    expect(byMerchant.get(merchantCurrency(1002, 'USD'))).to.deep.equal({
      captured: 1000,
      refunded: 0,
      disputed: 600,
      net: 400,
    });
    expect([...byMerchant.keys()].sort()).to.deep.equal(['1001 EUR', '1002 EUR', '1002 USD']);
  });
});
