import { z } from 'zod';

/** gateway-api.md's `customer` object: the gateway checks it, and so does the kit before storing one. */
export const ipAddress = z.union([z.ipv4(), z.ipv6()], { message: 'must be an IPv4 or IPv6 address' });

/** Only these fields are kept (zod drops the rest), so nothing else ever reaches a database. */
export const customerSchema = z.object({
  merchant_customer_id: z.string().max(255).optional(),
  first_name: z.string().max(255).optional(),
  last_name: z.string().max(255).optional(),
  email: z.email('must be an email address').optional(),
  phone: z.string().max(64).optional(),
  address: z.string().max(255).optional(),
  city: z.string().max(255).optional(),
  postal_code: z.string().max(32).optional(),
  country_code: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be a 2-letter uppercase country code')
    .optional(),
  ip_address: ipAddress.optional(),
});
