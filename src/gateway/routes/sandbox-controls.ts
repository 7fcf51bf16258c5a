import type Router from '@koa/router';
import { z } from 'zod';
import { runDueWork } from '../due-work.js';
import { readJsonObject } from '../http/body.js';
import { respond } from '../http/envelope.js';
import { parseOr422 } from '../http/validate.js';
import type { GatewayDeps } from '../state.js';

const TEN_YEARS_S = 10 * 365 * 24 * 3600;
const advanceSchema = z.object({
  seconds: z
    .number({ message: 'is required and must be a number of seconds' })
    .positive('must be greater than zero')
    .max(TEN_YEARS_S, 'must be at most ten years'),
});

/** sandbox.md section 10: controls outside /api/v1, behind a bearer key. */
export function sandboxControlRoutes(router: Router, deps: GatewayDeps): void {
  router.post('/sandbox/clock/advance', async (ctx) => {
    const { seconds } = parseOr422(advanceSchema, await readJsonObject(ctx));
    deps.clock.advance(seconds * 1000);
    respond(ctx, { now: new Date(deps.clock.now()).toISOString() }, `Clock advanced by ${seconds} s.`);
  });

  router.post('/sandbox/tick', (ctx) => {
    respond(ctx, runDueWork(deps), 'Due work ran.');
  });
}
