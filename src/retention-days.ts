import { z } from 'zod';

/*
 * RETENTION_DAYS (issue 43, part 5), read by config.ts: how long the kit keeps what it no longer needs
 * to keep. Pure, no environment.
 */

/** Three months: a quarter's reconciliation and its questions, then the bodies go. */
export const RETENTION_DAYS_DEFAULT = 90;

const RULE =
  'must be a whole number of days from 1 to 3650: webhook bodies and delivered order events older than that are removed';

/**
 * Days after which the retention job clears the bodies of webhook events the kit has applied (their
 * ids stay as long as the gateway may deliver them again) and removes order events delivered to
 * every subscriber, with their deliveries and tries. Orders, their history and disputes stay.
 */
export const retentionDays = z
  .string()
  .regex(/^\d{1,4}$/, RULE)
  .transform(Number)
  .refine((n) => n >= 1 && n <= 3650, RULE)
  .default(RETENTION_DAYS_DEFAULT);
