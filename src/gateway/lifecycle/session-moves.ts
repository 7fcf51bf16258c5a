import { randomHex } from '../../shared/ids.js';
import type { GatewayDeps } from '../deps.js';
import {
  expiresAt,
  isFinal,
  moveSession,
  type PaymentSession,
  type SessionMove,
  type SessionTrigger,
} from '../domain/sessions.js';

/**
 * Moves only the session through the state table; returns the move (what its transaction becomes,
 * which event says so), or null, changing nothing, when the trigger does not apply in its state.
 */
export function moveSessionOnly(
  deps: GatewayDeps,
  session: PaymentSession,
  trigger: SessionTrigger,
  reason: string | null = null,
): SessionMove | null {
  const move = moveSession(session.status, trigger);
  if (!move) return null;
  const now = deps.clock.now();
  session.status = move.to;
  session.updatedAt = now;
  if (reason !== null) session.statusReason = reason;
  deps.state.openSessions.delete(session.id); // only pending_redirect expires, and it is left now
  if (isFinal(move.to)) session.finalisedAt ??= now;
  // Paid once by the provider: a session paid again after a won dispute keeps its provider's id.
  if (move.to === 'paid') session.providerTransactionId ??= randomHex(deps.random, 10);
  return move;
}

/**
 * Moves a session and its linked transaction together through the state table, and records the
 * event. Returns false, changing nothing, when the trigger does not apply in the session's state.
 */
export function applySessionTrigger(
  deps: GatewayDeps,
  session: PaymentSession,
  trigger: SessionTrigger,
  reason: string | null = null,
): boolean {
  const move = moveSessionOnly(deps, session, trigger, reason);
  if (!move) return false;
  const t = deps.state.transactions.get(session.transactionId)!;
  const moved = {
    ...t,
    status: move.transaction,
    capturedAmount: move.transaction === 'captured' ? t.amount : t.capturedAmount,
    statusReason: reason ?? t.statusReason,
    updatedAt: session.updatedAt,
  };
  deps.state.saveTransaction(moved);
  deps.emit(move.event, moved);
  return true;
}

/**
 * Sessions left on the hosted page for 15 minutes expire. Every session has the same lifetime, so
 * the open ones, kept in creation order, expire in that order: this touches only those due. It runs
 * before every request and on tick, so nothing ever reads a session that should have expired.
 */
export function expireDueSessions(deps: GatewayDeps): number {
  const now = deps.clock.now();
  let expired = 0;
  for (const id of deps.state.openSessions) {
    const session = deps.state.sessions.get(id)!;
    if (now < expiresAt(session)) break;
    if (applySessionTrigger(deps, session, 'expired')) expired++;
  }
  return expired;
}
