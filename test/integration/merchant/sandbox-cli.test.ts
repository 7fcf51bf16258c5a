import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { gatewayApi } from '../../../src/gateway/http/api-document.js';
import { apiDocument } from '../../../src/shared/api-document.js';
import { card } from '../../support/gateway.js';
import {
  ADMIN_URL,
  call,
  databaseName,
  exitWithin,
  freePort,
  healthy,
  leftovers,
  lines,
  type Proc,
  start,
  waitFor,
} from '../../support/process.js';

/**
 * `npm run cli -- sandbox advance|tick|settle|chargeback|reverse|outage` beside a running kit (its
 * embedded sandbox, its own database), run as an engineer runs them: the kit's order ids in, what
 * changed out, and the order as the kit holds it afterwards. Refusals are one line on stderr, exit 1,
 * and nothing sent to a gateway that is not the sandbox.
 */
describe('merchant: the CLI’s sandbox triggers beside a running kit', function () {
  this.timeout(180_000);
  const { databases, track, cleanUp } = leftovers();
  const database = databaseName('sandboxcli', 'main');
  databases.push(database);
  let env: Record<string, string>;
  let url: string;
  let kit: Proc;

  /** A gateway that is not the sandbox: it records what it is asked and answers the envelope's 404. */
  let other: Server;
  let otherUrl: string;
  const otherSaw: string[] = [];
  /** When true, its /openapi.json is the sandbox's: a look-alike whose controls are missing. */
  let lookAlike = false;

  const cli = async (args: string[], extra: Record<string, string> = {}) => {
    const p = track(start('src/cli.ts', ['sandbox', ...args], { ...env, ...extra }));
    const { code } = await exitWithin(p, 60_000);
    return { code, out: lines(p.stdout()), err: lines(p.stderr()), errText: p.stderr() };
  };
  /** A refusal: one line on stderr, no stack, nothing on stdout, exit 1. */
  const refused = (run: Awaited<ReturnType<typeof cli>>, line: string | RegExp) => {
    expect(run.code, run.errText).to.equal(1);
    expect(run.err, run.errText).to.have.length(1);
    if (typeof line === 'string') expect(run.err[0]).to.equal(line);
    else expect(run.err[0]).to.match(line);
    expect(run.errText).to.not.match(/\n\s+at /);
    expect(run.out).to.deep.equal([]);
  };
  const orderOf = async (id: string) => (await call(url, 'GET', `/orders/${id}`)).body.data.order;
  const newOrder = async (amount = '12.34') => {
    const created = await call(url, 'POST', '/orders', { amount, currency: 'EUR' });
    expect(created.status, created.text).to.equal(201);
    return created.body.data.order.id as string;
  };
  const paidByCard = async (amount = '12.34') => {
    const id = await newOrder(amount);
    const pay = await call(url, 'POST', `/orders/${id}/pay/card`, { mode: 'sale', card: card() });
    expect(pay.body.data?.order?.status, pay.text).to.equal('paid');
    return id;
  };
  const redirect = async () => {
    const id = await newOrder('9.99');
    const pay = await call(url, 'POST', `/orders/${id}/pay/redirect`, {
      payment_method: 'ideal',
      customer: { country_code: 'NL' },
    });
    expect(pay.body.data?.order?.status, pay.text).to.equal('requires_action');
    return { id, sessionId: (pay.body.data.next_action.url as string).split('/').pop()! };
  };

  before(async () => {
    const port = await freePort();
    const gatewayPort = await freePort([port]);
    url = `http://127.0.0.1:${port}`;
    env = { PORT: String(port), GATEWAY_PORT: String(gatewayPort), DATABASE_URL: `${ADMIN_URL}/${database}` };
    kit = track(start('src/main.ts', [], env));
    const document = JSON.stringify(apiDocument(gatewayApi));
    other = createServer((req, res) => {
      otherSaw.push(`${req.method} ${req.url}`);
      req.resume();
      if (lookAlike && req.method === 'GET' && req.url === '/openapi.json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(document);
        return;
      }
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ success: false, message: 'Not found.', code: 'ERR_NOT_FOUND', data: null }));
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    await healthy(kit, url, 30_000);
  });
  after(async () => {
    other?.close();
    await cleanUp();
  });

  it('chargeback <order>: the gateway’s answer and the order paid -> disputed; reverse: back to paid', async () => {
    const id = await paidByCard('12.34');
    const charged = await cli(['chargeback', id]);
    expect(charged.code, charged.errText).to.equal(0);
    expect(charged.err).to.deep.equal([]);
    expect(charged.out).to.have.length(2);
    expect(charged.out[0]).to.match(/^gateway: transaction \d+ chargeback \(12\.34 EUR charged back\)$/);
    expect(charged.out[1]).to.equal(`order ${id}: paid -> disputed (12.34 EUR disputed)`);
    expect(await orderOf(id)).to.include({ status: 'disputed', disputed_amount: 1234 });

    const reversed = await cli(['reverse', id]);
    expect(reversed.code, reversed.errText).to.equal(0);
    expect(reversed.out).to.deep.equal([
      charged.out[0]!.replace(/chargeback \(.*$/, 'captured (chargeback reversed)'),
      `order ${id}: disputed -> paid`,
    ]);
    expect(await orderOf(id)).to.include({ status: 'paid', disputed_amount: 0 });
  });

  it('chargeback --amount: in the order’s currency, checked; part of the payment disputed', async () => {
    const id = await paidByCard('20.00');
    refused(
      await cli(['chargeback', id, '--amount', '5.001']),
      '--amount: must have at most 2 decimal places for EUR, the order\'s currency (got "5.001")',
    );
    refused(
      await cli(['chargeback', id, '--amount', '25.00']),
      "--amount: must be at most 20.00 EUR, what was captured and not refunded (the sandbox's answer: HTTP 422 ERR_VALIDATION_FAILED)",
    );
    expect((await orderOf(id)).status, 'nothing charged back by a refused amount').to.equal('paid');
    const run = await cli(['chargeback', id, '--amount', '5.00']);
    expect(run.code, run.errText).to.equal(0);
    expect(run.out[1]).to.equal(`order ${id}: paid -> disputed (5.00 EUR disputed)`);
    expect(await orderOf(id)).to.include({ status: 'disputed', disputed_amount: 500 });
  });

  it('settle <order> paid: a redirect payment’s session settled, the order requires_action -> paid', async () => {
    const { id, sessionId } = await redirect();
    const run = await cli(['settle', id, 'paid']);
    expect(run.code, run.errText).to.equal(0);
    expect(run.out).to.have.length(2);
    expect(run.out[0]).to.match(
      new RegExp(`^gateway: payment session ${sessionId} paid \\(transaction \\d+\\)$`),
    );
    expect(run.out[1]).to.equal(`order ${id}: requires_action -> paid`);
    expect((await orderOf(id)).status).to.equal('paid');
    // Settled once: the sandbox refuses a second, in one line.
    refused(
      await cli(['settle', id, 'failed']),
      `the sandbox refused to settle payment session ${sessionId}: The session is paid; only an open session settles. (the sandbox's answer: HTTP 409 ERR_INVALID_TRANSACTION)`,
    );
  });

  it('settle <ps_...> failed: the gateway’s session id works too, and the order it belongs to is shown', async () => {
    const { id, sessionId } = await redirect();
    const run = await cli(['settle', sessionId, 'failed']);
    expect(run.code, run.errText).to.equal(0);
    expect(run.out[1]).to.equal(`order ${id}: requires_action -> failed`);
    expect((await orderOf(id)).status).to.equal('failed');
  });

  it('advance: the sandbox clock before -> after; a tick then runs at the moved clock', async () => {
    const run = await cli(['advance', '1m30s']);
    expect(run.code, run.errText).to.equal(0);
    const m = /^sandbox clock: (\S+ \S+) UTC -> (\S+ \S+) UTC \(\+1m30s\)$/.exec(run.out[0] ?? '');
    expect(m, run.out.join('\n')).to.not.equal(null);
    const [before, after] = [Date.parse(`${m![1]}Z`), Date.parse(`${m![2]}Z`)];
    expect(after - before).to.equal(90_000);
    expect(before).to.be.at.least(Date.now() - 120_000);
    expect(run.out[1]).to.match(
      /^the kit runs on its embedded sandbox's clock: both are now 1m(29|30)s ahead of real time$/,
    );

    const tick = await cli(['tick']);
    expect(tick.code, tick.errText).to.equal(0);
    const at = /^sandbox tick at (\S+ \S+) UTC: ran what was due$/.exec(tick.out[0] ?? '');
    expect(at, tick.out.join('\n')).to.not.equal(null);
    expect(Date.parse(`${at![1]}Z`)).to.be.at.least(after);
    expect(tick.out.slice(1).map((l) => l.trim().split(/\s{2,}/)[0])).to.deep.equal([
      'webhook attempts',
      'sessions expired',
      '3DS challenges expired',
      'auths lapsed',
      'events pruned',
    ]);
  });

  it('customers token after an advance: issued on the sandbox clock, so the kit takes it', async () => {
    const moved = await cli(['advance', '2h']);
    expect(moved.code, moved.errText).to.equal(0);
    const p = track(start('src/cli.ts', ['customers', 'token', 'cus-clock'], env));
    const { code } = await exitWithin(p, 60_000);
    expect(code, p.stderr()).to.equal(0);
    expect(p.stderr(), 'the running kit answered').to.equal('');
    const issued = JSON.parse(p.stdout()) as { customer_token: string; expires_at: string };
    // An hour from the sandbox's time, which is two hours ahead: on this machine's, it had lapsed.
    expect(Date.parse(issued.expires_at)).to.be.above(Date.now() + 2.5 * 3_600_000);
    const cards = await call(url, 'GET', '/customers/cus-clock/cards', undefined, {
      'customer-token': issued.customer_token,
    });
    expect(cards.status, cards.text).to.equal(200);
  });

  it('customers token --order: a token that pays that order of the customer, and lists cards; another order or customer is one line', async () => {
    const created = await call(url, 'POST', '/orders', {
      amount: '3.00',
      currency: 'EUR',
      customer: { merchant_customer_id: 'cus-cli-order' },
    });
    expect(created.status, created.text).to.equal(201);
    const orderId = created.body.data.order.id as string;
    const p = track(start('src/cli.ts', ['customers', 'token', 'cus-cli-order', '--order', orderId], env));
    const { code } = await exitWithin(p, 60_000);
    expect(code, p.stderr()).to.equal(0);
    const issued = JSON.parse(p.stdout()) as { customer_token: string; order_id: string };
    expect(issued.order_id).to.equal(orderId);
    expect(issued.customer_token).to.match(/^ct2\./);
    // It is this customer's: their (empty) list reads; paying needs a saved card, which it names.
    const cards = await call(url, 'GET', '/customers/cus-cli-order/cards', undefined, {
      'customer-token': issued.customer_token,
    });
    expect(cards.status, cards.text).to.equal(200);
    const paying = await call(
      url,
      'POST',
      `/orders/${orderId}/pay/saved`,
      { card: `card_${'x'.repeat(24)}` },
      {
        'customer-token': issued.customer_token,
      },
    );
    expect(paying.status, paying.text).to.equal(404);
    expect(paying.body.code).to.equal('CARD_NOT_FOUND');
    const other = track(
      start('src/cli.ts', ['customers', 'token', 'cus-someone-else', '--order', orderId], env),
    );
    expect((await exitWithin(other, 60_000)).code).to.equal(1);
    expect(other.stderr().trim()).to.equal("--order: names another customer's order, or one that names none");
  });

  it('refused with one line: a bad duration, an unknown order, an order with nothing to act on', async () => {
    refused(
      await cli(['advance', '2x']),
      '<duration>: must be a duration such as 90s, 15m, 2h, 7d or 1h30m (got "2x")',
    );
    refused(await cli(['outage', '0m']), '<duration>: must be longer than zero (got "0m")');
    refused(await cli(['chargeback', 'ord_doesnotexist']), 'ord_doesnotexist: no order has this id');
    refused(await cli(['settle', 'ord_doesnotexist', 'paid']), 'ord_doesnotexist: no order has this id');
    refused(
      await cli(['settle', 'ord_x', 'maybe']),
      '<outcome>: must be paid, failed or cancelled (got "maybe")',
    );
    const unpaid = await newOrder();
    refused(
      await cli(['reverse', unpaid]),
      `${unpaid}: the order has no payment attempt: nothing to reverse`,
    );
    const card = await paidByCard();
    refused(
      await cli(['settle', card, 'paid']),
      `${card}: the order's current payment is a card payment with no payment session: only a redirect payment settles`,
    );
    refused(
      await cli(['reverse', card]),
      /^the sandbox refused to reverse the chargeback of transaction \d+: Only a charged-back payment can have its chargeback reversed; this sale is captured\. \(the sandbox's answer: HTTP 400 ERR_INVALID_TRANSACTION\)$/,
    );
  });

  it('a gateway that is not the sandbox: one line naming GATEWAY_BASE_URL, and nothing but a read sent to it', async () => {
    otherSaw.length = 0;
    const real = { GATEWAY_BASE_URL: otherUrl, GATEWAY_API_KEY: 'sk_live_not_a_sandbox_key' };
    for (const args of [['advance', '2h'], ['tick'], ['chargeback', 'ord_any'], ['outage', '10m']]) {
      refused(
        await cli(args, real),
        `GATEWAY_BASE_URL: ${otherUrl} is not the sandbox (GET /openapi.json answers HTTP 404): the sandbox commands work only against the embedded or standalone sandbox`,
      );
    }
    expect(otherSaw).to.deep.equal(Array(4).fill('GET /openapi.json'));
  });

  it('a look-alike whose control answers 404: one line, no stack', async () => {
    lookAlike = true;
    try {
      otherSaw.length = 0;
      const run = await cli(['advance', '2h'], {
        GATEWAY_BASE_URL: otherUrl,
        GATEWAY_API_KEY: 'sk_test_look_alike',
      });
      refused(
        run,
        "the sandbox refused to move its clock: Not found. (the sandbox's answer: HTTP 404 ERR_NOT_FOUND)",
      );
      expect(otherSaw).to.deep.equal(['GET /openapi.json', 'POST /sandbox/clock/advance']);
    } finally {
      lookAlike = false;
    }
  });

  it('no kit running: one line saying so', async () => {
    const nothing = await freePort();
    refused(
      await cli(['tick'], { GATEWAY_PORT: String(nothing) }),
      `no running kit: the embedded sandbox gateway at http://127.0.0.1:${nothing} does not answer (it runs inside the kit: start it with \`npm start\`, or set GATEWAY_BASE_URL to use another gateway)`,
    );
  });

  // Last: the outage holds back every later delivery of this kit's merchant.
  it('outage: deliveries fail; a chargeback then does not reach the order within --wait, which is said, exit 0', async () => {
    const run = await cli(['outage', '10m']);
    expect(run.code, run.errText).to.equal(0);
    expect(run.out[0]).to.match(
      /^webhook deliveries to merchant 1001 fail \(connection_refused\) for 10m of sandbox clock, until \S+ \S+ UTC$/,
    );
    const id = await paidByCard();
    const charged = await cli(['chargeback', id, '--wait', '2']);
    expect(charged.code, charged.errText).to.equal(0);
    expect(charged.out[0]).to.match(/^gateway: transaction \d+ chargeback \(12\.34 EUR charged back\)$/);
    expect(charged.out.slice(1)).to.deep.equal([
      `order ${id}: still paid after 2 s; the kit applies the change when the gateway's event arrives (a webhook or its retry, or the recovery job)`,
    ]);
    await waitFor('the order as it was', async () => (await orderOf(id)).status === 'paid');
  });
});
