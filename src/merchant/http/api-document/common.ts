/**
 * What the merchant API document's route groups share (api-document.ts joins them): a JSON body, the
 * order id in a path, Retry-After, the operator's security, and the answers many routes give alike.
 */
import { z } from 'zod';
import { LIMIT_NAMES } from '../../../infra/rate-limits.js';
import { jsonAnswer } from '../../../shared/api-document.js';
import { failure, forbiddenSchema } from '../response-schemas.js';

/**
 * A JSON body; `example` is what Swagger UI shows and fills in (a test checks it against the schema).
 * Required when the schema refuses `{}`, which is what the kit reads from no body at all (jsonBody):
 * a client must send one, and a typed client's types say so.
 */
export const json = (schema: z.ZodType, example?: unknown) => ({
  ...(schema.safeParse({}).success ? {} : { required: true }),
  content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } },
});
export const orderPath = z.object({ id: z.string().meta({ description: 'The order id (`ord_...`).' }) });
export const retryAfter = z.object({
  'Retry-After': z.string().meta({ description: 'Seconds to wait before sending the same request again.' }),
});
export const OPS = [{ opsToken: [] }];
export const customerUnauthorized = {
  401: jsonAnswer(
    "`CUSTOMER_TOKEN_REQUIRED`: no `Customer-Token` header; `CUSTOMER_TOKEN_INVALID`: the token is not this customer's, or has expired (an hour after it was made). `UNAUTHORIZED`: an operator's bearer token nobody holds.",
    failure(['CUSTOMER_TOKEN_REQUIRED', 'CUSTOMER_TOKEN_INVALID', 'UNAUTHORIZED']),
  ),
};
export const cardNotFound =
  "`CARD_NOT_FOUND`: the customer has no saved card with this id (another customer's card is none of theirs; `errors.card`).";

// Answers many routes share. Every answer also carries the X-Request-Id header (see the description).
export const internal = {
  500: jsonAnswer('`INTERNAL`: an unexpected error; nothing inside is shown.', failure(['INTERNAL'])),
};
export const databaseDown = {
  503: jsonAnswer(
    '`UNAVAILABLE`: the database cannot be reached; nothing was done. Retry after `Retry-After` seconds.',
    failure(['UNAVAILABLE']),
    retryAfter,
  ),
};
export const unreadable = {
  400: jsonAnswer('`BAD_REQUEST`: the body could not be read.', failure(['BAD_REQUEST'])),
  413: jsonAnswer('`VALIDATION_FAILED`: the body is over 64 KiB.', failure(['VALIDATION_FAILED'])),
};
export const invalidInput = jsonAnswer(
  '`VALIDATION_FAILED`: `errors` names each field and what is wrong with it.',
  failure(['VALIDATION_FAILED']),
);
const gatewayCode = z
  .object({ gateway_code: z.string().meta({ description: "The gateway's own error code." }) })
  .nullable();

/** A gateway call passed through as it is (the payment-methods list). */
export const gatewayFailed = {
  502: jsonAnswer(
    "`GATEWAY_ERROR`: the gateway refused the kit's request (a revoked key, a missing scope): the operator's to fix, not the caller's.",
    failure(['GATEWAY_ERROR'], gatewayCode),
  ),
  503: jsonAnswer(
    "`GATEWAY_UNAVAILABLE`: the gateway did not answer, failed, or slowed the key down; `GATEWAY_BUSY`: the API key's budget for checkout traffic is spent for now (nothing was sent). Try again (after `Retry-After` when given).",
    failure(['GATEWAY_UNAVAILABLE', 'GATEWAY_BUSY'], gatewayCode),
    retryAfter.partial(),
  ),
};
const limitedSchema = z
  .object({
    limit: z
      .enum(LIMIT_NAMES)
      .meta({ description: 'The limit spent: its setting is `LIMIT_<LIMIT>` (README, Limits).' }),
    retry_after: z.number().int().min(1).meta({ description: 'Seconds, as `Retry-After` says.' }),
  })
  .meta({ id: 'RateLimited', description: 'Which limit turned the request away, and for how long.' });

/** A limit on the public routes (README, Limits): `which` says what it counts. */
export const rateLimited = (which: string) => ({
  429: jsonAnswer(
    `\`RATE_LIMITED\`: ${which} (\`data.limit\` names the one spent; each is a setting). Nothing was done; send the request again after \`Retry-After\` seconds.`,
    failure(['RATE_LIMITED'], limitedSchema),
    retryAfter,
  ),
});
export const orderNotFound = {
  404: jsonAnswer(
    "`NOT_FOUND`: no order has this id; to a token scoped to merchants (platform mode), none of its merchants' has: another merchant's order gets the very same answer.",
    failure(['NOT_FOUND']),
  ),
};
/** What `token_failures_per_address` counts: the 429 of every route that takes an operator's bearer token. */
export const WRONG_TOKENS =
  'too many wrong bearer tokens from this client address (`token_failures_per_address`); a right token is never refused for them';
/** The 429 a wrong bearer token gets past `token_failures_per_address`. */
export const wrongTokens = rateLimited(WRONG_TOKENS);

/** The 404 of an order's shopper routes: a missing or wrong client secret reads as no order at all. */
export const SHOPPER_NOT_FOUND =
  "`NOT_FOUND`: no order has this id, or the request shows neither the order's client secret nor an operator's or the storefront's token, or a token scoped to other merchants (platform mode). The answer is the same either way: it says nothing more.";
export const shopperOrderNotFound = {
  404: jsonAnswer(SHOPPER_NOT_FOUND, failure(['NOT_FOUND'])),
};

/** The client secret of an order's shopper routes (issue 41), as a header: POST /orders answered it. */
export const orderSecretHeader = z.object({
  'Order-Secret': z.string().optional().meta({
    description:
      "The order's client secret, as `POST /orders` answered it (`client_secret`). Needed without `Authorization` (a pay route may carry it in its body instead); with an operator's or the storefront's token, not needed.",
  }),
});

/** Who may use an order's shopper routes: the holder of its secret (no scheme: a header or the body), or a token. */
export const SHOPPER: Record<string, string[]>[] = [{}, { opsToken: [] }];
export const unauthorized = {
  401: jsonAnswer(
    "`UNAUTHORIZED`: no `Authorization: Bearer <token>`, or a token nobody holds (unknown, or revoked): an operator's own token or OPS_API_TOKEN.",
    failure(['UNAUTHORIZED']),
  ),
  ...wrongTokens,
};

/** A route some roles may not use: the roles that may are in its description and in the 403. */
export const forbidden = {
  403: jsonAnswer(
    "`FORBIDDEN`: the token is good, but its role may not do this (`data` the token's role and the roles that may); or it is scoped to some merchants (platform mode) and this reads or acts across every merchant, or names a merchant outside its scope (`data.merchant_ids` its merchants; `errors.merchant_id` when the request named one).",
    failure(['FORBIDDEN'], forbiddenSchema),
  ),
};

/** `by`, as every operator's decision takes it. */
export const BY =
  " `by` (optional): the caller's own name, as its token says (`admin` for OPS_API_TOKEN, the operator's name for their own token); a `by` naming anyone else is a 422: the records name who the token is.";

/** A merchant-only call for a linked merchant without a usable key of its own (platform mode, issue 45). */
export const merchantKeySchema = z
  .object({
    merchant_id: z.number().int(),
    operation: z.enum(['3D Secure', 'capture', 'refund', 'void']),
    gateway_status: z.number().int().optional(),
    gateway_code: z.string().optional(),
  })
  .meta({ id: 'MerchantKeyProblem' });

/** What a 409 says of a merchant key (platform mode). */
export const MERCHANT_KEY_TEXT =
  "`MERCHANT_KEY_MISSING` (platform mode: the order's merchant has no merchant key of its own in the kit, and the gateway lets only merchant keys verify 3D Secure, capture, refund and void; nothing was sent or stored; `data` the merchant and the operation) or `MERCHANT_KEY_REFUSED` (its key was refused by the gateway, 401 or 403: nothing was done there, and the same request succeeds once the key is right; `data` adds the gateway's status and code).";
