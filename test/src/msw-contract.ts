/**
 * msw handlers derived from the contract: one per route (every route the contract walk finds, so
 * a route added to the contract gets one without touching this file), answering with a
 * schema-valid body generated from the route's declared response schema for the status the test
 * asks for. The client runs against them (test/contract/client.test.ts), so client and contract
 * cannot drift.
 */
import { ERROR_STATUS, IsoTimestamp, type ErrorCode } from '@mnemo/contract';
import type { AppRoute } from '@ts-rest/core';
import fc from 'fast-check';
import { http, HttpResponse, type HttpHandler } from 'msw';
import type { ZodTypeAny } from 'zod';
import { ZodFastCheck } from 'zod-fast-check';
import {
  declaredResponse,
  declaredStatuses,
  walkContract,
  type NamedRoute,
} from './response-check.js';

/** ts-rest `/v1/memories/:id` → msw `<base>/v1/memories/:id` (the same `:param` syntax). */
export function mswPath(baseUrl: string, route: AppRoute): string {
  return `${baseUrl.replace(/\/+$/, '')}${route.path}`;
}

/** Dates as the contract's timestamp fields carry them, within a plausible window. */
const isoTimestamps = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2090-01-01T00:00:00Z') })
  .map((date) => date.toISOString());

/**
 * zod-fast-check, with the contract's timestamp and regex strings drawn directly: as filters
 * (what zod-fast-check makes of a refinement or a regex) they would reject almost every value.
 */
function arbitraryOf(schema: ZodTypeAny): fc.Arbitrary<unknown> {
  let zfc = ZodFastCheck().override(IsoTimestamp, isoTimestamps);
  const seen = new Set<ZodTypeAny>();
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || !('_def' in node)) return;
    const schemaNode = node as ZodTypeAny;
    if (seen.has(schemaNode) || schemaNode === IsoTimestamp) return;
    seen.add(schemaNode);
    const def = schemaNode._def as Record<string, unknown> & { typeName?: string };
    if (def.typeName === 'ZodString') {
      const regex = (def.checks as Array<{ kind: string; regex?: RegExp }>).find(
        (check) => check.kind === 'regex',
      )?.regex;
      if (regex) {
        zfc = zfc.override(
          schemaNode,
          fc.stringMatching(regex).filter((value) => schemaNode.safeParse(value).success),
        );
      }
      return;
    }
    if (def.typeName === 'ZodObject') {
      Object.values((schemaNode as unknown as { shape: object }).shape).forEach(visit);
      return;
    }
    // Every other wrapper: its child schemas sit in its definition.
    for (const value of Object.values(def)) {
      if (Array.isArray(value)) value.forEach(visit);
      else if (value instanceof Map) [...value.values()].forEach(visit);
      else visit(value);
    }
  };
  visit(schema);
  return zfc.inputOf(schema);
}

const arbitraries = new WeakMap<ZodTypeAny, fc.Arbitrary<unknown>>();

/**
 * A schema-valid body as JSON on the wire, reproducible from `seed`: values are drawn one at a
 * time (a value that does not survive JSON, or that a refinement refuses, is redrawn).
 */
export function generateBody(schema: ZodTypeAny, seed: number): unknown {
  let arbitrary = arbitraries.get(schema);
  if (!arbitrary) {
    arbitrary = arbitraryOf(schema);
    arbitraries.set(schema, arbitrary);
  }
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const [candidate] = fc.sample(arbitrary, { numRuns: 1, seed: seed + attempt });
    if (candidate === undefined) continue;
    const wire = JSON.parse(JSON.stringify(candidate)) as unknown;
    if (schema.safeParse(wire).success) return wire;
  }
  throw new Error('no schema-valid JSON body in 50 generated values');
}

/** An error code the server answers with this status, for a generated envelope. */
export function codeForStatus(status: number): ErrorCode | undefined {
  return (Object.entries(ERROR_STATUS) as Array<[ErrorCode, number]>).find(
    ([code, codeStatus]) => codeStatus === status && code !== 'INVALID_OWNER_ID',
  )?.[0];
}

/** One request a derived handler answered. */
export interface MockCall {
  route: NamedRoute;
  status: number;
  request: Request;
  body: unknown;
  /** Where the request breaks the route's declared path, query or body schema. */
  problems: string[];
}

/** The request held to the route's own schemas, as the server would parse it. */
async function requestProblems(
  route: AppRoute,
  request: Request,
  params: Record<string, string | readonly string[] | undefined>,
): Promise<string[]> {
  const problems: string[] = [];
  const check = (part: string, schema: unknown, value: unknown) => {
    const zod = asZod(schema);
    if (!zod) return;
    const result = zod.safeParse(value);
    if (!result.success) {
      for (const issue of result.error.issues.slice(0, 5)) {
        problems.push(`${part} ${issue.path.join('.') || '(whole)'}: ${issue.message}`);
      }
    }
  };
  check('path', route.pathParams, params);
  const url = new URL(request.url);
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? values[0]! : values;
  }
  check('query', route.query, query);
  if ('body' in route && asZod(route.body)) {
    const text = await request.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : (JSON.parse(text) as unknown);
    } catch {
      problems.push('body is not JSON');
    }
    check('body', route.body, body);
  }
  return problems;
}

function asZod(value: unknown): ZodTypeAny | undefined {
  return typeof value === 'object' && value !== null && 'safeParse' in value
    ? (value as ZodTypeAny)
    : undefined;
}

/**
 * The derived handlers and what they answer. By default a route answers its lowest declared 2xx
 * (its lowest declared status when it declares none); {@link ContractMock.answer} picks another.
 */
export class ContractMock {
  readonly routes: NamedRoute[];
  readonly handlers: HttpHandler[];
  readonly calls: MockCall[] = [];
  private readonly statuses = new Map<string, number>();
  private readonly bodies = new Map<string, unknown>();

  constructor(
    readonly baseUrl: string,
    { seed = 18, routes = walkContract() }: { seed?: number; routes?: NamedRoute[] } = {},
  ) {
    this.routes = routes;
    // Literal segments before parameters (`/v1/memories/conversation` before `/v1/memories/:id`),
    // as the server mounts them.
    const ordered = [...routes].sort((a, b) => paramCount(a.route) - paramCount(b.route));
    this.handlers = ordered.map((named, index) => this.handlerFor(named, seed + index));
  }

  /** Makes the route named `name` (`memories.getMemory`) answer `status` until {@link reset}. */
  answer(name: string, status: number): void {
    const named = this.routes.find((route) => route.name === name);
    if (!named) throw new Error(`no contract route ${name}`);
    if (!declaredStatuses(named.route).includes(status)) {
      throw new Error(`${name} does not declare ${status}`);
    }
    this.statuses.set(name, status);
  }

  reset(): void {
    this.statuses.clear();
    this.calls.length = 0;
  }

  /** The status a route answers now. */
  statusOf(named: NamedRoute): number {
    const chosen = this.statuses.get(named.name);
    if (chosen !== undefined) return chosen;
    const declared = declaredStatuses(named.route);
    return declared.find((status) => status >= 200 && status < 300) ?? declared[0]!;
  }

  private handlerFor(named: NamedRoute, seed: number): HttpHandler {
    const method = named.route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    return http[method](mswPath(this.baseUrl, named.route), async ({ request, params }) => {
      const status = this.statusOf(named);
      const body = this.bodyFor(named, status, seed);
      const problems = await requestProblems(named.route, request.clone(), params);
      this.calls.push({ route: named, status, request, body, problems });
      if (body === undefined) return new HttpResponse(null, { status });
      return HttpResponse.json(body as Parameters<typeof HttpResponse.json>[0], {
        status,
        headers: { 'x-request-id': `mock-${seed}-${status}` },
      });
    });
  }

  /** A schema-valid body; an error envelope carries a code the server uses for that status. */
  bodyFor(named: NamedRoute, status: number, seed: number): unknown {
    const key = `${named.name} ${status} ${seed}`;
    if (!this.bodies.has(key)) this.bodies.set(key, this.generate(named, status, seed));
    return this.bodies.get(key);
  }

  private generate(named: NamedRoute, status: number, seed: number): unknown {
    const declared = declaredResponse(named.route, status);
    if (declared.kind !== 'schema') return undefined;
    const body = generateBody(declared.schema, seed * 1000 + status);
    const code = codeForStatus(status);
    if (status >= 400 && code && isEnvelope(body)) {
      const fixed = { ...body, error: { ...body.error, code } };
      if (declared.schema.safeParse(fixed).success) return fixed;
    }
    return body;
  }
}

function paramCount(route: AppRoute): number {
  return (route.path.match(/:\w+/g) ?? []).length;
}

function isEnvelope(value: unknown): value is { error: Record<string, unknown> } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { error?: unknown }).error === 'object' &&
    (value as { error?: unknown }).error !== null
  );
}
