/** The browser's pages: the 3DS challenge and the hosted checkout, each a page and its buttons. */
import { z } from 'zod';
import { type ApiRoute, htmlAnswer } from '../../../shared/api-document.js';
import { ACTIONS } from '../../hosted/checkout-page.js';
import { failure } from '../response-schemas.js';
import { answer, notFound, rateHeader, retryAfter, sessionPath, unexpected } from './common.js';

const form = (schema: z.ZodType) => ({ content: { 'application/x-www-form-urlencoded': { schema } } });
const page = (description: string) => ({ ...htmlAnswer(description), headers: z.object(rateHeader) });
const note = { schema: { type: 'string' as const } };
const redirect = (description: string) => ({
  description,
  headers: z.object({
    ...rateHeader,
    Location: z.url().meta({ description: 'Where the browser goes next.' }),
  }),
  // Koa's redirect writes a one-line "Redirecting to ..." in the type the browser accepts.
  content: { 'text/plain': note, 'text/html': note },
});

/** The hosted pages answer a person's browser; their errors are still the envelope. */
function hostedPage(
  path: string,
  operationId: string,
  summary: string,
  description: string,
  params: z.ZodObject,
  what: string,
): ApiRoute {
  return {
    method: 'get',
    path,
    operationId,
    summary,
    description,
    tags: ['Hosted pages'],
    security: [],
    requestParams: { path: params },
    responses: {
      200: page('The page.'),
      ...notFound(what),
      429: answer(
        '`ERR_RATE_LIMITED`: over 60 page requests a minute from this address.',
        failure(['ERR_RATE_LIMITED']),
        retryAfter,
      ),
      ...unexpected,
    },
  };
}

function hostedButton(
  path: string,
  operationId: string,
  summary: string,
  description: string,
  params: z.ZodObject,
  actions: z.ZodEnum,
  what: string,
): ApiRoute {
  return {
    method: 'post',
    path,
    operationId,
    summary,
    description,
    tags: ['Hosted pages'],
    security: [],
    requestParams: { path: params },
    requestBody: form(z.object({ action: actions })),
    responses: {
      303: redirect(
        'Back to the merchant, with the outcome in the query. A second press returns what was decided.',
      ),
      ...notFound(what),
      422: answer('`ERR_VALIDATION_FAILED`: an unknown `action`.', failure(['ERR_VALIDATION_FAILED'])),
      429: answer(
        '`ERR_RATE_LIMITED`: over 60 page requests a minute from this address.',
        failure(['ERR_RATE_LIMITED']),
        retryAfter,
      ),
      ...unexpected,
    },
  };
}

/** GET and POST /hosted/3ds/{publicId} and /hosted/checkout/{sessionId}. */
export const hostedRoutes: ApiRoute[] = [
  hostedPage(
    '/hosted/3ds/{publicId}',
    'challengePage',
    'The 3DS challenge page',
    "The verification's `challenge_url`: Authenticate and Fail, while the challenge is open (10 minutes).",
    z.object({ publicId: z.string().meta({ description: '`tds_...`' }) }),
    'challenge',
  ),
  hostedButton(
    '/hosted/3ds/{publicId}',
    'answerChallenge',
    'Answer the 3DS challenge',
    "The page's buttons: back to `auth_url` with `card_verification_id` and `status`.",
    z.object({ publicId: z.string().meta({ description: '`tds_...`' }) }),
    z.enum(['authenticate', 'fail']),
    'challenge',
  ),
  hostedPage(
    '/hosted/checkout/{sessionId}',
    'checkoutPage',
    'The hosted checkout page',
    "The session's `checkout_url`: Pay, Pending, Fail and Cancel, while the session is open.",
    sessionPath,
    'session',
  ),
  hostedButton(
    '/hosted/checkout/{sessionId}',
    'answerCheckout',
    'Answer the hosted checkout',
    "The page's buttons: back to `success_url` (or `cancel_url`) with `payment_session_id`, `reference` and `status`.",
    sessionPath,
    z.enum(Object.keys(ACTIONS) as [string, ...string[]]),
    'session',
  ),
];
