import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'chai';
import type Koa from 'koa';
import { z } from 'zod';
import { type RouteKey, routesOf } from '../../src/infra/route-list.js';
import type { ApiDocument, ApiRegistry } from '../../src/shared/api-document.js';
import type { Answer } from './gateway.js';

// ajv-formats is CommonJS: its plugin is the module itself, or its `default` under some loaders.
const addFormats = ((addFormatsModule as { default?: unknown }).default ??
  addFormatsModule) as unknown as typeof addFormatsModule.default;

/** What an OpenAPI 3.1 validator finds wrong with a document: '' when nothing. */
export async function documentProblems(document: ApiDocument): Promise<string> {
  // The validator dereferences what it is given in place: it gets a copy.
  const result = await validate(structuredClone(document) as never);
  if (!result.valid) return compileErrors(result);
  return result.warnings.map((w) => w.message).join('\n');
}

/** ajv's errors with their parameters (which property, which value), one a line. */
const problems = (fn: ValidateFunction) =>
  (fn.errors ?? []).map((e) => `body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`).join('\n');

/**
 * Request examples the routes' own schemas refuse, named by route: an example a reader copies must
 * be accepted, refinements (a currency, an amount's decimals) included.
 */
export function refusedExamples(registry: ApiRegistry): string[] {
  const refused: string[] = [];
  for (const route of registry.routes) {
    for (const [type, media] of Object.entries(route.requestBody?.content ?? {})) {
      if (!media || media.example === undefined || !(media.schema instanceof z.ZodType)) continue;
      const parsed = media.schema.safeParse(media.example);
      if (!parsed.success)
        refused.push(
          `${route.method.toUpperCase()} ${route.path} (${type}): ${z.prettifyError(parsed.error)}`,
        );
    }
  }
  return refused;
}

const keyOf = (r: RouteKey) => `${r.method.toUpperCase()} ${r.path}`;

/**
 * Routes an app serves that its registry does not document (leaving out what the registry declares
 * outside the API, by prefix), and entries of the registry that no route serves.
 */
export function coverageGaps(app: Koa, registry: ApiRegistry) {
  const served = routesOf(app)
    .filter((r) => !registry.outside.some((o) => r.path.startsWith(o.prefix)))
    .map(keyOf);
  const documented = registry.routes.map(keyOf);
  return {
    undocumented: [...new Set(served.filter((k) => !documented.includes(k)))],
    unserved: documented.filter((k) => !served.includes(k)),
  };
}

/** Fails naming each route served without a document entry, and each entry no route serves. */
export function expectDocumented(app: Koa, registry: ApiRegistry, registryFile: string): void {
  const { undocumented, unserved } = coverageGaps(app, registry);
  expect(
    undocumented,
    `served, and not in the document: ${undocumented.join(', ')}. Add an entry to \`routes\` in ${registryFile} (or, for a third-party UI under a prefix, to \`outside\`)`,
  ).to.deep.equal([]);
  expect(
    unserved,
    `in the document, and no route serves it: ${unserved.join(', ')} (${registryFile})`,
  ).to.deep.equal([]);
}

/**
 * Checks real answers against a document's responses (JSON Schema 2020-12, as OpenAPI 3.1 uses):
 * the status must be documented for the operation, the content type too, and a JSON body must
 * validate. Objects the code writes are closed (`additionalProperties: false`), so a field the code
 * sends and the document lacks fails as well. Keeps what it checked, for the test's summary.
 */
export async function responseChecker(document: ApiDocument) {
  // biome-ignore lint/suspicious/noExplicitAny: walked as plain JSON
  const doc = (await dereference(structuredClone(document) as never)) as any;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction>();
  const checked = new Set<string>();

  return {
    checked,
    /** `path` is the document's template (`/orders/{id}`); the answer is the call's. */
    check(answer: Answer, method: string, path: string): void {
      const where = `${method.toUpperCase()} ${path} -> ${answer.status}`;
      const operation = doc.paths?.[path]?.[method.toLowerCase()];
      expect(operation, `${method.toUpperCase()} ${path} is not in the document`).to.not.equal(undefined);
      const response = operation.responses?.[String(answer.status)];
      expect(response, `${where}: this status is not documented (${answer.text.slice(0, 300)})`).to.not.equal(
        undefined,
      );
      const headers = (response.headers ?? {}) as Record<string, { required?: boolean }>;
      for (const [name, header] of Object.entries(headers)) {
        if (header.required) expect(answer.headers.get(name), `${where}: header ${name}`).to.not.equal(null);
      }
      const type = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim();
      const content = response.content as Record<string, { schema?: unknown }> | undefined;
      if (!content) {
        expect(answer.text, `${where}: documented without a body`).to.equal('');
      } else {
        expect(Object.keys(content), `${where}: content type`).to.include(type);
        if (type === 'application/json') {
          let validateBody = compiled.get(where);
          if (!validateBody) {
            validateBody = ajv.compile(content[type]!.schema as object);
            compiled.set(where, validateBody);
          }
          const valid = validateBody(answer.body);
          expect(
            valid,
            `${where}: the body does not match the document:\n${problems(validateBody)}\n${answer.text.slice(0, 2000)}`,
          ).to.equal(true);
        }
      }
      checked.add(where);
    },
  };
}

/**
 * Checks bodies an app sends to its webhooks against the document (JSON Schema 2020-12, objects
 * closed as the code writes them): '' when the body is what the named webhook's says, else what is
 * wrong with it.
 */
export async function webhookBodyChecker(document: ApiDocument) {
  // biome-ignore lint/suspicious/noExplicitAny: walked as plain JSON
  const doc = (await dereference(structuredClone(document) as never)) as any;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction>();
  return (name: string, body: unknown): string => {
    const schema = doc.webhooks?.[name]?.post?.requestBody?.content?.['application/json']?.schema;
    if (!schema) return `the document has no webhook ${name} with a JSON body`;
    let check = compiled.get(name);
    if (!check) {
      check = ajv.compile(schema as object);
      compiled.set(name, check);
    }
    return check(body) ? '' : problems(check);
  };
}
