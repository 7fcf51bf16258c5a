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

/** POST /webhooks/gateway, GET /healthz, GET /readyz. */
export const receiverAndHealthRoutes: ApiRoute[] = [
  {
    method: 'post',
    path: '/webhooks/gateway',
    operationId: 'receiveGatewayWebhook',
    summary: "The gateway's webhook receiver",
    description:
      "Verifies `X-Service-Signature` on the raw body (at most 256 KiB) against every active secret before anything else, stores the event in the inbox (its id is the key: a repeat is a no-op), queues it and answers. An event is never refused for what its numbers look like: the gateway's ids and codes are kept as sent, and anything else in it that reads as a card number is kept truncated to its last four digits (the order's history says where).",
    tags: ['Gateway'],
    // No credential: the gateway signs the body (X-Service-Signature), and nothing else is read first.
    security: [],
    requestParams: {
      header: z.object({
        'X-Service-Signature': z.string().meta({ description: '`t=<unix seconds>,v1=<hex HMAC-SHA256>`.' }),
        'X-Service-Replay': z.literal('true').optional().meta({ description: 'Sent on a replay.' }),
      }),
    },
    requestBody: json(eventPayloadSchema),
    responses: {
      200: jsonAnswer(
        '`Received.`, `Already received.` (nothing queued twice) or `pong` (a test ping).',
        success(z.null()),
      ),
      400: jsonAnswer(
        '`MALFORMED_EVENT`: signed, but not an event; nothing stored.',
        failure(['MALFORMED_EVENT', 'BAD_REQUEST']),
      ),
      401: jsonAnswer(
        '`INVALID_SIGNATURE`: missing, wrong or stale; nothing stored.',
        failure(['INVALID_SIGNATURE']),
      ),
      413: jsonAnswer('`PAYLOAD_TOO_LARGE`: over 256 KiB.', failure(['PAYLOAD_TOO_LARGE'])),
      503: jsonAnswer(
        '`UNAVAILABLE`: the database could not store it; the gateway delivers it again.',
        failure(['UNAVAILABLE']),
        retryAfter,
      ),
      ...internal,
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
