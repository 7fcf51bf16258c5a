import { expect } from 'chai';
import fc from 'fast-check';
import { z } from 'zod';
import { type RouteKey, routesOf } from '../../../src/infra/route-list.js';
import { merchantApi } from '../../../src/merchant/http/api-document.js';
import { opsSession } from '../../../src/merchant/http/ops-auth.js';
import { BOARD_PATH } from '../../../src/merchant/http/ops-board.js';
import type { ApiDocument, ApiRoute } from '../../../src/shared/api-document.js';
import { responseChecker } from '../../support/api-document.js';
import { count } from '../../support/db.js';
import { deliveriesOff, newOrder } from '../../support/events.js';
import {
  cardNumber,
  contentType,
  encodedText,
  expectErrorEnvelope,
  fuzzParameters,
  fuzzRuns,
  headerSafe,
  headerValue,
  jsonFragment,
  leaks,
  nastyKey,
  nastyString,
  objectText,
  percent,
  printable,
  type RawRequest,
  redisContents,
  send,
  shortNasty,
  textWithCard,
  thousands,
} from '../../support/fuzz.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { OPS_TOKEN, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * issue, part 4: every route the kit's router serves, under random input. The routes are listed from
 * the running kit's app (src/infra/route-list.ts, as the API document test does), and each request is
 * built from what the API document says of its route (path parameters, query, headers, body schema
 * and example), then broken in places: hostile values and keys, card numbers in free text, wrong
 * encodings and content types, bodies from empty to past each limit, the operator token, a viewer's
 * or the storefront's token (refused 403 where a role matters) or another.
 * A new route is fuzzed as soon as it is served. No answer is a 5xx, every answer is the one the
 * document gives for its route and status (refusals: the error envelope), and nothing the kit wrote
 * holds a card number or a secret. FUZZ_RUNS sets the number of requests (`npm run fuzz`).
 */

const RUNS = fuzzRuns(1000);

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minimum?: number;
  maximum?: number;
};
const jsonSchema = (schema: unknown): Schema =>
  z.toJSONSchema(schema as z.ZodType, { io: 'input', unrepresentable: 'any' }) as Schema;

/** A sound value of a JSON schema, as JSON text (enough to reach the code behind the checks). */
function soundValue(s: Schema): fc.Arbitrary<string> {
  if (s.enum) return fc.constantFrom(...s.enum).map((v) => JSON.stringify(v));
  if (s.const !== undefined) return fc.constant(JSON.stringify(s.const));
  if (s.anyOf) return fc.oneof(...s.anyOf.map(soundValue));
  const type = Array.isArray(s.type) ? s.type : [s.type ?? 'string'];
  return fc.oneof(...type.map((t) => soundOfType(s, t)));
}
function soundOfType(s: Schema, type: string): fc.Arbitrary<string> {
  switch (type) {
    case 'object':
      return objectOf(s, false);
    case 'array':
      return fc.array(soundValue(s.items ?? {}), { maxLength: 3 }).map((a) => `[${a.join(',')}]`);
    case 'integer':
    case 'number':
      return fc
        .oneof(
          fc.integer({ min: s.minimum ?? 0, max: s.maximum ?? 10_000 }),
          fc.constantFrom(0.5, 12.34, 1_000_000),
        )
        .map(String);
    case 'boolean':
      return fc.boolean().map(String);
    case 'null':
      return fc.constant('null');
    default:
      return stringOf(s).map((v) => JSON.stringify(v));
  }
}
function stringOf(s: Schema): fc.Arbitrary<string> {
  if (s.format === 'email')
    return fc.oneof(
      { weight: 3, arbitrary: fc.emailAddress() },
      cardNumber.map((n) => `${n.replace(/\D/g, '')}@example.com`),
    );
  if (s.format === 'ipv4' || s.format === 'ipv6') return fc.oneof(fc.ipV4(), fc.ipV6());
  if (s.pattern && s.pattern.length < 60) return fc.stringMatching(new RegExp(s.pattern));
  return fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.constantFrom('EUR', 'USD', 'JPY', 'KWD', 'NL', 'GB', '12.34', '5', 'ideal', 'psc', 'sale', 'auth'),
    fc
      .date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10)),
  );
}

/**
 * An object of a schema as JSON text. Each field is the document's example value or a sound one; a
 * hostile object then has some fields hostile (a fragment, free text with a card number) or left out,
 * and hostile extra keys.
 */
function objectOf(s: Schema, hostile: boolean, example?: Record<string, unknown>): fc.Arbitrary<string> {
  const fields = Object.entries(s.properties ?? {}).map(([name, field]) => {
    const given = example?.[name];
    const sound =
      given === undefined
        ? soundValue(field)
        : fc.oneof(fc.constant(JSON.stringify(given)), soundValue(field));
    const options: fc.WeightedArbitrary<string | undefined>[] = [{ weight: 6, arbitrary: sound }];
    if (hostile) options.push({ weight: 1, arbitrary: jsonFragment }, { weight: 2, arbitrary: textFragment });
    if (hostile || (given === undefined && !s.required?.includes(name)))
      options.push({ weight: 2, arbitrary: fc.constant(undefined) });
    return fc.oneof(...options).map((v) => [name, v] as const);
  });
  const extras = hostile ? fc.array(fc.tuple(nastyKey, jsonFragment), { maxLength: 2 }) : fc.constant([]);
  return fc
    .tuple(extras, fc.tuple(...fields))
    .map(([extra, values]) =>
      objectText([...extra, ...values.filter((e): e is [string, string] => e[1] !== undefined)]),
    );
}
/** Free text carrying a card number, or a nasty string. */
const textFragment = fc.oneof(textWithCard, nastyString).map((v) => JSON.stringify(v));

// ---------------------------------------------------------------------------------------------

/**
 * Values the kit knows, by parameter name: the orders made so far, their 3DS records and payment
 * sessions, the docs page's files.
 */
const known: Record<string, string[]> = { file: ['start.js', 'swagger-ui.css', 'nothing.js'] };
const knownValue = (name: string) => fc.nat().map((i) => known[name]?.[i % known[name].length]);

/** Sent as they are, not percent-encoded: a lone `%`, a dot segment, an encoded slash. */
const RAW_SEGMENTS = ['%', '..', '%2F', '%00'];
const segment = (name: string) =>
  fc
    .oneof(
      // What the kit knows when the request is made: orders made during the run count too.
      { weight: 4, arbitrary: knownValue(name) },
      { weight: 1, arbitrary: shortNasty },
      { weight: 1, arbitrary: cardNumber },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS, 'ord_nobody', '0', '-1') },
    )
    .map((v) => (v === undefined ? 'ord_nobody' : RAW_SEGMENTS.includes(v) ? v : percent(v)));

const queryValue = (name: string, s: Schema) =>
  fc
    .oneof(
      { weight: known[name] ? 6 : 0, arbitrary: knownValue(name) },
      { weight: 6, arbitrary: s.enum ? fc.constantFrom(...s.enum.map(String)) : stringOf(s) },
      { weight: 2, arbitrary: shortNasty },
      { weight: 1, arbitrary: textWithCard },
    )
    .map((v) => v ?? '');

function queryOf(s: Schema | null): fc.Arbitrary<string> {
  const fields = Object.entries(s?.properties ?? {}).map(([name, field]) =>
    fc.option(queryValue(name, field).map((v) => `${percent(name)}=${percent(v)}`)),
  );
  const strange = fc.array(
    fc.oneof(
      fc.tuple(fc.string({ maxLength: 8 }), shortNasty).map(([k, v]) => `${percent(k)}=${percent(v)}`),
      fc.constantFrom('a', '=', '&&', 'a=1&a=2', '%zz', 'from[]=1', 'to[x]=2', '__proto__[polluted]=1'),
    ),
    { maxLength: 2 },
  );
  return fc
    .tuple(fc.tuple(...fields), strange)
    .map(([known, extra]) => [...known.filter((v): v is string => v !== null), ...extra].join('&'));
}

/**
 * Named operators' tokens, made once the kit runs: a viewer (refused 403 wherever a role matters),
 * and the shop's server (storefront: refused 403 on every operator route but the customer tokens).
 */
const viewer = { token: '' };
const storefront = { token: '' };

const authorization = fc.oneof(
  { weight: 3, arbitrary: fc.constant(`Bearer ${OPS_TOKEN}`) },
  { weight: 1, arbitrary: fc.constant(null).map(() => `Bearer ${viewer.token}`) },
  { weight: 1, arbitrary: fc.constant(null).map(() => `Bearer ${storefront.token}`) },
  { weight: 2, arbitrary: fc.constant(undefined) },
  fc.constantFrom(
    `bearer ${OPS_TOKEN}`,
    `Bearer  ${OPS_TOKEN} `,
    `Bearer ${OPS_TOKEN}x`,
    `Bearer ${OPS_TOKEN.slice(0, -1)}`,
    `Basic ${Buffer.from(`ops:${OPS_TOKEN}`).toString('base64')}`,
    `Token ${OPS_TOKEN}`,
    `Bearer ${MERCHANT_KEY}`,
    'Bearer',
    'Bearer ',
  ),
  headerValue(fc.string({ maxLength: 40 })),
);

const idempotencyKey = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.constantFrom('k-1', 'k-1', 'k-2') },
  fc.integer({ min: 250, max: 300 }).map((n) => 'k'.repeat(n)),
  cardNumber,
  textWithCard.map((s) => `key ${s}`),
  nastyString,
);
const requestId = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  fc.constantFrom('req-abc', 'a'.repeat(129), ''),
  cardNumber,
  shortNasty,
);
const accept = fc.option(
  fc.constantFrom('text/html', 'application/json', '*/*', 'text/csv', 'nothing/at-all'),
);
const cookie = fc.option(
  fc.oneof(
    fc.constant(null).map(() => `kit_ops=${opsSession(OPS_TOKEN, Date.now())}`),
    fc.constantFrom('kit_ops=1.abc', 'kit_ops=', 'kit_ops=99999999999999.x', `kit_ops=${OPS_TOKEN}`),
  ),
);

const optionalHeaders = (entries: [string, string | null | undefined][]) =>
  Object.fromEntries(
    entries
      .filter((e): e is [string, string] => typeof e[1] === 'string')
      .map(([k, v]) => [k, headerSafe(v)]),
  );

/** One request for a route: its documented inputs, sound or broken. */
function requestFor(route: RouteKey, entry: ApiRoute | undefined): fc.Arbitrary<RawRequest> {
  const params = entry?.requestParams;
  const query = params?.query ? jsonSchema(params.query) : null;
  const pathParts = route.path.split(/(\{\w+\})/).map((part) => {
    const name = /^\{(\w+)\}$/.exec(part)?.[1];
    return name ? segment(name) : fc.constant(part);
  });
  const media = Object.entries(entry?.requestBody?.content ?? {})[0];
  const bodyType = media?.[0] ?? 'application/json';
  const bodySchema = media?.[1]?.schema ? jsonSchema(media[1].schema) : { type: 'object' };
  const example = media?.[1]?.example as Record<string, unknown> | undefined;
  const jsonBody = fc.oneof(
    { weight: 5, arbitrary: objectOf(bodySchema, false, example) },
    { weight: 3, arbitrary: objectOf(bodySchema, true, example) },
    { weight: 1, arbitrary: jsonFragment },
  );
  const formBody = fc
    .oneof(fc.constant(OPS_TOKEN), nastyString, textWithCard)
    .map((token) => `token=${percent(token)}`);
  const text = bodyType === 'application/x-www-form-urlencoded' ? formBody : jsonBody;
  const bytes = fc.oneof(
    {
      weight: 8,
      arbitrary: encodedText(text),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.from(b)) },
    // Around the limits: a form's 4 KiB, a JSON body's 64 KiB, the receiver's 256 KiB.
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(4096, 65_536, 262_144), fc.integer({ min: -1, max: 1 }))
        .map(([limit, off]) => Buffer.alloc(limit + off, 0x20)),
    },
    fc.constant(Buffer.alloc(0)),
  );
  const post = route.method === 'post';
  return fc
    .record({
      path: fc.tuple(...pathParts).map((parts) => parts.join('')),
      query: fc.oneof({ weight: 3, arbitrary: queryOf(query) }, fc.constant('')),
      // A POST mostly with a body, a GET sometimes.
      body: post
        ? fc.option(bytes.map(printable), { freq: 10 })
        : fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, bytes.map(printable)),
      type: fc.oneof({ weight: 3, arbitrary: fc.constant(bodyType) }, contentType),
      authorization,
      idempotencyKey,
      requestId,
      accept,
      cookie,
      signature: fc.option(headerValue(fc.string({ maxLength: 30 }))),
    })
    .map((r) => ({
      method: route.method.toUpperCase(),
      path: `${r.path}${r.query ? `?${r.query}` : ''}`,
      headers: optionalHeaders([
        ['content-type', r.body ? r.type : undefined],
        ['authorization', r.authorization],
        ['idempotency-key', r.idempotencyKey],
        ['x-request-id', r.requestId],
        ['accept', r.accept],
        ['cookie', r.cookie],
        ['x-service-signature', r.signature],
      ]),
      ...(r.body ? { body: r.body } : {}),
    }));
}

/** What the API document leaves outside (the queue board): fuzzed by GET under its prefix. */
const outsideRequest = fc
  .tuple(
    fc.constantFrom(...merchantApi.outside.map((o) => o.prefix)),
    fc.oneof(
      fc.constantFrom('', '/', 'api/queues', '/api/queues?activeQueue=observations&page=-1', '/static/x.js'),
      shortNasty.map(percent),
    ),
    authorization,
    accept,
  )
  .map(([prefix, rest, auth, acc]) => ({
    method: 'GET',
    path: `${prefix}${rest}`,
    headers: optionalHeaders([
      ['authorization', auth],
      ['accept', acc],
    ]),
  }));

// ---------------------------------------------------------------------------------------------

describe('fuzz: every merchant route', function () {
  this.timeout(10 * 60_000);
  let t: TestKit;
  let checker: Awaited<ReturnType<typeof responseChecker>>;
  let routes: RouteKey[] = [];
  const sent = new Map<string, number>();
  const statuses = new Map<number, number>();
  const errorBodies: string[] = [];
  let inputs = 0;
  let fiveHundreds = 0;
  let leaked: string[] | null = null;

  const key = (r: RouteKey) => `${r.method.toUpperCase()} ${r.path}`;

  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' } });
    // The sandbox's own deliveries off: whatever reaches the inbox then came through the fuzzer.
    await deliveriesOff(t);
    routes = routesOf(t.kit.app!);
    viewer.token = (
      await t.kit.store.operators.add({
        name: 'fuzz-viewer',
        role: 'viewer',
        by: { name: 'test', role: 'admin', credential: 'cli' },
      })
    ).token;
    storefront.token = (
      await t.kit.store.operators.add({
        name: 'fuzz-storefront',
        role: 'storefront',
        by: { name: 'test', role: 'admin', credential: 'cli' },
      })
    ).token;
    const served = await t.call('GET', '/openapi.json');
    checker = await responseChecker(served.body as ApiDocument);
    // Orders to act on, in several states (the run adds the ones it creates), and their 3DS records
    // and payment sessions for the landings.
    known.id = [];
    known.card_verification_id = ['tds_unknown'];
    known.payment_session_id = ['ps_unknown'];
    const pay = async (path: string, body: unknown) => {
      const id = await newOrder(t, '20.00');
      known.id!.push(id);
      const answer = await t.call('POST', `/orders/${id}/pay/${path}`, { body });
      const url = String(answer.body.data?.next_action?.url ?? '');
      const tds = /\/hosted\/3ds\/(tds_\w+)/.exec(url)?.[1];
      const session = /\/hosted\/checkout\/(ps_\w+)/.exec(url)?.[1];
      if (tds) known.card_verification_id!.push(tds);
      if (session) known.payment_session_id!.push(session);
    };
    known.id.push(await newOrder(t, '20.00'));
    await pay('card', { card: card(), mode: 'sale' });
    await pay('card', { card: card(), mode: 'auth' });
    await pay('card', { card: card('4000000000003220'), mode: 'auth' });
    await pay('redirect', { payment_method: 'ideal', customer: { country_code: 'NL' } });
  });
  after(async () => {
    console.log(
      `      fuzz: routes: ${thousands(inputs)} requests over ${sent.size} routes, ${fiveHundreds} 5xx, ${leaked === null ? 'leaks not checked' : `${leaked.length} secrets or card numbers in logs/jobs/db/error bodies`}; answers ${[
        ...statuses,
      ]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}: ${thousands(n)}`)
        .join(', ')}`,
    );
    await t?.close();
  });

  it('lists the routes from the kit itself, and has a document entry for each but the outside ones', () => {
    expect(routes.length).to.be.greaterThan(15);
    const documented = new Set(merchantApi.routes.map(key));
    const outside = (r: RouteKey) => merchantApi.outside.some((o) => r.path.startsWith(o.prefix));
    const unknown = routes.filter((r) => !documented.has(key(r)) && !outside(r)).map(key);
    expect(
      unknown,
      'served without a document entry: the fuzzer would know nothing of their inputs',
    ).to.deep.equal([]);
  });

  it('answers every request without a 5xx, as the document says; refusals are the error envelope', async () => {
    const entries = new Map(merchantApi.routes.map((r) => [key(r), r]));
    const anyRequest = fc.oneof(
      // Routes that take a body have more to break: they get three times the requests.
      ...routes.map((r) => ({
        weight: entries.get(key(r))?.requestBody ? 3 : 1,
        arbitrary: requestFor(r, entries.get(key(r))).map((q) => ({ route: r as RouteKey | null, q })),
      })),
      { weight: 2, arbitrary: outsideRequest.map((q) => ({ route: null, q })) },
    );
    await fc.assert(
      fc.asyncProperty(anyRequest, async ({ route, q }) => {
        const answer = await send(t.url, q);
        inputs += 1;
        if (route) sent.set(key(route), (sent.get(key(route)) ?? 0) + 1);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status >= 500) fiveHundreds += 1;
        const where = `${q.method} ${q.path.slice(0, 200)}`;
        expect(answer.status, `${where}: ${answer.text.slice(0, 300)}`).to.be.below(500);
        if (answer.status === 201 && route?.path === '/orders')
          known.id!.push(JSON.parse(answer.text).data.order.id);
        if (answer.status >= 400) errorBodies.push(answer.text);
        // Answered by the server before any route (headers over 16 KiB): the envelope, nothing to document.
        if (answer.status === 431) return expectErrorEnvelope(answer, where);
        if (!route) {
          // The queue board's own answers (with the token) are bull-board's; the kit's are the envelope.
          const bearer = /^Bearer\s+(\S+)$/i.exec(q.headers?.authorization ?? '')?.[1];
          const board = q.path.startsWith(BOARD_PATH) && (bearer === OPS_TOKEN || bearer === viewer.token);
          if (answer.status >= 400 && !board) expectErrorEnvelope(answer, where);
          return;
        }
        if (answer.status >= 400 && answer.type.startsWith('application/json'))
          expectErrorEnvelope(answer, where);
        // An empty path parameter leaves `/orders/`, which the router serves as `/orders` (a trailing
        // slash is optional): the answer is that route's.
        const bare = q.path.split('?')[0]!.replace(/\/$/, '');
        const served = routes.find((r) => r.method === route.method && r.path === bare) ?? route;
        if (entries.has(key(served))) {
          const headers = answer.headers;
          const body = answer.type.startsWith('application/json') ? JSON.parse(answer.text) : undefined;
          checker.check(
            { status: answer.status, headers, body, text: answer.text },
            served.method,
            served.path,
          );
        }
      }),
      fuzzParameters(RUNS),
    );
  });

  it('sent requests to every route', () => {
    const missed = routes.map(key).filter((k) => !sent.has(k));
    expect(
      missed,
      'routes never reached: the run stopped at a failure, or FUZZ_RUNS is too low',
    ).to.deep.equal([]);
  });

  it('stored no webhook and queued no job: nothing here was signed', async () => {
    expect(await count(t, 'webhook_inbox')).to.equal(0);
    expect([...(await redisContents(t)).jobIds]).to.deep.equal([]);
  });

  it('no card number or secret in a log line, Redis, a table or an error body', async () => {
    leaked = await leaks(t, errorBodies, [viewer.token, storefront.token]);
    expect(leaked.slice(0, 5), `${leaked.length} leaks`).to.deep.equal([]);
  });
});
