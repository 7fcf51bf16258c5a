/** The HTML pages a customer's browser lands on: the home page, back from 3DS, back from the checkout. */
import { z } from 'zod';
import { type ApiRoute, htmlAnswer } from '../../../shared/api-document.js';

/** The landings read their query directly (no schema in the route): these say what they read. */
const refreshes = z
  .string()
  .regex(/^\d{1,3}$/)
  .optional()
  .meta({ description: 'How many times the page has reloaded itself (it adds this); at most 10 reloads.' });
const sessionLandingQuery = z.object({
  payment_session_id: z.string().optional().meta({ description: "The gateway's payment session id." }),
  reference: z.string().optional().meta({ description: 'Sent by the gateway; not read.' }),
  status: z
    .string()
    .optional()
    .meta({ description: 'Sent by the gateway; never trusted: the page asks the gateway.' }),
  n: refreshes,
});
const landingAnswers = {
  200: htmlAnswer(
    'Where the payment stands, in words; reloads itself every 3 s while it is being confirmed. Past its limits (`LIMIT_LANDING_PER_ADDRESS`, `LIMIT_LANDING_PER_ORDER`) the page still answers, with the order as stored, without asking the gateway: never a 429.',
  ),
  404: htmlAnswer('No payment has this id: a page that says so.'),
};

function sessionLanding(name: 'return' | 'cancel', summary: string): ApiRoute {
  return {
    method: 'get',
    path: `/checkout/${name}`,
    operationId: `checkout${name === 'return' ? 'Return' : 'Cancel'}Landing`,
    summary,
    description: `The payment session's \`${name === 'return' ? 'success_url' : 'cancel_url'}\`. It decides nothing from the query: it asks the gateway while the order is open and shows the order.`,
    tags: ['Browser'],
    security: [],
    requestParams: { query: sessionLandingQuery },
    responses: landingAnswers,
  };
}

/** GET /, /checkout/3ds-return, /checkout/return and /checkout/cancel. */
export const landingRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/',
    operationId: 'homePage',
    summary: "The kit's home page",
    description: 'Where "Back to the shop" leads while `SHOP_URL` is not set: a page in words, not a 404.',
    tags: ['Browser'],
    security: [],
    responses: { 200: htmlAnswer('The page.') },
  },
  {
    method: 'get',
    path: '/checkout/3ds-return',
    operationId: 'threeDsReturnLanding',
    summary: 'Back from the 3DS challenge',
    description:
      "The challenge's `auth_url`: finishes the card payment held across the challenge (once; a reload shows the order as it stands) and shows where the payment stands.",
    tags: ['Browser'],
    security: [],
    requestParams: {
      query: z.object({
        card_verification_id: z.string().optional().meta({ description: 'The 3DS record (`tds_...`).' }),
        status: z.string().optional().meta({ description: 'Sent by the gateway; never trusted.' }),
        n: refreshes,
      }),
    },
    responses: landingAnswers,
  },
  sessionLanding('return', 'Back from the hosted checkout'),
  sessionLanding('cancel', 'Cancelled on the hosted checkout'),
];
