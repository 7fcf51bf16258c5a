import { z } from 'zod';
import { type CurrencyCode, toMajorNumber } from '../shared/money.js';
import type { Caller } from './budget.js';
import { type Answer, Requester, type RequesterOptions } from './request.js';
import {
  apiKeyInfoSchema,
  endpointSchema,
  endpointWithSecret,
  eventDetailSchema,
  eventListSchema,
  type GatewayPaymentMethods,
  type GatewayPaymentSession,
  type GatewayTransaction,
  type GatewayVerification,
  paymentInstrumentData,
  paymentInstrumentListSchema,
  paymentMethodsSchema,
  paymentSessionData,
  pingSchema,
  putEndpointData,
  replaySchema,
  transactionData,
  verificationSchema,
} from './schemas.js';

/** Card fields pass straight through to the gateway: the client neither keeps nor logs them. */
export interface CardInput {
  number: string;
  exp_month: number | string;
  exp_year: number | string;
  cvv: string;
  name?: string;
}

export interface CustomerInput {
  merchant_customer_id?: string;
  first_name?: string;
  last_name?: string;
  email?: string;
  phone?: string;
  address?: string;
  city?: string;
  postal_code?: string;
  country_code?: string;
  ip_address?: string;
}

/** Amounts in minor units on our side; converted to major units here, once, at the edge. */
export interface Money {
  amountMinor: number;
  currency: CurrencyCode;
}

export interface GatewayClientOptions extends RequesterOptions {
  /** With a partner key: the linked merchant to act for (gateway-api.md, Authentication rule 2). */
  merchantId?: number;
}

const nothing = z.unknown();

/** The typed client of gateway-api.md: every endpoint, thin over one request builder. */
export class GatewayClient {
  readonly requester: Requester;
  readonly #merchantId: number | undefined;

  constructor(options: GatewayClientOptions) {
    this.requester = new Requester(options);
    this.#merchantId = options.merchantId;
  }

  #merchant(): { merchant_id?: number } {
    return this.#merchantId === undefined ? {} : { merchant_id: this.#merchantId };
  }

  #query(): { merchant_id?: number } {
    return this.#merchant();
  }

  async verify3ds(input: Money & { card: CardInput; authUrl: string }): Promise<Answer<GatewayVerification>> {
    return this.requester.send({
      method: 'POST',
      path: '/api/v1/3ds/verify',
      body: {
        amount: toMajorNumber(input.amountMinor, input.currency),
        currency: input.currency,
        card: input.card,
        auth_url: input.authUrl,
      },
      schema: verificationSchema,
    });
  }

  async createTransaction(
    input: Money & {
      type: 'sale' | 'auth';
      reference: string;
      card?: CardInput;
      /** A saved card's token, in place of `card` (sandbox.md section 11). */
      vaultToken?: string;
      /** Keep the card as an instrument when approved: needs `customer.merchant_customer_id`. */
      savePaymentInstrument?: boolean;
      verificationId?: string;
      customer?: CustomerInput;
      browserIp?: string;
      description?: string;
      successUrl?: string;
      errorUrl?: string;
    },
  ): Promise<Answer<GatewayTransaction>> {
    return this.requester.send({
      method: 'POST',
      path: '/api/v1/transactions',
      body: {
        amount: toMajorNumber(input.amountMinor, input.currency),
        currency: input.currency,
        transaction_type: input.type,
        reference: input.reference,
        card: input.card,
        vault_token: input.vaultToken,
        save_payment_instrument: input.savePaymentInstrument || undefined,
        card_verification_data: input.verificationId === undefined ? undefined : { id: input.verificationId },
        customer: input.customer,
        browser_data: input.browserIp === undefined ? undefined : { ip_address: input.browserIp },
        description: input.description,
        success_url: input.successUrl,
        error_url: input.errorUrl,
        ...this.#merchant(),
      },
      schema: transactionData,
    });
  }

  /** The key is the caller's: stored before the call, so a retry after a crash sends the same one. */
  async capture(transactionId: string, money: Money, idempotencyKey: string) {
    return this.#operation(
      'capture',
      transactionId,
      { amount: toMajorNumber(money.amountMinor, money.currency) },
      idempotencyKey,
    );
  }

  async refund(transactionId: string, money: Money, reason: string | undefined, idempotencyKey: string) {
    return this.#operation(
      'refund',
      transactionId,
      { amount: toMajorNumber(money.amountMinor, money.currency), reason },
      idempotencyKey,
    );
  }

  async void(transactionId: string, money: Money, reason: string | undefined, idempotencyKey: string) {
    return this.#operation(
      'void',
      transactionId,
      { amount: toMajorNumber(money.amountMinor, money.currency), reason },
      idempotencyKey,
    );
  }

  #operation(
    op: string,
    transactionId: string,
    body: Record<string, unknown>,
    idempotencyKey: string,
  ): Promise<Answer<GatewayTransaction>> {
    return this.requester.send({
      method: 'POST',
      path: `/api/v1/transactions/${encodeURIComponent(transactionId)}/${op}`,
      body,
      idempotencyKey,
      schema: transactionData,
      caller: 'operator',
    });
  }

  async transactionStatus(
    transactionId: string,
    caller: Caller = 'checkout',
  ): Promise<Answer<GatewayTransaction>> {
    return this.requester.send({
      method: 'GET',
      path: `/api/v1/transactions/${encodeURIComponent(transactionId)}/status`,
      schema: transactionData,
      caller,
    });
  }

  async createPaymentSession(
    input: Money & {
      reference: string;
      paymentMethod: string;
      customer?: CustomerInput;
      customerReference?: string;
      successUrl: string;
      cancelUrl: string;
      description?: string;
    },
  ): Promise<Answer<GatewayPaymentSession>> {
    return this.requester.send({
      method: 'POST',
      path: '/api/v1/payment-sessions',
      body: {
        amount: toMajorNumber(input.amountMinor, input.currency),
        currency: input.currency,
        reference: input.reference,
        payment_method: input.paymentMethod,
        customer: input.customer,
        customer_reference: input.customerReference,
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
        description: input.description,
        ...this.#merchant(),
      },
      schema: paymentSessionData,
    });
  }

  async getPaymentSession(id: string, caller: Caller = 'checkout'): Promise<Answer<GatewayPaymentSession>> {
    return this.requester.send({
      method: 'GET',
      path: `/api/v1/payment-sessions/${encodeURIComponent(id)}`,
      schema: paymentSessionData,
      caller,
    });
  }

  async paymentMethods(
    filters: { country?: string; currency?: string } = {},
  ): Promise<Answer<GatewayPaymentMethods>> {
    return this.requester.send({
      method: 'GET',
      path: '/api/v1/payment-methods',
      query: { ...filters, ...this.#query() },
      schema: paymentMethodsSchema,
    });
  }

  /** A customer's active instruments, newest first (sandbox.md section 11). */
  async listPaymentInstruments(
    merchantCustomerId: string,
    o: { page?: number; perPage?: number; caller?: Caller } = {},
  ) {
    const { caller = 'checkout' } = o;
    return this.requester.send({
      method: 'GET',
      path: '/api/v1/payment-instruments',
      query: {
        merchant_customer_id: merchantCustomerId,
        page: o.page,
        per_page: o.perPage,
        ...this.#query(),
      },
      schema: paymentInstrumentListSchema,
      caller,
    });
  }

  /** Revokes an instrument; revoking one already revoked answers the same record. */
  async revokePaymentInstrument(vaultToken: string, caller: Caller = 'checkout') {
    return this.requester.send({
      method: 'DELETE',
      path: `/api/v1/payment-instruments/${encodeURIComponent(vaultToken)}`,
      query: this.#query(),
      schema: paymentInstrumentData,
      caller,
    });
  }

  /** What the key is and may do (sandbox.md section 11); a gateway without the operation answers 404. */
  async apiKeyInfo(caller: Caller = 'operator') {
    return this.requester.send({ method: 'GET', path: '/api/v1/api-key', schema: apiKeyInfoSchema, caller });
  }

  async getWebhook(caller: Caller = 'operator') {
    return this.requester.send({
      method: 'GET',
      path: '/api/v1/webhook',
      query: this.#query(),
      schema: endpointSchema,
      caller,
    });
  }

  /** Creation answers with the secret (once); an update with the record alone (`secret: null`). */
  async putWebhook(input: { url: string; isActive?: boolean; events?: string[] | null }) {
    return this.requester.send({
      method: 'PUT',
      path: '/api/v1/webhook',
      body: { url: input.url, is_active: input.isActive, events: input.events, ...this.#merchant() },
      schema: putEndpointData,
      caller: 'operator',
    });
  }

  async deleteWebhook() {
    return this.requester.send({
      method: 'DELETE',
      path: '/api/v1/webhook',
      query: this.#query(),
      schema: nothing,
      caller: 'operator',
    });
  }

  async rotateWebhookSecret() {
    return this.requester.send({
      method: 'POST',
      path: '/api/v1/webhook/rotate-secret',
      body: this.#merchant(),
      schema: endpointWithSecret,
      caller: 'operator',
    });
  }

  async testWebhook() {
    return this.requester.send({
      method: 'POST',
      path: '/api/v1/webhook/test',
      body: this.#merchant(),
      schema: pingSchema,
      caller: 'operator',
    });
  }

  async listEvents(
    filters: {
      status?: string;
      eventType?: string;
      from?: string;
      to?: string;
      transactionId?: string;
      page?: number;
      perPage?: number;
    } = {},
    caller: Caller = 'operator',
  ) {
    return this.requester.send({
      method: 'GET',
      path: '/api/v1/webhook/events',
      query: {
        status: filters.status,
        event_type: filters.eventType,
        from: filters.from,
        to: filters.to,
        transaction_id: filters.transactionId,
        page: filters.page,
        per_page: filters.perPage,
        ...this.#query(),
      },
      schema: eventListSchema,
      caller,
    });
  }

  async getEvent(id: string, caller: Caller = 'operator') {
    return this.requester.send({
      method: 'GET',
      path: `/api/v1/webhook/events/${encodeURIComponent(id)}`,
      schema: eventDetailSchema,
      caller,
    });
  }

  async replayEvent(id: string, caller: Caller = 'operator') {
    return this.requester.send({
      method: 'POST',
      path: `/api/v1/webhook/events/${encodeURIComponent(id)}/replay`,
      body: this.#merchant(),
      schema: replaySchema,
      caller,
    });
  }
}
