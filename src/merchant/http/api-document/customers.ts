/** A customer's token and saved cards: listed, removed, charged (merchant-initiated); a customer erased. */
import { z } from 'zod';
import { type ApiRoute, jsonAnswer } from '../../../shared/api-document.js';
import {
  customerTokenSchema,
  erasureSchema,
  failure,
  paymentAnswerSchema,
  savedCardSchema,
  success,
} from '../response-schemas.js';
import {
  chargeSchema,
  customerQuerySchema,
  customerTokenSchema as customerTokenRequestSchema,
} from '../schemas.js';
import {
  cardNotFound,
  customerUnauthorized,
  databaseDown,
  forbidden,
  gatewayFailed,
  internal,
  invalidInput,
  json,
  OPS,
  rateLimited,
  retryAfter,
  unauthorized,
  unreadable,
  wrongTokens,
} from './common.js';

const CUSTOMER_OR_OPS: Record<string, string[]>[] = [{ customerToken: [] }, { opsToken: [] }];

/** Platform mode (issue 45): what each customer route says of `merchant_id`. */
const PER_MERCHANT =
  " In platform mode a customer id names a customer of one merchant: `merchant_id` says which (required when the kit acts for several, unless the token is scoped to one; a 403 naming it outside the token's scope), and another merchant's customer of the same id is never reached.";
const customerPath = z.object({
  id: z.string().meta({ description: "The shop's own id for the customer (`merchant_customer_id`)." }),
});
const savedCardPath = customerPath.extend({
  card: z.string().meta({ description: 'The saved card (`card_...`).' }),
});

/** `/customers//cards`: no route matches an empty customer id. */
const emptyCustomer = '`NOT_FOUND`: an empty customer id (no such path).';
const noCustomer = { 404: jsonAnswer(emptyCustomer, failure(['NOT_FOUND'])) };

/** /customers/{id}/tokens, /cards, /cards/{card}, /erase and /charges. */
export const customerRoutes: ApiRoute[] = [
  {
    method: 'post',
    path: '/customers/{id}/tokens',
    operationId: 'createCustomerToken',
    summary: "A customer's token, for their browser",
    description:
      "The shop's server vouches for the customer it signed in, for an hour. Without a body, the token lets that customer's browser save cards (with a card payment), list and remove them, and pay nothing. With `order_id` (an order of this customer's), it also pays that one order with a saved card, within the customer's daily bound (`SAVED_CARD_DAILY_PAYMENTS`, `SAVED_CARD_DAILY_AMOUNT`). Each token minted leaves an audit line naming the credential, the customer and the order; a credential mints at most `LIMIT_CUSTOMER_TOKENS_PER_CREDENTIAL`. Roles: storefront, admin." +
      PER_MERCHANT,
    tags: ['Customers'],
    security: OPS,
    requestParams: { path: customerPath },
    requestBody: json(customerTokenRequestSchema, { order_id: 'ord_4eC39HqLyjWDarjtT1zdp7dc' }),
    responses: {
      201: jsonAnswer('The token.', success(customerTokenSchema)),
      ...unreadable,
      ...unauthorized,
      ...noCustomer,
      ...forbidden,
      422: invalidInput,
      ...rateLimited('too many tokens minted with this credential (`customer_tokens_per_credential`)'),
      ...internal,
    },
  },
  {
    method: 'get',
    path: '/customers/{id}/cards',
    operationId: 'listSavedCards',
    summary: "A customer's saved cards",
    description:
      "The customer's active saved cards, newest first, as the gateway listed them at `synced_at` (`synced: true`) and as the kit changed them since: the kit asks the gateway again once its last list is older than `SAVED_CARDS_SYNC_WINDOW_MS` (30 s), and answers from its own rows within it. When the gateway cannot answer, as the kit last knew them (`synced: false`; `synced_at` its last list, or null). Brand, last four and expiry: never a number. The customer's `Customer-Token`, or an operator's token (roles: operator, finance, viewer, admin; a `storefront` token is a 403). Limited per client address (`card_lists_per_address`, counted first) and per customer (`card_lists_per_customer`, counted once the caller is known)." +
      PER_MERCHANT,
    tags: ['Customers'],
    security: CUSTOMER_OR_OPS,
    requestParams: { path: customerPath, query: customerQuerySchema },
    responses: {
      200: jsonAnswer(
        'The cards.',
        success(
          z.object({
            customer_id: z.string(),
            cards: z.array(savedCardSchema),
            synced: z.boolean().meta({
              description:
                "True: the gateway's list as of `synced_at` (asked now, or within the sync window), with what the kit did since. False: the gateway did not answer; the kit's own rows.",
            }),
            synced_at: z.iso.datetime().nullable().meta({
              description:
                'When the kit asked the gateway for the list these rows follow; null: it never had one.',
            }),
          }),
        ),
      ),
      ...customerUnauthorized,
      ...wrongTokens,
      ...forbidden,
      ...noCustomer,
      422: invalidInput,
      ...rateLimited(
        "too many lists of saved cards from this client address (`card_lists_per_address`) or of this customer's (`card_lists_per_customer`)",
      ),
      ...databaseDown,
      ...internal,
    },
  },
  {
    method: 'delete',
    path: '/customers/{id}/cards/{card}',
    operationId: 'removeSavedCard',
    summary: 'Remove a saved card',
    description:
      "Revoked at the gateway first, then here: no payment can use it after. Removing one already removed answers the same. The customer's `Customer-Token`, or an operator's token (roles: operator, admin; the audit log gets a line)." +
      PER_MERCHANT,
    tags: ['Customers'],
    security: CUSTOMER_OR_OPS,
    requestParams: { path: savedCardPath, query: customerQuerySchema },
    responses: {
      200: jsonAnswer('Removed.', success(z.object({ card: savedCardSchema }))),
      ...customerUnauthorized,
      ...wrongTokens,
      ...forbidden,
      404: jsonAnswer(`${cardNotFound} ${emptyCustomer}`, failure(['CARD_NOT_FOUND', 'NOT_FOUND'])),
      422: invalidInput,
      ...gatewayFailed,
      ...internal,
    },
  },
  {
    method: 'post',
    path: '/customers/{id}/erase',
    operationId: 'eraseCustomer',
    summary: "Forget a customer's personal data",
    description:
      "A data-protection erasure: on every order of theirs `customer` becomes `{erased: true, erased_at}` (names, email, phone, address, IP address and the shop's id for them gone), in the order, in the bodies of its order events, and in the gateway payloads the kit kept, each order in one transaction; then the customer's saved cards are revoked at the gateway (the kit's and any the gateway lists for them) and deleted here; a card payment waiting on a 3DS challenge, or whose gateway answer is on its way, keeps its card, not their details, and is not saved for them (a card the gateway saved is revoked there); audit lines that named their id name their reference. Every money fact stays (amounts, statuses, ids, references, disputes, history): the report's totals do not move, later webhooks and polls still apply, and the orders still take refunds. The same request again answers zeros. An erasure that stops part-way (503: the gateway did not answer; 500) leaves each order erased whole or untouched: send it again, and it finishes. The audit log gets a line naming the reference (`cer_...`), never the id. Role: admin (the bootstrap token; `cli customers erase` too)." +
      PER_MERCHANT,
    tags: ['Customers'],
    security: OPS,
    requestParams: { path: customerPath, query: customerQuerySchema },
    responses: {
      200: jsonAnswer(
        'Erased: what was found and changed (zeros when nothing was left).',
        success(erasureSchema),
      ),
      ...unauthorized,
      ...forbidden,
      ...noCustomer,
      422: invalidInput,
      ...gatewayFailed,
      ...databaseDown,
      ...internal,
    },
  },
  {
    method: 'post',
    path: '/customers/{id}/charges',
    operationId: 'chargeSavedCard',
    summary: 'Charge a saved card (merchant-initiated)',
    description:
      "A subscription's renewal or a top-up: a new order for the customer, paid at once with their saved card. `Idempotency-Key` is required and stored before the gateway hears of the charge: the same key again answers the same order (200), however often and after whatever crash, and never charges twice. Roles: operator, admin; the audit log gets a line per request." +
      PER_MERCHANT,
    tags: ['Customers'],
    security: OPS,
    requestParams: {
      path: customerPath,
      header: z.object({
        'Idempotency-Key': z.string().meta({ description: 'The charge: the same key is the same charge.' }),
      }),
    },
    requestBody: json(chargeSchema, {
      card: 'card_4eC39HqLyjWDarjtT1zdp7dc',
      amount: '9.99',
      currency: 'EUR',
      description: 'Plan renewal, December',
    }),
    responses: {
      201: jsonAnswer('Charged: a new order, `paid` (or `authorized`).', success(paymentAnswerSchema)),
      200: jsonAnswer('The same key again: the order as it stands.', success(paymentAnswerSchema)),
      202: jsonAnswer(
        'The outcome is not known yet: send the same request with the same key again, or read the order.',
        success(paymentAnswerSchema),
      ),
      402: jsonAnswer(
        "Declined, with the gateway's code; the same key again answers the same.",
        failure('gateway', paymentAnswerSchema),
      ),
      ...unauthorized,
      ...forbidden,
      404: jsonAnswer(`${cardNotFound} ${emptyCustomer}`, failure(['CARD_NOT_FOUND', 'NOT_FOUND'])),
      409: jsonAnswer(
        '`IDEMPOTENCY_KEY_REUSED`: the key was used for a charge of another amount, currency, saved card or mode (`data.order` that one). `PAYMENT_IN_PROGRESS`: the gateway holds the charge, still pending, or the same charge has been under way for 20 s (the same key again waits for it).',
        failure(['IDEMPOTENCY_KEY_REUSED', 'PAYMENT_IN_PROGRESS', 'TOO_MANY_ATTEMPTS'], z.unknown()),
      ),
      422: jsonAnswer(
        '`VALIDATION_FAILED` (`errors` names the field: `Idempotency-Key` when missing); `CARD_REVOKED`, `CARD_EXPIRED` (`errors.card`).',
        failure(['VALIDATION_FAILED', 'CARD_REVOKED', 'CARD_EXPIRED'], paymentAnswerSchema.nullable()),
      ),
      503: jsonAnswer(
        'The gateway is not available or busy: nothing was charged; send the same request again after `Retry-After`.',
        failure('gateway', paymentAnswerSchema),
        retryAfter,
      ),
      ...unreadable,
      ...internal,
    },
  },
];
