import { createBullBoard } from '@bull-board/api';
import { BullAdapter } from '@bull-board/api/bullAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type Router from '@koa/router';
import type Queue from 'bull';
import type Koa from 'koa';
import type { Clock } from '../../shared/clock.js';
import { escapeHtml } from '../../shared/html.js';
import { may } from '../operators/roles.js';
import { HttpError } from './errors.js';
import { forbidden, OPS_SESSION_COOKIE, OPS_SESSION_MS, type OpsAuth } from './ops-auth.js';

export const BOARD_PATH = '/ops/queues';

export interface OpsBoardDeps {
  queues: Queue.Queue[];
  ops: OpsAuth;
  clock: Clock;
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
  app.use(async (ctx, next) => {
    const inBoard = ctx.path === BOARD_PATH || ctx.path.startsWith(`${BOARD_PATH}/`);
    if (!inBoard) return next();
    const who = await deps.ops.page(ctx, deps.clock.now());
    if (!who) {
      // A browser goes to the login form; the board's own API calls get the API's answer.
      if (ctx.method === 'GET' && ctx.accepts('html', 'json') === 'html') return ctx.redirect('/ops/login');
      throw new HttpError(
        401,
        'UNAUTHORIZED',
        "The queue board needs an operator's token (POST /ops/login).",
      );
    }
    if (!may(who.role, 'queues.read')) throw forbidden(who, 'queues.read');
    const acts = ctx.method !== 'GET' && ctx.method !== 'HEAD';
    if (acts && !may(who.role, 'queues.act')) throw forbidden(who, 'queues.act');
    return (may(who.role, 'queues.act') ? full : readOnly)(ctx, next);
  });
}

/** GET /ops/login, a form for an operator's token; POST /ops/login, the session cookie and the board. */
export function opsLoginRoutes(router: Router, deps: Pick<OpsBoardDeps, 'ops' | 'clock'>): void {
  router.get('/ops/login', (ctx) => {
    ctx.type = 'html';
    ctx.body = loginPage(null);
  });
  router.post('/ops/login', async (ctx) => {
    const form = new URLSearchParams(await readForm(ctx));
    const who = await deps.ops.identify(form.get('token') ?? '');
    if (!who) {
      ctx.status = 401;
      ctx.type = 'html';
      ctx.body = loginPage('That is not the operator token, nor a live operator token.');
      return;
    }
    ctx.cookies.set(OPS_SESSION_COOKIE, deps.ops.session(who, deps.clock.now()), {
      httpOnly: true,
      sameSite: 'strict',
      path: '/ops',
      maxAge: OPS_SESSION_MS,
      secure: ctx.secure,
      overwrite: true,
    });
    ctx.status = 303;
    ctx.redirect(BOARD_PATH);
    // As documented: the Location alone (koa's redirect would add a "Redirecting to" text).
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

function loginPage(problem: string | null): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Operator sign-in</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#1f2933}
input{width:100%;padding:.5rem;font:inherit;margin:.5rem 0 1rem;box-sizing:border-box}
button{padding:.5rem 1rem;font:inherit}.problem{color:#b42318}</style></head>
<body><main><h1>Operator sign-in</h1>
<p>The queue board needs an operator token: your own (<code>cli operator add</code>), or OPS_API_TOKEN. It opens a session of 30 minutes in this browser. Viewers and finance see the board read only.</p>
${problem ? `<p class="problem" role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/ops/login"><label for="token">Operator token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Open the queue board</button></form></main></body></html>`;
}
