import Router from '@koa/router';
import { expect } from 'chai';
import { createGateway } from '../../../src/gateway/app.js';
import { gatewayApi } from '../../../src/gateway/http/api-document.js';
import { parseSeed } from '../../../src/gateway/state/seed.js';
import { apiDocument } from '../../../src/shared/api-document.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { seededRandom } from '../../../src/shared/ids.js';
import {
  coverageGaps,
  documentProblems,
  expectDocumented,
  refusedExamples,
} from '../../support/api-document.js';
import { testSeed } from '../../support/gateway.js';

/** issue, part 4: the sandbox gateway's OpenAPI 3.1 document, generated from the routes' zod schemas. */

const REGISTRY = 'src/gateway/http/api-document.ts';
const document = apiDocument(gatewayApi);
const sandboxApp = () =>
  createGateway({ seed: parseSeed(testSeed()), clock: new ManualClock(), random: seededRandom(7) }).app;
const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
  (['get', 'post', 'put', 'delete', 'patch'] as const)
    .filter((method) => item[method])
    .map((method) => ({ method, path, operation: item[method]! })),
);

describe('the sandbox gateway API document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).to.equal('3.1.0');
    expect(document.info.title).to.equal('Sandbox payment gateway API');
    expect(await documentProblems(document)).to.equal('');
  });

  it('has an entry for every route createGateway serves (the API, the hosted pages, the controls), and no other', () => {
    expectDocumented(sandboxApp(), gatewayApi, REGISTRY);
    const paths = operations.map((o) => `${o.method.toUpperCase()} ${o.path}`);
    for (const route of [
      'POST /api/v1/transactions/{id}/capture',
      'GET /hosted/checkout/{sessionId}',
      'POST /hosted/3ds/{publicId}',
      'POST /sandbox/tick',
    ])
      expect(paths).to.include(route);
  });

  it("gives request examples that the routes' own schemas accept", () => {
    expect(refusedExamples(gatewayApi)).to.deep.equal([]);
  });

  it('names a route added later without an entry', () => {
    const app = sandboxApp();
    const later = new Router();
    later.get('/api/v1/api-keys', (ctx) => {
      ctx.body = {};
    });
    app.use(later.routes());
    expect(coverageGaps(app, gatewayApi).undocumented).to.deep.equal(['GET /api/v1/api-keys']);
  });

  it('marks the /sandbox/* controls sandbox-only, and only them', () => {
    for (const { method, path, operation } of operations) {
      const control = path.startsWith('/sandbox/');
      expect((operation as Record<string, unknown>)['x-sandbox-only'], `${method} ${path}`).to.equal(
        control ? true : undefined,
      );
      if (control) expect(operation.tags).to.deep.equal(['Sandbox controls']);
    }
  });

  it('asks for the API key on /api/v1 and the controls, not on the hosted pages or the document', () => {
    for (const { method, path, operation } of operations) {
      const keyed = path.startsWith('/api/v1/') || path.startsWith('/sandbox/');
      expect(operation.security, `${method} ${path}`).to.deep.equal(keyed ? [{ apiKey: [] }] : []);
      if (keyed) expect(operation.responses, `${method} ${path}`).to.include.keys(['401', '403', '500']);
    }
  });

  it('documents Idempotency-Key on capture, refund and void, and the hosted buttons as form posts that redirect', () => {
    for (const operation of ['capture', 'refund', 'void']) {
      const parameters = document.paths?.[`/api/v1/transactions/{id}/${operation}`]?.post?.parameters ?? [];
      expect(parameters.some((p) => 'name' in p && p.name === 'Idempotency-Key')).to.equal(true);
    }
    const button = document.paths!['/hosted/checkout/{sessionId}']!.post!;
    expect(Object.keys((button.requestBody as { content: object }).content)).to.deep.equal([
      'application/x-www-form-urlencoded',
    ]);
    expect(button.responses).to.have.property('303');
  });
});
