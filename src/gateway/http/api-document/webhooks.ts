/** The merchant's webhook endpoint, its events and their deliveries (scope `webhooks:manage`). */
import { z } from 'zod';
import type { ApiRoute } from '../../../shared/api-document.js';
import { listQuery, merchantOnlyBody, putSchema } from '../../routes/webhooks.js';
import {
  endpointSchema,
  endpointWithSecretSchema,
  eventDetailSchema,
  eventListSchema,
  eventRowSchema,
  failure,
  pingSchema,
  success,
} from '../response-schemas.js';
import { answer, apiAnswers, bodyTooLarge, invalid, json, KEY, notFound, partnerMerchant } from './common.js';

const eventPath = z.object({ eventId: z.string().meta({ description: '`evt_...`' }) });
const merchantQuery = z.object({
  merchant_id: z
    .string()
    .regex(/^\d{1,15}$/)
    .optional()
    .meta({ description: 'Partner keys: the linked merchant.' }),
});

/** /api/v1/webhook: the endpoint, its secret and test, the events and their replays. */
export const webhookRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/api/v1/webhook',
    operationId: 'getWebhookEndpoint',
    summary: 'Read the webhook endpoint',
    tags: ['Webhooks'],
    security: KEY,
    requestParams: { query: merchantQuery },
    responses: {
      200: answer('The endpoint (never its secret).', success(endpointSchema)),
      400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
      ...notFound('endpoint yet'),
      ...apiAnswers,
    },
  },
  {
    method: 'put',
    path: '/api/v1/webhook',
    operationId: 'putWebhookEndpoint',
    summary: 'Create or update the webhook endpoint',
    description:
      'The first PUT creates it (one per merchant) and shows the signing secret once; later ones update it and never show or change the secret. `events` omitted keeps the subscription, null resets it to the default (all but `transaction.pending`).',
    tags: ['Webhooks'],
    security: KEY,
    requestBody: json(putSchema, { url: 'https://shop.example/webhooks/gateway', is_active: true }),
    responses: {
      200: answer('Updated.', success(endpointSchema)),
      201: answer('Created: the endpoint and its secret.', success(endpointWithSecretSchema)),
      400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
      422: answer(
        '`ERR_VALIDATION_FAILED`: the body, or a URL that is not HTTPS on a public host.',
        failure(['ERR_VALIDATION_FAILED']),
      ),
      ...bodyTooLarge,
      ...apiAnswers,
    },
  },
  {
    method: 'delete',
    path: '/api/v1/webhook',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete the webhook endpoint',
    description: 'Deliveries stop, queued events fail, the URL and secret are erased; the history stays.',
    tags: ['Webhooks'],
    security: KEY,
    requestParams: { query: merchantQuery },
    responses: {
      200: answer('Deleted.', success(z.null())),
      400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
      ...notFound('endpoint'),
      ...apiAnswers,
    },
  },
  {
    method: 'post',
    path: '/api/v1/webhook/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate the signing secret',
    description: 'A hard cutover: the old secret stops signing at once.',
    tags: ['Webhooks'],
    security: KEY,
    requestBody: json(merchantOnlyBody),
    responses: {
      200: answer('The endpoint and its new secret.', success(endpointWithSecretSchema)),
      400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
      ...notFound('endpoint'),
      422: invalid,
      ...bodyTooLarge,
      ...apiAnswers,
    },
  },
  {
    method: 'post',
    path: '/api/v1/webhook/test',
    operationId: 'testWebhookEndpoint',
    summary: 'Send a signed test ping',
    description: 'Synchronous; 200 whether or not the receiver answered 2xx. 10 a minute per key.',
    tags: ['Webhooks'],
    security: KEY,
    requestBody: json(merchantOnlyBody),
    responses: {
      200: answer('What the receiver answered.', success(pingSchema)),
      400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
      ...notFound('endpoint'),
      422: invalid,
      ...bodyTooLarge,
      ...apiAnswers,
    },
  },
  {
    method: 'get',
    path: '/api/v1/webhook/events',
    operationId: 'listWebhookEvents',
    summary: 'List webhook events, newest first',
    description:
      'Kept 30 days. `from` and `to` are on or after / on or before (a date alone covers its day).',
    tags: ['Webhooks'],
    security: KEY,
    requestParams: { query: listQuery.extend(merchantQuery.shape) },
    responses: {
      200: answer('A page of events.', success(eventListSchema)),
      400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
      422: invalid,
      ...apiAnswers,
    },
  },
  {
    method: 'get',
    path: '/api/v1/webhook/events/{eventId}',
    operationId: 'getWebhookEvent',
    summary: 'Read a webhook event, with its payload and every delivery attempt',
    tags: ['Webhooks'],
    security: KEY,
    requestParams: { path: eventPath },
    responses: {
      200: answer('The event.', success(eventDetailSchema)),
      ...notFound('event'),
      ...apiAnswers,
    },
  },
  {
    method: 'post',
    path: '/api/v1/webhook/events/{eventId}/replay',
    operationId: 'replayWebhookEvent',
    summary: 'Deliver an event again',
    description: 'The same id and payload, a new delivery id, `X-Service-Replay: true`. 30 a minute per key.',
    tags: ['Webhooks'],
    security: KEY,
    requestParams: { path: eventPath },
    requestBody: json(merchantOnlyBody),
    responses: {
      200: answer('Queued.', success(z.object({ event: eventRowSchema }))),
      400: answer(
        `\`ERR_WEBHOOK_NOT_CONFIGURED\`: no active endpoint to replay to; or ${partnerMerchant}`,
        failure(['ERR_WEBHOOK_NOT_CONFIGURED', 'ERR_AUTH_FAILED']),
      ),
      ...notFound('event'),
      409: answer(
        '`ERR_REPLAY_NOT_ALLOWED`: the event is still being delivered.',
        failure(['ERR_REPLAY_NOT_ALLOWED']),
      ),
      422: invalid,
      ...bodyTooLarge,
      ...apiAnswers,
    },
  },
];
