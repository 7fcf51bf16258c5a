/**
 * Orders' client secrets (issue 41), kept by the tests' HTTP helpers as a storefront keeps them: each
 * POST /orders answers its order's once, and the order's shopper routes (its public view, its pay
 * routes) send it as `Order-Secret`.
 */

/** An order's shopper routes: its public view and its pay routes, which need its secret. */
const SHOPPER_ROUTE = /^\/orders\/([^/?#]+)(?:\/pay\/(?:card|redirect|saved))?(?:[?#]|$)/;

/** The order whose shopper route `path` is, when the call is one a shopper would make; else null. */
export function shopperOrderOf(method: string, path: string): string | null {
  const match = SHOPPER_ROUTE.exec(path);
  if (!match) return null;
  const pays = path.includes('/pay/');
  return (pays ? method === 'POST' : method === 'GET') ? decodeURIComponent(match[1]!) : null;
}

/** Keeps the secret a POST /orders answered (201, or 200 for an Idempotency-Key's replay), under its order's id. */
export function keepSecret(
  secrets: Map<string, string>,
  method: string,
  path: string,
  answer: { status: number; body: unknown },
): void {
  if (
    method !== 'POST' ||
    !/^\/orders\/?(?:[?#]|$)/.test(path) ||
    (answer.status !== 201 && answer.status !== 200)
  )
    return;
  const order = (answer.body as { data?: { order?: { id?: unknown; client_secret?: unknown } } } | null)?.data
    ?.order;
  if (typeof order?.id === 'string' && typeof order.client_secret === 'string')
    secrets.set(order.id, order.client_secret);
}

/**
 * The headers of a call, with the order's kept secret added when the call is a shopper's (no
 * `Authorization`, no `Order-Secret` of its own).
 */
export function withSecret(
  secrets: Map<string, string>,
  method: string,
  path: string,
  headers: Record<string, string>,
): Record<string, string> {
  const orderId = shopperOrderOf(method, path);
  const secret = orderId === null ? undefined : secrets.get(orderId);
  const named = (name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name);
  if (secret === undefined || named('authorization') || named('order-secret')) return headers;
  return { ...headers, 'order-secret': secret };
}
