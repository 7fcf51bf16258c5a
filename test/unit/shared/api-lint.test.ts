import { fileURLToPath } from 'node:url';
import { type Config, lintConfig, lintFromString, loadConfig } from '@redocly/openapi-core';
import { expect } from 'chai';
import { gatewayApi } from '../../../src/gateway/http/api-document.js';
import { merchantApi } from '../../../src/merchant/http/api-document.js';
import { type ApiDocument, type ApiRegistry, apiDocument } from '../../../src/shared/api-document.js';

/** The linter's configuration: Redocly's recommended rules, and why any differs (redocly.yaml). */
const CONFIG = fileURLToPath(new URL('../../../redocly.yaml', import.meta.url));

/** Each problem Redocly's linter finds, one a line: `warn rule #/pointer: message`. */
async function lint(document: ApiDocument, config: Config, file: string): Promise<string[]> {
  const problems = await lintFromString({
    source: JSON.stringify(document, null, 2),
    // Where the problems say they are; nothing is written.
    absoluteRef: fileURLToPath(new URL(`../../../${file}`, import.meta.url)),
    config,
  });
  return problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
}

const counted = (found: string[]) => {
  const errors = found.filter((line) => line.startsWith('error ')).length;
  return `${errors} errors and ${found.length - errors} warnings`;
};

/**
 * Issue 42, part 5: both API documents, built from the code as the apps serve them, pass Redocly's
 * `recommended` ruleset with no error and no warning, so the documents a shop's tools read (a client
 * generator, a mock server, a portal) hold no problem those tools trip on.
 */
describe("API documents: Redocly's recommended rules pass", function () {
  // Loading the linter and walking a document of 60-odd operations: a second or two.
  this.timeout(30_000);
  let config: Config;
  before(async () => {
    config = await loadConfig({ configPath: CONFIG });
  });

  it('redocly.yaml is a configuration the linter accepts (no unknown rule, no misspelt option)', async () => {
    const problems = await lintConfig({ config });
    expect(problems.map((p) => `${p.ruleId}: ${p.message}`)).to.deep.equal([]);
  });

  const documents: [string, ApiRegistry, string][] = [
    ['merchant API', merchantApi, 'merchant.openapi.json'],
    ['sandbox gateway API', gatewayApi, 'gateway.openapi.json'],
  ];
  for (const [name, registry, file] of documents) {
    it(`the ${name} document: no error, no warning`, async () => {
      const found = await lint(apiDocument(registry), config, file);
      if (found.length > 0)
        expect.fail(`Redocly's linter finds ${counted(found)} in the ${name} document:\n${found.join('\n')}`);
    });
  }

  it('names what the recommended rules catch: no servers, an operation saying nobody about who may call it, no success, no 4xx', async () => {
    const document = structuredClone(apiDocument(merchantApi));
    delete document.servers;
    const health = document.paths!['/healthz']!.get!;
    delete health.security;
    health.responses = { 500: { description: 'Broken.' } };
    const found = await lint(document, config, 'merchant.openapi.json');
    expect(found).to.include.members([
      'error no-empty-servers #/openapi: Servers must be present.',
      'error security-defined #/paths/~1healthz/get: Every operation should have security defined on it or on the root level.',
      "warn rule/operation-success-response #/paths/~1healthz/get/responses: Every operation has a successful answer (a 2XX, or a form's 303).",
      'warn operation-4xx-response #/paths/~1healthz/get/responses: Operation must have at least one `4XX` response.',
    ]);
  });
});
