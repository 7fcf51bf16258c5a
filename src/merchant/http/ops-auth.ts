import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { EndedSessions } from '../../infra/ended-sessions.js';
import { type Limits, NO_LIMITS } from '../../infra/rate-limits.js';
import { HttpError, invalid } from '../errors/http-error.js';
import { type Actor, may, mayScoped, type Permission, type Role, rolesFor } from '../operators/roles.js';
import type { OperatorRecord } from '../store/records.js';
import { clientKey, enforce } from './limits.js';

/** Compared in constant time, as digests, so that neither content nor length leaks. */
export function sameSecret(presented: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

export const bearerOf = (ctx: Context) => /^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization'))?.[1] ?? '';

/**
 * Who a request's token is (issue, part 2): the bootstrap `OPS_API_TOKEN` (admin), or a named
 * operator's own token. `credential` is what the audit log keeps: `bootstrap`, or the operator's id.
 */
export interface Principal {
  name: string;
  role: Role;
  credential: string;
  /**
   * The merchants the credential is scoped to (issue 45, part 2); null: every merchant the kit
   * serves (OPS_API_TOKEN, the command line, and an operator added without `--merchants`); left
   * out, the same.
   */
  merchants?: readonly number[] | null;
}

/** What the HTTP layer reads of the operators' store: a live operator by token or by id. */
export interface OperatorLookup {
  byToken(token: string): Promise<OperatorRecord | null>;
  activeById(id: string): Promise<OperatorRecord | null>;
}

const ADMIN: Principal = { name: 'admin', role: 'admin', credential: 'bootstrap', merchants: null };
const principalOf = (o: OperatorRecord): Principal => ({
  name: o.name,
  role: o.role,
  credential: o.id,
  merchants: o.merchant_ids,
});

/**
 * 401. A token sent that nobody holds is said to be so: an operator whose token was revoked should
 * not be told to send one. Unknown and revoked read alike: the answer tells nobody which tokens were.
 */
const unauthorized = (sent: boolean) =>
  new HttpError(
    401,
    'UNAUTHORIZED',
    sent
      ? 'This token is not one the kit knows: unknown, or revoked. Ask for a new one (cli operator add).'
      : "Operator endpoints need Authorization: Bearer <token>: an operator's own token (cli operator add), or OPS_API_TOKEN.",
  );

/**
 * 403: the token is good, its role is not enough; the answer names the roles that are. Or its role
 * is, but the credential is scoped to some merchants and the route is not per merchant.
 */
export function forbidden(who: Principal, permission: Permission): HttpError {
  if (who.merchants && may(who.role, permission)) return acrossMerchants(who, who.merchants);
  const allowed = rolesFor(permission);
  return new HttpError(
    403,
    'FORBIDDEN',
    `This needs the role ${allowed.join(' or ')}; this token's role is ${who.role}.`,
    { data: { role: who.role, allowed } },
  );
}

/**
 * 403 for a credential scoped to some merchants on a route that reads or acts across every merchant
 * (roles.ts PER_MERCHANT); `data` names its role and merchants.
 */
export function acrossMerchants(who: Principal, merchants: readonly number[]): HttpError {
  return new HttpError(
    403,
    'FORBIDDEN',
    `This reads or acts across every merchant; this token is scoped to merchant${merchants.length > 1 ? 's' : ''} ${merchants.join(', ')}. It needs a credential for every merchant.`,
    { data: { role: who.role, merchant_ids: [...merchants] } },
  );
}

/** Whether the principal's role holds `permission`, and its scope lets it use it (roles.ts PER_MERCHANT). */
export const allowed = (who: Principal, permission: Permission) =>
  mayScoped(who.role, who.merchants ?? null, permission);

/** A session cookie, read and checked: whose it is, its id, and when it ends by itself. */
export interface OpsSession {
  subject: string;
  id: string;
  until: number;
}

/**
 * The operator routes' authentication and roles. Every request with an operator's token reads the
 * operators table (one lookup by a unique key): a revoked token is refused at once, by every process.
 * The bootstrap token is compared in memory and needs no database.
 */
export class OpsAuth {
  /**
   * `limits`: where wrong bearer tokens are counted per client address (`token_failures_per_address`);
   * default none (a test's stub app).
   */
  constructor(
    private readonly bootstrapToken: string,
    private readonly operators: OperatorLookup,
    private readonly ended: EndedSessions,
    private readonly limits: Limits = NO_LIMITS,
  ) {}

  /** Who a token is; null for nobody (unknown, revoked, empty). */
  async identify(token: string): Promise<Principal | null> {
    if (token === '') return null;
    if (sameSecret(token, this.bootstrapToken)) return ADMIN;
    const operator = await this.operators.byToken(token);
    return operator && principalOf(operator);
  }

  /**
   * Who the request's bearer token is; null when it sends none, or one nobody holds. A token nobody
   * holds is counted against the client's address (`token_failures_per_address`): past the limit it
   * is a 429 `RATE_LIMITED` with `Retry-After` instead. A right token is looked at first and never
   * counted nor refused, so an operator is not locked out by someone guessing from the same address
   * (an office, a proxy): the limit is about noise and cost, the tokens' length about the odds.
   */
  async bearer(ctx: Context): Promise<Principal | null> {
    const token = bearerOf(ctx);
    if (token === '') return null;
    const who = await this.identify(token);
    // Counted after the look-up: a right token spends nothing. Concurrent guesses may all be looked
    // at before the count refuses them; each is still refused (401), so nothing slips through.
    if (who === null) await enforce(this.limits, [['token_failures_per_address', clientKey(ctx)]]);
    return who;
  }

  /**
   * Who the request's bearer token is, on a route anyone may use: null when it sends none; a token
   * that is sent must be good (401 for one nobody holds, counted as a wrong token; 429 past the limit).
   */
  async optional(ctx: Context): Promise<Principal | null> {
    const who = await this.bearer(ctx);
    if (who === null && bearerOf(ctx) !== '') throw unauthorized(true);
    return who;
  }

  /**
   * The request's principal if its role holds `permission`: else 401 (no token, or one nobody holds;
   * 429 past the limit on wrong tokens) or 403 `FORBIDDEN` naming the roles that would do.
   */
  async require(ctx: Context, permission: Permission): Promise<Principal> {
    const who = await this.known(ctx);
    if (!allowed(who, permission)) throw forbidden(who, permission);
    return who;
  }

  /** The request's principal, whatever its role: else 401 (no token, or one nobody holds: counted). */
  async known(ctx: Context): Promise<Principal> {
    const who = await this.bearer(ctx);
    if (!who) throw unauthorized(bearerOf(ctx) !== '');
    return who;
  }

  /**
   * Who a credential id is while it is live (`bootstrap`: admin): the credential that vouched for a
   * customer token. Null once revoked: a token it minted pays nothing more.
   */
  async live(credential: string): Promise<Principal | null> {
    if (credential === ADMIN.credential) return ADMIN;
    // The command line (`cli customers token --order`): it holds the database's keys, as admin does.
    if (credential === 'cli') return { name: 'cli', role: 'admin', credential, merchants: null };
    const operator = await this.operators.activeById(credential);
    return operator && principalOf(operator);
  }

  /** A signed-in browser's session (the queue board): the cookie of POST /ops/login. */
  session(who: Principal, now: number): string {
    return opsSession(this.bootstrapToken, now, who.credential === 'bootstrap' ? 'admin' : who.credential);
  }

  /** The cookie's session if it is signed, unexpired and not ended; null otherwise. */
  async liveSession(value: string | undefined, now: number): Promise<OpsSession | null> {
    const session = validOpsSession(value, this.bootstrapToken, now);
    if (session === null || (await this.ended.isEnded(session.id))) return null;
    return session;
  }

  /** Who a session cookie is, while it lasts, is not ended and its operator not revoked; null otherwise. */
  async fromSession(value: string | undefined, now: number): Promise<Principal | null> {
    const session = await this.liveSession(value, now);
    if (session === null) return null;
    if (session.subject === 'admin') return ADMIN;
    const operator = await this.operators.activeById(session.subject);
    return operator && principalOf(operator);
  }

  /** Ends the cookie's session for good, wherever a copy of it is (POST /ops/logout). */
  async endSession(value: string | undefined, now: number): Promise<void> {
    const session = await this.liveSession(value, now);
    if (session) await this.ended.end(session.id, session.until, now);
  }

  /** The operator pages (the queue board): the bearer token, or the session cookie of POST /ops/login. */
  async page(ctx: Context, now: number): Promise<Principal | null> {
    return (await this.bearer(ctx)) ?? (await this.fromSession(ctx.cookies.get(OPS_SESSION_COOKIE), now));
  }
}

/**
 * Who decided, as the records keep it: who the token says, always. A `by` in the body may repeat the
 * caller's own name (`admin` for the bootstrap token); one that names anyone else is refused (422
 * naming `by`), not silently replaced. The bootstrap token is one shared credential and proves no
 * person: it signs as `admin`, never as a named operator it does not hold the token of. A person
 * gets their own token (cli operator add), and the records then name them.
 */
export function actorOf(ctx: Context, who: Principal, by?: string): Actor {
  const requestId = (ctx.state.requestId as string | undefined) ?? null;
  if (by !== undefined && by !== who.name)
    throw invalid({
      by: [
        who.credential === 'bootstrap'
          ? 'must be admin or left out: OPS_API_TOKEN signs as admin; give each person a token of their own (cli operator add)'
          : `must be your own operator name (${who.name}) or left out: your token says who you are`,
      ],
    });
  const { merchants: _scope, ...actor } = who;
  return { ...actor, requestId };
}

/** The browser's way into the operator pages: a cookie set by POST /ops/login, good this long. */
export const OPS_SESSION_MS = 30 * 60_000;
export const OPS_SESSION_COOKIE = 'kit_ops';

/**
 * `<who>.<expiry ms>.<session id>.<HMAC of the three>`, `who` being `admin` or an operator's id, under
 * a key derived from the bootstrap token: it ends by itself, a new OPS_API_TOKEN ends every session, a
 * revoked operator's session ends with their next request (the id is looked up), and a logout ends it
 * by its random id (EndedSessions).
 */
export function opsSession(
  token: string,
  now: number,
  subject = 'admin',
  id = randomBytes(12).toString('base64url'),
): string {
  const signed = `${subject}.${String(now + OPS_SESSION_MS)}.${id}`;
  return `${signed}.${sessionMac(token, signed)}`;
}

/** The session (subject, id, expiry) while the cookie is signed and unexpired; null otherwise. */
export function validOpsSession(value: string | undefined, token: string, now: number): OpsSession | null {
  const [subject, until, id, mac, ...rest] = (value ?? '').split('.');
  if (!subject || !until || !id || !mac || rest.length > 0 || !/^\d+$/.test(until) || Number(until) <= now)
    return null;
  if (subject !== 'admin' && !/^opr_[A-Za-z0-9]{1,28}$/.test(subject)) return null;
  if (!/^[\w-]{16}$/.test(id)) return null;
  return sameSecret(mac, sessionMac(token, `${subject}.${until}.${id}`))
    ? { subject, id, until: Number(until) }
    : null;
}

function sessionMac(token: string, signed: string): string {
  const key = createHash('sha256').update(`ops-session:${token}`).digest();
  return createHmac('sha256', key).update(signed).digest('base64url');
}
