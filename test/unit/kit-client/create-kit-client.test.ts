import { createKitClient, type Order, type RequestBody } from '@merchant-kit/client';
import { expect } from 'chai';

/** A fetch that keeps each request and answers an order, as the kit would. */
function recording() {
  const requests: Request[] = [];
  const fetch = async (request: Request) => {
    requests.push(request);
    return Response.json({ success: true, message: '', code: '', data: { order: { id: 'ord_1' } } });
  };
  return { requests, fetch };
}

/** The package's own code: how it builds requests (the walkthrough test runs it against a real kit). */
describe('kit client: createKitClient', () => {
  it('sends the token as a bearer on every request, to the paths of the document under baseUrl', async () => {
    const { requests, fetch } = recording();
    const client = createKitClient({ baseUrl: 'http://kit.test/', token: 'kop_secret', fetch });
    const { data } = await client.GET('/orders/{id}', { params: { path: { id: 'ord_1' } } });
    await client.POST('/orders/{id}/refund', {
      params: { path: { id: 'ord_1' }, header: { 'Idempotency-Key': 'r-1' } },
      body: { amount: '2.00', reason: 'damaged' },
    });
    expect(data?.data.order.id).to.equal('ord_1');
    expect(requests.map((r) => `${r.method} ${r.url}`)).to.deep.equal([
      'GET http://kit.test/orders/ord_1',
      'POST http://kit.test/orders/ord_1/refund',
    ]);
    for (const r of requests) expect(r.headers.get('authorization')).to.equal('Bearer kop_secret');
    expect(requests[1]!.headers.get('idempotency-key')).to.equal('r-1');
    expect(await requests[1]!.json()).to.deep.equal({ amount: '2.00', reason: 'damaged' });
  });

  it('sends no Authorization without a token, and keeps the headers it is given', async () => {
    const { requests, fetch } = recording();
    const client = createKitClient({
      baseUrl: 'http://kit.test',
      headers: { 'X-Request-Id': 'shop-1' },
      fetch,
    });
    await client.POST('/orders', { body: { amount: '12.34', currency: 'EUR' } });
    expect(requests[0]!.headers.get('authorization')).to.equal(null);
    expect(requests[0]!.headers.get('x-request-id')).to.equal('shop-1');
  });

  it("the token wins over an Authorization among the headers: the client's token is the one sent", async () => {
    const { requests, fetch } = recording();
    const client = createKitClient({
      baseUrl: 'http://kit.test',
      token: 'kop_mine',
      headers: { Authorization: 'Bearer someone-else' },
      fetch,
    });
    await client.GET('/orders', {});
    expect(requests[0]!.headers.get('authorization')).to.equal('Bearer kop_mine');
  });

  // `npm run typecheck` checks these lines: each `@ts-expect-error` fails it when its line stops being
  // an error, so the client's types are the document's (not `any`), path, field and answer alike.
  it('is typed by the document: unknown paths, fields and statuses are type errors', async () => {
    const { fetch } = recording();
    const client = createKitClient({ baseUrl: 'http://kit.test', fetch });
    // @ts-expect-error: the document has no such path
    await client.GET('/order/{id}', { params: { path: { id: 'ord_1' } } });
    await client.POST('/orders', {
      // @ts-expect-error: an order takes no `colour` (openapi-fetch infers the body: `satisfies` checks it)
      body: { amount: '1.00', currency: 'EUR', colour: 'red' } satisfies RequestBody<'createOrder'>,
    });
    // @ts-expect-error: an order's amount is required
    await client.POST('/orders', { body: { currency: 'EUR' } });
    // @ts-expect-error: a refund needs its Idempotency-Key
    await client.POST('/orders/{id}/refund', { params: { path: { id: 'ord_1' } }, body: { amount: '1.00' } });
    const { data } = await client.GET('/orders/{id}', { params: { path: { id: 'ord_1' } } });
    // @ts-expect-error: an order has no `state`; its status is `status`
    expect(data?.data.order.state).to.equal(undefined);
    const paid: Order['status'] = 'paid';
    // @ts-expect-error: `lost` is no order status
    const lost: Order['status'] = 'lost';
    expect([paid, lost]).to.have.length(2);
  });
});
