import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import getRawBody from 'raw-body';
import type { z } from 'zod';
import { successEnvelope } from '../../shared/envelope.js';
import { errorAnswer } from '../errors/answer.js';
import { HttpError, invalid } from '../errors/http-error.js';

/** Every error a route throws, answered by errors/answer.ts (as the receiver answers its own). */
export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new HttpError(404, 'NOT_FOUND', 'Not found.');
    } catch (caught) {
      const answer = errorAnswer(caught, logger, ctx.path, ctx.state.requestId ?? null);
      ctx.status = answer.status;
      ctx.body = answer.body;
      ctx.set(answer.headers);
    }
  };
}

export function ok(ctx: Context, data: unknown, status = 200, message = ''): void {
  ctx.status = status;
  ctx.body = successEnvelope(data, message);
}

/** A JSON object body of at most `limit` bytes; malformed JSON or a non-object is a 422 on `body`. */
export async function jsonBody(ctx: Context, limit = 64 * 1024): Promise<Record<string, unknown>> {
  const raw = await getRawBody(ctx.req, { limit, encoding: 'utf8' });
  let parsed: unknown = {};
  if (raw.trim() !== '') {
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw invalid({ body: ['must be valid JSON'] });
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalid({ body: ['must be a JSON object'] });
  return parsed as Record<string, unknown>;
}

/**
 * Plain words for the checks that carry no message of their own (a schema's own message wins over
 * this map): a client reads "must be at most 255 characters", never a library's pattern dump.
 */
const plainWords: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'is required' : `must be ${article(issue.expected)}`;
    case 'too_big':
      return `must be at most ${String(issue.maximum)}${issue.origin === 'string' ? ' characters' : ''}`;
    case 'too_small':
      return `must be at least ${String(issue.minimum)}${issue.origin === 'string' ? ' characters' : ''}`;
    case 'invalid_format':
      return 'is not in the expected format';
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')}`;
    case 'unrecognized_keys':
      return `has unknown fields: ${issue.keys.join(', ')}`;
    default:
      return 'is not valid';
  }
};

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

export function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = validate(schema, input);
  if (result.ok) return result.data;
  throw invalid(result.errors);
}

/** `parse` of a query string (ctx.query), where a name given twice comes as an array of its values. */
export function parseQuery<S extends z.ZodType>(schema: S, query: Record<string, unknown>): z.output<S> {
  const result = validate(schema, query, { query: true });
  if (result.ok) return result.data;
  throw invalid(result.errors);
}

/**
 * The input, or every field's errors: for a route that reports them beside its own (a required
 * header), so that one 422 names everything the caller must fix.
 */
export function validate<S extends z.ZodType>(
  schema: S,
  input: unknown,
  { query = false }: { query?: boolean } = {},
): { ok: true; data: z.output<S> } | { ok: false; errors: Record<string, string[]> } {
  const result = schema.safeParse(input, { error: plainWords, reportInput: true });
  if (result.success) return { ok: true, data: result.data };
  const errors: Record<string, string[]> = {};
  for (const issue of result.error.issues) {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
    const repeated = query && Array.isArray((input as Record<string, unknown>)[String(issue.path[0])]);
    const message = repeated ? 'is given more than once; send it once' : messageOf(issue);
    if (!errors[field]?.includes(message)) errors[field] = [...(errors[field] ?? []), message];
  }
  return { ok: false, errors };
}

/**
 * What is wrong, where the schema's own message says otherwise: its "is required: ..." is the words
 * for a field left out, not for one given as a number or an object.
 */
function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.input !== undefined && issue.message.startsWith('is required')) {
    // "is required: an object with number, ..." says what it must be: kept, as "must be an object with ...".
    const what = /^is required: (an? .*)$/.exec(issue.message)?.[1];
    return `must be ${what ?? article(issue.expected)}`;
  }
  return issue.message;
}
