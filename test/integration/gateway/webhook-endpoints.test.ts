import { expect } from 'chai';
import { isoMicros } from '../../../src/shared/clock.js';
import {
  type Answer,
  type CallOptions,
  MERCHANT_KEY,
  NO_SCOPE_KEY,
  OTHER_MERCHANT_KEY,
  PARTNER_KEY,
  startGateway,
  type TestGateway,
  transactionBody,
} from '../../support/gateway.js';

/**
 * gateway-api.md, Webhook endpoint record, Webhook management (rules 1-5 and 7-8), Authentication
 * rule 3 and Limits; sandbox.md section 8. Strict URL rules (allow_private_webhook_urls false): no
 * test here lets the sandbox deliver to a real host; pings run under the sandbox outage control.
 */

const SECRET = /^whsec_[A-Za-z0-9_-]{43}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const HOOK = 'https://hooks.shop.example.com/webhooks';
const OTHER_HOOK = 'https://other.shop.example.com/in';

/** The injected resolver: names under test resolve as their label says; the rest to a public address. */
const RESOLUTIONS: Record<string, string[] | 'fail'> = {
  'private.example.com': ['10.0.0.5'],
  'loopback6.example.com': ['::1'],
  'metadata.example.com': ['169.254.169.254'],
  'nowhere.example.com': 'fail',
  'empty.example.com': [],
};

function expectError(answer: Answer, status: number, code: string): void {
  expect(answer.status, answer.text).to.equal(status);
  expect(answer.body?.success, answer.text).to.equal(false);
  expect(answer.body?.code, answer.text).to.equal(code);
}

function expectOk(answer: Answer, status = 200): void {
  expect(answer.status, answer.text).to.equal(status);
  expect(answer.body?.success, answer.text).to.equal(true);
  expect(answer.body?.code, answer.text).to.equal('');
}

/** A 422 ERR_VALIDATION_FAILED whose `errors` names `field` (or a path under it). */
function expectInvalid(answer: Answer, field: string): void {
  expectError(answer, 422, 'ERR_VALIDATION_FAILED');
  const keys = Object.keys(answer.body.errors ?? {});
  const hit = keys.find((k) => k === field || k.startsWith(`${field}.`));
  expect(hit, `errors ${answer.text}`).to.be.a('string');
  expect(answer.body.errors[hit!]).to.be.an('array').that.is.not.empty;
}

describe('gateway: webhook endpoints (strict URL rules)', () => {
  let gw: TestGateway;
  let resolved: string[];

  const put = (body: Record<string, unknown>, key: string = MERCHANT_KEY) =>
    gw.call('PUT', '/api/v1/webhook', { key, body });
  const get = (key: string = MERCHANT_KEY, query = '') => gw.call('GET', `/api/v1/webhook${query}`, { key });
  const stored = (merchantId = 1001) => gw.gateway.deps.state.webhooks.endpoints.get(merchantId);
  const storedSecret = (merchantId = 1001) => {
    const endpoint = stored(merchantId);
    if (!endpoint) throw new Error(`merchant ${merchantId} has no endpoint`);
    return gw.gateway.deps.state.webhooks.secretOf(endpoint);
  };
  /** Creates merchant 1001's endpoint and returns the creation answer's data. */
  const create = async (body: Record<string, unknown> = {}, key: string = MERCHANT_KEY) => {
    const answer = await put({ url: HOOK, ...body }, key);
    expectOk(answer, 201);
    return answer.body.data as { endpoint: Record<string, unknown>; secret: string };
  };
  /** Every delivery (and ping) of merchant 1001 fails at once with connection_refused: no network. */
  const outage = async () => {
    expectOk(await gw.call('POST', '/sandbox/webhook/outage', { body: { seconds: 3600 } }));
  };

  beforeEach(async () => {
    resolved = [];
    gw = await startGateway({
      resolve: async (host) => {
        resolved.push(host);
        const answer = RESOLUTIONS[host];
        if (answer === 'fail')
          throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        return answer ?? ['93.184.216.34'];
      },
    });
  });
  afterEach(async () => {
    await gw.close();
  });

  describe('GET, first PUT and later PUTs (rule 2)', () => {
    it('GET before any endpoint exists -> 404 ERR_NOT_FOUND', async () => {
      const answer = await get();
      expectError(answer, 404, 'ERR_NOT_FOUND');
      expect(answer.body.data).to.equal(null);
    });

    it('the first PUT -> 201 {endpoint, secret}: a whsec_ secret and a complete endpoint record without it', async () => {
      const answer = await put({ url: HOOK });
      expectOk(answer, 201);
      expect(answer.body.data).to.have.all.keys('endpoint', 'secret');
      const { endpoint, secret } = answer.body.data;
      expect(secret).to.match(SECRET);
      const now = isoMicros(gw.clock.now());
      expect(endpoint).to.include({
        merchant_id: 1001,
        url: HOOK,
        is_active: true,
        events: null,
        has_secret: true,
        last_success_at: null,
        last_failure_at: null,
        consecutive_failures: 0,
        delivery_status: 'healthy',
        created_at: now,
        updated_at: now,
      });
      expect(endpoint.id).to.be.a('number');
      expect(Number.isInteger(endpoint.id)).to.equal(true);
      expect(endpoint.status_message).to.be.a('string').that.is.not.empty;
      expect(endpoint.created_at).to.match(TIMESTAMP);
      expect(endpoint).to.not.have.any.keys('secret', 'signing_secret');
      expect(JSON.stringify(endpoint)).to.not.include(secret);
      expect(JSON.stringify(endpoint)).to.not.include('whsec_');
      // The strict-mode URL check resolved the host.
      expect(resolved).to.include('hooks.shop.example.com');
      // The secret the answer gave is the one that signs, and it is stored encrypted (rule 2).
      expect(storedSecret()).to.equal(secret);
      expect(stored()!.sealedSecret).to.not.include(secret);
      // GET returns the same record, still without the secret.
      const again = await get();
      expectOk(again);
      expect(again.body.data).to.deep.equal(endpoint);
      expect(again.text).to.not.include(secret);
    });

    it('a later PUT -> 200 with the endpoint record only; the secret is neither returned nor regenerated', async () => {
      const { endpoint, secret } = await create();
      gw.clock.advance(5_000);
      const answer = await put({ url: OTHER_HOOK });
      expectOk(answer, 200);
      expect(answer.body.data).to.not.have.any.keys('endpoint', 'secret');
      expect(answer.body.data).to.include({
        id: endpoint.id,
        merchant_id: 1001,
        url: OTHER_HOOK,
        has_secret: true,
        created_at: endpoint.created_at,
        updated_at: isoMicros(gw.clock.now()),
      });
      expect(answer.text).to.not.include(secret);
      expect(answer.text).to.not.include('whsec_');
      expect(storedSecret()).to.equal(secret);
      // Several more updates, the same URL again included, never touch it either.
      for (const body of [{ url: OTHER_HOOK }, { url: HOOK, is_active: true }, { url: HOOK, events: null }]) {
        const again = await put(body);
        expectOk(again, 200);
        expect(again.text).to.not.include(secret);
      }
      expect(storedSecret()).to.equal(secret);
    });

    it('the secret appears in no later answer: GET, PUT, events list, ping, rotate', async () => {
      const { secret } = await create();
      await outage();
      const answers = [
        await get(),
        await put({ url: HOOK }),
        await put({ url: HOOK, is_active: false }),
        await put({ url: HOOK, is_active: true }),
        await gw.call('GET', '/api/v1/webhook/events'),
        await gw.call('POST', '/api/v1/webhook/test'),
        await gw.call('POST', '/api/v1/webhook/rotate-secret'),
        await get(),
      ];
      for (const answer of answers) {
        expect(answer.status, answer.text).to.be.oneOf([200]);
        expect(answer.text).to.not.include(secret);
      }
      // Only the rotation answer carries a (new) secret.
      expect(answers.filter((a) => a.text.includes('whsec_'))).to.have.length(1);
    });
  });

  describe('URL rules over HTTP (rule 1): 422 ERR_VALIDATION_FAILED on errors.url', () => {
    const invalid: [string, string][] = [
      ['plain http', 'http://hooks.shop.example.com/webhooks'],
      ['a user name', 'https://user@hooks.shop.example.com/webhooks'],
      ['a user and password', 'https://user:pass@hooks.shop.example.com/webhooks'],
      ['localhost', 'https://localhost/webhooks'],
      ['localhost with a port', 'https://localhost:8443/webhooks'],
      ['a subdomain of localhost', 'https://shop.localhost/webhooks'],
      ['a .local name', 'https://printer.local/webhooks'],
      ['a .internal name', 'https://db.internal/webhooks'],
      ['a single-label host', 'https://intranet/webhooks'],
      ['127.0.0.1', 'https://127.0.0.1/webhooks'],
      ['10.x', 'https://10.0.0.5/webhooks'],
      ['172.16.x', 'https://172.16.5.4/webhooks'],
      ['192.168.x', 'https://192.168.1.1/webhooks'],
      ['169.254.x', 'https://169.254.169.254/latest/meta-data'],
      ['100.64.x', 'https://100.64.1.1/webhooks'],
      ['0.0.0.0', 'https://0.0.0.0/webhooks'],
      ['[::1]', 'https://[::1]/webhooks'],
      ['[::]', 'https://[::]/webhooks'],
      ['[fc00::1]', 'https://[fc00::1]/webhooks'],
      ['[fd12::1]', 'https://[fd12::1]/webhooks'],
      ['[fe80::1]', 'https://[fe80::1]/webhooks'],
      ['[::ffff:127.0.0.1]', 'https://[::ffff:127.0.0.1]/webhooks'],
      ['[::ffff:10.0.0.1]', 'https://[::ffff:10.0.0.1]/webhooks'],
      ['2049 characters', `https://hooks.shop.example.com/${'a'.repeat(2049 - 31)}`],
      ['a name the resolver maps to 10.0.0.5', 'https://private.example.com/webhooks'],
      ['a name the resolver maps to ::1', 'https://loopback6.example.com/webhooks'],
      ['a name the resolver maps to 169.254.169.254', 'https://metadata.example.com/webhooks'],
      ['a name the resolver fails on', 'https://nowhere.example.com/webhooks'],
      ['a name the resolver returns no address for', 'https://empty.example.com/webhooks'],
      ['not a URL', 'not a url'],
      ['an empty string', ''],
      ['ftp', 'ftp://hooks.shop.example.com/webhooks'],
    ];

    it('the 2049-character case really is 2049 characters', () => {
      const entry = invalid.find(([label]) => label === '2049 characters')!;
      expect(entry[1]).to.have.length(2049);
    });

    for (const [label, url] of invalid) {
      it(`${label}: refused on creation, nothing created`, async () => {
        expectInvalid(await put({ url }), 'url');
        expect(stored()).to.equal(undefined);
        expectError(await get(), 404, 'ERR_NOT_FOUND');
      });
    }

    it('an invalid URL on update changes nothing', async () => {
      const { endpoint, secret } = await create();
      for (const [, url] of invalid) {
        expectInvalid(await put({ url, is_active: false, events: ['transaction.refunded'] }), 'url');
      }
      const after = await get();
      expectOk(after);
      expect(after.body.data).to.deep.equal(endpoint);
      expect(storedSecret()).to.equal(secret);
    });

    it('a missing or non-string url -> 422 on errors.url', async () => {
      expectInvalid(await put({}), 'url');
      expectInvalid(await put({ is_active: true, events: null }), 'url');
      expectInvalid(await put({ url: 123 }), 'url');
      expectInvalid(await put({ url: null }), 'url');
      expect(stored()).to.equal(undefined);
      await create();
      expectInvalid(await put({ is_active: false }), 'url');
      expect((await get()).body.data.is_active).to.equal(true);
    });

    it('accepted: exactly 2048 characters, a public IPv4 and a public IPv6 literal, 172.32.0.1', async () => {
      const long = `https://hooks.shop.example.com/${'a'.repeat(2048 - 31)}`;
      expect(long).to.have.length(2048);
      const first = await put({ url: long });
      expectOk(first, 201);
      expect(first.body.data.endpoint.url).to.equal(long);
      for (const url of ['https://93.184.216.34/x', 'https://[2606:4700::1111]/x', 'https://172.32.0.1/x']) {
        const answer = await put({ url });
        expectOk(answer, 200);
        expect(answer.body.data.url).to.equal(url);
      }
    });
  });

  describe('events subscription (rule 3)', () => {
    it('an explicit list is stored; omitted keeps it; null resets to null (the default set)', async () => {
      const created = await create({ events: ['transaction.refunded', 'transaction.pending'] });
      expect(created.endpoint.events).to.have.members(['transaction.refunded', 'transaction.pending']);

      const kept = await put({ url: HOOK });
      expectOk(kept);
      expect(kept.body.data.events).to.have.members(['transaction.refunded', 'transaction.pending']);
      const keptWithOtherFields = await put({ url: OTHER_HOOK, is_active: false });
      expect(keptWithOtherFields.body.data.events).to.have.members([
        'transaction.refunded',
        'transaction.pending',
      ]);

      const replaced = await put({ url: HOOK, events: ['transaction.captured'] });
      expectOk(replaced);
      expect(replaced.body.data.events).to.deep.equal(['transaction.captured']);

      const reset = await put({ url: HOOK, events: null });
      expectOk(reset);
      expect(reset.body.data.events).to.equal(null);
      expect((await get()).body.data.events).to.equal(null);
      expect(stored()!.events).to.equal(null);
    });

    it('an empty list -> 422, on creation and on update, and the stored list stays', async () => {
      expectInvalid(await put({ url: HOOK, events: [] }), 'events');
      expect(stored()).to.equal(undefined);
      await create({ events: ['transaction.failed'] });
      expectInvalid(await put({ url: HOOK, events: [] }), 'events');
      expect((await get()).body.data.events).to.deep.equal(['transaction.failed']);
    });

    it('an unknown event type or a non-list -> 422, and the stored list stays', async () => {
      expectInvalid(await put({ url: HOOK, events: ['transaction.bogus'] }), 'events');
      expect(stored()).to.equal(undefined);
      await create({ events: ['transaction.failed'] });
      for (const events of [
        ['transaction.captured', 'transaction.bogus'],
        ['webhook.ping'],
        ['TRANSACTION.CAPTURED'],
        [42],
        'transaction.captured',
      ]) {
        expectInvalid(await put({ url: HOOK, events }), 'events');
      }
      expect((await get()).body.data.events).to.deep.equal(['transaction.failed']);
    });

    it('every documented type is accepted in a list', async () => {
      const all = [
        'transaction.pending',
        'transaction.captured',
        'transaction.refunded',
        'transaction.voided',
        'transaction.failed',
        'transaction.cancelled',
        'transaction.chargeback',
        'transaction.chargeback_reversed',
      ];
      const { endpoint } = await create({ events: all });
      expect(endpoint.events).to.have.members(all);
    });
  });

  describe('is_active (rule 4)', () => {
    it('is_active false pauses: delivery_status paused; true resumes to healthy; config and secret kept', async () => {
      const { secret } = await create({ events: ['transaction.captured'] });
      const paused = await put({ url: HOOK, is_active: false });
      expectOk(paused);
      expect(paused.body.data).to.include({ is_active: false, delivery_status: 'paused', url: HOOK });
      expect(paused.body.data.events).to.deep.equal(['transaction.captured']);
      expect(paused.body.data.status_message).to.be.a('string').that.is.not.empty;
      expect((await get()).body.data.delivery_status).to.equal('paused');
      expect(storedSecret()).to.equal(secret);
      const resumed = await put({ url: HOOK, is_active: true });
      expect(resumed.body.data).to.include({ is_active: true, delivery_status: 'healthy' });
      expect(resumed.body.data.status_message).to.not.equal(paused.body.data.status_message);
    });

    it('created paused -> 201 with delivery_status paused', async () => {
      const { endpoint } = await create({ is_active: false });
      expect(endpoint).to.include({ is_active: false, delivery_status: 'paused' });
    });

    it('a non-boolean is_active -> 422 on errors.is_active', async () => {
      expectInvalid(await put({ url: HOOK, is_active: 'no' }), 'is_active');
      expect(stored()).to.equal(undefined);
    });
  });

  describe('scope webhooks:manage (Authentication rule 3)', () => {
    it('a key without the scope -> 403 ERR_AUTH_FAILED on every webhook endpoint, and nothing changes', async () => {
      // Merchant 1002 (the no-scope key's merchant) has an endpoint and an event, so 404 cannot mask 403.
      const created = await put({ url: OTHER_HOOK }, OTHER_MERCHANT_KEY);
      expectOk(created, 201);
      const sale = await gw.call('POST', '/api/v1/transactions', {
        key: OTHER_MERCHANT_KEY,
        body: transactionBody(),
      });
      expect(sale.status, sale.text).to.equal(200);
      const [event] = [...gw.gateway.deps.state.webhooks.events.values()];
      expect(event?.merchantId).to.equal(1002);
      const before = JSON.stringify(stored(1002));
      const secret = storedSecret(1002);

      const calls: [string, string, CallOptions][] = [
        ['GET', '/api/v1/webhook', {}],
        ['PUT', '/api/v1/webhook', { body: { url: HOOK, is_active: false } }],
        ['PUT', '/api/v1/webhook', { body: { url: 'http://bad' } }],
        ['DELETE', '/api/v1/webhook', {}],
        ['POST', '/api/v1/webhook/rotate-secret', {}],
        ['POST', '/api/v1/webhook/test', {}],
        ['GET', '/api/v1/webhook/events', {}],
        ['GET', '/api/v1/webhook/events?status=bogus', {}],
        ['GET', `/api/v1/webhook/events/${event!.id}`, {}],
        ['POST', `/api/v1/webhook/events/${event!.id}/replay`, {}],
      ];
      for (const [method, path, options] of calls) {
        const answer = await gw.call(method, path, { ...options, key: NO_SCOPE_KEY });
        expectError(answer, 403, 'ERR_AUTH_FAILED');
        expect(answer.body.data, `${method} ${path}`).to.equal(null);
        expect(answer.text).to.not.include(OTHER_HOOK);
      }
      expect(JSON.stringify(stored(1002))).to.equal(before);
      expect(storedSecret(1002)).to.equal(secret);
      expect(event!.queuedReplays).to.equal(0);
      // The scoped key of the same merchant still can.
      expectOk(await get(OTHER_MERCHANT_KEY));
    });
  });

  describe('partner keys: merchant_id in the query on GET/DELETE, in the body on writes', () => {
    const missingOrUnlinkedQuery = ['', '?merchant_id=1002', '?merchant_id=4242'];
    const missingOrUnlinkedBody: Record<string, unknown>[] = [
      {},
      { merchant_id: null },
      { merchant_id: 1002 },
    ];

    it('GET, DELETE and the events list: missing or unlinked merchant_id -> 400 ERR_AUTH_FAILED', async () => {
      await create();
      await put({ url: OTHER_HOOK }, OTHER_MERCHANT_KEY);
      for (const query of missingOrUnlinkedQuery) {
        for (const path of ['/api/v1/webhook', '/api/v1/webhook/events']) {
          const answer = await gw.call('GET', `${path}${query}`, { key: PARTNER_KEY });
          expectError(answer, 400, 'ERR_AUTH_FAILED');
          expect(answer.text).to.not.include(OTHER_HOOK);
        }
        expectError(
          await gw.call('DELETE', `/api/v1/webhook${query}`, { key: PARTNER_KEY }),
          400,
          'ERR_AUTH_FAILED',
        );
      }
      // merchant_id in a DELETE body does not count: the query names the merchant.
      expectError(
        await gw.call('DELETE', '/api/v1/webhook', { key: PARTNER_KEY, body: { merchant_id: 1001 } }),
        400,
        'ERR_AUTH_FAILED',
      );
      expect(stored(1001)).to.not.equal(undefined);
      expect(stored(1002)).to.not.equal(undefined);
    });

    it('PUT, rotate-secret and test: missing or unlinked merchant_id -> 400 ERR_AUTH_FAILED, nothing changes', async () => {
      for (const extra of missingOrUnlinkedBody) {
        expectError(await put({ url: HOOK, ...extra }, PARTNER_KEY), 400, 'ERR_AUTH_FAILED');
      }
      // merchant_id in the query does not count on writes.
      expectError(
        await gw.call('PUT', '/api/v1/webhook?merchant_id=1001', { key: PARTNER_KEY, body: { url: HOOK } }),
        400,
        'ERR_AUTH_FAILED',
      );
      expect(stored(1001)).to.equal(undefined);
      expect(stored(1002)).to.equal(undefined);

      const { secret } = await create();
      await put({ url: OTHER_HOOK }, OTHER_MERCHANT_KEY);
      const secret1002 = storedSecret(1002);
      await outage();
      for (const extra of missingOrUnlinkedBody) {
        expectError(await put({ url: OTHER_HOOK, ...extra }, PARTNER_KEY), 400, 'ERR_AUTH_FAILED');
        for (const path of ['/api/v1/webhook/rotate-secret', '/api/v1/webhook/test']) {
          const answer = await gw.call('POST', path, { key: PARTNER_KEY, body: extra });
          expectError(answer, 400, 'ERR_AUTH_FAILED');
        }
        // Optional body: none at all is "missing" too.
        expectError(
          await gw.call('POST', '/api/v1/webhook/rotate-secret', { key: PARTNER_KEY }),
          400,
          'ERR_AUTH_FAILED',
        );
      }
      expect(stored(1001)!.url).to.equal(HOOK);
      expect(storedSecret()).to.equal(secret);
      expect(storedSecret(1002)).to.equal(secret1002);
    });

    it('replay: missing or unlinked merchant_id in the body -> 400 ERR_AUTH_FAILED; linked -> queued', async () => {
      await create();
      const sale = await gw.call('POST', '/api/v1/transactions', { body: transactionBody() });
      expect(sale.status, sale.text).to.equal(200);
      const [event] = [...gw.gateway.deps.state.webhooks.events.values()];
      expect(event).to.not.equal(undefined);
      // Delete fails the queued event (rule 8); re-registering makes it replayable without any delivery.
      expectOk(await gw.call('DELETE', '/api/v1/webhook'));
      await create();
      expect(event!.status).to.equal('failed');
      const path = `/api/v1/webhook/events/${event!.id}/replay`;
      for (const extra of missingOrUnlinkedBody) {
        expectError(await gw.call('POST', path, { key: PARTNER_KEY, body: extra }), 400, 'ERR_AUTH_FAILED');
      }
      expect(event!.queuedReplays).to.equal(0);
      const linked = await gw.call('POST', path, { key: PARTNER_KEY, body: { merchant_id: 1001 } });
      expectOk(linked);
      expect(linked.body.data.event).to.include({ id: event!.id, last_attempt: null });
      expect(event!.queuedReplays).to.equal(1);
    });

    it('with a linked merchant_id every operation works for that merchant', async () => {
      const created = await put({ url: HOOK, merchant_id: 1001 }, PARTNER_KEY);
      expectOk(created, 201);
      expect(created.body.data.secret).to.match(SECRET);
      expect(created.body.data.endpoint.merchant_id).to.equal(1001);
      const id = created.body.data.endpoint.id;
      // The merchant's own key sees the same endpoint.
      const own = await get();
      expectOk(own);
      expect(own.body.data.id).to.equal(id);

      const read = await get(PARTNER_KEY, '?merchant_id=1001');
      expectOk(read);
      expect(read.body.data).to.include({ id, merchant_id: 1001, url: HOOK });

      const updated = await put({ url: OTHER_HOOK, merchant_id: 1001 }, PARTNER_KEY);
      expectOk(updated, 200);
      expect(updated.body.data).to.include({ id, url: OTHER_HOOK });
      expect(updated.body.data).to.not.have.any.keys('secret');

      const rotated = await gw.call('POST', '/api/v1/webhook/rotate-secret', {
        key: PARTNER_KEY,
        body: { merchant_id: 1001 },
      });
      expectOk(rotated);
      expect(rotated.body.data.secret).to.match(SECRET);
      expect(rotated.body.data.secret).to.not.equal(created.body.data.secret);
      expect(storedSecret()).to.equal(rotated.body.data.secret);

      await outage();
      const ping = await gw.call('POST', '/api/v1/webhook/test', {
        key: PARTNER_KEY,
        body: { merchant_id: 1001 },
      });
      expectOk(ping);
      expect(ping.body.data.success).to.equal(false);

      const events = await gw.call('GET', '/api/v1/webhook/events?merchant_id=1001', { key: PARTNER_KEY });
      expectOk(events);
      expect(events.body.data.events).to.deep.equal([]);

      expectOk(await gw.call('DELETE', '/api/v1/webhook?merchant_id=1001', { key: PARTNER_KEY }));
      expect(stored()).to.equal(undefined);
      expectError(await get(), 404, 'ERR_NOT_FOUND');
    });
  });

  describe('one endpoint per merchant, each merchant its own', () => {
    it("a merchant key cannot see or act on another merchant's endpoint", async () => {
      const mine = await create();
      await outage();
      const other = OTHER_MERCHANT_KEY;
      expectError(await get(other), 404, 'ERR_NOT_FOUND');
      expectError(await gw.call('DELETE', '/api/v1/webhook', { key: other }), 404, 'ERR_NOT_FOUND');
      expectError(
        await gw.call('POST', '/api/v1/webhook/rotate-secret', { key: other }),
        404,
        'ERR_NOT_FOUND',
      );
      expectError(await gw.call('POST', '/api/v1/webhook/test', { key: other }), 404, 'ERR_NOT_FOUND');
      // Naming merchant 1001 does not help a merchant key.
      const named = await gw.call('GET', '/api/v1/webhook?merchant_id=1001', { key: other });
      expect(named.status).to.be.oneOf([400, 403, 404]);
      expect(named.body.success).to.equal(false);
      expect(named.text).to.not.include(HOOK);

      // Its own PUT creates its own endpoint, and leaves merchant 1001's alone.
      const theirs = await put({ url: OTHER_HOOK }, other);
      expectOk(theirs, 201);
      expect(theirs.body.data.endpoint.merchant_id).to.equal(1002);
      expect(theirs.body.data.endpoint.id).to.not.equal(mine.endpoint.id);
      expect(theirs.body.data.secret).to.not.equal(mine.secret);
      expect((await get()).body.data).to.deep.equal(mine.endpoint);
      expect((await get(other)).body.data.url).to.equal(OTHER_HOOK);
      expect(storedSecret(1001)).to.equal(mine.secret);
      // A second PUT by merchant 1001 still updates its one endpoint.
      const again = await put({ url: HOOK });
      expectOk(again, 200);
      expect(again.body.data.id).to.equal(mine.endpoint.id);
      expect(gw.gateway.deps.state.webhooks.endpoints.size).to.equal(2);
    });
  });

  describe('DELETE (rule 8)', () => {
    it('-> 200 data null; then GET 404, DELETE 404, rotate 404, test 404; a new PUT creates a new endpoint with a new secret', async () => {
      const first = await create({ events: ['transaction.refunded'], is_active: false });
      const deleted = await gw.call('DELETE', '/api/v1/webhook');
      expectOk(deleted);
      expect(deleted.body.data).to.equal(null);
      // URL and secret are erased.
      expect(stored()).to.equal(undefined);
      expectError(await get(), 404, 'ERR_NOT_FOUND');
      expectError(await gw.call('DELETE', '/api/v1/webhook'), 404, 'ERR_NOT_FOUND');
      expectError(await gw.call('POST', '/api/v1/webhook/rotate-secret'), 404, 'ERR_NOT_FOUND');
      expectError(await gw.call('POST', '/api/v1/webhook/test'), 404, 'ERR_NOT_FOUND');
      // History stays readable.
      expectOk(await gw.call('GET', '/api/v1/webhook/events'));

      const second = await put({ url: OTHER_HOOK });
      expectOk(second, 201);
      expect(second.body.data.secret).to.match(SECRET);
      expect(second.body.data.secret).to.not.equal(first.secret);
      expect(second.body.data.endpoint.id).to.not.equal(first.endpoint.id);
      // Nothing of the old configuration survives.
      expect(second.body.data.endpoint).to.include({
        url: OTHER_HOOK,
        is_active: true,
        events: null,
        delivery_status: 'healthy',
      });
      expect(storedSecret()).to.equal(second.body.data.secret);
    });

    it('DELETE without an endpoint ever -> 404 ERR_NOT_FOUND', async () => {
      expectError(await gw.call('DELETE', '/api/v1/webhook'), 404, 'ERR_NOT_FOUND');
    });
  });

  describe('rotate-secret (rule 7)', () => {
    it('without an endpoint -> 404 ERR_NOT_FOUND', async () => {
      expectError(await gw.call('POST', '/api/v1/webhook/rotate-secret'), 404, 'ERR_NOT_FOUND');
    });

    it('-> {endpoint, secret} with a new secret that replaces the old one at once', async () => {
      const { endpoint, secret } = await create();
      gw.clock.advance(1_000);
      const rotated = await gw.call('POST', '/api/v1/webhook/rotate-secret');
      expectOk(rotated);
      expect(rotated.body.data).to.have.all.keys('endpoint', 'secret');
      const next = rotated.body.data.secret;
      expect(next).to.match(SECRET);
      expect(next).to.not.equal(secret);
      expect(rotated.body.data.endpoint).to.include({ id: endpoint.id, url: HOOK, has_secret: true });
      expect(rotated.body.data.endpoint).to.not.have.any.keys('secret');
      expect(JSON.stringify(rotated.body.data.endpoint)).to.not.include('whsec_');
      expect(rotated.text).to.not.include(secret);
      expect(storedSecret()).to.equal(next);
      // A second rotation yields yet another secret.
      const again = await gw.call('POST', '/api/v1/webhook/rotate-secret', { body: {} });
      expectOk(again);
      expect(again.body.data.secret).to.not.be.oneOf([secret, next]);
      expect(storedSecret()).to.equal(again.body.data.secret);
      expect((await get()).text).to.not.include('whsec_');
    });
  });

  describe('test ping (rule 5, Limits)', () => {
    it('without an endpoint -> 404 ERR_NOT_FOUND', async () => {
      expectError(await gw.call('POST', '/api/v1/webhook/test'), 404, 'ERR_NOT_FOUND');
    });

    it('more than 10 pings a minute -> 429 ERR_RATE_LIMITED with Retry-After; allowed again 60 s later', async () => {
      await create();
      await outage();
      for (let i = 1; i <= 10; i++) {
        const ping = await gw.call('POST', '/api/v1/webhook/test');
        expectOk(ping);
        expect(ping.body.data).to.include({ success: false, error: 'connection_refused' });
      }
      const refused = await gw.call('POST', '/api/v1/webhook/test');
      expectError(refused, 429, 'ERR_RATE_LIMITED');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter), String(refused.headers.get('retry-after'))).to.equal(true);
      expect(retryAfter).to.be.within(1, 60);
      gw.clock.advance(30_000);
      expectError(await gw.call('POST', '/api/v1/webhook/test'), 429, 'ERR_RATE_LIMITED');
      gw.clock.advance(30_000);
      expectOk(await gw.call('POST', '/api/v1/webhook/test'));
    });

    it('the ping limit is per API key: another key is not refused', async () => {
      await create();
      await outage();
      for (let i = 0; i < 10; i++) expectOk(await gw.call('POST', '/api/v1/webhook/test'));
      expectError(await gw.call('POST', '/api/v1/webhook/test'), 429, 'ERR_RATE_LIMITED');
      expectOk(
        await gw.call('POST', '/api/v1/webhook/test', { key: PARTNER_KEY, body: { merchant_id: 1001 } }),
      );
    });

    it('a failed ping answers 200 with success false, persists nothing and never enters history', async () => {
      const { endpoint } = await create();
      await outage();
      const ping = await gw.call('POST', '/api/v1/webhook/test');
      expectOk(ping);
      expect(ping.body.data).to.have.all.keys(
        'success',
        'status_code',
        'duration_ms',
        'error',
        'delivery_status',
      );
      expect(ping.body.data).to.include({ success: false, status_code: null, delivery_status: 'healthy' });
      const after = await get();
      expect(after.body.data).to.deep.equal(endpoint);
      const events = await gw.call('GET', '/api/v1/webhook/events');
      expect(events.body.data.events).to.deep.equal([]);
      expect(events.body.data.pagination.total).to.equal(0);
      expect(gw.gateway.deps.state.webhooks.events.size).to.equal(0);
    });
  });

  describe('GET /api/v1/webhook/events query validation', () => {
    const bad: [string, string][] = [
      ['status=bogus', 'status'],
      ['status=DELIVERED', 'status'],
      ['event_type=bogus', 'event_type'],
      ['event_type=webhook.ping', 'event_type'],
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['per_page=-1', 'per_page'],
      ['per_page=2.5', 'per_page'],
      ['per_page=ten', 'per_page'],
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=x', 'page'],
      ['transaction_id=abc', 'transaction_id'],
      ['transaction_id=1.5', 'transaction_id'],
      ['from=notadate', 'from'],
      ['to=notadate', 'to'],
    ];
    for (const [query, field] of bad) {
      it(`${query} -> 422 on errors.${field}`, async () => {
        await create();
        expectInvalid(await gw.call('GET', `/api/v1/webhook/events?${query}`), field);
      });
    }

    it('valid bounds are accepted: per_page=1 and 100, page=1, a known status and type, dates, an id', async () => {
      await create();
      for (const query of [
        'per_page=1',
        'per_page=100',
        'page=1',
        'status=pending',
        'status=delivered',
        'status=failed',
        'event_type=transaction.pending',
        'event_type=transaction.chargeback',
        'transaction_id=100000',
        'from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00.000000Z',
      ]) {
        const answer = await gw.call('GET', `/api/v1/webhook/events?${query}`);
        expectOk(answer);
        expect(answer.body.data.events, query).to.deep.equal([]);
      }
    });

    it('an empty history -> events [] with pagination current_page 1, per_page 25 (default), total 0', async () => {
      await create();
      const answer = await gw.call('GET', '/api/v1/webhook/events');
      expectOk(answer);
      expect(answer.body.data.events).to.deep.equal([]);
      // last_page of an empty list is not shown by either spec: only its type is checked.
      expect(answer.body.data.pagination).to.include({ current_page: 1, per_page: 25, total: 0 });
      expect(answer.body.data.pagination.last_page).to.be.a('number');
    });
  });
});
