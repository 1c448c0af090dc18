/**
 * Hand-written adversarial generators: the inputs that broke the service before (lone
 * surrogates, NUL, out-of-range dates and numbers, unbounded ids) and their relatives, as
 * fast-check arbitraries, plus mutations that plant them in an otherwise valid request.
 */
import fc from 'fast-check';
import { isPlainObject, type RawParts, type RouteInput } from './routes.js';

/** Strings PostgreSQL cannot store as given, or that look like something they are not. */
export const junkString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '\ud800',
    'a\udfffb',
    '\udbff\udbff',
    '\ude00\ud83d',
    'nul\u0000byte',
    '\u0000',
    '',
    ' ',
    '\t\r\n',
    '__proto__',
    'constructor',
    'prototype',
    'NaN',
    '-Infinity',
    '1e999',
    '-0',
    'null',
    'undefined',
    'true',
    "' OR 1=1 --",
    '%00',
    '%ED%A0%80',
    '../../etc/passwd',
    '\u202etxt.exe',
    '\ufeffbom',
    '😀'.repeat(300),
    'é'.repeat(3000),
    '0000-01-01',
    '+275760-09-13T00:00:00.000Z',
  ),
  fc.integer({ min: 257, max: 12_000 }).map((length) => 'x'.repeat(length)),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme-composite', maxLength: 20 }),
  // Strings of raw UTF-16 code units: lone surrogates anywhere.
  fc
    .array(fc.integer({ min: 0xd700, max: 0xe000 }), { minLength: 1, maxLength: 8 })
    .map((units) => String.fromCharCode(...units)),
);

/** Numbers at and past every edge: negative, fractional, huge, beyond safe integers. */
export const junkNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    -1,
    0,
    -0,
    0.5,
    1.5,
    2 ** 31,
    2 ** 32 + 1,
    2 ** 53,
    2 ** 63,
    1e21,
    1e300,
    -1e300,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    Number.MAX_SAFE_INTEGER,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Dates that pass a loose ISO check but not a database, or are not dates at all. */
export const junkDate: fc.Arbitrary<string> = fc.constantFrom(
  '0000-01-01',
  '0000-12-31T23:59:59Z',
  '0001-01-01T00:00:00+01:00',
  '9999-12-31T23:59:59-01:00',
  '10000-01-01',
  '+275760-09-13T00:00:00.000Z',
  '-271821-04-20T00:00:00Z',
  '275760-09-13',
  '2026-02-30',
  '2026-13-01',
  '2026-00-10',
  '2026-01-01T24:00:00Z',
  '2026-01-01T23:60:00Z',
  '2026-01-01T23:59:60Z',
  '2026-01-01T00:00:00+99:99',
  '2026-01-01T',
  '1970-01-01T00:00:00.0000000000001Z',
  '2026-1-1',
);

/** A value nested `depth` levels deep (arrays or objects). */
export function deep(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i += 1) value = kind === 'array' ? [value] : { a: value };
  return value;
}

/** Any JSON value of the wrong shape or size for a field. */
export const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: junkString },
  { weight: 2, arbitrary: junkNumber },
  { weight: 2, arbitrary: junkDate },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': '' }),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        () => deep(200, 'array'),
        () => deep(200, 'object'),
        () => Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, i])),
        () => Array.from({ length: 5000 }, (_, i) => i),
        () => JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}}'),
        () => ({ ['k\ud800']: 1, ['x'.repeat(5000)]: 'v' }),
      )
      .map((make) => make()),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Raw bodies a JSON parser or schema must refuse cleanly. */
export const junkRawBody: fc.Arbitrary<RawParts> = fc.oneof(
  fc
    .constantFrom(
      '{',
      '[]',
      'null',
      '"string"',
      '1e999',
      '{"a":1,"a":2}',
      '\ufeff{}',
      '{"text":"\\ud800"}',
      '{"__proto__":{"x":1}}',
      '['.repeat(100_000),
      `${'['.repeat(5000)}${']'.repeat(5000)}`,
      '{"a":"\u0000"}',
    )
    .map((rawBody) => ({ rawBody })),
  fc
    .constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json; charset=utf-16',
      'application/json; charset=latin1',
      'multipart/form-data; boundary=x',
      'application/json+junk',
    )
    .map((contentType) => ({ rawBody: '{"a":1}', contentType })),
);

/** Raw query strings: bad encodings, repeated and nested keys, oversize. */
export const junkRawQuery: fc.Arbitrary<string> = fc.constantFrom(
  'page=%ED%A0%80',
  'owner_id=%00',
  'owner_id=%ED%A0%80',
  'owner_id=%E0%A4%A',
  'page=1&page=2',
  'page[]=1',
  'owner_id[a][b][c]=1',
  'metadata=%7B',
  'metadata=%7B%22k%22%3A%22%5Cud800%22%7D',
  'metadata=%7B%22__proto__%22%3A%7B%22x%22%3A1%7D%7D',
  'start_time=0000-01-01',
  'end_time=%2B275760-09-13T00%3A00%3A00Z',
  'page=99999999999999999999',
  'page_size=-1',
  'page=1e300',
  `owner_id=${'o'.repeat(5000)}`,
  'limit=NaN',
  'workspace_id=not-a-uuid',
);

/** Header values an HTTP client can send (latin1) that a server should shrug off or refuse. */
export const junkHeaders: fc.Arbitrary<Record<string, string>> = fc.oneof(
  fc.record({ 'x-request-id': fc.constantFrom('', ' ', 'a'.repeat(5000), '../x', 'ÿÿÿ') }),
  fc.record({ 'x-safety-pii-scan': fc.constantFrom('2', 'yes', 'ÿ', '') }),
  fc.record({ 'x-save-history': fc.constantFrom('maybe', '1'.repeat(1000)) }),
  fc.record({ 'idempotency-key': fc.constantFrom('', 'x', 'k'.repeat(4000)) }),
  fc.record({ 'content-length': fc.constant('abc') }),
  fc.record({ cookie: fc.constantFrom('svc_dash_session=%ED%A0%80', '=;=;', 'a'.repeat(3000)) }),
);

/** One way of spoiling a valid request. */
export type Mutation =
  | {
      kind: 'field';
      pathSeed: number;
      key: string | undefined;
      value: unknown;
      where: 'body' | 'query';
    }
  | { kind: 'replace-body'; value: unknown }
  | { kind: 'drop-field'; pathSeed: number }
  | { kind: 'param'; value: string }
  | { kind: 'raw-body'; raw: RawParts }
  | { kind: 'raw-query'; query: string }
  | { kind: 'headers'; headers: Record<string, string> };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('field' as const),
      pathSeed: fc.nat(),
      // An existing field (undefined) most of the time, sometimes one no schema names.
      key: fc.option(fc.oneof(junkString, fc.constantFrom('__proto__', 'constructor')), {
        freq: 4,
        nil: undefined,
      }),
      value: junkValue,
      where: fc.constantFrom('body' as const, 'query' as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('replace-body' as const), value: junkValue }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('drop-field' as const), pathSeed: fc.nat() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('param' as const), value: junkString }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('raw-body' as const), raw: junkRawBody }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('raw-query' as const), query: junkRawQuery }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('headers' as const), headers: junkHeaders }),
  },
);

/** Every path to a value inside a JSON-like value (objects and arrays), the root excluded. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) {
    return value.flatMap((item, index) => [[...prefix, index], ...paths(item, [...prefix, index])]);
  }
  if (isPlainObject(value)) {
    return Object.entries(value).flatMap(([key, item]) => [
      [...prefix, key],
      ...paths(item, [...prefix, key]),
    ]);
  }
  return [];
}

function setAt(target: unknown, path: Array<string | number>, value: unknown): void {
  let node = target as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  // defineProperty: a key named `__proto__` becomes an own field, as JSON.parse would make it.
  Object.defineProperty(node, path[path.length - 1]!, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

function deleteAt(target: unknown, path: Array<string | number>): void {
  let node = target as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (Array.isArray(node)) node.splice(Number(last), 1);
  else delete node[last];
}

/** The request `mutation` makes of a valid `input`, with the raw parts it needs. */
export function applyMutation(
  input: RouteInput,
  change: Mutation,
): { input: RouteInput; raw: RawParts } {
  const next: RouteInput = structuredClone(input);
  switch (change.kind) {
    case 'field': {
      const container = change.where === 'body' ? next.body : next.query;
      if (!isPlainObject(container) && change.where === 'body') {
        next.body = { [change.key ?? 'field']: change.value };
        break;
      }
      const target = container as Record<string, unknown>;
      const existing = paths(target);
      if (change.key !== undefined || existing.length === 0) {
        setAt(target, [change.key ?? 'field'], change.value);
      } else {
        setAt(target, existing[change.pathSeed % existing.length]!, change.value);
      }
      break;
    }
    case 'replace-body':
      next.body = change.value;
      break;
    case 'drop-field': {
      const existing = paths(next.body);
      if (existing.length > 0) deleteAt(next.body, existing[change.pathSeed % existing.length]!);
      break;
    }
    case 'param':
      // An empty segment would address another route (`/v1/memories/`), not junk this one.
      if (change.value === '') break;
      for (const name of Object.keys(next.params)) next.params[name] = change.value;
      break;
    case 'raw-body':
      return { input: next, raw: change.raw };
    case 'raw-query':
      return { input: next, raw: { rawQuery: change.query } };
    case 'headers':
      Object.assign(next.headers, change.headers);
      break;
  }
  return { input: next, raw: {} };
}
