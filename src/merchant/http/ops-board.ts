import { createBullBoard } from '@bull-board/api';
import { BullAdapter } from '@bull-board/api/bullAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type Router from '@koa/router';
import type Queue from 'bull';
import type Koa from 'koa';
import type { Limits } from '../../infra/rate-limits.js';
import type { Clock } from '../../shared/clock.js';
import { escapeHtml, HEAD_START } from '../../shared/html.js';
import { HttpError } from '../errors/http-error.js';
import { rolesFor } from '../operators/roles.js';
import { clientKey } from './limits.js';
import {
  allowed,
  bearerOf,
  forbidden,
  OPS_SESSION_COOKIE,
  OPS_SESSION_MS,
  type OpsAuth,
  type Principal,
} from './ops-auth.js';

export const BOARD_PATH = '/ops/queues';

export interface OpsBoardDeps {
  queues: Queue.Queue[];
  ops: OpsAuth;
  clock: Clock;
  /** The kit's public URL: a board action signed in by cookie must come from a page of its origin. */
  publicBaseUrl: string;
}

/** One bull-board on the queues, read only or not, at BOARD_PATH. */
function board(queues: Queue.Queue[], readOnlyMode: boolean) {
  const adapter = new KoaAdapter();
  adapter.setBasePath(BOARD_PATH);
  createBullBoard({
    queues: queues.map((q) => new BullAdapter(q, { readOnlyMode })),
    serverAdapter: adapter,
  });
  return adapter.registerPlugin();
}

/**
 * The queue board (bull-board, a well-kept UI for bull: jobs by state, failed ones with their error,
 * retry and clean) at /ops/queues, behind an operator's token: a bearer header, or for a browser the
 * short-lived cookie of POST /ops/login. Every role reads it; only roles that may act (operator,
 * admin) get the board with its buttons, the others the same board read only, and any request that
 * would change a job (anything but GET) is refused for them before it reaches bull-board. Mounted on
 * the kit's app before its own routes.
 */
export function mountOpsBoard(app: Koa, deps: OpsBoardDeps): void {
  const full = board(deps.queues, false);
  const readOnly = board(deps.queues, true);
  const publicOrigin = new URL(deps.publicBaseUrl).origin;
  app.use(async (ctx, next) => {
    const inBoard = ctx.path === BOARD_PATH || ctx.path.startsWith(`${BOARD_PATH}/`);
    if (!inBoard) return next();
    // A bearer header is the caller's own doing; a cookie a browser sends for any page that asks.
    const bearer = bearerOf(ctx);
    // A wrong bearer token is counted against the address (429 past the limit), as on the API.
    const who = bearer
      ? await deps.ops.bearer(ctx)
      : await deps.ops.fromSession(ctx.cookies.get(OPS_SESSION_COOKIE), deps.clock.now());
    if (!who) {
      // A browser goes to the login form; the board's own API calls get the API's answer.
      if (ctx.method === 'GET' && ctx.accepts('html', 'json') === 'html') return ctx.redirect('/ops/login');
      throw new HttpError(
        401,
        'UNAUTHORIZED',
        "The queue board needs an operator's token (POST /ops/login).",
      );
    }
    if (!allowed(who, 'queues.read')) throw forbidden(who, 'queues.read');
    const acts = ctx.method !== 'GET' && ctx.method !== 'HEAD';
    if (acts && !allowed(who, 'queues.act')) throw forbidden(who, 'queues.act');
    // SameSite=Strict does not stop a sibling subdomain, which is same-site: an action signed in by
    // cookie must say it comes from the kit's own pages. Browsers send Origin with every such request.
    if (acts && !bearer && !fromOwnPage(ctx, publicOrigin))
      throw new HttpError(
        403,
        'CROSS_ORIGIN',
        "A queue board action signed in by cookie must come from the board's own page (its Origin header).",
      );
    return (allowed(who, 'queues.act') ? full : readOnly)(ctx, next);
  });
}

/** Whether the request's Origin is the kit's: its public URL's, or the origin it was reached on. */
function fromOwnPage(ctx: Koa.Context, publicOrigin: string): boolean {
  const origin = ctx.get('Origin');
  // Built from the Host, not koa 3's ctx.origin, which answers the Origin header itself when sent.
  return origin !== '' && (origin === publicOrigin || origin === `${ctx.protocol}://${ctx.host}`);
}

export interface OpsLoginDeps extends Pick<OpsBoardDeps, 'ops' | 'clock'> {
  /** Wrong tokens are counted per client address (`login_failures_per_address`). */
  limits: Limits;
  /** The kit's public URL: when it is https, the session cookie is `Secure`, proxy or not. */
  publicBaseUrl: string;
}

/**
 * GET /ops/login, a form for an operator's token (or, signed in, who you are and a way out); POST
 * /ops/login, the session cookie and the board; POST /ops/logout, the session ended.
 */
export function opsLoginRoutes(router: Router, deps: OpsLoginDeps): void {
  const secure = new URL(deps.publicBaseUrl).protocol === 'https:';
  const setCookie = (ctx: Koa.Context, value: string | null) => {
    // Behind a proxy that ends TLS the connection is plain http: the public URL says what the
    // browser sees, and koa refuses a Secure cookie over plain http unless told so.
    if (secure) ctx.cookies.secure = true;
    ctx.cookies.set(OPS_SESSION_COOKIE, value, {
      httpOnly: true,
      sameSite: 'strict',
      path: '/ops',
      maxAge: value === null ? 0 : OPS_SESSION_MS,
      secure: secure || ctx.secure,
      overwrite: true,
    });
  };
  const html = (ctx: Koa.Context, status: number, body: string) => {
    ctx.status = status;
    ctx.type = 'html';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  };

  router.get('/ops/login', async (ctx) => {
    const who = await deps.ops.fromSession(ctx.cookies.get(OPS_SESSION_COOKIE), deps.clock.now());
    html(ctx, 200, who ? signedInPage(who) : loginPage(null));
  });
  router.post('/ops/login', async (ctx) => {
    const form = new URLSearchParams(await readForm(ctx));
    // Taken before the token is looked at, so that concurrent guesses cannot all slip under the
    // limit; given back when the token is good, so that only wrong tokens count.
    const address = clientKey(ctx);
    const answer = await deps.limits.take('login_failures_per_address', address);
    if (!answer.allowed) {
      const minutes = Math.ceil(answer.retryAfterSeconds / 60);
      ctx.set('Retry-After', String(answer.retryAfterSeconds));
      return html(
        ctx,
        429,
        loginPage(
          `Too many wrong tokens from this address. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
        ),
      );
    }
    const who = await deps.ops.identify(form.get('token') ?? '');
    if (!who) return html(ctx, 401, loginPage('That is not the operator token, nor a live operator token.'));
    await deps.limits.giveBack('login_failures_per_address', address);
    // A session the board would refuse on its first page (a storefront token) is said here, on the form.
    if (!allowed(who, 'queues.read'))
      return html(
        ctx,
        403,
        loginPage(
          who.merchants
            ? "A token scoped to merchants cannot open the queue board: it shows every merchant's jobs."
            : `The role ${who.role} cannot open the queue board: sign in with the token of a role that can (${rolesFor('queues.read').join(', ')}).`,
        ),
      );
    setCookie(ctx, deps.ops.session(who, deps.clock.now()));
    ctx.status = 303;
    ctx.redirect(BOARD_PATH);
    // As documented: the Location alone (koa's redirect would add a "Redirecting to" text).
    ctx.body = '';
  });
  router.post('/ops/logout', async (ctx) => {
    // Ended where it is recorded, not only forgotten by this browser: a copy of the cookie opens
    // nothing any more.
    await deps.ops.endSession(ctx.cookies.get(OPS_SESSION_COOKIE), deps.clock.now());
    setCookie(ctx, null);
    ctx.status = 303;
    ctx.redirect('/ops/login');
    ctx.body = '';
  });
}

async function readForm(ctx: Koa.Context): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > 4096) throw new HttpError(413, 'VALIDATION_FAILED', 'The form is too large.');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const PAGE_STYLE = `body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#1f2933}
input{width:100%;padding:.5rem;font:inherit;margin:.5rem 0 1rem;box-sizing:border-box}
button{padding:.5rem 1rem;font:inherit}.problem{color:#b42318}`;

function opsPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head>${HEAD_START}<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${PAGE_STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>
${body}</main></body></html>`;
}

function loginPage(problem: string | null): string {
  return opsPage(
    'Operator sign-in',
    `<p>The queue board needs an operator token: your own (<code>cli operator add</code>), or OPS_API_TOKEN. It opens a session of 30 minutes in this browser. Viewers and finance see the board read only.</p>
${problem ? `<p class="problem" role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/ops/login"><label for="token">Operator token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Open the queue board</button></form>`,
  );
}

function signedInPage(who: Principal): string {
  return opsPage(
    'Operator session',
    `<p>Signed in as <strong>${escapeHtml(who.name)}</strong> (role ${escapeHtml(who.role)}).</p>
<p><a href="${BOARD_PATH}">Open the queue board</a></p>
<form method="post" action="/ops/logout"><button type="submit">Sign out</button></form>`,
  );
}
