import { Webhook } from 'standardwebhooks';

/** What one POST to a shop endpoint came to. */
export interface Sent {
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
}

/** How long the shop's endpoint has to answer: the claim on a delivery outlasts it. */
export const SEND_TIMEOUT_MS = 10_000;

/**
 * Sends one order event to a shop endpoint, signed as the Standard Webhooks specification says
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`), with the specification's own library, so
 * the shop verifies with any of its implementations. The timestamp is the wall clock's at sending:
 * a receiver checks it against its own clock. 2xx is delivered; anything else is tried again.
 */
export function endpointSender(secret: string, wallClock: () => number = Date.now) {
  const signer = new Webhook(secret);
  return async (url: string, eventId: string, body: string): Promise<Sent> => {
    const at = new Date(wallClock());
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'merchant-kit-order-events',
          'webhook-id': eventId,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signer.sign(eventId, at, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      });
      await res.arrayBuffer().catch(() => {});
      const ok = res.status >= 200 && res.status < 300;
      return { ok, httpStatus: res.status, error: ok ? null : `HTTP ${res.status}` };
    } catch (error) {
      const e = error as Error & { cause?: { code?: string } };
      return { ok: false, httpStatus: null, error: e.cause?.code ?? e.name ?? 'no answer' };
    }
  };
}
