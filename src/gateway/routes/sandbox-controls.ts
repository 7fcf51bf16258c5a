import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { GatewayDeps } from '../deps.js';
import { sessionView } from '../domain/sessions.js';
import { type TransactionStatus, transactionView } from '../domain/transactions.js';
import { canSee, principalOf, requireMerchantKey } from '../http/auth.js';
import { readJsonObject } from '../http/body.js';
import { respond } from '../http/envelope.js';
import { ApiError, notFound } from '../http/errors.js';
import { parseOr422 } from '../http/validate.js';
import { visibleSession } from '../http/visibility.js';
import { runDueWork } from '../lifecycle/due-work.js';
import { applySessionTrigger } from '../lifecycle/session-moves.js';

const TEN_YEARS_S = 10 * 365 * 24 * 3600;
const seconds = z
  .number({ message: 'is required and must be a number of seconds' })
  .positive('must be greater than zero')
  .max(TEN_YEARS_S, 'must be at most ten years');
export const advanceSchema = z.object({ seconds });
export const outageSchema = z.object({ seconds });
export const settleSchema = z.object({
  outcome: z.enum(['paid', 'failed', 'cancelled'], { message: 'must be paid, failed or cancelled' }),
});

/** sandbox.md section 10: controls outside /api/v1, behind a bearer key. */
export function sandboxControlRoutes(
  router: Router,
  deps: GatewayDeps,
  baseUrlOf: (ctx: Context) => string,
): void {
  const { state, clock } = deps;

  router.post('/sandbox/clock/advance', async (ctx) => {
    const body = parseOr422(advanceSchema, await readJsonObject(ctx));
    deps.clock.advance(body.seconds * 1000);
    respond(ctx, { now: new Date(deps.clock.now()).toISOString() }, `Clock advanced by ${body.seconds} s.`);
  });

  router.post('/sandbox/tick', async (ctx) => {
    respond(ctx, await runDueWork(deps), 'Due work ran.');
  });

  router.post('/sandbox/payment-sessions/:sessionId/settle', async (ctx) => {
    const body = parseOr422(settleSchema, await readJsonObject(ctx));
    const session = visibleSession(ctx, state);
    if (!applySessionTrigger(deps, session, body.outcome)) {
      throw new ApiError(
        409,
        'ERR_INVALID_TRANSACTION',
        `The session is ${session.status}; only an open session settles.`,
      );
    }
    respond(
      ctx,
      { payment_session: sessionView(session, baseUrlOf(ctx)) },
      `Session settled: ${session.status}.`,
    );
  });

  router.post('/sandbox/transactions/:id/chargeback', (ctx) => {
    const id = Number(ctx.params.id);
    const target = state.transactions.get(id);
    if (!target || !canSee(state, principalOf(ctx), target.merchantId)) throw notFound('Transaction');
    const payment = target.type === 'capture' ? state.transactions.get(target.relatedId!)! : target;
    if (target.status !== 'captured' || !['sale', 'auth', 'capture'].includes(target.type)) {
      throw new ApiError(
        400,
        'ERR_INVALID_TRANSACTION',
        `Only a captured payment can be charged back; this one is ${target.status}.`,
      );
    }
    const now = clock.now();
    const sessionId = state.sessionByTransaction.get(payment.id);
    const session = sessionId === undefined ? undefined : state.sessions.get(sessionId);
    if (session) {
      applySessionTrigger(deps, session, 'chargeback');
    } else {
      // A captured auth and its capture record are one payment: both are charged back.
      const capture = state.captureOf(payment.id);
      const family = capture ? [payment, capture] : [payment];
      const status: TransactionStatus = 'chargeback';
      for (const t of family) state.saveTransaction({ ...t, status, updatedAt: now });
      deps.emit('transaction.chargeback', state.transactions.get(target.id)!);
    }
    respond(ctx, transactionView(state.transactions.get(target.id)!), 'Transaction charged back.');
  });

  router.post('/sandbox/webhook/outage', async (ctx) => {
    const { merchantId } = requireMerchantKey(ctx);
    const body = parseOr422(outageSchema, await readJsonObject(ctx));
    const until = clock.now() + body.seconds * 1000;
    state.outages.set(merchantId, until);
    respond(
      ctx,
      { merchant_id: merchantId, until: new Date(until).toISOString() },
      `Deliveries fail for ${body.seconds} s.`,
    );
  });
}
