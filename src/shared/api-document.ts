import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiObject,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';

export type HttpMethod = 'get' | 'post' | 'put' | 'delete' | 'patch';

/**
 * One operation of an API document, next to the zod schemas the route validates with: zod-openapi
 * renders a request as zod reads it (the schema's input) and a response as the code writes it (its
 * output), so the document says what the code does.
 */
export interface ApiRoute extends ZodOpenApiOperationObject {
  method: HttpMethod;
  /** In OpenAPI's form: `/orders/{id}` for the router's `/orders/:id`. */
  path: string;
  /**
   * Who may call it, said by every route: `[]` for anyone (a public page, a probe, a signed body), one
   * entry a scheme, `{}` among them where none is needed. Never left out: an operation without it would
   * read as the document's default, and a linter could not tell a public route from a forgotten one.
   */
  security: SecurityRequirement[];
}

type SecurityRequirement = NonNullable<ZodOpenApiOperationObject['security']>[number];

/**
 * A webhook: a request the app sends to a URL of its user's (OpenAPI 3.1 `webhooks`), by name. The
 * body is what the app writes, so it is rendered as zod's output, as a route's answers are.
 */
export interface ApiWebhook {
  name: string;
  operation: Omit<ZodOpenApiOperationObject, 'requestBody' | 'security'> & {
    security: SecurityRequirement[];
    /** `example`: what Swagger UI shows; the linter checks it against the schema. */
    body: { description: string; schema: z.ZodType; example?: unknown };
  };
}

/** Paths an app serves that its document leaves out on purpose (a third-party UI's files), and why. */
export interface OutsideTheApi {
  prefix: string;
  why: string;
}

/** An app's API: every route it serves, each in one entry, and what it serves that is not its API. */
export interface ApiRegistry {
  info: ZodOpenApiObject['info'];
  tags?: ZodOpenApiObject['tags'];
  securitySchemes?: NonNullable<ZodOpenApiObject['components']>['securitySchemes'];
  /**
   * What the HTTP server itself may answer to any request before the app sees it (headers too large,
   * a request too slow): added to every route's answers, its own of the same status winning.
   */
  serverAnswers?: ZodOpenApiResponsesObject;
  routes: readonly ApiRoute[];
  webhooks?: readonly ApiWebhook[];
  outside: readonly OutsideTheApi[];
}

/** Both apps serve their document themselves: the API is where it came from. */
const SERVED_HERE = [{ url: '/', description: 'The server this document is served by.' }];

/**
 * Where a webhook's body is rendered: zod-openapi renders a request body as zod reads it (its input:
 * objects open, another component for each that differs), and a webhook's body is what the app
 * writes. So each is rendered as the answer of a placeholder path, then moved to its webhook and the
 * placeholder dropped: it shares the answers' components (`Order`), and no path of it is left.
 */
const WEBHOOK_BODY_PATH = '/__webhook-body__/';

/** The OpenAPI 3.1 document of a registry. Throws when a method and path are registered twice. */
export function apiDocument(registry: ApiRegistry) {
  const paths: ZodOpenApiPathsObject = {};
  for (const { method, path, ...operation } of registry.routes) {
    const item = paths[path] ?? {};
    if (item[method]) throw new Error(`${method.toUpperCase()} ${path} is registered twice`);
    item[method] = { ...operation, responses: { ...registry.serverAnswers, ...operation.responses } };
    paths[path] = item;
  }
  const webhooks: ZodOpenApiPathsObject = {};
  for (const { name, operation } of registry.webhooks ?? []) {
    if (webhooks[name]) throw new Error(`webhook ${name} is registered twice`);
    const { body, ...rest } = operation;
    webhooks[name] = { post: rest };
    paths[`${WEBHOOK_BODY_PATH}${name}`] = {
      post: {
        security: [],
        responses: {
          200: {
            description: body.description,
            content: { 'application/json': { schema: body.schema, example: body.example } },
          },
        },
      },
    };
  }
  const document = createDocument({
    openapi: '3.1.0',
    info: registry.info,
    servers: SERVED_HERE,
    tags: registry.tags,
    paths,
    ...(registry.webhooks ? { webhooks } : {}),
    components: registry.securitySchemes ? { securitySchemes: registry.securitySchemes } : undefined,
  });
  for (const { name, operation } of registry.webhooks ?? []) {
    const placeholder = `${WEBHOOK_BODY_PATH}${name}`;
    const rendered = document.paths?.[placeholder]?.post?.responses?.['200'];
    const webhook = document.webhooks?.[name]?.post;
    if (!rendered || !webhook || '$ref' in rendered) throw new Error(`webhook ${name}: body not rendered`);
    const { responses, ...head } = webhook;
    const requestBody = {
      description: operation.body.description,
      required: true,
      content: rendered.content,
    };
    document.webhooks![name]!.post = { ...head, requestBody, responses };
    delete document.paths?.[placeholder];
  }
  return document;
}

export type ApiDocument = ReturnType<typeof apiDocument>;

/** A JSON answer. */
export function jsonAnswer(
  description: string,
  schema: z.ZodType,
  headers?: ZodOpenApiResponseObject['headers'],
): ZodOpenApiResponseObject {
  return { description, content: { 'application/json': { schema } }, ...(headers ? { headers } : {}) };
}

/** An HTML page, for a person's browser. */
export function htmlAnswer(description: string): ZodOpenApiResponseObject {
  return { description, content: { 'text/html': { schema: { type: 'string' } } } };
}

/** Where the reference page's own files (swagger-ui-dist's, and the script that starts it) are served. */
export const DOCS_ASSETS_PREFIX = '/docs/assets/';

/** The document's own routes, the same in every app that serves one. */
export function documentationRoutes(tag: string): ApiRoute[] {
  return [
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'This document',
      description: 'The OpenAPI 3.1 document, generated from the zod schemas the routes validate with.',
      tags: [tag],
      security: [],
      responses: {
        200: jsonAnswer(
          'The OpenAPI document.',
          z.looseObject({
            openapi: z.literal('3.1.0'),
            info: z.looseObject({ title: z.string(), version: z.string() }),
            paths: z.record(z.string(), z.unknown()),
          }),
        ),
      },
    },
    {
      method: 'get',
      path: '/docs',
      operationId: 'getApiReference',
      summary: 'This document, as a page',
      description: `The API reference rendered by Swagger UI, served with its files from this server (under \`${DOCS_ASSETS_PREFIX}\`): it needs no other site.`,
      tags: [tag],
      security: [],
      responses: { 200: htmlAnswer('The reference page.') },
    },
  ];
}

export const documentationOutside: OutsideTheApi = {
  prefix: DOCS_ASSETS_PREFIX,
  why: "the reference page's scripts and styles (swagger-ui-dist), not an API",
};

/**
 * A `z.enum` of every member of a string union, checked by the compiler: a `Record` of the union must
 * name each member once, so a status added to the type and not here fails the typecheck.
 */
export function enumOf<T extends string>(members: Record<T, true>) {
  return z.enum(Object.keys(members) as [T, ...T[]]);
}
