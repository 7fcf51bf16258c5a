import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { validationFailed } from './errors.js';

export const MAX_BODY_BYTES = 1024 * 1024;
/** The hosted pages' forms send one button's name and value. */
const MAX_FORM_BYTES = 4096;

/**
 * Reads and parses a JSON object body once (sandbox.md section 9): malformed JSON or a non-object
 * is a 422 on `errors.body`; an empty body is `{}`, for endpoints whose body is optional.
 */
export async function readJsonObject(ctx: Context): Promise<Record<string, unknown>> {
  if (ctx.state.jsonBody) return ctx.state.jsonBody as Record<string, unknown>;
  const raw = await getRawBody(ctx.req, { limit: MAX_BODY_BYTES, encoding: 'utf8' });
  let parsed: unknown = {};
  if (raw.trim() !== '') {
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw validationFailed({ body: ['must be valid JSON'] }, 'The request body is not valid JSON.');
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw validationFailed({ body: ['must be a JSON object'] }, 'The request body must be a JSON object.');
  }
  ctx.state.jsonBody = parsed;
  return parsed as Record<string, unknown>;
}

/** Reads the url-encoded form a hosted page posts. */
export async function readForm(ctx: Context): Promise<URLSearchParams> {
  return new URLSearchParams(await getRawBody(ctx.req, { limit: MAX_FORM_BYTES, encoding: 'utf8' }));
}
