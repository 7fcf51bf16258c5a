import { createBullBoard } from '@bull-board/api';
import { BullAdapter } from '@bull-board/api/bullAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type Router from '@koa/router';
import type Queue from 'bull';
import type Koa from 'koa';
import type { Clock } from '../../shared/clock.js';
import { escapeHtml } from '../../shared/html.js';
import { HttpError } from './errors.js';
import { authorizeOpsPage, OPS_SESSION_COOKIE, OPS_SESSION_MS, opsSession, sameSecret } from './ops-auth.js';

export const BOARD_PATH = '/ops/queues';

export interface OpsBoardDeps {
  queues: Queue.Queue[];
  opsApiToken: string;
  clock: Clock;
}

/**
 * The queue board (bull-board, a well-kept UI for bull: jobs by state, failed ones with their error,
 * retry and clean) at /ops/queues, behind the operator token: a bearer header, or for a browser the
 * short-lived cookie of POST /ops/login. Mounted on the kit's app before its own routes.
 */
export function mountOpsBoard(app: Koa, deps: OpsBoardDeps): void {
  const adapter = new KoaAdapter();
  adapter.setBasePath(BOARD_PATH);
  createBullBoard({ queues: deps.queues.map((q) => new BullAdapter(q)), serverAdapter: adapter });
  const board = adapter.registerPlugin();
  app.use(async (ctx, next) => {
    const inBoard = ctx.path === BOARD_PATH || ctx.path.startsWith(`${BOARD_PATH}/`);
    if (!inBoard) return next();
    if (authorizeOpsPage(ctx, deps.opsApiToken, deps.clock.now())) return board(ctx, next);
    // A browser goes to the login form; the board's own API calls get the API's answer.
    if (ctx.method === 'GET' && ctx.accepts('html', 'json') === 'html') return ctx.redirect('/ops/login');
    throw new HttpError(401, 'UNAUTHORIZED', 'The queue board needs the operator token (POST /ops/login).');
  });
}

/** GET /ops/login, a form for the operator token; POST /ops/login, the session cookie and the board. */
export function opsLoginRoutes(router: Router, deps: Pick<OpsBoardDeps, 'opsApiToken' | 'clock'>): void {
  router.get('/ops/login', (ctx) => {
    ctx.type = 'html';
    ctx.body = loginPage(null);
  });
  router.post('/ops/login', async (ctx) => {
    const form = new URLSearchParams(await readForm(ctx));
    const token = form.get('token') ?? '';
    if (!sameSecret(token, deps.opsApiToken)) {
      ctx.status = 401;
      ctx.type = 'html';
      ctx.body = loginPage('That is not the operator token.');
      return;
    }
    ctx.cookies.set(OPS_SESSION_COOKIE, opsSession(deps.opsApiToken, deps.clock.now()), {
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
<p>The queue board needs the operator token (OPS_API_TOKEN). It opens a session of 30 minutes in this browser.</p>
${problem ? `<p class="problem" role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/ops/login"><label for="token">Operator token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Open the queue board</button></form></main></body></html>`;
}
