/**
 * The durable floor's path for one delivery (bench/floor.mjs serves it; bench/receiver-cost.mjs
 * times it beside the kit's): Node's own request, raw-body, the kit's signature check, JSON.parse,
 * then `intake` (the kit's inbox INSERT and queue job in the floor; a promise that answers at once in
 * the cost tool), and the 200. No validation, no card-number check, no request id, no log line, no
 * metrics.
 */
import getRawBody from 'raw-body';
import { verify } from '../dist/src/shared/signature.js';

const RECEIVED = JSON.stringify({ success: true, message: 'Received.', code: '', data: null });

const answer = (res, status, body) => {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
};

/** `(req, res)`: one delivery signed with `secret`, stored through `intake`, answered. */
export function floorReceiver({ secret, intake }) {
  return async (req, res) => {
    const raw = await getRawBody(req, { limit: 256 * 1024 });
    const verdict = verify({
      payload: raw,
      header: req.headers['x-service-signature'],
      secrets: [secret],
      nowSeconds: Math.floor(Date.now() / 1000),
    });
    if (!verdict.ok) return answer(res, 401, '{}');
    const text = raw.toString('utf8');
    const event = JSON.parse(text);
    await intake({
      id: event.id,
      type: event.type,
      transactionId: event.data.transaction.id,
      source: 'webhook',
      payload: text,
      now: new Date(),
    });
    answer(res, 200, RECEIVED);
  };
}
