/** What the gateway and the platform call: the webhook receiver, liveness and readiness, the metrics. */
import { z } from 'zod';
import { eventPayloadSchema } from '../../../client/schemas.js';
import { type ApiRoute, jsonAnswer } from '../../../shared/api-document.js';
import { failure, success } from '../response-schemas.js';
import { forbidden, internal, json, retryAfter, unauthorized, wrongTokens } from './common.js';

const dependency = z
  .enum(['ok', 'unavailable'])
  .meta({ description: "`ok`, or `unavailable` (why is in the kit's log, not in the answer)." });
const readinessStatus = z
  .enum(['ready', 'not_ready'])
  .meta({ description: '`ready`, or `not_ready` (an answer of 503).' });
/** Without a token: ready or not, nothing more. */
const readinessShort = z
  .object({ status: readinessStatus })
  .meta({ description: 'Without a token: ready or not, and nothing of why.' });
const readiness = z
  .object({
    status: readinessStatus,
    database: dependency,
    redis: dependency,
    gateway: dependency,
    gateway_key: z
      .object({
        key_type: z.enum(['merchant', 'partner']).nullable(),
        merchant_id: z.number().int().nullable(),
        merchant_ids: z.array(z.number().int()),
        scopes: z.array(z.string()).nullable(),
      })
      .meta({
        description:
          'The gateway API key as start-up read it (`GET /api/v1/api-key`): its type, the merchant the kit acts for first and every merchant it acts for (platform mode: several), and its scopes; null (or empty) where the gateway did not describe it.',
      }),
  })
  .meta({
    description: "With a reader's token: each dependency, and what start-up learnt of the gateway key.",
  });
const readinessData = z.union([readinessShort, readiness]);

/** The receiver's request, as the gateway sends it: its signature header and the event. */
const receiverHeaders = z.object({
  'X-Service-Signature': z.string().meta({ description: '`t=<unix seconds>,v1=<hex HMAC-SHA256>`.' }),
  'X-Service-Replay': z.literal('true').optional().meta({ description: 'Sent on a replay.' }),
});

/** What the receiver answers, at either path. */
const receiverAnswers = {
  200: jsonAnswer(
    '`Received.`, `Already received.` (nothing queued twice) or `pong` (a test ping).',
    success(z.null()),
  ),
  400: jsonAnswer(
    '`MALFORMED_EVENT`: signed, but not an event; nothing stored.',
    failure(['MALFORMED_EVENT', 'BAD_REQUEST']),
  ),
  401: jsonAnswer(
    "`INVALID_SIGNATURE`: missing, wrong or stale, or made with another merchant's secret; nothing stored.",
    failure(['INVALID_SIGNATURE']),
  ),
  413: jsonAnswer('`PAYLOAD_TOO_LARGE`: over 256 KiB.', failure(['PAYLOAD_TOO_LARGE'])),
  503: jsonAnswer(
    '`UNAVAILABLE`: the database could not store it; the gateway delivers it again.',
    failure(['UNAVAILABLE']),
    retryAfter,
  ),
  ...internal,
};

const RECEIVER =
  "Verifies `X-Service-Signature` on the raw body (at most 256 KiB) before anything else, stores the event in the inbox (its id is the key: a repeat is a no-op), queues it and answers. An event is never refused for what its numbers look like: the gateway's ids and codes are kept as sent, and anything else in it that reads as a card number is kept truncated to its last four digits (the order's history says where).";

/** POST /webhooks/gateway and /webhooks/gateway/{merchant_id}, GET /healthz, GET /readyz. */
export const receiverAndHealthRoutes: ApiRoute[] = [
  {
    method: 'post',
    path: '/webhooks/gateway',
    operationId: 'receiveGatewayWebhook',
    summary: "The gateway's webhook receiver",
    description: `${RECEIVER} The signature is checked against every active secret of the kit's merchant: a kit that acts for one merchant registers this URL. In platform mode (several merchants, \`GATEWAY_MERCHANTS\`) each merchant has its own URL, \`/webhooks/gateway/{merchant_id}\`, and this one stays the first merchant's, verified with its secrets only.`,
    tags: ['Gateway'],
    // No credential: the gateway signs the body (X-Service-Signature), and nothing else is read first.
    security: [],
    requestParams: { header: receiverHeaders },
    requestBody: json(eventPayloadSchema),
    responses: receiverAnswers,
  },
  {
    method: 'post',
    path: '/webhooks/gateway/{merchant_id}',
    operationId: 'receiveMerchantWebhook',
    summary: "One merchant's webhook receiver (platform mode)",
    description: `${RECEIVER} Platform mode: the URL of merchant \`merchant_id\`'s endpoint at the gateway, verified with that merchant's secrets only (an event signed with another merchant's is a 401), and its events applied to that merchant's orders only. In a kit of one merchant, its id answers as \`/webhooks/gateway\`.`,
    tags: ['Gateway'],
    security: [],
    requestParams: {
      path: z.object({
        merchant_id: z
          .string()
          .meta({ description: 'A merchant the kit acts for (`GATEWAY_MERCHANTS`).', example: '1001' }),
      }),
      header: receiverHeaders,
    },
    requestBody: json(eventPayloadSchema),
    responses: {
      ...receiverAnswers,
      404: jsonAnswer(
        '`NOT_FOUND`: the kit acts for no such merchant; nothing read or stored.',
        failure(['NOT_FOUND']),
      ),
    },
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'liveness',
    summary: 'Liveness',
    tags: ['Platform'],
    security: [],
    responses: { 200: jsonAnswer('The process answers.', success(z.object({ status: z.literal('ok') }))) },
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'readiness',
    summary: 'Readiness: the database, Redis and the gateway',
    description:
      "Each dependency is given 2 s. Without a token, only whether the kit is ready (`data.status`): the probe of a container platform needs no more, and anyone who reaches the port learns nothing of its insides. With `Authorization: Bearer <token>` of a role that reads (operator, finance, viewer, admin), each dependency and what start-up learnt of the gateway key. A token that is sent must be good (401), and a `storefront` role's is a 403. Both answers carry `Vary: Authorization` and `Cache-Control: no-store`.",
    tags: ['Platform'],
    security: [{}, { opsToken: [] }],
    responses: {
      200: jsonAnswer(
        'Ready.',
        z.object({
          success: z.literal(true),
          message: z.literal('ready'),
          code: z.literal(''),
          data: readinessData,
        }),
      ),
      ...unauthorized,
      ...forbidden,
      503: jsonAnswer(
        "`NOT_READY`: with a reader's token, `data` names what is unavailable.",
        z.object({
          success: z.literal(false),
          message: z.literal('not ready'),
          code: z.literal('NOT_READY'),
          data: readinessData,
        }),
      ),
    },
  },
];

/** GET /metrics. */
export const metricsRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics',
    description:
      "This process's metrics in Prometheus text. Open unless `METRICS_TOKEN` is set; then `Authorization: Bearer <METRICS_TOKEN>`, or an operator's token (roles operator, finance, viewer, admin; another token is a 401).",
    tags: ['Platform'],
    // Open while METRICS_TOKEN is unset; else that token or a reader's.
    security: [{}, { metricsToken: [] }, { opsToken: [] }],
    responses: {
      200: { description: 'Prometheus text.', content: { 'text/plain': { schema: { type: 'string' } } } },
      401: jsonAnswer(
        "`UNAUTHORIZED`: METRICS_TOKEN is set, and neither it nor an operator's token was sent.",
        failure(['UNAUTHORIZED']),
      ),
      ...wrongTokens,
    },
  },
];
