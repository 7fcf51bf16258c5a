import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';
import type { Context, Middleware, Next } from 'koa';

export interface SecurityHeadersOptions {
  /**
   * The app's public URL (the kit's PUBLIC_BASE_URL, the sandbox's public origin). HSTS is sent only
   * when it is https: over plain http a browser ignores it, and a local http app must stay reachable.
   * Default: none, so no HSTS.
   */
  publicUrl?: string | null;
  /**
   * Where the app's own forms may post. Default `'self'`. The sandbox passes `'anywhere'`: its hosted
   * 3DS and checkout forms post to itself, which answers 303 to the merchant's return URL on another
   * origin, and Chromium applies form-action to that redirect as well (gateway-api.md, the hosted page
   * is a full-page redirect).
   */
  formAction?: 'self' | 'anywhere';
}

/**
 * No inline script anywhere: a script is where an injection runs, so every script is a file of the
 * app's own origin. Styles may be inline: the pages' own `<style>` blocks are constant text (everything
 * user-given is escaped), and the queue board (bull-board) and Swagger UI set inline styles of their
 * own. `base-uri 'self'`: bull-board's page sets `<base href>`. No `upgrade-insecure-requests`: the
 * apps run on plain http locally.
 */
const DIRECTIVES = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'"],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'self'"],
  'frame-ancestors': ["'none'"],
};

const isHttps = (url: string | null | undefined) =>
  typeof url === 'string' && URL.canParse(url) && new URL(url).protocol === 'https:';

/**
 * The security headers of every answer of an app, HTML or not (helmet): the policy above,
 * `frame-ancestors 'none'` and `X-Frame-Options: DENY` (no page is ever framed: the hosted pages are
 * full-page redirects), `nosniff`, `Referrer-Policy: no-referrer` (landing URLs carry session ids),
 * and helmet's other defaults. Mount it first, so that error answers carry them too.
 *
 * Nothing in them depends on the request (no nonce): helmet writes them once, at start, and each
 * answer gets the same set (helmet per request built the policy anew: 3% of a webhook delivery).
 */
export function securityHeaders(options: SecurityHeadersOptions = {}): Middleware {
  const headers = securityHeaderList(options);
  return async (ctx: Context, next: Next) => {
    for (const [name, value] of headers) ctx.res.setHeader(name, value);
    try {
      await next();
    } catch (error) {
      // An error no middleware answered: koa's own answer (ctx.onerror) removes every header, then sets
      // the error's `headers`. Ours ride on the error, so that answer carries them too.
      if (error instanceof Error) {
        const own = (error as { headers?: Record<string, unknown> }).headers;
        Object.assign(error, { headers: { ...Object.fromEntries(headers), ...own } });
      }
      throw error;
    }
  };
}

/** The security headers above, as name and value pairs: for an answer written without koa. */
export function securityHeaderList(options: SecurityHeadersOptions = {}): [string, string][] {
  return helmetHeaders({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        ...DIRECTIVES,
        // Unset, form-action allows any target (it does not fall back to default-src).
        ...(options.formAction === 'anywhere' ? {} : { 'form-action': ["'self'"] }),
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
    strictTransportSecurity: isHttps(options.publicUrl) ? { maxAge: 365 * 24 * 60 * 60 } : false,
  });
}

/**
 * Of the headers above, those that matter to an answer that is JSON and nothing else (the webhook
 * receiver's, delivery-endpoint.ts): `nosniff` (the browser holds it to its JSON type, never HTML or
 * script), `Cross-Origin-Resource-Policy` (no other origin embeds it), `X-Frame-Options: DENY`,
 * `Referrer-Policy`, HSTS when the public URL is https (a browser learns it from any answer), and
 * `Cache-Control: no-store` (an answer about one delivery is kept by no cache). Not the page policy:
 * the Content-Security-Policy, the opener and agent-cluster isolation, the old IE and Flash switches
 * govern a document a browser renders, runs scripts in or opens windows from, and JSON served as
 * JSON with `nosniff` is none of those (OWASP's REST Security Cheat Sheet lists the same set for API
 * answers). Six headers for twelve: every delivery's answer writes them.
 */
export function jsonSecurityHeaderList(options: SecurityHeadersOptions = {}): [string, string][] {
  return [
    ...securityHeaderList(options).filter(([name]) => JSON_HEADERS.has(name.toLowerCase())),
    ['Cache-Control', 'no-store'],
  ];
}

const JSON_HEADERS: ReadonlySet<string> = new Set([
  'x-content-type-options',
  'cross-origin-resource-policy',
  'x-frame-options',
  'referrer-policy',
  'strict-transport-security',
]);

/** The headers helmet sets with these options, as it sets them on an answer. */
function helmetHeaders(options: Parameters<typeof helmet>[0]): [string, string][] {
  const set = new Map<string, string>();
  const res = {
    setHeader: (name: string, value: string) => set.set(name, value),
    removeHeader: (name: string) => set.delete(name),
  };
  let done = false;
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
    done = true;
  });
  // helmet's middleware is synchronous: a version that were not would fail here, at start.
  if (!done) throw new Error('helmet did not set its headers synchronously');
  return [...set];
}
