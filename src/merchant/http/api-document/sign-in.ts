/** The operator's sign-in to the queue board, in a browser. */
import { z } from 'zod';
import { type ApiRoute, htmlAnswer, jsonAnswer } from '../../../shared/api-document.js';
import { failure } from '../response-schemas.js';
import { retryAfter } from './common.js';

/** GET and POST /ops/login, POST /ops/logout. */
export const signInRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/ops/login',
    operationId: 'operatorLoginPage',
    summary: "The operator's sign-in form",
    description:
      "A form for an operator's token: the browser way into the queue board. With a live session cookie: who is signed in, a link to the board and a sign-out button.",
    tags: ['Operator'],
    // The way in: it takes the token in its form (POST), and reads only the session cookie it set.
    security: [],
    responses: { 200: htmlAnswer('The form, or the signed-in page.') },
  },
  {
    method: 'post',
    path: '/ops/login',
    operationId: 'operatorLogin',
    summary: 'Sign in to the queue board',
    description:
      "With an operator's token (their own, or OPS_API_TOKEN), sets a cookie for `/ops` good for 30 minutes (HttpOnly, SameSite=Strict, and Secure whenever PUBLIC_BASE_URL is https) and sends the browser to the queue board at `/ops/queues`: with its actions for the roles operator and admin, read only for finance and viewer. A revoked operator's session ends with their next request. Wrong tokens are counted per client address (`LIMIT_LOGIN_FAILURES_PER_ADDRESS`, default 5 in 15 minutes): past them every attempt from that address, a right token included, is a 429 until the window ends.",
    tags: ['Operator'],
    security: [],
    requestBody: {
      content: { 'application/x-www-form-urlencoded': { schema: z.object({ token: z.string() }) } },
    },
    responses: {
      303: { description: 'Signed in: to `/ops/queues`, with the session cookie.' },
      401: htmlAnswer('Not a live operator token: the form again, saying so.'),
      403: htmlAnswer(
        'A live token of a role that cannot read the board (`storefront`): the form again, saying so; no session.',
      ),
      413: jsonAnswer('`VALIDATION_FAILED`: the form is over 4 KiB.', failure(['VALIDATION_FAILED'])),
      429: {
        ...htmlAnswer('Too many wrong tokens from this address: the form, saying when to try again.'),
        headers: retryAfter,
      },
    },
  },
  {
    method: 'post',
    path: '/ops/logout',
    operationId: 'operatorLogout',
    summary: 'Sign out of the queue board',
    description:
      'Ends the session of the cookie sent, for good: the cookie is cleared, and the session is recorded as ended until it would have expired, so that a copy of the cookie opens nothing either. Without a live session it only clears the cookie.',
    tags: ['Operator'],
    security: [],
    responses: { 303: { description: 'To `/ops/login`, with the cookie cleared.' } },
  },
];
