/**
 * What the gateway API document's route groups share (api-document.ts joins them): a JSON body, the
 * key's security, the rate header every answer carries, and the answers many routes give alike.
 */
import { z } from 'zod';
import { jsonAnswer } from '../../../shared/api-document.js';
import { failure } from '../response-schemas.js';

/** A JSON body; `example` is what Swagger UI shows and fills in (a test checks it against the schema). */
export const json = (schema: z.ZodType, example?: unknown) => ({
  content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } },
});
export const KEY = [{ apiKey: [] }];

/** sandbox.md section 9: every answer, errors included, says what is left of the key's minute. */
export const rateHeader = {
  'X-RateLimit-Remaining': z.string().meta({ description: "Requests left in the key's 60-second window." }),
};
export const retryAfter = { 'Retry-After': z.string().meta({ description: 'Seconds to wait.' }) };
export const answer = (description: string, schema: z.ZodType, headers: Record<string, z.ZodType> = {}) =>
  jsonAnswer(description, schema, z.object({ ...rateHeader, ...headers }));
export const authFailed = {
  401: answer('`ERR_AUTH_FAILED`: no API key, or an unknown one.', failure(['ERR_AUTH_FAILED'])),
  403: answer(
    '`ERR_AUTH_FAILED`: the key or its account is inactive, or the key may not call this (a partner key where a merchant key is needed, a missing scope).',
    failure(['ERR_AUTH_FAILED']),
  ),
};
const limited = {
  429: answer(
    "`ERR_RATE_LIMITED`: over the key's 1000 requests a minute (responses slow down from 500).",
    failure(['ERR_RATE_LIMITED']),
    retryAfter,
  ),
};
export const unexpected = {
  500: answer('`ERR_UNEXPECTED`: safe to retry with backoff.', failure(['ERR_UNEXPECTED'])),
};

/** What every call of /api/v1 may answer. */
export const apiAnswers = { ...authFailed, ...limited, ...unexpected };
export const bodyTooLarge = {
  413: answer('`ERR_VALIDATION_FAILED`: the body is over 1 MiB.', failure(['ERR_VALIDATION_FAILED'])),
};
export const invalid = answer(
  '`ERR_VALIDATION_FAILED`: `errors` names each field (malformed JSON: `errors.body`).',
  failure(['ERR_VALIDATION_FAILED']),
);
export const notFound = (what: string) => ({
  404: answer(`\`ERR_NOT_FOUND\`: no ${what}, or one this key may not see.`, failure(['ERR_NOT_FOUND'])),
});
export const partnerMerchant = '`ERR_AUTH_FAILED`: a partner key without a linked `merchant_id`.';
export const transactionPath = z.object({ id: z.string().meta({ description: 'The transaction id.' }) });
export const sessionPath = z.object({ sessionId: z.string().meta({ description: '`ps_...`' }) });
