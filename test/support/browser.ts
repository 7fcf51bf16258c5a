import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

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

/**
 * Records every Content-Security-Policy violation a page reports, from the document's
 * `securitypolicyviolation` events and from Chromium's console ("Refused to ... Content Security
 * Policy"), the latter catching what the page's events cannot (a form's target, a blocked navigation).
 * `tolerated` names those a test expects; `list()` gives the others. Call before the first navigation.
 */
export async function watchCsp(page: Page, tolerated: (text: string) => boolean = () => false) {
  const seen: string[] = [];
  const note = (text: string) => {
    if (!tolerated(text)) seen.push(text);
  };
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) note(`console: ${message.text()}`);
  });
  await page.exposeFunction('__cspViolation', (text: string) => note(`event: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      const report = (window as unknown as { __cspViolation: (text: string) => void }).__cspViolation;
      report(`${event.effectiveDirective} blocked ${event.blockedURI || '(inline)'} on ${event.documentURI}`);
    });
  });
  return { list: () => [...seen] };
}

/**
 * The demo shop's browser holds these orders' client secrets, as if it had placed them itself (its
 * localStorage, beside those it keeps): an order made through the API is then shown to the page's
 * shopper. `page` is left on the shop (`shopUrl`), whose origin the storage is.
 */
export async function holdOrderSecrets(page: Page, shopUrl: string, secrets: ReadonlyMap<string, string>) {
  await page.goto(`${shopUrl}/`);
  await page.evaluate((held) => {
    const key = 'demo-shop:order-secrets';
    const kept = JSON.parse(localStorage.getItem(key) || '{}') as Record<string, string>;
    localStorage.setItem(key, JSON.stringify({ ...kept, ...held }));
  }, Object.fromEntries(secrets));
}
