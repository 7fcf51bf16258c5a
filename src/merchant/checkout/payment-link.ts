import type { CustomerInput, GatewayClient } from '../../client/gateway-client.js';
import type { Gateways } from '../../client/merchant-gateways.js';
import { isErased } from '../customers/erasure.js';
import type { Actor } from '../operators/roles.js';
import { TooManyAttempts } from '../orders/attempt-cap.js';
import {
  LINK_TOKEN,
  type LinkRefusal,
  linkRefusal,
  linkTokenHash,
  linkUrl,
  type SessionAnswer,
  type VisitStep,
  visitStep,
} from '../orders/payment-links.js';
import { InvalidTransition } from '../orders/status.js';
import { OrderNotFound } from '../store/index.js';
import type { PaymentLinkStore } from '../store/payment-links.js';
import type { OrderRecord, PaymentLinkRecord } from '../store/records.js';
import { askGateway } from './ask.js';
import {
  type CheckoutDeps,
  type CheckoutGateway,
  type CheckoutStore,
  reload,
  type Standing,
} from './deps.js';
import { redirectPayment } from './redirect.js';

/** What a payment link's making and visits need: checkout's, the links' store and the methods list. */
export interface LinkDeps extends CheckoutDeps {
  store: CheckoutStore & { paymentLinks: Pick<PaymentLinkStore, 'create' | 'byTokenHash'> };
  gateways: Gateways<CheckoutGateway & Pick<GatewayClient, 'paymentMethods'>>;
}

/** What POST /orders/{id}/payment-link asks. */
export interface LinkRequest {
  paymentMethod: string;
  expiresInSeconds: number;
  actor: Actor;
}

export type LinkMade =
  /** Made: the link, and its URL (with its token: shown this once). */
  | { kind: 'created'; link: PaymentLinkRecord; url: string; order: OrderRecord }
  /** The order ended, holds money, or is past paying for: no link. */
  | { kind: 'refused'; refusal: LinkRefusal; order: OrderRecord }
  /** The gateway does not offer the method for this order: `errors` names the field. */
  | { kind: 'invalid'; errors: Record<string, string[]>; order: OrderRecord }
  /** A payment of the order held its turn the whole wait: nothing was made. */
  | { kind: 'busy'; order: OrderRecord };

/**
 * POST /orders/{id}/payment-link (issue 43, part 3). An order that ended or holds money is refused
 * before the gateway is asked anything; the method must be one the gateway's list offers for the
 * order's currency (and its customer's country, when the order names one), so that a shopper never
 * meets a link that cannot open; then the link is made in the order's payment turn (so that ORDER_TTL,
 * which judges in the same turn, never closes an order in the moment a link is made for it), refused
 * again under the order's lock if a payment or a cancel ended the order meanwhile.
 */
export async function createPaymentLink(
  deps: LinkDeps,
  orderId: string,
  request: LinkRequest,
): Promise<LinkMade> {
  const order = await deps.store.orders.find(orderId);
  if (!order) throw new OrderNotFound(orderId);
  const refusal = linkRefusal({ status: order.status, closedReason: order.closed_reason });
  if (refusal) return { kind: 'refused', refusal, order };
  const problem = await methodProblem(deps, order, request.paymentMethod);
  if (problem) return { kind: 'invalid', errors: { payment_method: [problem] }, order };
  const made = await deps.turns.one(orderId, () => deps.store.paymentLinks.create(orderId, request));
  if (made === 'busy') return { kind: 'busy', order: (await deps.store.orders.find(orderId))! };
  if (made.kind === 'refused') return made;
  return {
    kind: 'created',
    link: made.link,
    url: linkUrl(deps.publicBaseUrl, made.token),
    order: made.order,
  };
}

/** The order's customer's country, unless they were erased: what the gateway's country check reads. */
function countryOf(order: OrderRecord): string | undefined {
  const customer = order.customer;
  if (!customer || isErased(customer)) return undefined;
  return typeof customer.country_code === 'string' ? customer.country_code : undefined;
}

/** Why the gateway would not open a session of `method` for this order; null when its list offers it. */
async function methodProblem(deps: LinkDeps, order: OrderRecord, method: string): Promise<string | null> {
  const country = countryOf(order);
  const list = (
    await deps.gateways
      .of(order.merchant_id)
      .paymentMethods({ currency: order.currency, ...(country ? { country } : {}) })
  ).data.payment_methods;
  const entry = list.find((m) => m.payment_method === method);
  if (!entry) {
    const offered = list.map((m) => m.payment_method).join(', ') || 'none';
    return `is not a payment method the gateway offers this shop (offered: ${offered})`;
  }
  if (entry.available) return null;
  const where = `${order.currency}${country ? ` in ${country}` : ''}`;
  const why = entry.unavailable_reasons.join(', ');
  return `is not available for this order (${where})${why ? `: ${why}` : ''}`;
}

/** What a visit of a link came to, for its page. */
export type Visit =
  /** No link has this token. */
  | { kind: 'unknown' }
  | { kind: 'send'; url: string; order: OrderRecord }
  | { kind: 'paid' | 'ended' | 'expired' | 'wait'; order: OrderRecord }
  /** A visit over its limits that would have asked the gateway: nothing was asked or opened. */
  | { kind: 'limited'; order: OrderRecord }
  /** The gateway could not open a session now (down, busy): nothing was charged; the link works again later. */
  | { kind: 'unavailable'; order: OrderRecord }
  /** The gateway, or the order's failed-attempt cap, refused a session: the shop's to look at. */
  | { kind: 'refused'; order: OrderRecord; message: string };

/** Who visits: the device address the gateway is told, and whether the visit may still ask the gateway. */
export interface Visitor {
  ip?: string;
  /** Counts the visit toward the limits of its address and its order; false when one is spent. */
  mayAsk(orderId: string): Promise<boolean>;
}

/**
 * GET /pay/{token} (issue 43, part 3). A token of the wrong shape or unknown is `unknown`; a paid,
 * ended or expired link, or a card payment of the order under way, says so without any question to
 * the gateway (and without spending a limit). Otherwise, in the order's
 * payment turn (one visit at a time: the second finds the session the first opened): the current
 * attempt's session, when one may be open, is asked about (the answer applied as a routine poll), and
 * the shopper is sent to it while its page is open; when none is open a new hosted session is opened,
 * of the link's method, through checkout's one redirect path. A visit waiting the whole turn (another
 * payment of the order under way) is `wait`: the gateway holds the order's reference meanwhile.
 */
export async function visitPaymentLink(deps: LinkDeps, token: string, visitor: Visitor): Promise<Visit> {
  const link = LINK_TOKEN.test(token)
    ? await deps.store.paymentLinks.byTokenHash(linkTokenHash(token))
    : null;
  if (!link) return { kind: 'unknown' };
  const now = () => deps.clock.now();
  const stored = await reload(deps, link.order_id);
  const first = visitStep(link, stored.order, stored.attempt, now());
  // What the database says settles these without a question: no limit is spent on them.
  if (first.kind === 'paid' || first.kind === 'ended' || first.kind === 'expired' || first.kind === 'wait')
    return { kind: first.kind, order: stored.order };
  if (!(await visitor.mayAsk(stored.order.id))) {
    // Past its limits a visit still sends the shopper to a page the database knows is open.
    const step = visitStep(link, stored.order, stored.attempt, now(), null);
    if (step.kind === 'send') return { kind: 'send', url: step.url, order: stored.order };
    return { kind: step.kind === 'wait' ? 'wait' : 'limited', order: stored.order };
  }
  const done = await deps.turns.one(stored.order.id, () => visitInTurn(deps, link, visitor));
  return done === 'busy' ? { kind: 'wait', order: (await reload(deps, link.order_id)).order } : done;
}

async function visitInTurn(deps: LinkDeps, link: PaymentLinkRecord, visitor: Visitor): Promise<Visit> {
  const now = () => deps.clock.now();
  let standing = await reload(deps, link.order_id);
  let step = visitStep(link, standing.order, standing.attempt, now());
  if (step.kind === 'ask') {
    const session = await askSession(deps, standing);
    standing = await reload(deps, link.order_id);
    step = visitStep(link, standing.order, standing.attempt, now(), session);
  }
  if (step.kind !== 'open') return visitOf(step, standing);
  return open(deps, link, standing, visitor);
}

/** The current attempt's session, asked about (caller `landing`: a shopper waits); null: no answer. */
async function askSession(deps: LinkDeps, { order, attempt }: Standing): Promise<SessionAnswer> {
  const asked = await askGateway(
    deps,
    {
      orderId: order.id,
      merchantId: order.merchant_id,
      attemptId: attempt!.id,
      transactionId: attempt!.gateway_transaction_id,
      paymentSessionId: attempt!.payment_session_id,
      open: true,
    },
    { source: 'poll', sourceId: `poll:${attempt!.id}:${deps.clock.now()}`, caller: 'landing', routine: true },
  );
  if (asked.kind === 'unreachable')
    deps.logger.warn(
      { order: order.id, attempt: attempt!.id },
      'payment link: the session could not be asked about',
    );
  return asked.kind === 'answered' && asked.session
    ? { status: asked.session.status, url: asked.session.checkout_url }
    : null;
}

/** A new hosted session of the link's method, through checkout's redirect path (already in the turn). */
async function open(
  deps: LinkDeps,
  link: PaymentLinkRecord,
  { order }: Standing,
  visitor: Visitor,
): Promise<Visit> {
  const customer: CustomerInput = {
    ...(order.customer && !isErased(order.customer) ? (order.customer as CustomerInput) : {}),
    // The device that opened the link is the shopper's, whatever address the order was made with.
    ...(visitor.ip ? { ip_address: visitor.ip } : {}),
  };
  let outcome: Awaited<ReturnType<typeof redirectPayment>>;
  try {
    outcome = await redirectPayment(deps, order.id, { paymentMethod: link.payment_method, customer });
  } catch (error) {
    const now = (await reload(deps, order.id)).order;
    if (error instanceof TooManyAttempts)
      return { kind: 'refused', order: now, message: 'This order has had too many failed payment attempts.' };
    // Paid or ended between the judging and the start (a webhook landing under the turn).
    if (error instanceof InvalidTransition)
      return visitOf(visitStep(link, now, null, deps.clock.now()), { order: now });
    throw error;
  }
  switch (outcome.kind) {
    case 'action':
      return { kind: 'send', url: outcome.url, order: outcome.order };
    case 'declined':
    case 'invalid':
      deps.logger.warn(
        { order: order.id, code: outcome.code },
        'payment link: the gateway refused a session',
      );
      return { kind: 'refused', order: outcome.order, message: outcome.message };
    case 'unavailable':
      return { kind: 'unavailable', order: outcome.order };
    case 'done':
    case 'in_progress':
    case 'unknown':
      return visitOf(visitStep(link, outcome.order, outcome.attempt, deps.clock.now(), null), outcome);
    default:
      return outcome satisfies never;
  }
}

/** A step that ends the visit, as its outcome; `ask` and `open` (not ends) wait. */
function visitOf(step: VisitStep, { order }: Pick<Standing, 'order'>): Visit {
  switch (step.kind) {
    case 'send':
      return { kind: 'send', url: step.url, order };
    case 'paid':
    case 'ended':
    case 'expired':
    case 'wait':
      return { kind: step.kind, order };
    case 'ask':
    case 'open':
      return { kind: 'wait', order };
    default:
      return step satisfies never;
  }
}
