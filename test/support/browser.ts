import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Debian's Chromium, headless. Outside CI a missing Chromium skips the browser suite, loudly; in CI
 * (CI=true) it fails it, since .ci/run installs Chromium first.
 */
export async function launchChromium(suite: Mocha.Context): Promise<Browser | null> {
  if (!existsSync(CHROMIUM)) {
    const message = `Chromium not found at ${CHROMIUM}: the browser suite cannot run (apt-get install -y chromium)`;
    if (process.env.CI === 'true') throw new Error(message);
    console.warn(`\n  !!! SKIPPING THE BROWSER SUITE: ${message}\n`);
    suite.skip();
    return null;
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}
