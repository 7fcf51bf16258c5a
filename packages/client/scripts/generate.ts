import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { merchantApi } from '../../../src/merchant/http/api-document.js';
import { apiDocument } from '../../../src/shared/api-document.js';
import { SCHEMA_FILE, schemaSource } from './schema-source.js';

// `npm run client:generate`: the document built from the kit's code, as GET /openapi.json serves it,
// without starting the kit (no database, Redis or gateway needed).
await writeFile(SCHEMA_FILE, await schemaSource(apiDocument(merchantApi)));
console.log(`wrote ${fileURLToPath(SCHEMA_FILE)}`);
