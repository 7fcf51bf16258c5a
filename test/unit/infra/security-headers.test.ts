import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import Koa from 'koa';
import {
  jsonSecurityHeaderList,
  type SecurityHeadersOptions,
  securityHeaderList,
  securityHeaders,
} from '../../../src/infra/security-headers.js';
import { cspOf } from '../../support/security-headers.js';

/** The middleware alone, before routes that answer, fail with an HttpError-like error, or throw. */
describe('infra: securityHeaders', () => {
  let servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    servers = [];
  });

  const serve = async (options: SecurityHeadersOptions | undefined, route: Koa.Middleware) => {
    const app = new Koa();
    app.silent = true;
    app.use(securityHeaders(options));
    app.use(route);
    const server = createServer(app.callback());
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  const page: Koa.Middleware = (ctx) => {
    ctx.type = 'html';
    ctx.body = '<p>hello</p>';
  };

  it('sends the policy, nosniff, no-referrer and DENY, and no HSTS without an https public URL', async () => {
    for (const options of [undefined, {}, { publicUrl: null }, { publicUrl: 'http://shop.example' }]) {
      const { headers } = await serve(options, page);
      expect(cspOf(headers)).to.deep.equal({
        'default-src': ["'self'"],
        'script-src': ["'self'"],
        'style-src': ["'self'", "'unsafe-inline'"],
        'img-src': ["'self'", 'data:'],
        'font-src': ["'self'"],
        'connect-src': ["'self'"],
        'object-src': ["'none'"],
        'base-uri': ["'self'"],
        'frame-ancestors': ["'none'"],
        'form-action': ["'self'"],
      });
      expect(headers.get('x-content-type-options')).to.equal('nosniff');
      expect(headers.get('referrer-policy')).to.equal('no-referrer');
      expect(headers.get('x-frame-options')).to.equal('DENY');
      expect(headers.get('strict-transport-security'), JSON.stringify(options)).to.equal(null);
    }
  });

  it('sends HSTS when the public URL is https', async () => {
    const { headers } = await serve({ publicUrl: 'https://pay.shop.example/kit' }, page);
    expect(headers.get('strict-transport-security')).to.equal('max-age=31536000; includeSubDomains');
  });

  it("formAction 'anywhere' (the sandbox): no form-action directive, which allows any target", async () => {
    const { headers } = await serve({ formAction: 'anywhere' }, page);
    expect(cspOf(headers)).to.not.have.property('form-action');
    expect(cspOf(headers)['frame-ancestors']).to.deep.equal(["'none'"]);
  });

  it("a JSON answer (the receiver's): nosniff, CORP, DENY, no-referrer, no-store and HSTS as the pages; not the page policy", () => {
    for (const publicUrl of [null, 'https://pay.shop.example']) {
      const page = new Map(
        securityHeaderList({ publicUrl }).map(([name, value]) => [name.toLowerCase(), value]),
      );
      const json = new Map(
        jsonSecurityHeaderList({ publicUrl }).map(([name, value]) => [name.toLowerCase(), value]),
      );
      const same = [
        'x-content-type-options',
        'cross-origin-resource-policy',
        'x-frame-options',
        'referrer-policy',
      ];
      for (const name of same) expect(json.get(name), name).to.equal(page.get(name)).and.be.a('string');
      expect(json.get('x-content-type-options')).to.equal('nosniff');
      expect(json.get('strict-transport-security')).to.equal(page.get('strict-transport-security'));
      expect(json.has('strict-transport-security')).to.equal(publicUrl !== null);
      expect(json.get('cache-control')).to.equal('no-store');
      for (const name of [
        'content-security-policy',
        'cross-origin-opener-policy',
        'origin-agent-cluster',
        'x-xss-protection',
        'x-dns-prefetch-control',
        'x-download-options',
        'x-permitted-cross-domain-policies',
      ]) {
        expect(page.has(name), name).to.equal(true);
        expect(json.has(name), name).to.equal(false);
      }
    }
  });

  it("keeps them on koa's own error answer, which removes every header first, with the error's own", async () => {
    const thrown = await serve(undefined, () => {
      throw Object.assign(new Error('boom'), {
        status: 401,
        expose: true,
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    });
    expect(thrown.status).to.equal(401);
    expect(thrown.text).to.equal('boom');
    expect(cspOf(thrown.headers)['frame-ancestors']).to.deep.equal(["'none'"]);
    expect(thrown.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(thrown.headers.get('www-authenticate')).to.equal('Bearer');
    const crashed = await serve(undefined, () => {
      throw new TypeError('unexpected');
    });
    expect(crashed.status).to.equal(500);
    expect(crashed.headers.get('x-frame-options')).to.equal('DENY');
    expect(crashed.headers.get('referrer-policy')).to.equal('no-referrer');
  });
});
