import type { Client, ClientOptions } from 'openapi-fetch';
import type { components, operations, paths, webhooks } from './schema.js';

export type { components, operations, paths, webhooks };

export interface KitClientOptions extends Omit<ClientOptions, 'headers'> {
  /** Where the kit answers: `http://127.0.0.1:3000`. */
  baseUrl: string;
  /**
   * An operator's token, a `storefront` role's, or `OPS_API_TOKEN`: sent as `Authorization: Bearer
   * <token>` with every request. `GET /orders/{id}` reads it: none, the public view (with the order's
   * `Order-Secret`); a reader's, the whole order; a `storefront` role's, 403. On the pay routes a token
   * stands in for the order's secret.
   */
  token?: string;
  /** Headers for every request (a token's `Authorization` wins over one here). */
  headers?: Record<string, string>;
}

/** The client: `GET`, `POST`, ... by the document's paths, each answering `{ data, error, response }`. */
export type KitClient = Client<paths>;

export function createKitClient(options: KitClientOptions): KitClient;

/**
 * The JSON body an operation takes, by its operationId: `RequestBody<'createOrder'>`. openapi-fetch
 * infers a call's options, so a field the document lacks in a literal body is no error by itself;
 * `body: {...} satisfies RequestBody<'refundOrder'>` makes it one.
 */
export type RequestBody<Id extends keyof operations> = operations[Id] extends {
  requestBody?: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

type Schemas = components['schemas'];
/**
 * An order as its shopper sees it: what `GET /orders/{id}` answers with the order's `Order-Secret` and
 * no token, and the order in the payment answers (status, amounts, `next_action`; minor units, with
 * `*_formatted` beside).
 */
export type PublicOrder = Schemas['PublicOrder'];
/** An order as operators see it (the operator routes, the order list). */
export type Order = Schemas['Order'];
/** What `POST /orders` answers: the order as operators see it, and its `client_secret` (this once). */
export type CreatedOrder = Schemas['CreatedOrder'];
/** An order with its history: what `GET /orders/{id}` answers with a reader's token. */
export type OrderWithHistory = Schemas['OrderWithHistory'];
export type HistoryEntry = Schemas['HistoryEntry'];
export type Payment = Schemas['Payment'];
/** What a storefront's payment answers: the order's public view and, when the customer must act, `next_action`. */
export type PublicPaymentAnswer = Schemas['PublicPaymentAnswer'];
/** What an operator's charge of a saved card answers: the order as operators see it. */
export type PaymentAnswer = Schemas['PaymentAnswer'];
export type NextAction = Schemas['NextAction'];
/** What capture, refund and void answer: the order and the operation. */
export type OperationAnswer = Schemas['OperationAnswer'];
export type Operation = Schemas['Operation'];
export type FieldErrors = Schemas['FieldErrors'];
export type PaymentMethods = Schemas['PaymentMethods'];
export type SavedCard = Schemas['SavedCard'];
export type CustomerToken = Schemas['CustomerToken'];

/**
 * The order events the kit POSTs to the shop's endpoints (`SHOP_WEBHOOK_URLS`): the document's
 * webhooks, one a type. Verify the raw body with a Standard Webhooks library and the
 * `SHOP_WEBHOOK_SECRET` first; what it gives back is an `OrderEvent` (`isOrderEvent` tells one
 * apart from a type this client does not know yet). Its id is the `webhook-id` header.
 */
export type OrderEventType = keyof webhooks;
/** The body of one type of event: `OrderEventOf<'order.paid'>`. */
export type OrderEventOf<Type extends OrderEventType> =
  webhooks[Type]['post']['requestBody']['content']['application/json'];
/** Any order event: a union by `type`, so a `switch (event.type)` narrows it. */
export type OrderEvent = { [Type in OrderEventType]: OrderEventOf<Type> }[OrderEventType];
/** The headers each event comes with: `webhook-id`, `webhook-timestamp`, `webhook-signature`. */
export type OrderEventHeaders = webhooks[OrderEventType]['post']['parameters']['header'];

/** Every order event type this client knows, in the document's order. */
export declare const ORDER_EVENT_TYPES: readonly OrderEventType[];

/**
 * Whether a verified, parsed body is an order event of a type this client knows (an object with a
 * known `type`, a `timestamp` and `data.order`). A kit newer than the client may send a type it does
 * not know: false, to be logged and answered 2xx rather than refused (a refusal is tried again for
 * three days).
 */
export function isOrderEvent(value: unknown): value is OrderEvent;
