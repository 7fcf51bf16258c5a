import type { Context } from 'koa';
import type { PaymentSession } from '../domain/sessions.js';
import type { Transaction } from '../domain/transactions.js';
import type { GatewayState } from '../state/gateway-state.js';
import { canSee, principalOf } from './auth.js';
import { notFound } from './errors.js';

/** gateway-api.md: a record the key may not see is a 404, the same as one that does not exist. */

/** The transaction named by the path's `:id`. */
export function visibleTransaction(ctx: Context, state: GatewayState): Transaction {
  const id = ctx.params.id ?? '';
  const t = /^\d{1,15}$/.test(id) ? state.transactions.get(Number(id)) : undefined;
  if (!t || !canSee(state, principalOf(ctx), t.merchantId)) throw notFound('Transaction');
  return t;
}

/** The payment session named by the path's `:sessionId`. */
export function visibleSession(ctx: Context, state: GatewayState): PaymentSession {
  const session = state.sessions.get(ctx.params.sessionId ?? '');
  if (!session || !canSee(state, principalOf(ctx), session.merchantId)) throw notFound('Payment session');
  return session;
}
