import { createRequire } from 'node:module';
import type { Ajv as AjvClass } from 'ajv';
import { z } from 'zod';
import { eventPayloadSchema } from '../../client/schemas.js';

/**
 * Whether parsed JSON has the documented shape of a gateway event (gateway-api.md, Webhook payload):
 * `eventPayloadSchema`, the zod schema, written as JSON Schema by zod itself (its input side: what
 * may arrive, before the ids become strings and defaults are filled) and compiled by ajv into one
 * function of plain property reads and `typeof` checks. It answers as `eventPayloadSchema.safeParse`
 * does (test/unit/merchant/event-shape.test.ts holds the two to it), without building zod's copy of
 * the event, its issues, or its transforms' output: what the receiver needs is a yes or a no and
 * three ids, at every delivery (zod's parse was 2% of the API's CPU under load, and a tenth of what
 * the receiver allocated). The worker still reads a transaction through zod (from-gateway.ts
 * parseEvent), for its output.
 *
 * Compiled on first use, or at start (`prepareEventShape`): ajv is loaded only by a process that
 * reads events, and not by every command of the CLI (about 100 ms of loading and compiling).
 */
export function hasEventShape(json: unknown): boolean {
  check ??= compile();
  return check(json);
}

/** Compiles the check now: the API does at start, so that no delivery waits for it. */
export function prepareEventShape(): void {
  check ??= compile();
}

let check: ((json: unknown) => boolean) | null = null;

function compile(): (json: unknown) => boolean {
  const { Ajv } = createRequire(import.meta.url)('ajv') as { Ajv: typeof AjvClass };
  const ajv = new Ajv({
    // `related_trans_id` is a string, a number or null: zod's union, as one `type` list.
    allowUnionTypes: true,
    // NaN and Infinity are no numbers (JSON.parse reads 1e400 as Infinity), as zod's z.number() says.
    strictNumbers: true,
    // The first failure settles it: no list of every problem (the receiver answers one message).
    allErrors: false,
  });
  return ajv.compile(z.toJSONSchema(eventPayloadSchema, { io: 'input', target: 'draft-7' }));
}
