/**
 * The contract as a list of routes, and requests built from its zod schemas: shared by the
 * contract tests (junk input, response checks) so that a route added to the contract is covered
 * without touching them.
 */
import { contract, IsoTimestamp, MetadataQuery, routeAuth, type RouteAuth } from '@mnemo/contract';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import fc from 'fast-check';
import request from 'supertest';
import type { ZodTypeAny } from 'zod';
import { ZodFastCheck } from 'zod-fast-check';

/** One route of the contract: its dotted key (`memories.createMemory`), the route, its auth. */
export interface ContractRoute {
  name: string;
  route: AppRoute;
  auth: RouteAuth;
}

/** Every route of a (nested) router with its dotted key, in declaration order. */
export function contractRoutes(router: AppRouter = contract, prefix = ''): ContractRoute[] {
  return Object.entries(router).flatMap(([key, entry]) => {
    const name = prefix ? `${prefix}.${key}` : key;
    if (isAppRoute(entry)) return [{ name, route: entry, auth: routeAuth(entry) }];
    return contractRoutes(entry as AppRouter, name);
  });
}

/** A zod schema, as opposed to ts-rest's `noBody()` symbol or a missing schema. */
export function zodSchema(value: unknown): ZodTypeAny | undefined {
  return typeof value === 'object' && value !== null && 'safeParse' in value
    ? (value as ZodTypeAny)
    : undefined;
}

/** The parts of one HTTP request to a route, before credentials are added. */
export interface RouteInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** `undefined`: no body is sent. */
  body: unknown;
  headers: Record<string, string>;
}

/** The `:name` parameters of a route's path. */
export function pathParamNames(route: AppRoute): string[] {
  return [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
}

/** ISO timestamps as the contract's date fields take them, within a plausible window. */
const isoTimestamps = fc
  .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z') })
  .map((date) => date.toISOString());

/** The memory list's `metadata` filter: a JSON-encoded object of scalars. */
const metadataQueries = fc
  .dictionary(
    fc.string({ minLength: 1, maxLength: 12 }),
    fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null)),
    { maxKeys: 3 },
  )
  .map((value) => JSON.stringify(value));

/**
 * zod-fast-check with overrides where its own derivation filters too much: the contract's
 * timestamp (a regex and a date check), regex strings, and pipes (`PgString.pipe(min/max)`),
 * which it would draw from the unbounded input side and filter by the bounds.
 */
function generatorFor(schema: ZodTypeAny): ReturnType<typeof ZodFastCheck> {
  let zfc = ZodFastCheck()
    .override(IsoTimestamp, isoTimestamps)
    .override(MetadataQuery, metadataQueries);
  const seen = new Set<ZodTypeAny>();
  const visit = (node: ZodTypeAny | undefined): void => {
    if (!node || seen.has(node) || node === IsoTimestamp || node === MetadataQuery) return;
    seen.add(node);
    const def = node._def as Record<string, unknown> & { typeName?: string };
    const child = (key: string) => visit(def[key] as ZodTypeAny | undefined);
    switch (def.typeName) {
      case 'ZodObject':
        for (const value of Object.values((node as unknown as { shape: object }).shape)) {
          visit(value as ZodTypeAny);
        }
        break;
      case 'ZodString': {
        const regex = (def.checks as Array<{ kind: string; regex?: RegExp }>).find(
          (check) => check.kind === 'regex',
        )?.regex;
        if (regex) {
          zfc = zfc.override(
            node,
            fc.stringMatching(regex).filter((value) => node.safeParse(value).success),
          );
        }
        break;
      }
      case 'ZodPipeline':
        child('in');
        child('out');
        zfc = zfc.override(
          node,
          zfc.inputOf(def.out as ZodTypeAny).filter((value) => node.safeParse(value).success),
        );
        break;
      case 'ZodUnion':
      case 'ZodDiscriminatedUnion':
        for (const option of def.options as Iterable<ZodTypeAny>) visit(option);
        break;
      case 'ZodArray':
        child('type');
        break;
      case 'ZodRecord':
        child('keyType');
        child('valueType');
        break;
      case 'ZodIntersection':
        child('left');
        child('right');
        break;
      case 'ZodEffects':
        child('schema');
        break;
      case 'ZodOptional':
      case 'ZodNullable':
      case 'ZodDefault':
      case 'ZodCatch':
      case 'ZodReadonly':
        child('innerType');
        break;
    }
  };
  visit(schema);
  return zfc;
}

/**
 * Arbitrary inputs of a schema, or `fallback` where zod-fast-check cannot derive one. A
 * top-level refinement (the owner-alias check) would make zod-fast-check filter almost every
 * value away, so values come from the unrefined shape and are then repaired: fields the schema
 * refuses are dropped until it accepts the value (or nothing more can be dropped).
 */
function inputsOf<T>(schema: ZodTypeAny | undefined, fallback: fc.Arbitrary<T>): fc.Arbitrary<T> {
  if (!schema) return fallback;
  try {
    const base = unrefined(schema);
    return generatorFor(base)
      .inputOf(base)
      .map((value) => repair(schema, value) as T);
  } catch {
    return fallback;
  }
}

/** Schema-valid inputs of one zod schema (an MCP tool's arguments, a body), as routes use them. */
export function schemaInputs(schema: ZodTypeAny): fc.Arbitrary<Record<string, unknown>> {
  return inputsOf<Record<string, unknown>>(schema, fc.constant({}));
}

function unrefined(schema: ZodTypeAny): ZodTypeAny {
  const def = schema._def as { typeName?: string; effect?: { type?: string }; schema?: ZodTypeAny };
  if (def.typeName === 'ZodEffects' && def.effect?.type === 'refinement' && def.schema) {
    return unrefined(def.schema);
  }
  return schema;
}

function repair(schema: ZodTypeAny, value: unknown): unknown {
  let current = value;
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const result = schema.safeParse(current);
    if (result.success) return current;
    const paths = result.error.issues.map((issue) => issue.path).filter((p) => p.length > 0);
    if (paths.length === 0) return current;
    current = structuredClone(current);
    for (const path of paths) deleteAt(current, path);
  }
  return current;
}

function deleteAt(target: unknown, path: Array<string | number>): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (typeof node !== 'object' || node === null) return;
    node = (node as Record<string | number, unknown>)[key];
  }
  if (typeof node === 'object' && node !== null && !Array.isArray(node)) {
    delete (node as Record<string | number, unknown>)[path[path.length - 1]!];
  }
}

/** Query values travel as strings; objects (the JSON-encoded filters) as JSON. */
function queryValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Schema-valid inputs of a route (as far as zod-fast-check can generate them: refinements are
 * filters, so a tight one may make it give up; the caller gets that error). Path parameters
 * without a schema are UUIDs.
 */
export function validInputs(route: AppRoute): fc.Arbitrary<RouteInput> {
  const names = pathParamNames(route);
  const paramsSchema = zodSchema(route.pathParams);
  const params: fc.Arbitrary<Record<string, unknown>> = paramsSchema
    ? inputsOf(paramsSchema, fc.constant({}))
    : fc.record(Object.fromEntries(names.map((name) => [name, fc.uuid()])));
  const query = inputsOf<Record<string, unknown> | undefined>(
    zodSchema(route.query),
    fc.constant({}),
  );
  const bodySchema = 'body' in route ? zodSchema(route.body) : undefined;
  const body = bodySchema ? inputsOf<unknown>(bodySchema, fc.constant({})) : fc.constant(undefined);
  const headers = inputsOf<Record<string, unknown> | undefined>(
    zodSchema(route.headers),
    fc.constant({}),
  );
  return fc.record({ params, query, body, headers }).map((input) => ({
    params: Object.fromEntries(
      names.map((name) => [name, String(input.params[name] ?? crypto.randomUUID())]),
    ),
    query: dropUndefined(input.query ?? {}),
    body: input.body,
    headers: Object.fromEntries(
      Object.entries(dropUndefined(input.headers ?? {})).map(([k, v]) => [k, String(v)]),
    ),
  }));
}

function dropUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

/**
 * `encodeURIComponent`, except that a lone surrogate (which it refuses) is sent as the three
 * bytes UTF-8 would give its code point: the bytes a careless client puts on the wire.
 */
export function encodeSegment(value: string): string {
  let out = '';
  for (const char of value) {
    const unit = char.charCodeAt(0);
    if (char.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      const bytes = [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)];
      out += bytes.map((byte) => `%${byte.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(char);
    }
  }
  return out;
}

/** The route's path with parameters substituted (percent-encoded) and the query appended. */
export function routeUrl(route: AppRoute, input: Pick<RouteInput, 'params' | 'query'>): string {
  const path = route.path.replace(/:(\w+)/g, (_, name: string) =>
    encodeSegment(input.params[name] ?? ''),
  );
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(input.query)) {
    if (value !== undefined) search.append(key, queryValue(value));
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/** What the test holds to authenticate as each kind of route asks. */
export interface Credentials {
  apiKey?: string;
  adminToken?: string;
  /** A dashboard session: its cookie pair (`svc_dash_session=...`) and CSRF token. */
  session?: { cookie: string; csrf: string };
  /** An identity-provider token for the routes that take one in the body. */
  dashboardToken?: string;
}

/** Headers that authenticate a request to `entry`, and body fields for token-in-body routes. */
export function authFor(
  entry: ContractRoute,
  credentials: Credentials,
): { headers: Record<string, string>; body: Record<string, unknown> } {
  const headers: Record<string, string> = {};
  const body: Record<string, unknown> = {};
  switch (entry.auth) {
    case 'api_key_or_session':
      if (credentials.apiKey) headers.authorization = `Bearer ${credentials.apiKey}`;
      break;
    case 'admin_token':
      if (credentials.adminToken) headers['x-admin-token'] = credentials.adminToken;
      break;
    case 'dashboard_session':
      if (credentials.session) {
        headers.cookie = credentials.session.cookie;
        headers['x-csrf-token'] = credentials.session.csrf;
      }
      break;
    case 'dashboard_token':
      if (credentials.dashboardToken) body.access_token = credentials.dashboardToken;
      break;
    case 'public':
    case 'payment_callback':
      break;
  }
  return { headers, body };
}

/** Extra raw request parts junk tests use beyond the schema's own. */
export interface RawParts {
  /** Sent as the body verbatim (already serialised), with `contentType`. */
  rawBody?: string;
  contentType?: string;
  /** Appended to the URL as is (no encoding), after any query built from the input. */
  rawQuery?: string;
}

/**
 * Sends one request to `entry` on `app` (anything supertest accepts: an Express app or a server)
 * with the route's credentials. A token-in-body route gets its token merged into an object body.
 */
export function sendRoute(
  app: Parameters<typeof request>[0],
  entry: ContractRoute,
  input: RouteInput,
  credentials: Credentials = {},
  raw: RawParts = {},
): request.Test {
  const { route } = entry;
  const auth = authFor(entry, credentials);
  let url = routeUrl(route, input);
  if (raw.rawQuery !== undefined) url += (url.includes('?') ? '&' : '?') + raw.rawQuery;
  const agent = request(app);
  const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
  let test = agent[method](url);
  for (const [name, value] of Object.entries({ ...input.headers, ...auth.headers })) {
    test = test.set(name, value);
  }
  if (raw.rawBody !== undefined) {
    return test.set('content-type', raw.contentType ?? 'application/json').send(raw.rawBody);
  }
  let body = input.body;
  if (Object.keys(auth.body).length > 0 && isPlainObject(body)) body = { ...body, ...auth.body };
  if (body === undefined) return test;
  if (route.method !== 'GET' && 'contentType' in route) {
    if (route.contentType === 'application/x-www-form-urlencoded' && isPlainObject(body)) {
      const form = new URLSearchParams();
      for (const [key, value] of Object.entries(body)) form.append(key, queryValue(value));
      return test.type('form').send(form.toString());
    }
  }
  return test.set('content-type', 'application/json').send(JSON.stringify(body));
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The statuses a route declares (its own and the router's common ones). */
export function declaredStatuses(route: AppRoute): number[] {
  return Object.keys(route.responses).map(Number);
}

/** The declared body schema of a route's response with this status, if it declares one. */
export function responseSchema(route: AppRoute, status: number): ZodTypeAny | undefined {
  const declared = (route.responses as Record<number, unknown>)[status];
  if (declared === undefined) return undefined;
  // ts-rest's c.otherResponse({ contentType, body }) wraps the schema.
  if (typeof declared === 'object' && declared !== null && 'body' in declared) {
    return zodSchema((declared as { body: unknown }).body);
  }
  return zodSchema(declared);
}
