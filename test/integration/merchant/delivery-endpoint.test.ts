import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { expect } from 'chai';
import Koa from 'koa';
import { pino } from 'pino';
import {
  deliveryListener,
  deliveryRoute,
  isDelivery,
} from '../../../src/merchant/webhooks/delivery-endpoint.js';
import type { ReceiverDeps } from '../../../src/merchant/webhooks/receiver.js';
import { SecretCache } from '../../../src/merchant/webhooks/secret-cache.js';
import { systemClock } from '../../../src/shared/clock.js';
import { sign } from '../../../src/shared/signature.js';

/**
 * The receiver served off Node's request, before the koa app (delivery-endpoint.ts): what the app's
 * error middleware did for it, it does itself. The kit-level behaviour is in receiver.test.ts.
 */
describe('merchant: the delivery listener', () => {
  let server: Server;
  let url: string;
  let routeServer: Server;
  let routeUrl: string;
  const lines: Record<string, unknown>[] = [];
  let broken = false;
  const observed: string[] = [];
  // A stored secret the deliveries are not signed with, before the one they are (GATEWAY_WEBHOOK_SECRETS).
  const secrets = new SecretCache(async () => ['whsec_stored', 'whsec_test'], systemClock);

  before(async () => {
    const logger = pino({ level: 'trace' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const deps: ReceiverDeps = {
      intake: async () => 'queued',
      secrets,
      // A defect stood in for by a clock that throws: the one thing receive() does not plan for.
      clock: {
        now: () => {
          if (broken) throw new Error('a defect');
          return Date.now();
        },
      },
      logger,
      observe: (outcome) => void observed.push(outcome),
    };
    server = createServer(deliveryListener({ ...deps, securityHeaders: [['x-frame-options', 'DENY']] }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/gateway`;
    // The app's route for the path's other spellings, with the request id the app's middleware sets.
    const app = new Koa();
    app.use(async (ctx, next) => {
      ctx.state.requestId = 'app-1';
      await next();
    });
    app.use(deliveryRoute(deps));
    routeServer = createServer(app.callback());
    await new Promise<void>((resolve) => routeServer.listen(0, '127.0.0.1', resolve));
    routeUrl = `http://127.0.0.1:${(routeServer.address() as AddressInfo).port}/webhooks/gateway/`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await new Promise((resolve) => routeServer.close(resolve));
  });

  const signed = (body: string) => ({
    method: 'POST',
    headers: { 'x-service-signature': sign(body, 'whsec_test', Math.floor(Date.now() / 1000)) },
    body,
  });

  it('an error it did not foresee: 500 in the envelope with the request id, logged by name and stack, never the body', async () => {
    broken = true;
    try {
      const body = '{"id":"evt_1","type":"transaction.captured","secret_looking":"do-not-log"}';
      const answer = await fetch(url, {
        ...signed(body),
        headers: { ...signed(body).headers, 'x-request-id': 'lb-1' },
      });
      expect(answer.status).to.equal(500);
      expect(answer.headers.get('x-request-id')).to.equal('lb-1');
      expect(answer.headers.get('x-frame-options')).to.equal('DENY');
      expect(await answer.json()).to.deep.equal({
        success: false,
        message: 'Something went wrong on our side.',
        code: 'INTERNAL',
        data: null,
        request_id: 'lb-1',
      });
      const error = lines.find((l) => l.msg === 'unexpected error')!;
      expect(error).to.include({ request_id: 'lb-1', path: '/webhooks/gateway', level: 50 });
      expect((error.err as { message: string; stack: string }).stack).to.contain('a defect');
      expect(JSON.stringify(lines)).to.not.contain('do-not-log');
      expect(lines.at(-1)).to.include({ msg: 'request', status: 500, level: 30, request_id: 'lb-1' });
      // Counted as the kit's own error, not as the database unavailable (which a 503 is).
      expect(observed.at(-1)).to.equal('error');
    } finally {
      broken = false;
    }
  });

  it("the same error on the app route for the path's other spellings: the same 500, counted the same way", async () => {
    broken = true;
    try {
      const answer = await fetch(routeUrl, signed('{"id":"evt_2","type":"transaction.captured"}'));
      expect(answer.status).to.equal(500);
      expect(await answer.json()).to.include({ code: 'INTERNAL', request_id: 'app-1' });
      expect(observed.at(-1)).to.equal('error');
    } finally {
      broken = false;
    }
  });

  it("the receiver's own refusals carry the request id in the body, as every error of the app does", async () => {
    const stale = '{"id":"evt_3","type":"transaction.captured"}';
    const refusals: [string, RequestInit, number, string][] = [
      ['no signature', { method: 'POST', body: '{"id":"evt_x"}' }, 401, 'INVALID_SIGNATURE'],
      [
        'a stale timestamp',
        {
          method: 'POST',
          headers: { 'x-service-signature': sign(stale, 'whsec_test', Math.floor(Date.now() / 1000) - 3600) },
          body: stale,
        },
        401,
        'INVALID_SIGNATURE',
      ],
      ['too large', { method: 'POST', body: 'x'.repeat(256 * 1024 + 1) }, 413, 'PAYLOAD_TOO_LARGE'],
      ['not an event', signed('{"id":"evt_4"}'), 400, 'MALFORMED_EVENT'],
    ];
    for (const [what, init, status, code] of refusals) {
      const answer = await fetch(url, {
        ...init,
        headers: { ...init.headers, 'x-request-id': `lb-${status}` },
      });
      expect(answer.status, what).to.equal(status);
      expect(answer.headers.get('x-request-id'), what).to.equal(`lb-${status}`);
      expect(await answer.json(), what).to.include({ success: false, code, request_id: `lb-${status}` });
    }
    // Without the caller's id, the one the kit made, in both places.
    const own = await fetch(url, { method: 'POST', body: '{"id":"evt_x"}' });
    const id = own.headers.get('x-request-id');
    expect(id).to.match(/^req_/);
    expect((await own.json()).request_id).to.equal(id);
    // On the app's route too.
    const routed = await fetch(routeUrl, { method: 'POST', body: '{"id":"evt_x"}' });
    expect(await routed.json()).to.include({ code: 'INVALID_SIGNATURE', request_id: 'app-1' });
    // A success stays as the app's successes are: no request id in the body.
    const ping = JSON.stringify({
      id: 'evt_ping',
      type: 'webhook.ping',
      created_at: '2026-11-27T12:00:00.000000Z',
      data: {},
    });
    expect(await (await fetch(url, signed(ping))).json()).to.not.have.property('request_id');
  });

  it('a sender that hangs up mid-body: a 400 on the log (unreadable), not an unexpected error', async () => {
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('POST /webhooks/gateway HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = lines.length;
    socket.destroy();
    const deadline = Date.now() + 2000;
    while (!lines.slice(before).some((l) => l.msg === 'request') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const logged = lines.slice(before);
    expect(logged.find((l) => l.msg === 'request')).to.include({ status: 400, level: 30 });
    expect(logged.map((l) => l.msg)).to.not.include('unexpected error');
  });

  it('the secret that verified a delivery is tried first for the next one: one HMAC each, not two', async () => {
    await secrets.refresh();
    const body = JSON.stringify({
      id: 'evt_ping',
      type: 'webhook.ping',
      created_at: '2026-11-27T12:00:00.000000Z',
      data: {},
    });
    const answer = await fetch(url, signed(body));
    expect(answer.status, await answer.text()).to.equal(200);
    expect(secrets.current()).to.deep.equal(['whsec_test', 'whsec_stored']);
  });

  it('takes POST to the path as registered, a query string allowed; nothing else', () => {
    const req = (method: string, url: string) => ({ method, url }) as never;
    expect(isDelivery(req('POST', '/webhooks/gateway'))).to.equal(true);
    expect(isDelivery(req('POST', '/webhooks/gateway?from=lb'))).to.equal(true);
    for (const [method, path] of [
      ['GET', '/webhooks/gateway'],
      ['POST', '/webhooks/gateway/'],
      ['POST', '/webhooks/gatewayx'],
      ['POST', '/Webhooks/Gateway'],
      ['POST', '/webhooks'],
    ])
      expect(isDelivery(req(method!, path!)), `${method} ${path}`).to.equal(false);
  });
});
