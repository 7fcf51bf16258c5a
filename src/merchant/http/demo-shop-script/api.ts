import { $, CUSTOMER, el, pickedMerchant, SETTINGS } from './page.js';
import { secretOf } from './storage.js';

/**
 * Every call the page makes to the kit, listed under Requests (what a shop's front end would send),
 * an answer's problem in one line, and the headers each kind of caller sends.
 */

export type Headers = Record<string, string>;

/** The kit's envelope: `data` on success; `code`, `message` and field `errors` on a refusal. */
export interface Envelope<T> {
  code?: string;
  message?: string;
  errors?: Record<string, string | string[]>;
  data?: T;
}

/** An answer: its status (0: none came) and its body ({} when it was not JSON). */
export interface Answer<T = unknown> {
  status: number;
  body: Envelope<T>;
}

export async function api<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  headers?: Headers,
): Promise<Answer<T>> {
  const sent: Headers = { accept: 'application/json', ...headers };
  const init: RequestInit = { method, headers: sent };
  if (body !== undefined) {
    sent['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let status = 0;
  let json: Envelope<T> | null = null;
  try {
    const res = await fetch(path, init);
    status = res.status;
    json = await res.json().catch(() => null);
  } catch (error) {
    json = { message: `The kit did not answer: ${(error as Error).message}` };
  }
  logRequest(method, path, status, json);
  return { status, body: json || {} };
}

function logRequest(method: string, path: string, status: number, json: Envelope<unknown> | null): void {
  const log = $('log');
  const note = json?.code ? ` ${json.code}` : '';
  const tone = status >= 200 && status < 300 ? 'ok' : 'err';
  log.prepend(
    el(
      'li',
      {},
      el('code', {}, `${method} ${path}`),
      ' ',
      el('span', { class: tone }, String(status || 'no answer') + note),
    ),
  );
  while (log.children.length > 20) log.lastElementChild?.remove();
}

/** The answer's message and its field errors, in one line. */
export function problem(answer: Answer): string {
  const b = answer.body;
  const fields = Object.entries(b.errors || {}).map(
    ([field, list]) => `${field}: ${([] as string[]).concat(list).join(', ')}`,
  );
  // The page's customer token lasts an hour: a reload gets a new one.
  const stale = b.code === 'CUSTOMER_TOKEN_INVALID' ? ' Reload the page for a new customer token.' : '';
  return (
    [b.code, b.message].filter(Boolean).join(': ') + (fields.length ? ` (${fields.join('; ')})` : '') + stale
  );
}

/**
 * A call whose answer was lost: none came (the kit died, the network dropped it), or the kit failed
 * midway (a 500; a proxy's 502 or 504). What was asked may have been done. A 503 is the kit's own
 * answer that nothing was (a gateway down, the kit still starting), or OUTCOME_UNKNOWN, said as such.
 */
export const answerLost = (answer: Answer): boolean =>
  answer.status === 0 || (answer.status >= 500 && answer.status !== 503);

/** The headers of a call about the signed-in customer's cards: their token. */
export function asCustomer(): Headers {
  // Platform mode: the token of the picked merchant's customer.
  const merchant = pickedMerchant();
  const token = merchant === null ? CUSTOMER.token : (CUSTOMER.tokens[merchant] ?? CUSTOMER.token);
  return { [SETTINGS.tokenHeader]: token };
}

/** The headers of the shopper's call about an order: its secret (when this browser holds it), then headers. */
export function asShopper(id: string, headers?: Headers): Headers {
  const secret = secretOf(id);
  return { ...(secret === null ? {} : { [SETTINGS.secretHeader]: secret }), ...headers };
}

/** An operator's token typed in `field` (it lives there only: never stored), as a header; null when empty. */
export function asOperator(field: string): Headers | null {
  const token = $<HTMLInputElement>(field).value.trim();
  return token ? { authorization: `Bearer ${token}` } : null;
}
