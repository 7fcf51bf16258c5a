import type { Logger } from 'pino';
import type { GatewayClient } from '../../client/gateway-client.js';
import type { OrderRow } from '../../infra/models.js';
import type { Clock } from '../../shared/clock.js';
import type { SecretBox } from '../../shared/secret-box.js';
import type { OrderRepository } from '../orders/repository.js';

export interface CheckoutDeps {
  orders: OrderRepository;
  gateway: GatewayClient;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
  /** How browsers reach the kit: the 3DS return and the session landings hang off it. */
  publicBaseUrl: string;
}

/** How a payment attempt ended, for the storefront's answer. */
export type PaymentOutcome =
  | { kind: 'done'; order: OrderRow }
  | { kind: 'action'; order: OrderRow; url: string }
  | { kind: 'declined'; order: OrderRow; code: string; message: string }
  | { kind: 'unavailable'; order: OrderRow; code: string; message: string }
  /** The gateway refused the input before anything existed there: the order is as it was. */
  | { kind: 'invalid'; order: OrderRow; code: string; message: string; errors: Record<string, string[]> }
  /** The gateway may have a transaction we could not see yet: the order stays pending for the poller. */
  | { kind: 'unknown'; order: OrderRow };

export async function reload(deps: CheckoutDeps, orderId: string): Promise<OrderRow> {
  return (await deps.orders.find(orderId))!;
}
