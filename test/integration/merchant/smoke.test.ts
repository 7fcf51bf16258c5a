import { expect } from 'chai';
import { card } from '../../support/gateway.js';
import { pressButton, startTestKit, type TestKit } from '../../support/kit.js';

describe('merchant: a card payment end to end (smoke)', () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit();
  });
  after(async () => {
    await t?.close();
  });

  it('pays a challenge card through the hosted page and the 3DS return', async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '25.00', currency: 'EUR' } });
    expect(created.status).to.equal(201);
    const id = created.body.data.order.id;
    const pay = await t.call('POST', `/orders/${id}/pay/card`, {
      body: { card: card('4000000000003220'), mode: 'sale' },
    });
    expect(pay.status).to.equal(200);
    expect(pay.body.data.order.status).to.equal('requires_action');
    const back = await pressButton(pay.body.data.next_action.url, 'authenticate');
    expect(back.startsWith(`${t.kit.publicBaseUrl}/checkout/3ds-return?`)).to.equal(true);
    const landing = await fetch(back);
    expect(await landing.text()).to.contain('data-status="paid"');
    const order = await t.call('GET', `/orders/${id}`);
    expect(order.body.data.order.status).to.equal('paid');
    expect(await t.dump()).to.not.contain('4000000000003220');
  });
});
