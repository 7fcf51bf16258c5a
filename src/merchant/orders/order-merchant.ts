/*
 * Whose an order or a customer is (issue 45, platform mode), and who may see it. Pure: the merchants
 * the kit serves, a request's field and a credential's scope in, a merchant or what is wrong out.
 *
 * An order or saved card that names no merchant (made before platform mode, or for a merchant key
 * whose id the gateway did not say) is the kit's first merchant's (client/merchant-gateways.ts).
 */

/** A credential's merchants (issue 45, part 2): null, every merchant the kit serves. */
export type MerchantScope = readonly number[] | null;

/** What a request's `merchant_id` comes to: the merchant, a problem with the field (422), or one outside the credential's scope (403). */
export type ChosenMerchant = { merchantId: number | null } | { problem: string } | { outOfScope: string };

/**
 * The merchant a request is for, as POST /orders, the customer routes and the charges ask for it:
 * the one the field names, among those the kit serves and within the credential's scope. Left out:
 * required when the kit serves several, unless the scope holds exactly one (then that one); else the
 * one the kit serves.
 */
export function chooseMerchant(
  served: readonly number[],
  named: number | undefined,
  scope: MerchantScope = null,
): ChosenMerchant {
  if (named === undefined) {
    if (scope !== null && scope.length === 1) return chooseMerchant(served, scope[0], scope);
    if (served.length > 1)
      return { problem: `is required: this kit acts for merchants ${served.join(', ')}` };
    return withinScope(scope, served[0] ?? null, served)
      ? { merchantId: served[0] ?? null }
      : { outOfScope: outOfScopeText(scope!) };
  }
  if (!served.includes(named)) {
    if (served.length === 0)
      return { problem: "must be left out: this kit acts for its gateway key's own account only" };
    return { problem: `must be one of the merchants this kit acts for: ${served.join(', ')}` };
  }
  if (!withinScope(scope, named, served)) return { outOfScope: outOfScopeText(scope!) };
  return { merchantId: named };
}

/** POST /orders before scopes: the merchant the body names among those served (no credential's scope). */
export function orderMerchant(
  served: readonly number[],
  named: number | undefined,
): { merchantId: number | null } | { problem: string } {
  const chosen = chooseMerchant(served, named);
  return 'outOfScope' in chosen ? { problem: chosen.outOfScope } : chosen;
}

const outOfScopeText = (scope: readonly number[]) =>
  `is not among the merchants this credential is scoped to (${scope.join(', ')})`;

/** The merchant an order (or a saved card) is: the one it names, or the kit's first when it names none. */
export function merchantOf(merchantId: number | null, served: readonly number[]): number | null {
  return merchantId ?? served[0] ?? null;
}

/**
 * Whether a credential of `scope` may see what belongs to `merchantId` (an order's, a saved card's:
 * null names the kit's first merchant). An unscoped credential sees every merchant's.
 */
export function withinScope(scope: MerchantScope, merchantId: number | null, served: readonly number[]) {
  if (scope === null) return true;
  const id = merchantOf(merchantId, served);
  return id !== null && scope.includes(id);
}

/**
 * Which merchants' rows a read takes: these ids, and the rows that name none (the kit's first
 * merchant's) when `unnamed`. What the store's lists and the saved cards are filtered by.
 */
export interface MerchantFilter {
  ids: readonly number[];
  unnamed: boolean;
}

/**
 * The filter of one merchant's rows (null: the kit's first merchant, or the key's own account when
 * it serves none named). Its first id is the merchant a new row is written for.
 */
export function oneMerchant(merchantId: number | null, served: readonly number[]): MerchantFilter {
  const id = merchantOf(merchantId, served);
  return merchantsFilter(id === null ? [] : [id], served, id === null);
}

/** The merchant a new row of a one-merchant filter is written for (null: none named). */
export const writtenMerchant = (filter: MerchantFilter): number | null => filter.ids[0] ?? null;

/** The filter of these merchants' rows; `unnamed` too when the kit's first is among them. */
export function merchantsFilter(
  ids: readonly number[],
  served: readonly number[],
  unnamed = false,
): MerchantFilter {
  return { ids: [...ids], unnamed: unnamed || (served[0] !== undefined && ids.includes(served[0])) };
}

/**
 * What a list shows a credential (GET /orders, GET /disputes): the merchant the query names (which
 * must be served and within the scope), or every merchant of the scope; null: no filter at all (an
 * unscoped credential that names none).
 */
export function listFilter(
  served: readonly number[],
  named: number | undefined,
  scope: MerchantScope,
): MerchantFilter | null | { problem: string } | { outOfScope: string } {
  if (named === undefined) return scope === null ? null : merchantsFilter(scope, served);
  if (!served.includes(named))
    return served.length === 0
      ? { problem: "must be left out: this kit acts for its gateway key's own account only" }
      : { problem: `must be one of the merchants this kit acts for: ${served.join(', ')}` };
  if (!withinScope(scope, named, served)) return { outOfScope: outOfScopeText(scope!) };
  return merchantsFilter([named], served);
}

/** `1001,1004` as a credential's scope; what is wrong with it, or with a merchant it names, as text. */
export function parseScope(text: string, served: readonly number[]): number[] | { problem: string } {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = items.find((s) => !/^[1-9]\d{0,9}$/.test(s));
  if (items.length === 0 || bad !== undefined)
    return { problem: `must be comma-separated merchant ids${bad === undefined ? '' : `, not "${bad}"`}` };
  const ids = [...new Set(items.map(Number))];
  const problem = scopeProblem(ids, served);
  return problem === null ? ids : { problem };
}

/**
 * Null when a credential may be scoped to these merchants: each one the kit serves (GATEWAY_MERCHANTS).
 * A scope naming another would let in nothing today and something unforeseen after a change of
 * settings: refused, naming it.
 */
export function scopeProblem(scope: readonly number[], served: readonly number[]): string | null {
  if (scope.length === 0) return 'must name at least one merchant (leave it out for every merchant)';
  if (served.length === 0)
    return "cannot be given: this kit acts for its gateway key's own account only (GATEWAY_MERCHANTS lists no merchants)";
  const stray = scope.find((id) => !served.includes(id));
  return stray === undefined
    ? null
    : `names merchant ${stray}, which this kit does not act for (GATEWAY_MERCHANTS: ${served.join(', ')})`;
}

/**
 * The merchant a customer token (and an erasure's reference) names: none in a kit of one merchant
 * (whether it knows the id or not: the command line may not, the API does) and none for the kit's
 * first, so a single shop's tokens and references are as they always were; any other by its id.
 */
export function signedMerchant(merchantId: number | null, served: readonly number[]): number | null {
  const id = merchantOf(merchantId, served);
  return id === null || served.length <= 1 || id === served[0] ? null : id;
}

/**
 * Which rows are a merchant's customer's, as a read takes them: in a kit of one merchant (or of the
 * key's own account) all of them, whatever merchant id they carry (the command line may not know the
 * id the API writes); among several, that merchant's (oneMerchant). Undefined: no filter.
 */
export function customersOf(
  merchantId: number | null,
  served: readonly number[],
): MerchantFilter | undefined {
  return served.length <= 1 ? undefined : oneMerchant(merchantId, served);
}

/** One merchant's rows, as finance reads them (the report, the audit): merchantsFilter of that one. */
export function merchantFilter(merchantId: number, served: readonly number[]): MerchantFilter {
  return merchantsFilter([merchantId], served);
}

/**
 * Whether an order of merchant `orderMerchant` is the business of an event that came to merchant
 * `eventMerchant`'s webhook endpoint (issue 45): in a kit of several merchants (`served`), the same
 * merchant, a null on either side being the first one's (an order or an event kept before platform
 * mode); in a kit of one, always. Pure.
 */
export type SameMerchant = (orderMerchant: number | null, eventMerchant: number | null) => boolean;

export function sameMerchantRule(served: readonly number[]): SameMerchant {
  if (served.length <= 1) return () => true;
  const first = served[0]!;
  return (order, event) => (order ?? first) === (event ?? first);
}
