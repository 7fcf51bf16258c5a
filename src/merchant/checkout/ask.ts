import type { Caller } from '../../client/budget.js';
import { GatewayError, GatewayNetworkError } from '../../client/errors.js';
import type { GatewayClient } from '../../client/gateway-client.js';
import type { Gateways } from '../../client/merchant-gateways.js';
import type { GatewayPaymentSession } from '../../client/schemas.js';
import type { Clock } from '../../shared/clock.js';
import { observeFinding, observeSession, observeTransaction } from '../orders/from-gateway.js';
import type { About, GatewayIds, Observation, ObservationSource } from '../orders/observation.js';
import type { Apply, ApplyResult } from '../reconciler/apply.js';

export interface AskDeps {
  gateways: Gateways<Pick<GatewayClient, 'transactionStatus' | 'getPaymentSession'>>;
  apply: Apply;
  clock: Clock;
}

/** An attempt to ask about, by the gateway ids it holds or has just been told of. */
export interface AskTarget {
  orderId: string;
  /** The order's merchant: whose gateway is asked. */
  merchantId: number | null;
  attemptId: string;
  transactionId: string | null;
  paymentSessionId: string | null;
  /**
   * Whether the order is still open: a session's own status is what tells then (expired from
   * cancelled, and its checkout page); once it is paid, only the transaction still moves (refunds,
   * chargebacks).
   */
  open: boolean;
  /** Ids the asker learned on the way (a 3DS verification), written with the answer. */
  ids?: GatewayIds;
}

export interface AskHow {
  /** `poll` for a scheduled or landing check; `api` for checkout's own question (a duplicate adopted). */
  source: Extract<ObservationSource, 'poll' | 'api'>;
  sourceId: string;
  caller: Caller;
  /** Passed to apply: a check that finds nothing new leaves no history line. */
  routine?: boolean;
  /** The ids were named by the gateway, not held by the attempt: see About.adopt. */
  adopt?: boolean;
}

export type AskOutcome =
  /** The answer, applied to the attempt; the session when a session was asked. */
  | { kind: 'answered'; applied: ApplyResult; session: GatewayPaymentSession | null }
  /** The gateway does not know the id the attempt holds: flagged for a person, through apply. */
  | { kind: 'unknown'; applied: ApplyResult; what: string }
  /** No answer (an outage, the budget, a refusal): nothing applied; ask again later. */
  | { kind: 'unreachable'; error: GatewayError | GatewayNetworkError }
  /** Nothing to ask about yet (no transaction or session at the gateway). */
  | { kind: 'nothing' };

/**
 * The one question the kit asks the gateway about one of its attempts, for every asker (the landing,
 * the poller, the report's refresh, checkout adopting a duplicate): its payment session while the
 * order is open, else its transaction; the answer applied to that attempt through the one apply
 * path, with the ids it names. A 404 is integrity, not timing: the order is flagged, whoever asked.
 */
export async function askGateway(deps: AskDeps, target: AskTarget, how: AskHow): Promise<AskOutcome> {
  const about: About = {
    orderId: target.orderId,
    attemptId: target.attemptId,
    ...(target.ids ? { ids: target.ids } : {}),
    ...(how.adopt ? { adopt: true } : {}),
  };
  const sessionId = target.open ? target.paymentSessionId : null;
  const transactionId = target.transactionId;
  if (sessionId === null && transactionId === null) return { kind: 'nothing' };
  const what = sessionId !== null ? `payment session ${sessionId}` : `transaction ${transactionId}`;
  let observation: Observation;
  let session: GatewayPaymentSession | null = null;
  const gateway = deps.gateways.of(target.merchantId);
  try {
    if (sessionId !== null) {
      session = (await gateway.getPaymentSession(sessionId, how.caller)).data;
      observation = observeSession(session, how.source, how.sourceId, deps.clock.now(), about);
    } else {
      const record = (await gateway.transactionStatus(transactionId!, how.caller)).data;
      observation = observeTransaction(record, how.source, how.sourceId, deps.clock.now(), about);
    }
  } catch (error) {
    if (!(error instanceof GatewayError || error instanceof GatewayNetworkError)) throw error;
    if (!(error instanceof GatewayError && error.status === 404)) return { kind: 'unreachable', error };
    // The kit holds an id the gateway does not know (another account's key, a gateway that lost it).
    const finding = observeFinding(
      about,
      { review: `the gateway does not know ${what}` },
      `${how.sourceId}:unknown`,
      deps.clock.now(),
      how.source,
    );
    return { kind: 'unknown', applied: await deps.apply(finding, { routine: how.routine }), what };
  }
  return { kind: 'answered', applied: await deps.apply(observation, { routine: how.routine }), session };
}
