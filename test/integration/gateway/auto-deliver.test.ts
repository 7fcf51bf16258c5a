import { expect } from 'chai';
import { pino } from 'pino';
import { createGateway } from '../../../src/gateway/app.js';
import { parseSeed } from '../../../src/gateway/state/seed.js';
import { verify } from '../../../src/shared/signature.js';
import { MERCHANT_KEY, testSeed, transactionBody } from '../../support/gateway.js';
import { allowPrivateUrls, startReceiver } from '../../support/receiver.js';

/** Resolves once `done()` holds, checking after each turn of the event loop; fails after `limit` turns. */
async function eventually(done: () => boolean, limit = 2000): Promise<void> {
  for (let i = 0; i < limit && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(done(), 'condition never held').to.equal(true);
}

describe('gateway: autoDeliver (the standalone and embedded sandbox)', () => {
  it('delivers an event as soon as it is recorded, with no tick', async () => {
    const seed = testSeed();
    allowPrivateUrls(seed);
    const gateway = createGateway({
      seed: parseSeed(seed),
      autoDeliver: true,
      logger: pino({ level: 'silent' }),
    });
    const { url, close } = await gateway.listen(0);
    const receiver = await startReceiver();
    try {
      const call = (method: string, path: string, body: unknown) =>
        fetch(url + path, {
          method,
          headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }).then((r) => r.json());
      const { data } = await call('PUT', '/api/v1/webhook', { url: receiver.url });
      await call('POST', '/api/v1/transactions', transactionBody());
      await eventually(() => receiver.received.length === 1);
      const [delivery] = receiver.received;
      expect((delivery!.json as { type: string }).type).to.equal('transaction.captured');
      const header = delivery!.headers['x-service-signature'] as string;
      expect(
        verify({
          payload: delivery!.raw,
          header,
          secrets: [data.secret],
          nowSeconds: Math.floor(Date.now() / 1000),
        }).ok,
      ).to.equal(true);
    } finally {
      await receiver.close();
      await close();
    }
  });
});
