import { hasCardNumber } from '../../shared/card-numbers.js';

/**
 * Who may do what over HTTP (issue, part 2): a named operator has one role; the bootstrap
 * `OPS_API_TOKEN` is `admin`, who may do everything the roles may, and nothing more. Pure: the
 * routes ask `may(role, permission)`, and the role table of docs/operations.md is checked against this one.
 */

/** The roles a named operator can be given (`cli operator add NAME --role ...`). */
export const OPERATOR_ROLES = ['operator', 'finance', 'viewer', 'storefront'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** `admin`: the bootstrap token's role, held by no named operator. */
export type Role = OperatorRole | 'admin';

/**
 * Each permission and the roles that hold it (admin holds every one). Roles are not ranks: an
 * operator moves money and cannot resolve a review; finance resolves reviews and cannot move money.
 */
export const PERMISSIONS = {
  /** GET /orders (the review queue among them), GET /disputes, GET /unmatched-money. */
  read: ['operator', 'finance', 'viewer'],
  /** POST /orders/{id}/capture, /refund, /void; POST /customers/{id}/charges (a saved card charged). */
  'money.move': ['operator'],
  /** DELETE /customers/{id}/cards/{card}: a saved card removed for the customer. */
  'cards.manage': ['operator'],
  /**
   * POST /customers/{id}/tokens: the shop's server vouches for the customer it signed in. The
   * `storefront` role holds this alone: a credential that lives on a web server moves no money of its
   * own; a token it mints for an order pays that order within the customer's daily bound (issue 41).
   */
  'customers.vouch': ['storefront'],
  /**
   * POST /orders with a `reference` of the caller's own: anyone may make an order, but only the shop
   * names it, or a stranger could take the shop's next reference first. The same roles end an order
   * the shop made (POST /orders/{id}/cancel, issue 43) and make a payment link for it (POST
   * /orders/{id}/payment-link): the shop's own acts on its orders.
   */
  'orders.reference': ['operator', 'storefront'],
  /** GET /reports/reconciliation. */
  'reports.read': ['finance'],
  /** GET /audit. */
  'audit.read': ['finance'],
  /** POST /orders/{id}/review. */
  'reviews.resolve': ['finance'],
  /** POST /unmatched-money/{id}/attach, /resolve. */
  'unmatched.decide': ['finance'],
  /** POST /disputes/{id}/lost. */
  'disputes.decide': ['finance'],
  /** The queue board at /ops/queues, read only. */
  'queues.read': ['operator', 'finance', 'viewer'],
  /** The queue board's actions: retry, clean, promote, remove jobs. */
  'queues.act': ['operator'],
  /** GET /metrics, when METRICS_TOKEN is set (operator tokens are accepted beside it). */
  'metrics.read': ['operator', 'finance', 'viewer'],
  /**
   * POST /customers/{id}/erase (issue 43): a customer's personal data forgotten, for good. No role
   * holds it: the bootstrap token (admin) and the command line, which holds the database's keys.
   */
  'customers.erase': [],
} as const satisfies Record<string, readonly OperatorRole[]>;

export type Permission = keyof typeof PERMISSIONS;

export function may(role: Role, permission: Permission): boolean {
  return role === 'admin' || (PERMISSIONS[permission] as readonly Role[]).includes(role);
}

/**
 * What a credential scoped to some merchants (issue 45, part 2) may still use of its role: the
 * permissions whose routes are per merchant, where it sees its merchants' orders, customers and
 * gateway money with no order alone (another's is a 404, as an unknown one). The rest read or act
 * across every merchant (the queue board, metrics): refused to it (403). The role table's `scoped`
 * column says the same; a test checks one against the other.
 */
export const PER_MERCHANT = {
  read: true,
  'money.move': true,
  'cards.manage': true,
  'customers.vouch': true,
  'orders.reference': true,
  'reports.read': true,
  'audit.read': true,
  'reviews.resolve': true,
  'unmatched.decide': true,
  'disputes.decide': true,
  'queues.read': false,
  'queues.act': false,
  'metrics.read': false,
  'customers.erase': true,
} as const satisfies Record<Permission, boolean>;

/** Whether a credential of this role and scope (null: every merchant) may use the permission. */
export function mayScoped(role: Role, scope: readonly number[] | null, permission: Permission): boolean {
  return may(role, permission) && (scope === null || PER_MERCHANT[permission]);
}

/** The roles that hold a permission, admin last: what a 403 names. */
export function rolesFor(permission: Permission): Role[] {
  return [...PERMISSIONS[permission], 'admin'];
}

export const isOperatorRole = (value: string): value is OperatorRole =>
  (OPERATOR_ROLES as readonly string[]).includes(value);

/**
 * Names that already mean something in the records (`admin`: the bootstrap token; `kit`: the kit's own
 * jobs; `gateway`: a dispute the gateway closed; `cli`: the command line; `operator`: the old default).
 */
const RESERVED = ['admin', 'kit', 'gateway', 'cli', 'operator', 'system'];

/**
 * An operator's name is kept in every record of what they did (history lines, the audit export,
 * `resolved_by`): 1 to 64 letters, digits, spaces and `.`, `_`, `-`, `@`, starting with a letter or
 * digit. Null: a good name; else what is wrong with it.
 */
export function operatorNameProblem(name: string): string | null {
  if (!/^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$/.test(name))
    return 'must be 1 to 64 letters, digits, spaces, ".", "_", "-" or "@", starting with a letter or digit';
  if (name !== name.trimEnd()) return 'must not end with a space';
  // Kept in every record, as `--by` and a body's `by` are: never a card number (merchant.md, Card data).
  if (hasCardNumber(name)) return 'must not hold a card number';
  return reservedNameProblem(name);
}

/**
 * Null when `name` may be recorded as who acted (an operator's name, a body's `by`, `--by`); else why
 * not: a person recorded as `kit` or `gateway` would read in the audit as the kit's own act.
 */
export function reservedNameProblem(name: string): string | null {
  return RESERVED.includes(name.trim().toLowerCase())
    ? `"${name}" is reserved: it names something else in the records`
    : null;
}

/**
 * Who did something the audit keeps: a named operator (`credential` their id, `opr_...`), the
 * bootstrap token (`bootstrap`, role admin), the command line (`cli`, role admin: it holds the
 * database's keys) or the kit itself (`system`, e.g. the auth expiry policy).
 */
export interface Actor {
  name: string;
  role: Role | 'system';
  credential: string;
  /** The HTTP request that carried the decision (its X-Request-Id): what to search the logs for. */
  requestId?: string | null;
}

/** "ada (finance)": how a history line names who did it. */
export const actorLabel = (actor: Actor) => `${actor.name} (${actor.role})`;
