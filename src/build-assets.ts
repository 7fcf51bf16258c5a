import { mkdir, writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleDemoShopScript } from './merchant/http/demo-shop-bundler.js';
import { BUNDLE } from './merchant/http/demo-shop-script.js';

/**
 * `npm run build`'s second step, after tsc (run from the sources, with tsx): the demo shop's script
 * bundled into dist/, where the compiled kit reads it (demo-shop-script.ts, BUNDLE). An image then
 * carries neither the browser sources nor esbuild, and bundles nothing as it starts.
 */
const root = new URL('../', import.meta.url);
const outDir = new URL('dist/', root);
const target = new URL(relative(fileURLToPath(root), fileURLToPath(BUNDLE)), outDir);
await mkdir(new URL('./', target), { recursive: true });
await writeFile(target, await bundleDemoShopScript());
console.log(`demo shop script: ${relative(process.cwd(), fileURLToPath(target))}`);
