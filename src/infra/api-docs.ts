import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import Router from '@koa/router';
import { send } from '@koa/send';
import {
  type ApiDocument,
  type ApiRegistry,
  apiDocument,
  DOCS_ASSETS_PREFIX,
} from '../shared/api-document.js';
import { escapeHtml, HEAD_START } from '../shared/html.js';

/** swagger-ui-dist's folder: the page's renderer comes from node_modules, never from a CDN. */
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/** The only files of it the page loads; anything else under the prefix is a 404. */
const SWAGGER_UI_FILES = new Set(['swagger-ui.css', 'swagger-ui-bundle.js']);
const START_SCRIPT = 'start.js';

// A file rather than an inline script, so a Content-Security-Policy without 'unsafe-inline' still allows it.
// validatorUrl null: by default Swagger UI shows a badge fetched from validator.swagger.io.
const START = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#api-reference',
  deepLinking: true,
  validatorUrl: null,
});
`;

const page = (title: string) => `<!doctype html>
<html lang="en"><head>${HEAD_START}<title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${DOCS_ASSETS_PREFIX}swagger-ui.css"></head>
<body><div id="api-reference"></div>
<script src="${DOCS_ASSETS_PREFIX}swagger-ui-bundle.js"></script>
<script src="${DOCS_ASSETS_PREFIX}${START_SCRIPT}"></script>
</body></html>
`;

/**
 * `GET /openapi.json` (the registry's document, built at the first request and kept) and `GET /docs`
 * (the same rendered by Swagger UI), with the page's files under `DOCS_ASSETS_PREFIX`. Open to anyone:
 * the document describes the API, it holds no secret.
 */
export function apiDocsRouter(registry: ApiRegistry): Router {
  const router = new Router();
  let document: ApiDocument | undefined;
  router.get('/openapi.json', (ctx) => {
    document ??= apiDocument(registry);
    ctx.body = document;
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'html';
    ctx.body = page(registry.info.title);
  });
  router.get(`${DOCS_ASSETS_PREFIX}:file`, async (ctx) => {
    const file = ctx.params.file ?? '';
    if (file === START_SCRIPT) {
      ctx.type = 'js';
      ctx.body = START;
    } else if (SWAGGER_UI_FILES.has(file)) {
      await send(ctx, file, { root: SWAGGER_UI_DIR, maxage: 24 * 60 * 60 * 1000 });
    }
  });
  return router;
}
