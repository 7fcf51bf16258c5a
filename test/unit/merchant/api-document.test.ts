import Router from '@koa/router';
import { expect } from 'chai';
import { pino } from 'pino';
import { merchantApi } from '../../../src/merchant/http/api-document.js';
import { createMerchantApp } from '../../../src/merchant/http/app.js';
import { apiDocument } from '../../../src/shared/api-document.js';
import {
  coverageGaps,
  documentProblems,
  expectDocumented,
  refusedExamples,
} from '../../support/api-document.js';

/**
 * issue, part 4: the merchant API's OpenAPI 3.1 document, generated from the routes' zod schemas.
 * The app is built only to list its routes: no request reaches it, so its dependencies are stubs.
 */
function merchantApp() {
  return createMerchantApp({
    logger: pino({ level: 'silent' }),
    readiness: [],
    receiver: async () => {},
    queues: [],
    metrics: { text: async () => '', contentType: 'text/plain', token: null },
    store: {},
    publicBaseUrl: 'http://127.0.0.1:3000',
  } as unknown as Parameters<typeof createMerchantApp>[0]);
}

const REGISTRY = 'src/merchant/http/api-document.ts';
const document = apiDocument(merchantApi);
const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
  (['get', 'post', 'put', 'delete', 'patch'] as const)
    .filter((method) => item[method])
    .map((method) => ({ method, path, operation: item[method]! })),
);

describe('the merchant API document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).to.equal('3.1.0');
    expect(document.info.title).to.equal('Merchant payment kit API');
    expect(await documentProblems(document)).to.equal('');
  });

  it('has an entry for every route createMerchantApp serves, landings and health included, and no other', () => {
    const app = merchantApp();
    expectDocumented(app, merchantApi, REGISTRY);
    const paths = operations.map((o) => `${o.method.toUpperCase()} ${o.path}`);
    for (const route of ['GET /', 'GET /checkout/3ds-return', 'GET /healthz', 'GET /readyz', 'GET /docs'])
      expect(paths).to.include(route);
  });

  it('documents, for every route that reads a JSON body, the unreadable body (400) and the body over its size (413)', () => {
    // The body parser answers both before the route's own code: a route listing its answers by hand
    // forgot them once, and only a fuzz run that happened to send 64 KiB to it noticed.
    const missing = operations
      .filter(({ operation }) => {
        const body = operation.requestBody;
        return (
          body !== undefined && '$ref' in body === false && body.content['application/json'] !== undefined
        );
      })
      .filter(({ operation }) => !operation.responses?.['400'] || !operation.responses?.['413'])
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    expect(missing).to.deep.equal([]);
  });

  it("gives request examples that the routes' own schemas accept", () => {
    expect(refusedExamples(merchantApi)).to.deep.equal([]);
  });

  it('names a route added later without an entry; leaves out only what is declared outside the API', () => {
    const app = merchantApp();
    const later = new Router();
    later.get('/reports/monthly', (ctx) => {
      ctx.body = {};
    });
    later.get('/docs/assets/another-file.js', (ctx) => {
      ctx.body = '';
    });
    app.use(later.routes());
    expect(coverageGaps(app, merchantApi).undocumented).to.deep.equal(['GET /reports/monthly']);
    expect(() => expectDocumented(app, merchantApi, REGISTRY)).to.throw(/GET \/reports\/monthly/);
  });

  it("puts the order list, capture, refund, void, cancel, payment links, reviews, the report, the audit, gateway money with no order, disputes, customer tokens, charges and erasures behind the ops bearer token, saved cards behind the customer token, an order's shopper routes behind its secret or a bearer token, with a 401 (a 403 where a role may not), and nothing else", () => {
    expect(document.components?.securitySchemes?.opsToken).to.include({ type: 'http', scheme: 'bearer' });
    for (const { method, path, operation } of operations) {
      const operator =
        (method === 'get' && path === '/orders') ||
        /^\/orders\/\{id\}\/(capture|refund|void|review|cancel|payment-link)$|^\/reports\/reconciliation$|^\/audit$|^\/unmatched-money(\/\{id\}\/(attach|resolve))?$|^\/disputes(\/\{id\}\/lost)?$|^\/customers\/\{id\}\/(tokens|charges|erase)$/.test(
          path,
        );
      // An order's shopper routes: its secret (a header or the body, no scheme) or a bearer token.
      const shopper = [{}, { opsToken: [] }];
      const customer: Record<string, unknown> = {
        'post /orders/{id}/pay/card': [
          ...shopper,
          { customerToken: [] },
          { customerToken: [], opsToken: [] },
        ],
        'post /orders/{id}/pay/saved': [{ customerToken: [] }, { customerToken: [], opsToken: [] }],
        'post /orders/{id}/pay/redirect': shopper,
        'get /customers/{id}/cards': [{ customerToken: [] }, { opsToken: [] }],
        'delete /customers/{id}/cards/{card}': [{ customerToken: [] }, { opsToken: [] }],
        // With the secret the public view; with a reader's token, the whole order.
        'get /orders/{id}': shopper,
        // Anyone makes an order; a reference of one's own needs the storefront's or an operator's token.
        'post /orders': [{}, { opsToken: [] }],
        // Ready or not for anyone; the dependencies and the gateway key for a reader.
        'get /readyz': [{}, { opsToken: [] }],
        // Open while METRICS_TOKEN is unset; then that token, or a reader's.
        'get /metrics': [{}, { metricsToken: [] }, { opsToken: [] }],
      };
      const expected = customer[`${method} ${path}`] ?? (operator ? [{ opsToken: [] }] : []);
      expect(operation.security ?? [], `${method} ${path}`).to.deep.equal(expected);
      if (customer[`${method} ${path}`]) expect(operation.responses).to.have.property('401');
      if ((method === 'get' && path === '/orders/{id}') || (method === 'post' && path === '/orders'))
        expect(operation.responses, `${method} ${path}`).to.have.property('403');
      if (operator) expect(operation.responses).to.have.property('401');
      // Every role reads the lists; everything else some role may not do.
      const everyRole = method === 'get' && ['/orders', '/unmatched-money', '/disputes'].includes(path);
      if (operator && !everyRole) expect(operation.responses, `${method} ${path}`).to.have.property('403');
    }
  });

  it('documents Idempotency-Key on the operator routes: required for a refund only', () => {
    const keyOf = (path: string) =>
      (document.paths?.[path]?.post?.parameters ?? []).find(
        (p) => 'in' in p && p.in === 'header' && p.name === 'Idempotency-Key',
      ) as { required?: boolean } | undefined;
    expect(keyOf('/orders/{id}/capture')?.required ?? false).to.equal(false);
    expect(keyOf('/orders/{id}/void')?.required ?? false).to.equal(false);
    expect(keyOf('/orders/{id}/refund')?.required).to.equal(true);
  });

  it('takes request bodies from the schemas the routes validate with', () => {
    const body = document.paths?.['/orders/{id}/pay/card']?.post?.requestBody as {
      content: Record<string, { schema: { required?: string[]; properties?: Record<string, unknown> } }>;
    };
    const schema = body.content['application/json']!.schema;
    // payCardSchema: `mode` has a default, so a request may leave it out.
    expect(schema.required).to.deep.equal(['card']);
    expect(schema.properties).to.have.keys(['card', 'mode', 'customer', 'save_card', 'client_secret']);
  });

  it("documents an order's client secret: answered by POST /orders, asked for by its shopper routes, whose 404 says nothing more", () => {
    const created = document.paths?.['/orders']?.post?.responses?.['201'] as {
      content: Record<string, { schema: unknown }>;
    };
    expect(JSON.stringify(created.content['application/json']!.schema)).to.contain('CreatedOrder');
    const createdOrder = document.components?.schemas?.CreatedOrder as { required?: string[] };
    expect(createdOrder.required).to.include('client_secret');
    for (const schema of ['Order', 'OrderWithHistory', 'PublicOrder'])
      expect(document.components?.schemas?.[schema], schema).to.not.have.nested.property(
        'properties.client_secret',
      );
    for (const [method, path] of [
      ['get', '/orders/{id}'],
      ['post', '/orders/{id}/pay/card'],
      ['post', '/orders/{id}/pay/saved'],
      ['post', '/orders/{id}/pay/redirect'],
    ] as const) {
      const operation = document.paths?.[path]?.[method];
      const header = (operation?.parameters ?? []).find(
        (p) => 'in' in p && p.in === 'header' && p.name === 'Order-Secret',
      ) as { required?: boolean } | undefined;
      expect(header, `${method} ${path}`).to.not.equal(undefined);
      expect(header!.required ?? false, `${method} ${path}`).to.equal(false);
      const notFound = operation?.responses?.['404'] as { description: string };
      expect(notFound.description, `${method} ${path}`).to.contain("the order's client secret");
    }
  });

  it('requires a body where the route refuses none (no body reads as `{}`), so typed clients must send it', () => {
    const required = (path: string) =>
      (document.paths?.[path]?.post?.requestBody as { required?: boolean } | undefined)?.required ?? false;
    for (const path of ['/orders', '/orders/{id}/pay/card', '/orders/{id}/refund', '/orders/{id}/review'])
      expect(required(path), path).to.equal(true);
    // Capture and void take an empty body: the whole amount, no note.
    expect(required('/orders/{id}/capture')).to.equal(false);
    expect(required('/orders/{id}/void')).to.equal(false);
  });

  it('lists the error codes of each route, and answers the landings in HTML', () => {
    type Envelope = { properties: { code: { enum?: string[] } }; anyOf?: Envelope[] };
    const codes = (path: string, method: string, status: string) => {
      const response = (document.paths?.[path] as Record<string, { responses?: Record<string, unknown> }>)?.[
        method
      ]?.responses?.[status] as { content: Record<string, { schema: Envelope }> };
      const schema = response.content['application/json']!.schema;
      // A route's own 503 beside STARTING is one of two envelopes.
      return (schema.anyOf ?? [schema]).flatMap((s) => s.properties.code.enum ?? []);
    };
    expect(codes('/orders', 'post', '409')).to.deep.equal(['DUPLICATE_REFERENCE', 'IDEMPOTENCY_KEY_REUSED']);
    expect(codes('/orders/{id}', 'get', '404')).to.deep.equal(['NOT_FOUND']);
    expect(codes('/orders/{id}/capture', 'post', '503')).to.deep.equal(['OUTCOME_UNKNOWN', 'STARTING']);
    // Every route answers 503 STARTING while the kit starts (the port is bound before the app is ready).
    for (const [path, item] of Object.entries(document.paths ?? {}))
      for (const method of Object.keys(item as object))
        expect(codes(path, method, '503'), `${method} ${path}`).to.include('STARTING');
    for (const path of ['/', '/checkout/3ds-return', '/checkout/return', '/checkout/cancel']) {
      const ok = document.paths?.[path]?.get?.responses?.['200'] as { content: Record<string, unknown> };
      expect(Object.keys(ok.content), path).to.deep.equal(['text/html']);
    }
  });
});
