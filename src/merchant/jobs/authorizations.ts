import type { Logger } from 'pino';
import type { Clock } from '../../shared/clock.js';
import type { MerchantDeps } from '../checkout/deps.js';
import { operate } from '../checkout/operations.js';
import type { Actor } from '../operators/roles.js';
import { merchantOf } from '../orders/order-merchant.js';
import type { Store } from '../store/index.js';

export interface AuthorizationSettings {
  /** How long before `capture_before` an authorisation counts as expiring (AUTH_EXPIRY_WARNING). */
  warningMs: number;
  /** What the kit does then, once (AUTH_EXPIRY_POLICY): nothing, capture it in full, or void it. */
  policy: 'none' | 'capture' | 'void';
}

export interface AuthorizationDeps {
  store: Pick<Store, 'polls'>;
  /** The operators' capture and void: the same stored Idempotency-Key, so the policy acts once. */
  checkout: MerchantDeps;
  clock: Clock;
  logger: Logger;
  /** The merchants the kit acts for (GATEWAY_MERCHANTS): with several, the summary counts per merchant. */
  served?: readonly number[];
}

export interface AuthorizationSummary {
  /** Authorized orders whose deadline falls within the warning, before the policy acted. */
  expiring: number;
  /** Captured or voided by the policy this run. */
  acted: number;
  /** The policy's call refused by the gateway, or unanswered (kept; an unanswered one is tried again). */
  failed: number;
  /**
   * Platform mode only (the kit acts for several merchants, issue 45): `expiring` and `acted` per
   * merchant id, for the gauge's `merchant` label. Absent for a single shop.
   */
  byMerchant?: Record<string, { expiring: number; acted: number }>;
}

/** A run looks at this many at most: the soonest deadlines first. */
const BATCH = 500;

/** Who captures or voids under AUTH_EXPIRY_POLICY, in the history and the audit log. */
const AUTH_EXPIRY_POLICY: Actor = { name: 'kit', role: 'system', credential: 'AUTH_EXPIRY_POLICY' };

/**
 * Authorisations that lapse (sandbox.md section 11; issue 19): every authorized order whose deadline
 * (`capture_before`, from its gateway record) comes within the warning is said in the log, counted
 * for the gauge, and, with a policy, captured or voided, once: the operation is stored under a key of
 * its own before the call, like an operator's, so a crash, a retry or the next run never acts twice.
 * A lapse itself reaches the order through the apply path (expired).
 */
export async function watchAuthorizations(
  deps: AuthorizationDeps,
  settings: AuthorizationSettings,
): Promise<AuthorizationSummary> {
  const now = deps.clock.now();
  const expiring = await deps.store.polls.expiringAuthorizations(new Date(now + settings.warningMs), BATCH);
  const summary: AuthorizationSummary = { expiring: expiring.length, acted: 0, failed: 0 };
  // Per merchant in platform mode, each served merchant from 0: one with none expiring reads 0.
  const served = deps.served ?? [];
  const byMerchant =
    served.length > 1
      ? Object.fromEntries(served.map((id) => [String(id), { expiring: 0, acted: 0 }]))
      : undefined;
  if (byMerchant) summary.byMerchant = byMerchant;
  const countsOf = (order: { merchant_id: number | null }) => {
    if (!byMerchant) return null;
    const id = String(merchantOf(order.merchant_id, served));
    byMerchant[id] ??= { expiring: 0, acted: 0 };
    return byMerchant[id];
  };
  for (const { order } of expiring) {
    const counts = countsOf(order);
    if (counts) counts.expiring++;
  }
  if (expiring.length === 0) return summary;
  deps.logger.warn(
    {
      count: expiring.length,
      withinHours: settings.warningMs / 3_600_000,
      policy: settings.policy,
      // The first 50 name the orders; the report has them all (reason auth_expiring).
      orders: expiring
        .slice(0, 50)
        .map((t) => ({ order: t.order.id, capture_before: t.attempt.capture_before?.toISOString() })),
    },
    'authorisations expire soon: capture or void them before they lapse',
  );
  if (settings.policy === 'none') return summary;
  const operation = settings.policy;
  for (const { order, attempt } of expiring) {
    const outcome = await operate(deps.checkout, order, operation, {
      amountMinor: order.amount_minor,
      reason: operation === 'void' ? 'the authorisation was about to lapse' : null,
      requestKey: `auth-expiry:${operation}:${attempt.id}`,
      // The kit's own act, on the policy the operator configured: the audit says so.
      actor: AUTH_EXPIRY_POLICY,
    }).catch((error: Error) => {
      deps.logger.error({ order: order.id, err: { message: error.message } }, 'auth expiry policy failed');
      return null;
    });
    if (outcome?.kind === 'done') {
      summary.acted++;
      const counts = countsOf(order);
      if (counts) counts.acted++;
    } else summary.failed++;
  }
  deps.logger.info({ ...summary, policy: operation }, 'auth expiry policy applied');
  return summary;
}
