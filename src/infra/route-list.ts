import type Router from '@koa/router';
import type Koa from 'koa';

/** A route as an OpenAPI document names it: method in lower case, `/orders/{id}` for `/orders/:id`. */
export interface RouteKey {
  method: string;
  path: string;
}

/**
 * Every route an app serves through @koa/router: each router's `routes()` middleware carries its
 * router (`.router`, part of @koa/router's types), whose layers are the routes. The HEAD the router
 * adds to each GET is left out, and so are `router.use()` layers, which have no method.
 */
export function routesOf(app: Koa): RouteKey[] {
  const routes: RouteKey[] = [];
  for (const middleware of app.middleware) {
    const router = (middleware as { router?: Router }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      if (layer.methods.length === 0) continue;
      if (typeof layer.path !== 'string')
        throw new Error(
          `a route with a regular expression for a path cannot be listed: ${String(layer.path)}`,
        );
      const path = layer.path.replace(/:(\w+)/g, '{$1}');
      for (const method of layer.methods) {
        if (method !== 'HEAD') routes.push({ method: method.toLowerCase(), path });
      }
    }
  }
  return routes;
}
