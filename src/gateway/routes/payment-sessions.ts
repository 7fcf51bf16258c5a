import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { randomHex, randomId } from '../../shared/ids.js';
import type { GatewayDeps } from '../deps.js';
import { amountRefusal, duplicateRefusal } from '../domain/payment-checks.js';
import { type PaymentSession, sessionView } from '../domain/sessions.js';
import { acquirerTransactionId, type Transaction } from '../domain/transactions.js';
import { principalOf, resolveMerchantId } from '../http/auth.js';
import { readJsonObject } from '../http/body.js';
import { respond } from '../http/envelope.js';
import { ApiError, declined, refused, validationFailed } from '../http/errors.js';
import {
  amountField,
  currencyField,
  customerSchema,
  httpUrl,
  merchantIdField,
  withMinorAmount,
} from '../http/schemas.js';
import { parseOr422 } from '../http/validate.js';
import { visibleSession } from '../http/visibility.js';
import { applySessionTrigger } from '../lifecycle/session-moves.js';

export const createSchema = z
  .object({
    amount: amountField,
    currency: currencyField,
    reference: z.string({ message: 'is required' }).min(1, 'is required').max(255),
    payment_method: z.string({ message: 'is required' }).min(1, 'is required').max(64),
    customer: customerSchema.optional(),
    customer_reference: z.string().max(255).optional(),
    description: z.string().max(1024).optional(),
    success_url: httpUrl,
    cancel_url: httpUrl,
    merchant_id: merchantIdField,
  })
  .transform(withMinorAmount);

/** Field names that carry card, token, CVV or voucher data: never accepted by a redirect session. */
const CARD_DATA_KEY =
  /^(cards?|card_?(number|no|data|details|token|holder)?|pan|number|cvv2?|cvc2?|csc|security_?code|exp(iry|iration)?(_?(month|year|date))?|vault_?token|payment_?token|token|voucher(_?(code|pin|number))?|pin)$/i;

/** gateway-api.md, Payment sessions rule 3: anywhere in the request, nested too. Paths, never values. */
export function cardDataPaths(value: unknown, path: string[] = []): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => cardDataPaths(v, [...path, String(i)]));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, v]) =>
    CARD_DATA_KEY.test(key) ? [[...path, key].join('.')] : cardDataPaths(v, [...path, key]),
  );
}

export function paymentSessionRoutes(
  router: Router,
  deps: GatewayDeps,
  baseUrlOf: (ctx: Context) => string,
): void {
  const { state, clock } = deps;

  router.post('/api/v1/payment-sessions', async (ctx) => {
    const raw = await readJsonObject(ctx);
    const forbidden = cardDataPaths(raw);
    if (forbidden.length > 0) {
      throw validationFailed(
        Object.fromEntries(
          forbidden.map((p) => [p, ['card, token, CVV and voucher data are not accepted here']]),
        ),
        'Payment sessions take no card, token, CVV or voucher data.',
      );
    }
    const body = parseOr422(createSchema, raw);
    const merchantId = resolveMerchantId(state, principalOf(ctx), body.merchant_id);
    const merchant = state.merchants.get(merchantId)!;
    const currency = body.currency as Transaction['currency'];
    const amountProblem = amountRefusal(merchant.currencies, body.minor, currency);
    if (amountProblem) throw refused(amountProblem);
    if (merchant.webhook_readiness_gate && state.webhooks.endpoints.get(merchantId)?.lastSuccessAt == null) {
      throw declined(
        'ERR_WEBHOOK_NOT_READY',
        'A webhook endpoint with a successful delivery or ping is required first.',
      );
    }
    // Rule 1, in order: the method is enabled (for this currency), then the country, then the provider.
    const method = merchant.payment_methods.find(
      (m) => m.payment_method === body.payment_method && m.enabled,
    );
    if (!method || (method.currencies.length > 0 && !method.currencies.includes(currency))) {
      throw declined(
        'ERR_PAYMENT_METHOD_NOT_ENABLED',
        `${body.payment_method} is not enabled for this merchant in ${currency}.`,
      );
    }
    const country = body.customer?.country_code;
    if (country !== undefined && method.countries.length > 0 && !method.countries.includes(country)) {
      throw declined(
        'ERR_PAYMENT_METHOD_NOT_AVAILABLE_IN_COUNTRY',
        `${body.payment_method} is not available in ${country}.`,
      );
    }
    const duplicate = duplicateRefusal(state.referenceHeldBy(merchantId, body.reference));
    if (duplicate) throw refused(duplicate);

    const now = clock.now();
    const transaction: Transaction = {
      id: state.nextTransactionId(),
      relatedId: null,
      merchantId,
      cardholderId: 0,
      type: 'sale',
      status: 'pending',
      amount: body.minor,
      currency,
      capturedAmount: 0,
      refundedAmount: 0,
      chargebackAmount: 0,
      reference: body.reference,
      description: body.description ?? null,
      statusReason: null,
      acquirerTransId: acquirerTransactionId(deps.random, deps.seed.settings.card_like_acquirer_ids),
      acquirerAuthCode: '',
      acquirerRefNum: randomHex(deps.random, 6),
      // Rule 4: the customer's device IP when sent, else the calling server's.
      ipAddress: body.customer?.ip_address ?? ctx.ip,
      captureBefore: null, // a session's payment is a sale
      vaultToken: null, // and takes no card
      createdAt: now,
      updatedAt: now,
    };
    const session: PaymentSession = {
      id: randomId('ps_', deps.random),
      transactionId: transaction.id,
      merchantId,
      reference: body.reference,
      provider: method.provider,
      paymentMethod: method.payment_method,
      methodLabel: method.label,
      status: 'pending_redirect',
      amount: body.minor,
      currency,
      returnUrl: body.success_url,
      cancelUrl: body.cancel_url,
      providerSessionId: randomHex(deps.random, 12),
      providerTransactionId: null,
      customerReference: body.customer_reference ?? '',
      statusReason: null,
      createdAt: now,
      updatedAt: now,
      finalisedAt: null,
    };
    state.saveTransaction(transaction);
    state.sessions.set(session.id, session);
    state.openSessions.add(session.id);
    state.sessionByTransaction.set(transaction.id, session.id);
    deps.emit('transaction.pending', transaction);

    // sandbox.md section 7: the provider's answers, chosen by the customer's last name.
    const lastName = body.customer?.last_name;
    if (lastName === 'PROVIDER_REJECT' || lastName === 'PROVIDER_DOWN') {
      const rejected = lastName === 'PROVIDER_REJECT';
      const reason = rejected
        ? 'The provider declined to open a checkout for this customer.'
        : 'The provider could not prepare the hosted session.';
      applySessionTrigger(deps, session, 'failed', reason);
      const data = { payment_session: sessionView(session, baseUrlOf(ctx)) };
      if (rejected) throw new ApiError(400, 'ERR_PROVIDER_REJECTED', reason, { data });
      throw new ApiError(502, 'ERR_GATEWAY_ERROR', reason, { data });
    }
    respond(ctx, { payment_session: sessionView(session, baseUrlOf(ctx)) }, 'Payment session created.', 201);
  });

  router.get('/api/v1/payment-sessions/:sessionId', (ctx) => {
    const session = visibleSession(ctx, state);
    respond(ctx, { payment_session: sessionView(session, baseUrlOf(ctx)) }, 'Payment session.');
  });
}
