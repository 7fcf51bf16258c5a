import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { SCHEMA_FILE, schemaSource } from '../../../packages/client/scripts/schema-source.js';
import { merchantApi } from '../../../src/merchant/http/api-document.js';
import { type ApiRegistry, apiDocument } from '../../../src/shared/api-document.js';

/** What is wrong with the committed types, in words and with the first line that differs; '' when nothing. */
function drift(committed: string, generated: string): string {
  if (committed === generated) return '';
  const [was, now] = [committed.split('\n'), generated.split('\n')];
  let line = 0;
  while (line < was.length && was[line] === now[line]) line += 1;
  return [
    "packages/client/src/schema.d.ts is not what the kit's OpenAPI document gives:",
    'run `npm run client:generate` and commit the file.',
    `First difference, line ${line + 1}:`,
    `  committed: ${was[line] ?? '(end of file)'}`,
    `  generated: ${now[line] ?? '(end of file)'}`,
  ].join('\n');
}

/**
 * The typed client's types (@merchant-kit/client) are generated from the kit's document and
 * committed: a route, field or answer changed in the document without regenerating them fails here.
 */
describe('kit client: the committed types are the kit document', function () {
  // openapi-typescript resolves and prints 30-odd routes: a few seconds on a small machine.
  this.timeout(60_000);
  let committed: string;
  before(async () => {
    committed = await readFile(SCHEMA_FILE, 'utf8');
  });

  it('generating the types from the current document gives the committed file', async () => {
    const message = drift(committed, await schemaSource(apiDocument(merchantApi)));
    if (message) expect.fail(message);
  });

  it('a route moved in the document is a difference, named with its line', async () => {
    const moved: ApiRegistry = {
      ...merchantApi,
      routes: merchantApi.routes.map((r) =>
        r.operationId === 'createOrder' ? { ...r, path: '/shop-orders' } : r,
      ),
    };
    const message = drift(committed, await schemaSource(apiDocument(moved)));
    expect(message).to.include('run `npm run client:generate`');
    expect(message).to.match(/First difference, line \d+:/);
    expect(message).to.include('"/shop-orders"');
  });

  it('the same document gives the same text twice', async () => {
    const document = apiDocument(merchantApi);
    expect(await schemaSource(document)).to.equal(await schemaSource(document));
  });
});
