import { z } from 'zod';

/**
 * The list endpoints' pages (webhook events, payment instruments): `per_page` (1 to 100, default 25)
 * and `page` (from 1) in the query, and one `pagination` object in the answer.
 */

export const pageQuery = {
  per_page: z
    .string()
    .regex(/^\d+$/, 'must be an integer from 1 to 100')
    .transform(Number)
    .pipe(z.number().min(1, 'must be an integer from 1 to 100').max(100, 'must be an integer from 1 to 100'))
    .optional(),
  page: z
    .string()
    .regex(/^\d+$/, 'must be an integer of 1 or more')
    .transform(Number)
    .pipe(z.number().min(1, 'must be an integer of 1 or more'))
    .optional(),
};

export const DEFAULT_PER_PAGE = 25;

/** One page of `items` (already in list order), with the `pagination` every list answers with. */
export function pageOf<T>(items: readonly T[], query: { per_page?: number; page?: number }) {
  const perPage = query.per_page ?? DEFAULT_PER_PAGE;
  const page = query.page ?? 1;
  return {
    items: items.slice((page - 1) * perPage, page * perPage),
    pagination: {
      current_page: page,
      last_page: Math.max(1, Math.ceil(items.length / perPage)),
      per_page: perPage,
      total: items.length,
    },
  };
}
