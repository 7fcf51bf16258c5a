import type { SeedInput } from '../../src/gateway/state/seed.js';

/**
 * Platform mode's accounts (issue 45): a partner key linked to two merchants, 1001 (which the kit is
 * also given the merchant key of) and 1004 (which it is not), and merchant 1002, not linked to it.
 */
export const PLATFORM_PARTNER_KEY = 'sk_test_partner_9002';
export const OUTLET_KEY = 'sk_test_merchant_1004';
export const LINKED = [1001, 1004] as const;
export const UNLINKED = 1002;

/** Adds the platform's accounts to a test seed (startTestKit's `seed`). */
export function platformSeed(seed: SeedInput): void {
  seed.merchants.push({
    id: 1004,
    name: 'Acme Outlet',
    active: true,
    currencies: ['EUR', 'USD', 'GBP', 'JPY'],
    webhook_readiness_gate: false,
    payment_methods: [
      {
        payment_method: 'psc',
        label: 'paysafecard',
        provider: 'sandbox-psc',
        countries: [],
        currencies: ['EUR', 'USD', 'GBP'],
        enabled: true,
      },
    ],
  });
  seed.partners.push({ id: 9002, merchant_ids: [...LINKED] });
  seed.api_keys.push(
    { key: PLATFORM_PARTNER_KEY, partner_id: 9002, scopes: ['webhooks:manage'], active: true },
    { key: OUTLET_KEY, merchant_id: 1004, scopes: ['webhooks:manage'], active: true },
  );
}

/** The kit's settings for the platform: the partner key, both merchants, 1001's own key only. */
export const PLATFORM_ENV = {
  GATEWAY_API_KEY: PLATFORM_PARTNER_KEY,
  GATEWAY_MERCHANTS: LINKED.join(','),
  GATEWAY_MERCHANT_KEYS: '1001=sk_test_merchant_1001',
} as const;
