import type { GatewayDeps } from '../deps.js';
import { lapsed } from '../domain/auth-lifetime.js';

/**
 * Auths past their `capture_before` lapse: cancelled, their reference released, `transaction.cancelled`
 * recorded (sandbox.md section 11). Like session expiry it runs before every request and on tick, so
 * nothing reads an open auth past its lifetime. It looks at every open auth: deadlines kept across a
 * restart under another `auth_lifetime_s` are not in creation order.
 */
export function lapseDueAuths(deps: GatewayDeps): number {
  const { state } = deps;
  const now = deps.clock.now();
  let count = 0;
  for (const id of state.openAuths) {
    const cancelled = lapsed(state.transactions.get(id)!, now);
    if (!cancelled) continue;
    state.saveTransaction(cancelled); // leaves openAuths: deleting the current entry is safe in a Set loop
    deps.emit('transaction.cancelled', cancelled);
    count++;
  }
  return count;
}
