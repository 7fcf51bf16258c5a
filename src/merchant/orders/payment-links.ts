import { createHash } from 'node:crypto';
import type { RandomSource } from '../../shared/ids.js';
import { type CloseReason, type OrderStatus, RETRYABLE, WITH_MONEY } from './status.js';

/*
 * Payment links (issue 43, part 3), the rules, pure. A link is a URL of the kit's that the shop sends
 * a shopper (an invoice, a chat): while it is live the order does not end by ORDER_TTL, and a visit
 * sends the shopper to the order's open hosted checkout, or opens one when the last has ended. One
 * payment at most, however often the link is opened: visits take the order's payment turn one at a
 * time, each finds the session the one before opened, and the gateway holds the order's reference
 * while a session is active (gateway-api.md, Payment sessions rule 2).
 */

/** The link's token: `plt_` and 256 random bits. Its URL carries it, and nothing else does. */
export const LINK_TOKEN_PREFIX = 'plt_';
/** A token's shape: what a visit's path must look like before anything is read. */
export const LINK_TOKEN = /^plt_[A-Za-z0-9_-]{43}$/;
/** How a link is reached on the kit's public base URL: `/pay/<token>`. */
export const LINK_PATH = '/pay';

/** `expires_in`, in seconds: at least a minute, at most 30 days. */
export const LINK_MIN_SECONDS = 60;
export const LINK_MAX_SECONDS = 30 * 24 * 3600;

export function newLinkToken(random: RandomSource): string {
  return LINK_TOKEN_PREFIX + Buffer.from(random(32)).toString('base64url');
}

/**
 * What is stored: the SHA-256 of the token, base64url (as an order's client secret: a token this
 * random needs no salt or slow hash, and base64url, unlike hex, never reads as a card number).
 */
export function linkTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** The link's URL on the kit's public base URL (PUBLIC_BASE_URL). */
export const linkUrl = (publicBaseUrl: string, token: string) => `${publicBaseUrl}${LINK_PATH}/${token}`;

/** What a link is refused for: the order ended, holds money, or is past paying for (voided). */
export type LinkRefusal =
  | { kind: 'closed'; reason: CloseReason | null }
  | { kind: 'paid'; status: OrderStatus }
  | { kind: 'state'; status: OrderStatus };

/** Whether an order may be given a link now (asked under its lock): null when it may. */
export function linkRefusal(order: {
  status: OrderStatus;
  closedReason: CloseReason | null;
}): LinkRefusal | null {
  if (order.status === 'closed') return { kind: 'closed', reason: order.closedReason };
  if (WITH_MONEY.includes(order.status)) return { kind: 'paid', status: order.status };
  if (!RETRYABLE.includes(order.status)) return { kind: 'state', status: order.status };
  return null;
}

/** What a visit reads of the order's current payment attempt. */
export interface VisitedAttempt {
  kind: 'card' | 'redirect';
  status: OrderStatus;
  payment_session_id: string | null;
  action_url: string | null;
  session_expires_at: Date | null;
}

/** The gateway's answer about the attempt's session: its status and page; null when it did not answer. */
export type SessionAnswer = { status: string; url: string } | null;

/** Hosted pages the shopper can still be sent to (gateway-api.md, Payment session statuses). */
const LIVE_SESSION = ['created', 'pending_redirect'];
/** Sessions that ended without money: the reference is released, and a new one may be opened. */
const ENDED_SESSION = ['failed', 'cancelled', 'expired'];
/** Attempt statuses where a payment may still be under way. */
const UNDER_WAY: readonly OrderStatus[] = ['pending', 'requires_action'];

export type VisitStep =
  /** The order holds money: nothing more to pay. */
  | { kind: 'paid' }
  /** The order ended (closed), or is past paying for (voided): it takes no payment. */
  | { kind: 'ended' }
  /** The link's time is up. */
  | { kind: 'expired' }
  /** The current attempt's session may be open: ask the gateway (then judge again with its answer). */
  | { kind: 'ask' }
  /** Send the shopper to this open hosted checkout page. */
  | { kind: 'send'; url: string }
  /** A payment of the order is under way that is no page to send a shopper to (a card's challenge, a session being confirmed). */
  | { kind: 'wait' }
  /** Nothing is open: open a new session. */
  | { kind: 'open' };

/**
 * What a visit does, on the order as it stands. Paid and ended come before expired: whoever opens an
 * old link learns the order's fate, not only the link's. A redirect attempt still under way is asked
 * about (`session` undefined: not asked yet); the gateway's answer then decides: an open page is where
 * the shopper goes, an ended one lets a new session open, anything else (the provider confirming,
 * paid news not applied yet) waits. Unanswered (`session` null), the stored page is used while the
 * session's own expiry has not passed. A redirect attempt with no session id (its call cut off) is
 * opened over: the gateway's ERR_DUPLICATE hands back whatever that call made. A card payment under
 * way (a challenge open elsewhere) is waited out, not superseded.
 */
export function visitStep(
  link: { expires_at: Date },
  order: { status: OrderStatus },
  attempt: VisitedAttempt | null,
  now: number,
  session?: SessionAnswer,
): VisitStep {
  if (WITH_MONEY.includes(order.status)) return { kind: 'paid' };
  if (!RETRYABLE.includes(order.status)) return { kind: 'ended' };
  if (link.expires_at.getTime() <= now) return { kind: 'expired' };
  if (!attempt || !UNDER_WAY.includes(attempt.status)) return { kind: 'open' };
  if (attempt.kind === 'card') return { kind: 'wait' };
  if (attempt.payment_session_id === null) return { kind: 'open' };
  if (session === undefined) return { kind: 'ask' };
  if (session === null) {
    const live = attempt.action_url !== null && (attempt.session_expires_at?.getTime() ?? 0) > now;
    return live ? { kind: 'send', url: attempt.action_url! } : { kind: 'wait' };
  }
  if (LIVE_SESSION.includes(session.status)) return { kind: 'send', url: session.url };
  if (ENDED_SESSION.includes(session.status)) return { kind: 'open' };
  return { kind: 'wait' };
}
