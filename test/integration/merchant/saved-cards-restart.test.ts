import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { keepSecret, withSecret } from '../../support/order-secrets.js';
import {
  ADMIN_URL,
  databaseName,
  exitWithin,
  freePort,
  healthy,
  leftovers,
  type Proc,
  start,
} from '../../support/process.js';

/**
 * Issue 21: a card saved in one run pays in the next. `npm start` twice on one database and one
 * sandbox state file: both sides stop (SIGTERM) between saving the card and paying with it, and the
 * card, its vault token at the gateway and the customer's token all outlive the restart.
 */
describe('merchant: a saved card across a restart of both sides', function () {
  this.timeout(120_000);
  const { databases, track, cleanUp } = leftovers();
  const dir = mkdtempSync(join(tmpdir(), 'kit-saved-'));
  const database = databaseName('saved', 'restart');
  databases.push(database);
  const OPS = `ops-${randomBytes(12).toString('hex')}`;
  const CUSTOMER = 'cus-restart';
  let env: Record<string, string>;
  let url: string;
  let kit: Proc | null = null;

  before(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = {
      PORT: String(port),
      GATEWAY_PORT: String(await freePort([port])),
      DATABASE_URL: `${ADMIN_URL}/${database}`,
      GATEWAY_SANDBOX_STATE: join(dir, 'sandbox-state.json'),
      OPS_API_TOKEN: OPS,
      APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
    };
  });
  after(async () => {
    await cleanUp();
    rmSync(dir, { recursive: true, force: true });
  });

  const startKit = async () => {
    kit = track(start('src/main.ts', [], env));
    await healthy(kit, url, 30_000);
  };
  const stopKit = async () => {
    kit!.child.kill('SIGTERM');
    const { code } = await exitWithin(kit!, 15_000);
    expect(code, kit!.stderr()).to.equal(0);
  };
  /** Each order's client secret, as the shop keeps it: its pay routes and its public view need it. */
  const secrets = new Map<string, string>();
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: withSecret(secrets, method, path, { 'content-type': 'application/json', ...headers }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: an envelope of any shape
    const answer = { status: res.status, body: (await res.json()) as any };
    keepSecret(secrets, method, path, answer);
    return answer;
  };
  const newOrder = async () => {
    const res = await call('POST', '/orders', {
      amount: '12.00',
      currency: 'EUR',
      customer: { merchant_customer_id: CUSTOMER },
    });
    expect(res.status).to.equal(201);
    return res.body.data.order.id as string;
  };
  let customerToken = '';
  let cardId = '';

  it('first run: the customer pays and saves the card', async () => {
    await startKit();
    const minted = await call('POST', `/customers/${CUSTOMER}/tokens`, undefined, {
      authorization: `Bearer ${OPS}`,
    });
    expect(minted.status, JSON.stringify(minted.body)).to.equal(201);
    customerToken = minted.body.data.customer_token;
    const paid = await call(
      'POST',
      `/orders/${await newOrder()}/pay/card`,
      { card: { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvv: '123' }, save_card: true },
      { 'customer-token': customerToken },
    );
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    const cards = await call('GET', `/customers/${CUSTOMER}/cards`, undefined, {
      'customer-token': customerToken,
    });
    expect(cards.body.data.cards).to.have.length(1);
    cardId = cards.body.data.cards[0].id;
    await stopKit();
  });

  it('second run: the same token lists the same card, as the gateway still keeps it; a token for a new order pays with it', async () => {
    await startKit();
    const headers = { 'customer-token': customerToken };
    const cards = await call('GET', `/customers/${CUSTOMER}/cards`, undefined, headers);
    expect(cards.status, JSON.stringify(cards.body)).to.equal(200);
    expect(cards.body.data.synced).to.equal(true);
    expect(cards.body.data.cards.map((c: { id: string }) => c.id)).to.deep.equal([cardId]);
    const orderId = await newOrder();
    const minted = await call(
      'POST',
      `/customers/${CUSTOMER}/tokens`,
      { order_id: orderId },
      { authorization: `Bearer ${OPS}` },
    );
    expect(minted.status, JSON.stringify(minted.body)).to.equal(201);
    const paid = await call(
      'POST',
      `/orders/${orderId}/pay/saved`,
      { card: cardId },
      {
        'customer-token': minted.body.data.customer_token,
      },
    );
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(paid.body.data.order.status).to.equal('paid');
    const read = await call('GET', `/orders/${orderId}`, undefined, { authorization: `Bearer ${OPS}` });
    const history = read.body.data.order.history as { detail: string }[];
    expect(history.some((h) => h.detail?.includes(`visa •••• 4242, 12/2030 (${cardId})`))).to.equal(true);
    await stopKit();
  });
});
