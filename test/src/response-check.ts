/**
 * Every response an end-to-end suite receives, held to the contract: a route's status must be one
 * it declares (its own or the router's common responses) and its JSON body must parse with the
 * declared schema. Paths outside the contract are held to what they should be (the error envelope
 * for 404/405, JSON-RPC on the MCP paths, the OpenAPI document). The contract is walked at every
 * check, so routes added to it are covered without touching this file.
 *
 * Deliberately light (no fast-check, no supertest): every server test file loads it through
 * `server/test/support/app.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { contract, ErrorEnvelope, isOperatorRoute } from '@mnemo/contract';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import type { ZodTypeAny } from 'zod';

/** One contract route with its dotted key (`memories.createMemory`). */
export interface NamedRoute {
  name: string;
  route: AppRoute;
}

/** Every route of a (nested) router with its dotted key, in declaration order. */
export function walkContract(router: AppRouter = contract, prefix = ''): NamedRoute[] {
  return Object.entries(router).flatMap(([key, entry]) => {
    const name = prefix ? `${prefix}.${key}` : key;
    if (isAppRoute(entry)) return [{ name, route: entry }];
    return walkContract(entry as AppRouter, name);
  });
}

/** A response as the server sent it. */
export interface RecordedResponse {
  method: string;
  /** Path and query as requested. */
  url: string;
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string | string[] | number | undefined>;
  body: Buffer;
  /** The body was longer than the recorder keeps (an event stream, a large asset). */
  truncated?: boolean;
}

/** The outcome of one check: `problem` set means the response breaks the contract. */
export interface CheckResult {
  /** The contract route, or the kind of path outside the contract, the response was held to. */
  subject: string;
  problem?: string;
  /** Why the body was not checked (HTML, an event stream, HEAD, ...). */
  skipped?: string;
}

const MCP_PATHS = ['/mcp', '/v1/mcp'];
const CONSOLE_PATH = '/console';
const OPENAPI_PATH = '/v1/openapi.json';

function pathPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  // Express routes are case-insensitive and accept one trailing slash, as this matches.
  return new RegExp(`^${source}/?$`, 'i');
}

/**
 * The contract routes whose path matches, the most specific first: a literal segment
 * (`/v1/memories/conversation`) beats a parameter (`/v1/memories/:id`), as Express's mount order
 * makes it here.
 */
export function routesForPath(path: string, routes = walkContract()): NamedRoute[] {
  const parameters = (route: AppRoute) => (route.path.match(/:\w+/g) ?? []).length;
  return routes
    .filter(({ route }) => pathPattern(route.path).test(path))
    .sort((a, b) => parameters(a.route) - parameters(b.route));
}

/** The route a request reaches: HEAD is answered by the GET route. */
export function matchRoute(
  method: string,
  path: string,
  routes = walkContract(),
): NamedRoute | undefined {
  const wanted = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  return routesForPath(path, routes).find(({ route }) => route.method === wanted);
}

/** What a route declares for a status: a zod schema, no body, or nothing (undeclared). */
export type DeclaredResponse =
  | { kind: 'schema'; schema: ZodTypeAny; contentType: string }
  | { kind: 'no-body' }
  | { kind: 'undeclared' };

export function declaredResponse(route: AppRoute, status: number): DeclaredResponse {
  const responses = route.responses as Record<number, unknown>;
  if (!(status in responses)) return { kind: 'undeclared' };
  const declared = responses[status];
  // c.otherResponse({ contentType, body }) wraps the schema with its content type.
  if (typeof declared === 'object' && declared !== null && 'contentType' in declared) {
    const other = declared as { contentType: string; body: unknown };
    const schema = asZod(other.body);
    return schema
      ? { kind: 'schema', schema, contentType: other.contentType }
      : { kind: 'no-body' };
  }
  const schema = asZod(declared);
  return schema ? { kind: 'schema', schema, contentType: 'application/json' } : { kind: 'no-body' };
}

function asZod(value: unknown): ZodTypeAny | undefined {
  return typeof value === 'object' && value !== null && 'safeParse' in value
    ? (value as ZodTypeAny)
    : undefined;
}

export function declaredStatuses(route: AppRoute): number[] {
  return Object.keys(route.responses)
    .map(Number)
    .sort((a, b) => a - b);
}

function header(response: RecordedResponse, name: string): string | undefined {
  const value = response.headers[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

function mediaType(response: RecordedResponse): string {
  return (header(response, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

type Parsed =
  { kind: 'empty' } | { kind: 'json'; value: unknown } | { kind: 'bad-json'; error: string };

function parseJson(response: RecordedResponse): Parsed {
  const text = response.body.toString('utf8');
  if (text.length === 0) return { kind: 'empty' };
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch (error) {
    return { kind: 'bad-json', error: (error as Error).message };
  }
}

/** The first few zod issues, as `path: message`. */
function issues(result: {
  error: { issues: Array<{ path: Array<string | number>; message: string }> };
}): string {
  const listed = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`);
  const more = result.error.issues.length - listed.length;
  return listed.join('; ') + (more > 0 ? `; and ${more} more` : '');
}

function isJsonType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

/**
 * The spec's error envelope, with `request_id` equal to the `x-request-id` header and a
 * `Retry-After` on RATE_LIMITED. `undefined` when it is one.
 */
function envelopeProblem(response: RecordedResponse): string | undefined {
  if (!isJsonType(mediaType(response))) {
    return `an error answered ${mediaType(response) || 'without a content type'}, not the JSON error envelope`;
  }
  const parsed = parseJson(response);
  if (parsed.kind !== 'json') return `an error without a JSON envelope body (${parsed.kind})`;
  const result = ErrorEnvelope.safeParse(parsed.value);
  if (!result.success) return `the error body is not the envelope: ${issues(result)}`;
  const requestId = header(response, 'x-request-id');
  if (result.data.request_id !== requestId) {
    return `envelope request_id ${JSON.stringify(result.data.request_id)} differs from x-request-id ${JSON.stringify(requestId)}`;
  }
  if (result.data.error.code === 'RATE_LIMITED' && header(response, 'retry-after') === undefined) {
    return 'RATE_LIMITED without a Retry-After header';
  }
  return undefined;
}

/** A JSON-RPC 2.0 message (or batch) as the MCP transport answers. */
function isJsonRpc(value: unknown): boolean {
  const one = (message: unknown) =>
    typeof message === 'object' &&
    message !== null &&
    (message as { jsonrpc?: unknown }).jsonrpc === '2.0' &&
    ('result' in message || 'error' in message || 'method' in message);
  return Array.isArray(value) ? value.length > 0 && value.every(one) : one(value);
}

/** Holds one response to the contract (or, outside it, to what that path should answer). */
export function checkResponse(response: RecordedResponse, routes = walkContract()): CheckResult {
  const path = response.url.split('?')[0] ?? '';
  const method = response.method.toUpperCase();
  const base = (subject: string, problem?: string, skipped?: string): CheckResult => ({
    subject,
    ...(problem ? { problem } : {}),
    ...(skipped ? { skipped } : {}),
  });
  if (header(response, 'x-request-id') === undefined) {
    return base(path, 'no x-request-id header (the spec: each response carries one)');
  }

  const lower = path.toLowerCase();
  if (MCP_PATHS.some((mcp) => path === mcp || path === `${mcp}/`))
    return checkMcp(response, method);
  if (lower === CONSOLE_PATH || lower.startsWith(`${CONSOLE_PATH}/`)) return checkConsole(response);
  if (path === '/' && (method === 'GET' || method === 'HEAD')) return checkRoot(response, method);

  const candidates = routesForPath(path, routes);
  if (candidates.length === 0) {
    if (lower === OPENAPI_PATH && (method === 'GET' || method === 'HEAD')) {
      return checkOpenApi(response, method);
    }
    return checkOutside(response, method, 'a path outside the contract');
  }
  const match = matchRoute(method, path, routes);
  if (!match) return checkOutside(response, method, `${path} with a method it does not declare`);
  return checkRoute(response, match, method);
}

function checkRoute(
  response: RecordedResponse,
  { name, route }: NamedRoute,
  method: string,
): CheckResult {
  const subject = `${name} (${route.method} ${route.path})`;
  const declared = declaredResponse(route, response.status);
  if (declared.kind === 'undeclared') {
    return {
      subject,
      problem: `status ${response.status} is not declared (declared: ${declaredStatuses(route).join(', ')})`,
    };
  }
  if (method === 'HEAD') return { subject, skipped: 'HEAD has no body' };
  if (response.status >= 400) {
    const problem = envelopeProblem(response);
    if (problem) return { subject, problem };
  }
  if (declared.kind === 'no-body') {
    return response.body.length === 0
      ? { subject }
      : { subject, problem: `status ${response.status} declares no body but one was sent` };
  }
  const type = mediaType(response);
  if (
    type !== declared.contentType.toLowerCase() &&
    !(isJsonType(type) && isJsonType(declared.contentType))
  ) {
    return {
      subject,
      problem: `content type ${type || '(none)'}, declared ${declared.contentType}`,
    };
  }
  if (!isJsonType(type)) return { subject, skipped: `${type} body (not JSON)` };
  const parsed = parseJson(response);
  if (parsed.kind !== 'json') {
    return {
      subject,
      problem: `a JSON response without a JSON body (${parsed.kind === 'bad-json' ? parsed.error : 'empty'})`,
    };
  }
  const result = declared.schema.safeParse(parsed.value);
  return result.success
    ? { subject }
    : { subject, problem: `body does not match the ${response.status} schema: ${issues(result)}` };
}

/** Outside the contract only errors may answer, each in the envelope (405 with Allow; OPTIONS 204). */
function checkOutside(response: RecordedResponse, method: string, subject: string): CheckResult {
  if (method === 'OPTIONS' && response.status === 204)
    return { subject, skipped: 'CORS preflight' };
  if (response.status < 400) {
    return {
      subject,
      problem: `answered ${response.status}; only an error (404, 405, ...) may answer here`,
    };
  }
  if (response.status === 405 && header(response, 'allow') === undefined) {
    return { subject, problem: '405 without an Allow header' };
  }
  if (method === 'HEAD') return { subject, skipped: 'HEAD has no body' };
  const problem = envelopeProblem(response);
  return problem ? { subject, problem } : { subject };
}

function checkOpenApi(response: RecordedResponse, method: string): CheckResult {
  const subject = `GET ${OPENAPI_PATH}`;
  if (response.status >= 400) return checkOutside(response, method, subject);
  if (response.status !== 200) return { subject, problem: `answered ${response.status}, not 200` };
  if (method === 'HEAD') return { subject, skipped: 'HEAD has no body' };
  const parsed = parseJson(response);
  const document = parsed.kind === 'json' ? (parsed.value as Record<string, unknown>) : undefined;
  const ok =
    typeof document?.openapi === 'string' &&
    typeof document.paths === 'object' &&
    document.paths !== null;
  return ok ? { subject } : { subject, problem: 'not an OpenAPI document ({openapi, paths})' };
}

/**
 * MCP paths: JSON-RPC (errors as JSON-RPC errors or, from the app's own checks before the MCP
 * handler, the envelope); the landing page and the event stream are not JSON.
 */
function checkMcp(response: RecordedResponse, method: string): CheckResult {
  const subject = `MCP ${method}`;
  const type = mediaType(response);
  if (type === 'text/event-stream') return { subject, skipped: 'event stream' };
  if (type === 'text/html') {
    return method === 'GET' && response.status === 200
      ? { subject, skipped: 'HTML landing page' }
      : { subject, problem: `HTML answered ${method} with ${response.status}` };
  }
  if (method === 'OPTIONS' && response.status === 204)
    return { subject, skipped: 'CORS preflight' };
  const parsed = parseJson(response);
  if (parsed.kind === 'empty') {
    // 202 accepts a notification or response; DELETE closing a session may answer 200 empty.
    return response.status < 300 ? { subject } : { subject, problem: `empty ${response.status}` };
  }
  if (parsed.kind === 'bad-json') return { subject, problem: `body is not JSON: ${parsed.error}` };
  if (isJsonRpc(parsed.value)) return { subject };
  if (response.status >= 400) {
    const problem = envelopeProblem(response);
    return problem ? { subject, problem: `neither JSON-RPC nor ${problem}` } : { subject };
  }
  return { subject, problem: `a ${response.status} body that is not JSON-RPC` };
}

/** The console: static HTML and assets, a redirect, a plain 503 page when it is not built. */
function checkConsole(response: RecordedResponse): CheckResult {
  const subject = 'console';
  const type = mediaType(response);
  if (response.status >= 400 && isJsonType(type)) {
    const problem = envelopeProblem(response);
    return problem ? { subject, problem } : { subject };
  }
  if (response.status === 503 && type === 'text/plain')
    return { subject, skipped: 'console not built' };
  if (response.status >= 400) return { subject, problem: `${response.status} answered as ${type}` };
  return { subject, skipped: 'static console files (HTML, scripts, styles)' };
}

/** `GET /` points to the console: a redirect for a browser, a small JSON for anything else. */
function checkRoot(response: RecordedResponse, method: string): CheckResult {
  const subject = 'GET / (pointer to the console)';
  if (response.status === 302) {
    return header(response, 'location') === `${CONSOLE_PATH}/`
      ? { subject }
      : { subject, problem: `redirects to ${header(response, 'location')}, not ${CONSOLE_PATH}/` };
  }
  if (response.status >= 400) return checkOutside(response, method, subject);
  if (method === 'HEAD') return { subject, skipped: 'HEAD has no body' };
  const parsed = parseJson(response);
  const body = parsed.kind === 'json' ? (parsed.value as Record<string, unknown>) : undefined;
  return body?.console === `${CONSOLE_PATH}/`
    ? { subject }
    : { subject, problem: `answered ${response.status} without a link to ${CONSOLE_PATH}/` };
}

/** Routes the published contract covers (not the operator routes). */
export function publishedRoutes(routes = walkContract()): NamedRoute[] {
  return routes.filter(({ route }) => !isOperatorRoute(route));
}

/** A response that broke the contract, with the test that made the request. */
export interface Violation {
  test: string | undefined;
  request: string;
  status: number;
  subject: string;
  problem: string;
}

/** Bodies longer than this are not kept (event streams, assets); their check is skipped. */
const MAX_RECORDED_BYTES = 4 * 1024 * 1024;

type Handler = (req: IncomingMessage, res: ServerResponse, ...rest: unknown[]) => unknown;

/**
 * Records and checks every response of the handlers it wraps. A violation is kept until
 * {@link ResponseChecker.takeViolations} is called (the test support does it after each test and
 * fails that test); checks run as the response ends, before the client can read it.
 */
export class ResponseChecker {
  private violations: Violation[] = [];
  /** How many responses were checked, and skipped bodies by reason. */
  readonly stats = { checked: 0, skipped: new Map<string, number>() };

  constructor(private readonly currentTest: () => string | undefined = () => undefined) {}

  /**
   * The handler (an Express app) behind a proxy that records each response: calls and property
   * reads go to the original, so `app.listen`, `request(app)` and `createServer(app)` all work.
   */
  wrap<T extends Handler>(handler: T): T {
    return new Proxy(handler, {
      apply: (target, thisArg, args: unknown[]) => {
        const [req, res] = args as [IncomingMessage, ServerResponse];
        this.observe(req, res);
        return Reflect.apply(target, thisArg, args);
      },
    });
  }

  private observe(req: IncomingMessage, res: ServerResponse): void {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const test = this.currentTest();
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let done = false;
    const keep = (chunk: unknown, encoding: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const buffer = Buffer.isBuffer(chunk)
        ? chunk
        : chunk instanceof Uint8Array
          ? Buffer.from(chunk)
          : Buffer.from(
              String(chunk),
              typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8',
            );
      if (size + buffer.length > MAX_RECORDED_BYTES) truncated = true;
      else chunks.push(buffer);
      size += buffer.length;
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      keep(chunk, rest[0]);
      return write(chunk, ...rest);
    }) as ServerResponse['write'];
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (!done) {
        done = true;
        keep(chunk, rest[0]);
        this.check(test, {
          method,
          url,
          status: res.statusCode,
          headers: res.getHeaders(),
          body: Buffer.concat(chunks),
          truncated,
        });
      }
      return end(chunk, ...rest);
    }) as ServerResponse['end'];
  }

  /** Checks one recorded response, keeping a violation. */
  check(test: string | undefined, response: RecordedResponse): CheckResult {
    let result: CheckResult;
    if (response.truncated && mediaType(response) !== 'text/event-stream') {
      result = { subject: response.url, skipped: `body over ${MAX_RECORDED_BYTES} bytes` };
    } else {
      try {
        result = checkResponse(response);
      } catch (error) {
        result = { subject: response.url, problem: `the check itself failed: ${String(error)}` };
      }
    }
    this.stats.checked += 1;
    if (result.skipped) {
      this.stats.skipped.set(result.skipped, (this.stats.skipped.get(result.skipped) ?? 0) + 1);
    }
    if (result.problem) {
      this.violations.push({
        test,
        request: `${response.method} ${response.url}`,
        status: response.status,
        subject: result.subject,
        problem: result.problem,
      });
    }
    return result;
  }

  /** The violations since the last call, and forgets them. */
  takeViolations(): Violation[] {
    const taken = this.violations;
    this.violations = [];
    return taken;
  }
}

/** One line per violation, for a failing test's message. */
export function describeViolations(violations: Violation[]): string {
  const lines = violations.map(
    (v) =>
      `- ${v.request} → ${v.status} [${v.subject}]: ${v.problem}${v.test ? ` (during "${v.test}")` : ''}`,
  );
  return `${violations.length} response(s) broke the contract:\n${lines.join('\n')}`;
}
