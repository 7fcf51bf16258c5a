import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { HoldProxy } from '../../../chaos/hold-proxy.js';
import { delay } from '../../support/process.js';

/**
 * The crash points' hold proxy, against a target on 127.0.0.1 that counts what reaches it: a death
 * point is only as true as the proxy's hold (held before it leaves means the target never saw it).
 */
describe('chaos: the hold proxy', () => {
  let target: Server;
  let targetUrl: string;
  const seen: string[] = [];

  before(async () => {
    target = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += String(chunk);
      });
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${body}`);
        res.writeHead(201, { 'content-type': 'application/json', 'x-target': 'yes' });
        res.end(JSON.stringify({ path: req.url }));
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => target.close(() => resolve())));

  beforeEach(() => {
    seen.length = 0;
  });

  const post = (url: string, body = '{"a":1}') =>
    fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

  it('passes every other request through unchanged, a caller’s name taken off the path', async () => {
    const proxy = await HoldProxy.start(targetUrl, { byCaller: true });
    try {
      const res = await post(`${proxy.baseFor('api')}/api/v1/things?x=1`);
      expect(res.status).to.equal(201);
      expect(res.headers.get('x-target')).to.equal('yes');
      expect(await res.json()).to.deep.equal({ path: '/api/v1/things?x=1' });
      expect(seen).to.deep.equal(['POST /api/v1/things?x=1 {"a":1}']);
    } finally {
      await proxy.close();
    }
  });

  it('answer: the target does the work, its answer is held, then the client is cut off; once only', async () => {
    const proxy = await HoldProxy.start(targetUrl, { byCaller: true });
    try {
      const held = proxy.arm({ method: 'POST', path: /^\/api\/v1\/things$/, mode: 'answer', who: 'api' });
      // Another caller's request, or another path, passes.
      expect((await post(`${proxy.baseFor('scheduler')}/api/v1/things`)).status).to.equal(201);
      const cut = post(`${proxy.baseFor('api')}/api/v1/things`).then(
        () => 'answered',
        () => 'cut',
      );
      const h = await held;
      expect(h.status).to.equal(201);
      expect(h.passing).to.deep.equal({ who: 'api', method: 'POST', path: '/api/v1/things' });
      expect(seen).to.have.length(2);
      h.drop();
      expect(await cut).to.equal('cut');
      expect((await post(`${proxy.baseFor('api')}/api/v1/things`)).status).to.equal(201);
    } finally {
      await proxy.close();
    }
  });

  it('request: held before it leaves; the target never sees it', async () => {
    const proxy = await HoldProxy.start(targetUrl, { byCaller: false });
    try {
      const held = proxy.arm({ method: 'POST', path: /^\/pay$/, mode: 'request' });
      const cut = post(`${proxy.url}/pay`).then(
        () => 'answered',
        () => 'cut',
      );
      const h = await held;
      expect(h.status).to.equal(null);
      h.drop();
      expect(await cut).to.equal('cut');
      expect(seen).to.deep.equal([]);
    } finally {
      await proxy.close();
    }
  });

  it('pause: what it picks waits at the door until resume, then goes through in order', async () => {
    const proxy = await HoldProxy.start(targetUrl, { byCaller: false });
    try {
      proxy.pause((p) => p.path === '/webhooks/gateway');
      const first = post(`${proxy.url}/webhooks/gateway`, '1');
      const second = post(`${proxy.url}/webhooks/gateway`, '2');
      expect((await post(`${proxy.url}/orders`)).status).to.equal(201);
      await delay(100);
      expect(seen).to.deep.equal(['POST /orders {"a":1}']);
      proxy.resume();
      expect((await first).status).to.equal(201);
      expect((await second).status).to.equal(201);
      expect(seen.slice(1)).to.have.members(['POST /webhooks/gateway 1', 'POST /webhooks/gateway 2']);
    } finally {
      await proxy.close();
    }
  });
});
