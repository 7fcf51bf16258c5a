/**
 * The yardstick: a bare Koa route that only reads the body (as the receiver must) and answers 200.
 * A process of its own, like the kit's API, in plain JavaScript: no loader, nothing to build. Prints
 * its port on stdout once it listens.
 */
import { createServer } from 'node:http';
import Koa from 'koa';
import getRawBody from 'raw-body';

const app = new Koa();
app.use(async (ctx) => {
  await getRawBody(ctx.req, { limit: 256 * 1024 });
  ctx.body = { success: true, message: 'Received.', code: '', data: null };
});
const server = createServer(app.callback());
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(JSON.stringify({ port: server.address().port }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
