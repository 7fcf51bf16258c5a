import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { allPublic, bareHost } from '../domain/addresses.js';
import { type Attempt, type DeliveryErrorReason, RESPONSE_EXCERPT_CHARS } from '../domain/webhooks.js';

/** What one attempt recorded (its answer, or why there was none), and whether it succeeded. */
export type SendResult = { ok: boolean } & Pick<
  Attempt,
  'statusCode' | 'errorReason' | 'responseExcerpt' | 'durationMs'
>;

/** Resolves a host name to its addresses: a seam, so strict-mode tests need no DNS. */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true })).map((a) => a.address);

/** The addresses a URL's hostname stands for: an IP literal itself, a name what `resolve` answers. */
export async function addressesOf(hostname: string, resolve: Resolver): Promise<string[]> {
  const host = bareHost(hostname);
  return isIP(host) ? [host] : resolve(host);
}

export interface SendOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** sandbox.md section 8: without `allow_private_webhook_urls`, a host resolving to a private address is refused. */
  allowPrivate: boolean;
  resolve: Resolver;
  fetch: typeof fetch;
  now: () => number;
}

/**
 * One delivery attempt: a POST that follows no redirect, gives up after `timeoutMs`, and keeps the
 * first 256 characters of the answer. It never throws: every failure becomes an `error_reason`.
 */
export async function sendWebhook(o: SendOptions): Promise<SendResult> {
  const started = o.now();
  const result = (r: Omit<SendResult, 'durationMs'>): SendResult => ({
    ...r,
    durationMs: Math.max(0, Math.round(o.now() - started)),
  });
  const failed = (errorReason: DeliveryErrorReason) =>
    result({ ok: false, statusCode: null, errorReason, responseExcerpt: null });

  if (!o.allowPrivate && !(await resolvesPublicly(new URL(o.url).hostname, o.resolve)))
    return failed('dns_error');
  try {
    const response = await o.fetch(o.url, {
      method: 'POST',
      headers: o.headers,
      body: o.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(o.timeoutMs),
    });
    const excerpt = await readExcerpt(response);
    const ok = response.status >= 200 && response.status < 300;
    return result({
      ok,
      statusCode: response.status,
      errorReason: ok ? null : 'http_status',
      responseExcerpt: excerpt,
    });
  } catch (error) {
    return failed(classify(error));
  }
}

async function resolvesPublicly(hostname: string, resolve: Resolver): Promise<boolean> {
  try {
    return allPublic(await addressesOf(hostname, resolve));
  } catch {
    return false;
  }
}

/** The first 256 characters, reading no more of a large or endless body than that needs. */
async function readExcerpt(response: Response): Promise<string | null> {
  if (!response.body) return null;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < RESPONSE_EXCERPT_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return text === '' ? null : text.slice(0, RESPONSE_EXCERPT_CHARS);
}

const TLS_CODES =
  /^(CERT_|ERR_TLS_|ERR_SSL_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET|VERIFY)_)/;

/** fetch (undici) wraps the socket error in `cause`; the codes say which reason it is. */
export function classify(error: unknown): DeliveryErrorReason {
  const e = error as { name?: string; code?: string; cause?: { code?: string; name?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || e?.cause?.name === 'TimeoutError')
    return 'timeout';
  const code = e?.cause?.code ?? e?.code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') return 'dns_error';
  if (TLS_CODES.test(code)) return 'tls_error';
  if (
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  )
    return 'timeout';
  // Refused, reset, closed mid-answer: the endpoint did not take the delivery.
  return 'connection_refused';
}
