import { z } from 'zod';

const IP_MESSAGE = 'must be an IPv4 or IPv6 address';
const isIp = (v: string) => z.ipv4().safeParse(v).success || z.ipv6().safeParse(v).success;

/**
 * An IPv4 or IPv6 address, checked by zod's own rules but documented as a string: the pattern zod
 * writes into a JSON Schema for IPv6 refuses the addresses with an IPv4 tail (`::ffff:192.0.2.1`)
 * its check accepts, so the API documents would call valid answers invalid.
 */
export const ipAddress = z
  .string({ message: IP_MESSAGE })
  .refine(isIp, IP_MESSAGE)
  .meta({ description: 'An IPv4 or IPv6 address.', examples: ['203.0.113.9', '2001:db8::1'] });

/** gateway-api.md's `customer` object: the gateway checks it, and so does the kit before storing one. */

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
