import type { Logger } from 'pino';
import type { AdvanceableClock } from '../shared/clock.js';
import type { RandomSource } from '../shared/ids.js';
import type { Dispatcher } from './delivery/dispatcher.js';
import type { Resolver } from './delivery/send.js';
import type { Transaction } from './domain/transactions.js';
import type { EventType } from './domain/webhooks.js';
import type { GatewayState } from './state/gateway-state.js';
import type { Seed } from './state/seed.js';

/**
 * The seams and the state every route shares. State lives in memory (sandbox.md section 1) and, when the
 * gateway is given a state file, is written there after every change (src/gateway/persistence/).
 */
export interface GatewayDeps {
  seed: Seed;
  clock: AdvanceableClock;
  random: RandomSource;
  sleep: (ms: number) => Promise<void>;
  logger: Logger;
  state: GatewayState;
  dispatcher: Dispatcher;
  /** Resolves webhook hosts (sandbox.md section 8: resolved again at delivery time). */
  resolve: Resolver;
  /** Records a webhook event for a transaction change, if the merchant's endpoint subscribes. */
  emit(type: EventType, t: Transaction): void;
  /** Asks for due deliveries to run soon (a no-op unless the gateway delivers by itself). */
  kick(): void;
}
