import type { Logger } from 'pino';
import type { GatewayClient } from '../../client/gateway-client.js';
import type { Clock } from '../../shared/clock.js';
import type { SecretBox } from '../../shared/secret-box.js';
import type { Apply } from '../reconciler/apply.js';
import type { Store } from '../store/index.js';
import type { OrderRecord } from '../store/records.js';

export interface CheckoutDeps {
  store: Store;
  /** The one apply path: every gateway answer goes through it, as the worker's events do. */
  apply: Apply;
  gateway: GatewayClient;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
  /** How browsers reach the kit: the 3DS return and the session landings hang off it. */
  publicBaseUrl: string;
}

/** How a payment attempt ended, for the storefront's answer. */
export type PaymentOutcome =
  | { kind: 'done'; order: OrderRecord }
  | { kind: 'action'; order: OrderRecord; url: string }
  | { kind: 'declined'; order: OrderRecord; code: string; message: string }
  | { kind: 'unavailable'; order: OrderRecord; code: string; message: string }
  /** The gateway refused the input before anything existed there: the order is as it was. */
  | { kind: 'invalid'; order: OrderRecord; code: string; message: string; errors: Record<string, string[]> }
  /** The gateway may have a transaction we could not see yet: the order stays pending for the poller. */
  | { kind: 'unknown'; order: OrderRecord };

export async function reload(deps: Pick<CheckoutDeps, 'store'>, orderId: string): Promise<OrderRecord> {
  return (await deps.store.orders.find(orderId))!;
}
