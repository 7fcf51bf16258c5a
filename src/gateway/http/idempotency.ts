import type { Context } from 'koa';
import type { GatewayDeps } from '../deps.js';
import { canonicalJson, MAX_IDEMPOTENCY_KEY_LENGTH } from '../domain/idempotency.js';
import type { Operation } from '../domain/transactions.js';
import { principalOf } from './auth.js';
import { errorEnvelope } from './envelope.js';
import { ApiError, validationFailed } from './errors.js';

/** The `Idempotency-Key` header, if sent; an empty or over-long one is a 422 and consumes nothing (rule 5). */
export function idempotencyKeyOf(ctx: Context): string | undefined {
  const key = ctx.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || key.trim() === '' || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw validationFailed({ 'Idempotency-Key': [`must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`] });
  }
  return key;
}

/**
 * gateway-api.md, Idempotency contract. Call after validation and authorization. Outcomes of the
 * operation (success and 4xx declines alike) are stored and replayed; an unexpected error frees the key.
 */
export async function idempotent(
  ctx: Context,
  deps: GatewayDeps,
  operation: Operation,
  key: string | undefined,
  body: unknown,
  execute: () => void,
): Promise<void> {
  const run = async () => {
    const latency = deps.state.latencyMs.get(operation) ?? 0;
    if (latency > 0) await deps.sleep(latency);
    execute();
  };
  if (key === undefined) return run(); // rule 6: without the header every POST executes

  const store = deps.state.idempotency;
  const scope = principalOf(ctx).key;
  const fingerprint = `${ctx.method} ${ctx.path} ${canonicalJson(body)}`;
  const admission = store.begin(scope, key, fingerprint, deps.clock.now());
  switch (admission.kind) {
    case 'conflict':
      throw new ApiError(
        409,
        'ERR_IDEMPOTENCY_CONFLICT',
        'This Idempotency-Key was used with a different request.',
      );
    case 'in_progress':
      throw new ApiError(
        409,
        'ERR_IDEMPOTENT_REQUEST_IN_PROGRESS',
        'The original request with this Idempotency-Key is still running.',
      );
    case 'replay':
      ctx.status = admission.response.status;
      ctx.body = admission.response.body;
      ctx.set('Idempotency-Replayed', 'true');
      return;
    case 'execute':
      break;
    default:
      return admission satisfies never;
  }
  try {
    await run();
    store.complete(scope, key, { status: ctx.status, body: ctx.body });
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) {
      store.complete(scope, key, { status: error.status, body: errorEnvelope(error) });
    } else {
      store.abandon(scope, key);
    }
    throw error;
  }
}
