/** The calling key, as the gateway describes it. */
import type { ApiRoute } from '../../../shared/api-document.js';
import { apiKeySchema, success } from '../response-schemas.js';
import { answer, apiAnswers, KEY } from './common.js';

/** POST /api/v1/api-key. */
export const apiKeyRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/api/v1/api-key',
    operationId: 'getApiKey',
    summary: 'What the calling key is',
    description:
      "Merchant keys: their `merchant_id`; partner keys: the `linked_merchant_ids` they may act for. With the key's scopes and rate limit. Never the key's text nor a secret (sandbox.md section 11: a gateway without this endpoint answers 404).",
    tags: ['API key'],
    security: KEY,
    responses: {
      200: answer('The key.', success(apiKeySchema)),
      ...apiAnswers,
    },
  },
];
