import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { formatMoney, parseMajor } from '../../shared/money.js';
import type { GatewayDeps } from '../deps.js';
import {
  type ChargebackPlan,
  type PaymentFamily,
  planChargeback,
  planChargebackReversal,
} from '../domain/chargebacks.js';
import { sessionView } from '../domain/sessions.js';
import { type Transaction, transactionView } from '../domain/transactions.js';
import { principalOf, resolveMerchantId } from '../http/auth.js';
import { readJsonObject } from '../http/body.js';
import { respond } from '../http/envelope.js';
import { ApiError, validationFailed } from '../http/errors.js';
import { amountField, merchantIdField } from '../http/schemas.js';
import { parseOr422 } from '../http/validate.js';
import { visibleSession, visibleTransaction } from '../http/visibility.js';
import { runDueWork } from '../lifecycle/due-work.js';
import { applySessionTrigger, moveSessionOnly } from '../lifecycle/session-moves.js';
import type { GatewayState } from '../state/gateway-state.js';

const TEN_YEARS_S = 10 * 365 * 24 * 3600;
const seconds = z
  .number({ message: 'is required and must be a number of seconds' })
  .positive('must be greater than zero')
  .max(TEN_YEARS_S, 'must be at most ten years');
export const advanceSchema = z.object({ seconds });
/** sandbox.md section 10; `merchant_id`: a partner key names the linked merchant (a merchant key may repeat its own). */
export const outageSchema = z.object({ seconds, merchant_id: merchantIdField });
export const settleSchema = z.object({
  outcome: z.enum(['paid', 'failed', 'cancelled'], { message: 'must be paid, failed or cancelled' }),
});
/** Major units, checked against the transaction's currency; omitted: all that can be charged back. */
export const chargebackSchema = z.object({ amount: amountField.optional() });

/** sandbox.md section 10: controls outside /api/v1, behind a bearer key. */
export function sandboxControlRoutes(
  router: Router,
  deps: GatewayDeps,
  baseUrlOf: (ctx: Context) => string,
): void {
  const { state, clock } = deps;

  // A read: what a process beside the sandbox (the kit's CLI) needs to reckon on its time.
  router.get('/sandbox/clock', (ctx) => {
    respond(ctx, { now: new Date(deps.clock.now()).toISOString() }, 'The sandbox clock.');
  });

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

  // sandbox.md section 11: a chargeback, in full (default: what was captured and not refunded) or in part.
  router.post('/sandbox/transactions/:id/chargeback', async (ctx) => {
    const target = visibleTransaction(ctx, state);
    const body = parseOr422(chargebackSchema, await readJsonObject(ctx));
    let requested: number | undefined;
    if (body.amount !== undefined) {
      const amount = parseMajor(body.amount, target.currency);
      if (!amount.ok) throw validationFailed({ amount: [amount.message] });
      requested = amount.minor;
    }
    const plan = planChargeback(familyOf(state, target), requested, clock.now());
    const t = applyDispute(deps, target, plan, 'chargeback');
    const done = formatMoney(t.chargebackAmount, t.currency);
    respond(ctx, transactionView(t), `Transaction charged back: ${done}.`);
  });

  // The merchant won the dispute. A wrong state is 400 ERR_INVALID_TRANSACTION, as for the chargeback.
  router.post('/sandbox/transactions/:id/chargeback/reverse', (ctx) => {
    const target = visibleTransaction(ctx, state);
    const plan = planChargebackReversal(familyOf(state, target), clock.now());
    const t = applyDispute(deps, target, plan, 'chargeback_reversed');
    respond(ctx, transactionView(t), 'Chargeback reversed: the transaction is captured again.');
  });

  // "This key's merchant": a merchant key's own, or the linked merchant a partner key names (as its
  // webhook management does, gateway-api.md): each merchant's endpoint has its own deliveries.
  router.post('/sandbox/webhook/outage', async (ctx) => {
    const body = parseOr422(outageSchema, await readJsonObject(ctx));
    const merchantId = resolveMerchantId(state, principalOf(ctx), body.merchant_id);
    const until = clock.now() + body.seconds * 1000;
    state.outages.set(merchantId, until);
    respond(
      ctx,
      { merchant_id: merchantId, until: new Date(until).toISOString() },
      `Deliveries fail for ${body.seconds} s.`,
    );
  });
}

/** The payment a transaction id names: a capture record stands for its auth (one payment). */
function familyOf(state: GatewayState, target: Transaction): PaymentFamily {
  const payment = target.type === 'capture' ? state.transactions.get(target.relatedId!)! : target;
  return { target, payment, capture: state.captureOf(payment.id) };
}

/**
 * Records a chargeback or its reversal: the payment's records, its session (if any) through the
 * session table, and one event about the record named. Returns that record as it is now.
 */
function applyDispute(
  deps: GatewayDeps,
  target: Transaction,
  plan: ChargebackPlan,
  trigger: 'chargeback' | 'chargeback_reversed',
): Transaction {
  const { state } = deps;
  if (!plan.ok) {
    if (plan.problem === 'amount') throw validationFailed({ amount: [plan.message] });
    throw new ApiError(400, 'ERR_INVALID_TRANSACTION', plan.message);
  }
  const root = plan.updated[0]!;
  const sessionId = state.sessionByTransaction.get(root.id);
  const session = sessionId === undefined ? undefined : state.sessions.get(sessionId);
  // A session's sale is captured only while it is paid, and charged back only while it is chargeback.
  if (session && !moveSessionOnly(deps, session, trigger)) {
    throw new ApiError(400, 'ERR_INVALID_TRANSACTION', `The payment session is ${session.status}.`);
  }
  for (const t of plan.updated) state.saveTransaction(t);
  const record = state.transactions.get(target.id)!;
  deps.emit(trigger === 'chargeback' ? 'transaction.chargeback' : 'transaction.chargeback_reversed', record);
  return record;
}
