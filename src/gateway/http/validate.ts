import type { z } from 'zod';
import { validationFailed } from './errors.js';

/** zod issues as the envelope's `errors`: dotted field path -> messages. */
export function issuesToErrors(issues: readonly z.core.$ZodIssue[]): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const issue of issues) {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
    errors[field] = [...(errors[field] ?? []), issue.message];
  }
  return errors;
}

/** Parses `input` with `schema` or throws the 422 that names every bad field. */
export function parseOr422<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationFailed(issuesToErrors(result.error.issues));
  return result.data;
}
