import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import { z } from 'zod';
import { routesOf } from '../../../src/infra/route-list.js';
import { type ApiRoute, apiDocument, jsonAnswer } from '../../../src/shared/api-document.js';

/** issue, part 4: the pieces both apps' documents are built with. */
describe('API documents: the registry and the route list', () => {
  const route = (method: ApiRoute['method'], path: string): ApiRoute => ({
    method,
    path,
    security: [],
    responses: { 200: jsonAnswer('ok', z.object({ ok: z.boolean() })) },
  });
  const registry = (routes: ApiRoute[]) => ({ info: { title: 't', version: '1' }, routes, outside: [] });

  it('puts each entry under its path and method', () => {
    const doc = apiDocument(registry([route('get', '/things/{id}'), route('delete', '/things/{id}')]));
    expect(Object.keys(doc.paths?.['/things/{id}'] ?? {})).to.deep.equal(['get', 'delete']);
  });

  it('refuses a method and path registered twice, naming it', () => {
    expect(() => apiDocument(registry([route('get', '/things'), route('get', '/things')]))).to.throw(
      'GET /things is registered twice',
    );
  });

  it("gives every route the server's own answers, a route's own of the same status winning, and says where the API is", () => {
    const own = {
      ...route('get', '/things'),
      responses: { 200: jsonAnswer('ok', z.null()), 431: { description: 'mine' } },
    };
    const doc = apiDocument({
      ...registry([own, route('post', '/things')]),
      serverAnswers: { 408: { description: 'too slow', id: 'Slow' }, 431: { description: 'too big' } },
    });
    const responses = (method: 'get' | 'post') => doc.paths?.['/things']?.[method]?.responses ?? {};
    expect(responses('get')['408']).to.deep.equal({ $ref: '#/components/responses/Slow' });
    expect(responses('get')['431']).to.deep.equal({ description: 'mine' });
    expect(responses('post')['431']).to.deep.equal({ description: 'too big' });
    expect(doc.servers).to.deep.equal([{ url: '/', description: 'The server this document is served by.' }]);
  });

  it("renders a webhook's body as the app writes it (zod's output, as answers are), beside the answers' components", () => {
    const thing = z.object({ id: z.string(), size: z.number().default(1) }).meta({ id: 'Thing' });
    const doc = apiDocument({
      ...registry([{ ...route('get', '/things'), responses: { 200: jsonAnswer('ok', thing) } }]),
      webhooks: [
        {
          name: 'thing.made',
          operation: {
            security: [],
            body: { description: 'The thing.', schema: z.object({ type: z.literal('thing.made'), thing }) },
            responses: { '2XX': { description: 'Taken.' } },
          },
        },
      ],
    });
    const post = doc.webhooks?.['thing.made']?.post;
    expect(Object.keys(post ?? {})).to.deep.equal(['security', 'requestBody', 'responses']);
    const body = post?.requestBody as { required: boolean; content: Record<string, { schema: unknown }> };
    expect(body.required).to.equal(true);
    expect(body.content['application/json']!.schema).to.deep.include({ additionalProperties: false });
    expect(JSON.stringify(body.content)).to.contain('"#/components/schemas/Thing"');
    // One Thing, as written (a default makes `size` always there): no second one for input.
    expect(Object.keys(doc.components?.schemas ?? {})).to.deep.equal(['Thing']);
    expect(doc.components?.schemas?.Thing).to.deep.include({ required: ['id', 'size'] });
    expect(Object.keys(doc.paths ?? {})).to.deep.equal(['/things']);
  });

  it("lists an app's routes in OpenAPI's form, without the router's HEAD and its use() layers", () => {
    const app = new Koa();
    const one = new Router();
    one.use(async (_ctx, next) => next());
    one.get('/orders/:id', () => {});
    one.post('/orders/:id/pay/:kind', () => {});
    const two = new Router({ prefix: '/ops' });
    two.put('/things', () => {});
    app.use(async (_ctx, next) => next());
    app.use(one.routes()).use(two.routes());
    expect(routesOf(app)).to.deep.equal([
      { method: 'get', path: '/orders/{id}' },
      { method: 'post', path: '/orders/{id}/pay/{kind}' },
      { method: 'put', path: '/ops/things' },
    ]);
  });
});
