import type Router from '@koa/router';
import { z } from 'zod';
import { randomHex } from '../../shared/ids.js';
import { formatMoney, parseMajor } from '../../shared/money.js';
import type { GatewayDeps } from '../deps.js';
import { captureDeadline } from '../domain/auth-lifetime.js';
import { planInitiation } from '../domain/initiation.js';
import { usableInstrument } from '../domain/instruments.js';
import { checkVerification } from '../domain/three-ds.js';
import {
  acquirerTransactionId,
  type ChildSeed,
  type Operation,
  type Plan,
  planCapture,
  planRefund,
  planVoid,
  type Transaction,
  transactionView,
} from '../domain/transactions.js';
import { principalOf, requireMerchantKey, resolveMerchantId } from '../http/auth.js';
import { readJsonObject } from '../http/body.js';
import { respond } from '../http/envelope.js';
import { declined, refused, validationFailed } from '../http/errors.js';
import { idempotencyKeyOf, idempotent } from '../http/idempotency.js';
import {
  amountField,
  cardFacts,
  cardSchema,
  currencyField,
  customerSchema,
  httpUrl,
  ipAddress,
  merchantIdField,
  withMinorAmount,
} from '../http/schemas.js';
import { parseOr422 } from '../http/validate.js';
import { visibleTransaction } from '../http/visibility.js';

/** Which request fields are required is "not shown" in gateway-api.md: the sandbox requires these. */
export const initiateSchema = z
  .object({
    amount: amountField,
    currency: currencyField,
    transaction_type: z.enum(['sale', 'auth'], { message: 'must be sale or auth' }),
    card: cardSchema.optional(),
    vault_token: z.string().min(1).max(255).optional(),
    save_payment_instrument: z.boolean({ message: 'must be a boolean' }).optional().meta({
      description:
        'With a card and `customer.merchant_customer_id`: keep the card when the payment is approved; the record then carries `vault_token` (sandbox.md section 11).',
    }),
    reference: z.string({ message: 'is required' }).min(1, 'is required').max(255),
    description: z.string().max(1024).optional(),
    merchant_id: merchantIdField,
    success_url: httpUrl.optional(),
    error_url: httpUrl.optional(),
    customer: customerSchema.optional(),
    card_verification_data: z
      .object({ id: z.union([z.string().min(1), z.number().int().positive()]) })
      .optional(),
    browser_data: z.object({ ip_address: ipAddress.optional() }).optional(),
  })
  .superRefine((body, ctx) => {
    if ((body.card === undefined) === (body.vault_token === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['card'],
        message: 'exactly one of card and vault_token is required',
      });
    }
    if (body.save_payment_instrument !== true) return;
    // sandbox.md section 11: a card is kept for a customer, named by the merchant's own id for them.
    if (!body.customer?.merchant_customer_id) {
      ctx.addIssue({
        code: 'custom',
        path: ['customer', 'merchant_customer_id'],
        message: 'is required with save_payment_instrument',
      });
    }
    // Saving takes a card: a vault token names an instrument kept already, and asking again is a mistake.
    if (body.vault_token !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['save_payment_instrument'],
        message: 'saves a card: a vault_token is saved already',
      });
    }
  })
  .transform(withMinorAmount);

export const operationSchemas = {
  capture: z.object({ amount: amountField }),
  refund: z.object({ amount: amountField, reason: z.string().max(255).optional() }),
  void: z.object({ amount: amountField, reason: z.string().max(255).optional() }),
} as const;

export function transactionRoutes(router: Router, deps: GatewayDeps): void {
  const { state, clock } = deps;

  router.post('/api/v1/transactions', async (ctx) => {
    const body = parseOr422(initiateSchema, await readJsonObject(ctx));
    const merchantId = resolveMerchantId(state, principalOf(ctx), body.merchant_id);
    const currency = body.currency as Transaction['currency'];
    const now = clock.now();
    const { card } = body;
    // sandbox.md section 11: a token the merchant may not use is as unknown as a token never issued.
    const instrument =
      body.vault_token === undefined
        ? undefined
        : usableInstrument(state.instruments.get(body.vault_token), merchantId);
    const cardFingerprint = card && state.fingerprint(card.number);
    // The saved card's for a token. Undefined only with an unusable token, refused before anything is recorded.
    const fingerprint = cardFingerprint ?? instrument?.fingerprint;
    const doNotRetryKey = `${merchantId}:${fingerprint}`;
    const verificationId = body.card_verification_data?.id;

    const plan = planInitiation({
      type: body.transaction_type,
      amount: body.minor,
      currency,
      merchantCurrencies: state.merchants.get(merchantId)!.currencies,
      referenceHeldBy: state.referenceHeldBy(merchantId, body.reference),
      card: card && cardFacts(card),
      vaultToken: body.vault_token,
      instrument,
      customerEmail: body.customer?.email,
      // Section 11: a token payment's card_verification_data is accepted and not looked at.
      verification:
        verificationId === undefined || cardFingerprint === undefined
          ? undefined
          : checkVerification(
              state.verification(verificationId),
              { merchantId, cardFingerprint, amount: body.minor, currency },
              now,
            ),
      doNotRetryUntil: fingerprint === undefined ? undefined : state.doNotRetry.get(doNotRetryKey),
      now,
    });

    const record = (
      status: Transaction['status'],
      statusReason: string | null,
      authCode: string,
      vaultToken: string | null,
    ): Transaction => ({
      id: state.nextTransactionId(),
      relatedId: null,
      merchantId,
      cardholderId: state.cardholderId(merchantId, fingerprint!),
      type: body.transaction_type,
      status,
      amount: body.minor,
      currency,
      capturedAmount: status === 'captured' ? body.minor : 0,
      refundedAmount: 0,
      chargebackAmount: 0,
      reference: body.reference,
      description: body.description ?? null,
      statusReason,
      acquirerTransId: acquirerTransactionId(deps.random, deps.seed.settings.card_like_acquirer_ids),
      acquirerAuthCode: authCode,
      acquirerRefNum: randomHex(deps.random, 6),
      ipAddress: body.browser_data?.ip_address ?? body.customer?.ip_address ?? ctx.ip,
      captureBefore: captureDeadline(
        { type: body.transaction_type, status, createdAt: now },
        state.authLifetimeMs,
      ),
      vaultToken,
      createdAt: now,
      updatedAt: now,
    });
    // A token payment names its instrument whatever the outcome; a card payment only a card it saved.
    const usedToken = instrument?.vaultToken ?? null;
    if (!plan.ok) {
      if (plan.doNotRetryUntil !== undefined) state.doNotRetry.set(doNotRetryKey, plan.doNotRetryUntil);
      if (!plan.record) throw refused(plan);
      const t = record(plan.record.status, plan.code, '', usedToken);
      state.saveTransaction(t);
      deps.emit(plan.record.event, t);
      throw refused(plan, transactionView(t));
    }
    // Section 11: only an approved payment keeps its card; the schema has made sure a customer is named.
    const saved =
      card && body.save_payment_instrument === true
        ? state.instruments.keep({
            merchantId,
            merchantCustomerId: body.customer!.merchant_customer_id!,
            card: { ...cardFacts(card), name: card.name ?? null },
            fingerprint: fingerprint!,
            now,
          })
        : null;
    const approved = record(
      plan.status,
      null,
      randomHex(deps.random, 3).toUpperCase(),
      saved?.vaultToken ?? usedToken,
    );
    state.saveTransaction(approved);
    deps.emit(plan.event, approved);
    respond(ctx, transactionView(approved), plan.message);
  });

  router.get('/api/v1/transactions/:id/status', (ctx) => {
    respond(ctx, transactionView(visibleTransaction(ctx, state)), 'Transaction status.');
  });

  for (const operation of ['capture', 'refund', 'void'] as const) {
    router.post(`/api/v1/transactions/:id/${operation}`, async (ctx) => {
      requireMerchantKey(ctx);
      const key = idempotencyKeyOf(ctx);
      const target = visibleTransaction(ctx, state);
      const raw = await readJsonObject(ctx);
      const body = parseOr422(operationSchemas[operation], raw);
      const amount = parseMajor(body.amount, target.currency);
      if (!amount.ok) throw validationFailed({ amount: [amount.message] });
      const reason = 'reason' in body ? (body.reason ?? null) : null;

      await idempotent(ctx, deps, operation, key, raw, () => {
        const plan = planOperation(deps, operation, target.id, amount.minor, reason);
        if (!plan.ok) throw declined(plan.code, plan.message);
        for (const t of [...plan.updated, plan.created]) state.saveTransaction(t);
        deps.emit(EVENTS[operation], plan.created);
        const done = formatMoney(amount.minor, target.currency);
        respond(ctx, { transaction: transactionView(plan.created) }, `${PAST[operation]} ${done}.`);
      });
    });
  }
}

const PAST: Record<Operation, string> = { capture: 'Captured', refund: 'Refunded', void: 'Voided' };
const EVENTS = {
  capture: 'transaction.captured',
  refund: 'transaction.refunded',
  void: 'transaction.voided',
} as const;

/** Plans against the records as they are now: a request that waited (latency, idempotency) sees the latest. */
function planOperation(
  deps: GatewayDeps,
  operation: Operation,
  id: number,
  amount: number,
  reason: string | null,
): Plan {
  const { state, clock } = deps;
  const target = state.transactions.get(id)!;
  const seed: ChildSeed = {
    id: state.nextTransactionId(),
    now: clock.now(),
    acquirerTransId: acquirerTransactionId(deps.random, deps.seed.settings.card_like_acquirer_ids),
    acquirerRefNum: randomHex(deps.random, 6),
  };
  switch (operation) {
    case 'capture':
      return planCapture(target, amount, seed);
    case 'void':
      return planVoid(target, amount, reason, seed);
    case 'refund': {
      const payment = target.type === 'capture' ? state.transactions.get(target.relatedId!)! : target;
      const methodRefunds = state.methodRefunds(payment);
      return planRefund(target, payment, state.captureOf(payment.id), amount, reason, seed, methodRefunds);
    }
    default:
      return operation satisfies never;
  }
}
