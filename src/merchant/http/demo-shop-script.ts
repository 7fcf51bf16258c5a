import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export type { DemoShopScriptSettings } from './demo-shop-script/settings.js';

/**
 * The demo shop's script as the kit serves it: one file, the same for every page and every customer
 * (what differs per page, the customer's token included, it reads from the page's JSON settings).
 */
export interface DemoShopScript {
  /** One browser script (an IIFE): the modules of demo-shop-script/, bundled. */
  source: string;
  /** The first 16 hex digits of its SHA-256: the page asks for the file by it (`?v=`). */
  version: string;
}

/**
 * The script's modules: browser TypeScript with a tsconfig of its own (DOM, no Node), checked by
 * `npm run typecheck` and linted with the rest. Present in a source checkout (`npm start`, the tests).
 */
export const SOURCES = new URL('./demo-shop-script/', import.meta.url);
/**
 * The bundle `npm run build` writes beside this module's compiled form in dist/ (src/build-assets.ts):
 * what an image runs, which carries neither the sources nor esbuild.
 */
export const BUNDLE = new URL('./demo-shop-script.bundle.js', import.meta.url);

/**
 * The bundler, in a module of its own that the build leaves out (tsconfig.build.json): it imports
 * esbuild, a devDependency, which an image does not install. Named by a URL rather than a literal
 * import so that neither tsc nor the compiled kit follows it; a source run (tsx) loads it as it is.
 */
const BUNDLER = new URL('./demo-shop-bundler.ts', import.meta.url);
/** What demo-shop-bundler.ts exports (a type import of it would put it back in the build). */
interface Bundler {
  bundleDemoShopScript(sources: URL): Promise<string>;
}

/**
 * The script, from its sources when they are there (a checkout: always what the sources say now),
 * else from the bundle `npm run build` wrote (an image). A kit with neither cannot show the demo shop.
 */
export async function loadDemoShopScript(
  where: { sources?: URL; bundle?: URL } = {},
): Promise<DemoShopScript> {
  const sources = where.sources ?? SOURCES;
  const bundle = where.bundle ?? BUNDLE;
  let source: string;
  if (existsSync(new URL('main.ts', sources)))
    source = await ((await import(BUNDLER.href)) as Bundler).bundleDemoShopScript(sources);
  else if (existsSync(bundle)) source = await readFile(bundle, 'utf8');
  else
    throw new Error(
      `The demo shop's script is missing: neither its sources (${fileURLToPath(sources)}) nor the bundle npm run build writes (${fileURLToPath(bundle)})`,
    );
  return { source, version: createHash('sha256').update(source).digest('hex').slice(0, 16) };
}

let loaded: Promise<DemoShopScript> | null = null;

/** loadDemoShopScript's, once per process (every kit a test starts shares it); a failure is not kept. */
export function demoShopScript(): Promise<DemoShopScript> {
  loaded ??= loadDemoShopScript().catch((error: unknown) => {
    loaded = null;
    throw error;
  });
  return loaded;
}
