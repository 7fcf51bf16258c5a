import type Router from '@koa/router';
import type { Context } from 'koa';
import { type CurrencyCode, formatMoney, parseMajor } from '../../shared/money.js';
import { payByCard } from '../checkout/card.js';
import { type PaymentOutcome, reload } from '../checkout/deps.js';
import {
  EarlierRequestSettled,
  type OperateInput,
  type OperationOutcome,
  operate,
} from '../checkout/operations.js';
import { payByRedirect } from '../checkout/redirect.js';
import { payBySavedCard } from '../checkout/saved.js';
import { HttpError, invalid, invalidState } from '../errors/http-error.js';
import { may } from '../operators/roles.js';
import { ORDER_SECRET_HEADER } from '../orders/client-secret.js';
import type { OrderRules } from '../orders/order-rules.js';
import { InvalidTransition } from '../orders/status.js';
import { OrderNotFound } from '../store/index.js';
import type { AttemptRecord, OperationKind, OperationRecord, OrderRecord } from '../store/records.js';
import { requireCustomer, requireOrderToken } from './customer-auth.js';
import { jsonBody, ok, parse, parseQuery, validate } from './errors.js';
import type { LandingDeps } from './landing-routes.js';
import { clientAddress, clientKey, enforce, orderKey } from './limits.js';
import { actorOf, type OpsAuth } from './ops-auth.js';
import { orderFor, requestMerchant, shopperOrder } from './order-access.js';
import { customerIdOfOrder, customersCard, usable, vouchSavedCardPayment } from './saved-cards.js';
import {
  captureSchema,
  methodsQuerySchema,
  payCardSchema,
  payRedirectSchema,
  paySavedSchema,
  refundSchema,
  voidSchema,
} from './schemas.js';
import { disputeView, historyView, orderView, publicOrderView } from './views.js';

export interface RouteDeps extends LandingDeps {
  /** The bootstrap operator token (admin); named operators' tokens are in the store. */
  opsApiToken: string;
  /** What orders may be taken in: refused at creation, not declined at payment. */
  orderRules: OrderRules;
}

/** merchant.md, HTTP interface: the storefront's and the operator's routes (the browser's: landing-routes.ts). */
export function merchantRoutes(router: Router, deps: RouteDeps & { ops: OpsAuth }): void {
  const { orders, attempts, history } = deps.store;
  const currentAttempt = (order: OrderRecord) =>
    order.current_attempt_id ? attempts.get(order.current_attempt_id) : null;
  const view = async (orderId: string) => {
    const order = await existing(orderId);
    return orderView(order, await currentAttempt(order));
  };

  /**
   * Who holds an order's client secret (the shopper's browser, the storefront that made it) reads
   * where it stands (order-access.ts); the id alone reads nothing. Who paid, its history and disputes
   * are for operators who may read, who need no secret. A token that is sent must be a reader's: a
   * wrong one is a 401 and another role's a 403, never the public view, so a broken operator setup is
   * seen at once.
   */
  router.get('/orders/:id', async (ctx) => {
    // One address, several answers: no cache may hand the operator's to someone without the token,
    // nor the shopper's to someone without the secret.
    ctx.set('Vary', `Authorization, ${ORDER_SECRET_HEADER}`);
    ctx.set('Cache-Control', 'no-store');
    if (ctx.get('Authorization') === '') {
      const { order } = await shopperOrder(ctx, deps);
      ok(ctx, { order: publicOrderView(order, await currentAttempt(order)) });
      return;
    }
    const who = await deps.ops.require(ctx, 'read');
    // Another merchant's order, to a credential scoped to others: the same 404 as an unknown one.
    const order = await orderFor(deps, who, ctx.params.id ?? '');
    const [attempt, lines, disputes] = await Promise.all([
      currentAttempt(order),
      history.ofOrder(order.id),
      deps.store.disputes.ofOrder(order.id),
    ]);
    ok(ctx, {
      order: {
        ...orderView(order, attempt),
        history: lines.map(historyView),
        disputes: disputes.map(disputeView),
      },
    });
  });

  /**
   * A payment of an order past paying for (paid by a press of Pay just before this one, refunded,
   * ...): 409 INVALID_STATE with the order as it stands, so that a storefront showing this answer to
   * a second press shows the order paid, not only a refusal.
   */
  const paying = async (orderId: string, pay: () => Promise<PaymentOutcome>): Promise<PaymentOutcome> => {
    try {
      return await pay();
    } catch (error) {
      if (!(error instanceof InvalidTransition)) throw error;
      const { order, attempt } = await reload(deps, orderId);
      throw invalidState(error, { order: publicOrderView(order, attempt) });
    }
  };

  /**
   * What every pay route does first: the address's limit (before the body is read), the order's
   * secret or a credential (a stranger's request is a 404 and counts toward nothing of the order's),
   * then the order's limit. The body, read once; the route parses it.
   */
  const payAccess = async (ctx: Context) => {
    await enforce(deps.limits, [['pay_per_address', clientKey(ctx)]]);
    const raw = await jsonBody(ctx);
    const { order, who } = await shopperOrder(ctx, deps, raw.client_secret);
    await enforce(deps.limits, [['pay_per_order', orderKey(order.id)]]);
    return { raw, order, who };
  };

  router.post('/orders/:id/pay/card', async (ctx) => {
    const { raw, order } = await payAccess(ctx);
    const body = parse(payCardSchema, raw);
    const saveFor = body.save_card ? await customerOf(ctx, order, 'save_card') : undefined;
    const outcome = await paying(order.id, () =>
      payByCard(deps, order.id, {
        card: body.card,
        mode: body.mode,
        customer: body.customer,
        ...(saveFor === undefined ? {} : { saveFor }),
        // The device address the gateway hears is the one the kit saw (behind TRUST_PROXY's proxies),
        // not one the body claims: `customer.ip_address` goes on as the customer's record says it.
        browserIp: clientAddress(ctx) ?? undefined,
      }),
    );
    await answerPayment(ctx, outcome, publicOrderView);
  });

  router.post('/orders/:id/pay/saved', async (ctx) => {
    const { raw, order } = await payAccess(ctx);
    const body = parse(paySavedSchema, raw);
    const customerId = customerIdOfOrder(order, 'card');
    // The order's merchant's customer: their token, their cards (platform mode).
    const vouched = await requireOrderToken(ctx, deps, customerId, order);
    const card = usable(
      await customersCard(deps, customerId, body.card, order.merchant_id),
      deps.clock.now(),
    );
    await vouchSavedCardPayment(deps, { order, customerId, card, actor: actorOf(ctx, vouched) });
    const outcome = await paying(order.id, () =>
      payBySavedCard(deps, order.id, {
        card,
        mode: body.mode,
        customer: { ...body.customer, merchant_customer_id: customerId },
        browserIp: clientAddress(ctx) ?? undefined,
      }),
    );
    await answerPayment(ctx, outcome, publicOrderView);
  });

  /**
   * The customer an order names, for a payment that uses or saves their cards: the caller must hold
   * that customer's token. An order that names nobody is refused, naming the field that asked.
   */
  async function customerOf(ctx: Context, order: OrderRecord, field: 'card' | 'save_card') {
    const customerId = customerIdOfOrder(order, field);
    requireCustomer(ctx, deps, customerId, order.merchant_id);
    return customerId;
  }

  router.post('/orders/:id/pay/redirect', async (ctx) => {
    // Anyone may pay; a token, when one is sent, must be good (payAccess).
    const { raw, order, who } = await payAccess(ctx);
    const body = parse(payRedirectSchema, raw);
    // A session has no browser_data: `customer.ip_address` is its device address (gateway-api.md,
    // Payment sessions rule 4). It is the address the kit saw (behind TRUST_PROXY's proxies), never
    // what an anonymous body claims: only the shop's own server (a token that may name orders, calling
    // for a shopper it serves) says whose device it is.
    const shopServer = who !== null && may(who.role, 'orders.reference');
    const ip = (shopServer ? body.customer?.ip_address : undefined) ?? clientAddress(ctx) ?? undefined;
    await answerPayment(
      ctx,
      await paying(order.id, () =>
        payByRedirect(deps, order.id, {
          paymentMethod: body.payment_method,
          customer: ip === undefined ? body.customer : { ...body.customer, ip_address: ip },
        }),
      ),
      publicOrderView,
    );
  });

  router.get('/payment-methods', async (ctx) => {
    await enforce(deps.limits, [['payment_methods_per_address', clientKey(ctx)]]);
    const query = parseQuery(methodsQuerySchema, ctx.query);
    // Whose methods (platform mode): required when the kit serves several; a token sent must be good
    // and its scope must hold the merchant.
    const who = ctx.get('Authorization') === '' ? null : await deps.ops.optional(ctx);
    const merchantId = requestMerchant(deps, who, query.merchant_id);
    const answer = await deps.gateways
      .of(merchantId)
      .paymentMethods({ country: query.country, currency: query.currency });
    ok(ctx, answer.data);
  });

  router.post('/orders/:id/capture', async (ctx) => {
    const who = await deps.ops.require(ctx, 'money.move');
    const body = parse(captureSchema, await jsonBody(ctx));
    const actor = actorOf(ctx, who, body.by);
    const order = await orderFor(deps, who, ctx.params.id ?? '');
    const amountMinor = body.amount === undefined ? order.amount_minor : minor(body.amount, order.currency);
    const key = operatorKey(ctx);
    await operated(ctx, order, 'capture', {
      amountMinor,
      reason: null,
      requestKey: key ?? `capture:${order.current_attempt_id}:${amountMinor}`,
      keyDerived: key === undefined,
      actor,
      note: body.note,
    });
  });

  router.post('/orders/:id/refund', async (ctx) => {
    const who = await deps.ops.require(ctx, 'money.move');
    // Two equal partial refunds can both be meant: only the operator's key tells a retry from a second
    // refund. Its absence is reported beside the body's errors, in one answer.
    const requestKey = operatorKey(ctx);
    const parsed = validate(refundSchema, await jsonBody(ctx));
    const order = await orderFor(deps, who, ctx.params.id ?? ''); // not there (for this token): nothing else to say
    const amount = parsed.ok ? parseMajor(parsed.data.amount, order.currency as CurrencyCode) : null;
    if (!parsed.ok || !requestKey || !amount?.ok)
      throw invalid({
        ...(requestKey
          ? {}
          : { 'Idempotency-Key': ['is required for refunds, so that a retry never refunds twice'] }),
        ...(parsed.ok ? {} : parsed.errors),
        ...(amount && !amount.ok ? { amount: [amount.message] } : {}),
      });
    const body = parsed.data;
    const actor = actorOf(ctx, who, body.by);
    const amountMinor = amount.minor;
    await operated(ctx, order, 'refund', { amountMinor, reason: body.reason ?? null, requestKey, actor });
  });

  router.post('/orders/:id/void', async (ctx) => {
    const who = await deps.ops.require(ctx, 'money.move');
    const body = parse(voidSchema, await jsonBody(ctx));
    const actor = actorOf(ctx, who, body.by);
    const order = await orderFor(deps, who, ctx.params.id ?? '');
    const key = operatorKey(ctx);
    await operated(ctx, order, 'void', {
      amountMinor: order.amount_minor,
      reason: body.reason ?? null,
      requestKey: key ?? `void:${order.current_attempt_id}`,
      keyDerived: key === undefined,
      actor,
    });
  });

  /**
   * An operation, answered. One held back because an earlier one of its kind had no answer is a 409
   * saying how that one ended now: the order shows it; the operator sends this one again if they
   * mean another.
   */
  async function operated(ctx: Context, order: OrderRecord, kind: OperationKind, input: OperateInput) {
    let outcome: OperationOutcome;
    try {
      outcome = await operate(deps, order, kind, input);
    } catch (error) {
      if (!(error instanceof EarlierRequestSettled)) throw error;
      const earlier = error.outcome;
      const amount = formatMoney(earlier.operation.amount_minor, order.currency as CurrencyCode);
      const how =
        earlier.kind === 'done'
          ? 'it is made now'
          : earlier.kind === 'refused'
            ? `the gateway refused it (${earlier.code})`
            : 'it has no answer yet';
      throw new HttpError(
        409,
        'EARLIER_REQUEST_SETTLED',
        `An earlier ${kind} of ${amount} (${earlier.operation.id}) had no answer: ${how}. This request was not made; once the order shows the earlier one, send it again if you mean another ${kind}.`,
        { data: { order: await view(earlier.order.id), operation: operationView(earlier.operation) } },
      );
    }
    await answerOperation(ctx, outcome, view);
  }

  async function existing(id: string | undefined) {
    const order = await orders.find(id ?? '');
    if (!order) throw new OrderNotFound(id ?? '');
    return order;
  }
}

/** How a payment's answer shows the order: to anyone with its id (publicOrderView), or to an operator. */
export type PaymentOrderView = (order: OrderRecord, attempt: AttemptRecord | null) => object;

/**
 * A payment's outcome as the caller's answer: the order, and what the shopper does next. The
 * storefront's routes answer anyone who holds the order's id, so they pass the public view.
 */
export async function answerPayment(
  ctx: Context,
  outcome: PaymentOutcome,
  view: PaymentOrderView,
): Promise<void> {
  const data = {
    order: view(outcome.order, outcome.attempt),
    next_action: outcome.kind === 'action' ? { type: 'redirect', url: outcome.url } : null,
  };
  switch (outcome.kind) {
    case 'done':
    case 'action':
      return ok(ctx, data);
    case 'unknown':
      return ok(ctx, data, 202, 'The payment outcome is not known yet; the order will be updated.');
    case 'in_progress':
      // Never a decline: the gateway holds a payment for this order whose outcome is still coming.
      throw new HttpError(
        409,
        'PAYMENT_IN_PROGRESS',
        'A payment for this order is in progress at the gateway; the order will show its outcome.',
        { data, headers: { 'Retry-After': '5' } },
      );
    case 'declined':
      throw new HttpError(402, outcome.code, outcome.message, { data });
    case 'invalid':
      throw new HttpError(422, outcome.code, outcome.message, { data, errors: outcome.errors });
    case 'unavailable':
      throw new HttpError(503, outcome.code, outcome.message, {
        data,
        headers: { 'Retry-After': String(outcome.retryAfterSeconds ?? 5) },
      });
    default:
      return outcome satisfies never;
  }
}

function minor(amount: string | number, currency: string): number {
  const parsed = parseMajor(amount, currency as CurrencyCode);
  if (!parsed.ok) throw invalid({ amount: [parsed.message] });
  return parsed.minor;
}

/**
 * The operator's Idempotency-Key header. Any text: it is kept only as a digest (an operation's
 * request_key, a charge's order reference), never as sent, so a key that happens to hold a card
 * number's digits (one random hex key in about 1,400 does) is no card data kept.
 */
export function operatorKey(ctx: Context): string | undefined {
  const key = ctx.get('Idempotency-Key');
  if (key === '') return undefined;
  if (key.length > 255) throw invalid({ 'Idempotency-Key': ['must be at most 255 characters'] });
  return key;
}

function operationView(op: OperationRecord) {
  return {
    id: op.id,
    operation: op.operation,
    status: op.status,
    amount: op.amount_minor,
    gateway_transaction_id: op.result_transaction_id,
  };
}

async function answerOperation(
  ctx: Context,
  outcome: OperationOutcome,
  view: (id: string) => Promise<unknown>,
) {
  const data = { order: await view(outcome.order.id), operation: operationView(outcome.operation) };
  switch (outcome.kind) {
    case 'done':
      return ok(ctx, data);
    case 'refused':
      if (outcome.code === 'ERR_REFUND_NOT_SUPPORTED') {
        // The method (a voucher, say) takes no refunds: not the operator's typo, not a state to wait out.
        throw new HttpError(
          409,
          'REFUND_NOT_SUPPORTED',
          "This payment's method does not take refunds; nothing was refunded. Refund the customer another way.",
          { data },
        );
      }
      if (outcome.code === 'ERR_ADAPTER_INVALID_AMOUNT') {
        throw new HttpError(422, outcome.code, outcome.message, {
          data,
          errors: { amount: [outcome.message] },
        });
      }
      throw new HttpError(409, outcome.code, outcome.message, { data });
    case 'unknown':
      throw new HttpError(
        503,
        'OUTCOME_UNKNOWN',
        'The gateway did not answer; send the same request with the same Idempotency-Key again.',
        {
          data,
          headers: { 'Retry-After': '5' },
        },
      );
    default:
      return outcome satisfies never;
  }
}
