import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { SOURCES } from './demo-shop-script.js';

/**
 * The script's modules bundled by esbuild (a direct devDependency; tsx runs on it too), in memory.
 * Paths in the bundle's comments are relative to the sources, so the bundle (and its version) is the
 * same wherever the kit is checked out or started from. About 50 ms, once per process.
 */
export async function bundleDemoShopScript(sources: URL = SOURCES): Promise<string> {
  // Its service process stays, idle (about 15 MB, a source run only): it keeps no process alive, and
  // esbuild.stop() left it a zombie under the kit's process (esbuild 0.28).
  const result = await esbuild.build({
    entryPoints: [fileURLToPath(new URL('main.ts', sources))],
    absWorkingDir: fileURLToPath(sources),
    tsconfig: fileURLToPath(new URL('tsconfig.json', sources)),
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    // Non-ASCII as escapes: the file reads the same whatever charset it is taken in.
    charset: 'ascii',
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error("esbuild wrote no bundle of the demo shop's script");
  return output.text;
}
