import { destination, pino, stdSerializers, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Log lines wait in memory until this many bytes are buffered... */
const LOG_BUFFER_BYTES = 4096;
/** ...or this long, whichever comes first. */
const LOG_FLUSH_MS = 250;

/**
 * JSON lines on stdout, written asynchronously and in batches: a write per request line costs a
 * system call on the event loop (measured in the speed bench: on this kind of VM, the largest
 * share of a search's own CPU after the database socket's). Lines reach stdout within
 * LOG_FLUSH_MS; `main.ts` flushes on shutdown. `stream` replaces stdout (tests read the lines).
 */
export function createLogger(level: string, stream?: DestinationStream): Logger {
  return pino(
    { level, base: { service: 'mnemo' }, serializers: { err: serializeError } },
    stream ??
      destination({
        dest: 1,
        sync: false,
        minLength: LOG_BUFFER_BYTES,
        periodicFlush: LOG_FLUSH_MS,
      }),
  );
}

/**
 * Human-readable lines for a terminal (`LOG_FORMAT=pretty`, the default when stdout is a TTY):
 * one coloured line per record with its fields below. Loaded only when asked for.
 */
export async function prettyLogStream(): Promise<DestinationStream> {
  const { default: pretty } = await import('pino-pretty');
  return pretty({
    colorize: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
  });
}

/** The fields of a database error that say what failed without saying with which values. */
const DATABASE_ERROR_FIELDS = {
  code: ['code'],
  severity: ['severity'],
  routine: ['routine'],
  // postgres.js names them `*_name`; PGlite (pg-protocol) without the suffix.
  schema_name: ['schema_name', 'schema'],
  table_name: ['table_name', 'table'],
  column_name: ['column_name', 'column'],
  constraint_name: ['constraint_name', 'constraint'],
} as const;

type ErrorLike = Record<string, unknown>;

/** The error and its causes, outermost first. */
function errorChain(error: unknown): ErrorLike[] {
  const links: ErrorLike[] = [];
  let current: unknown = error;
  while (links.length < 5 && current !== null && typeof current === 'object') {
    links.push(current as ErrorLike);
    current = (current as { cause?: unknown }).cause;
  }
  return links;
}

/**
 * A driver's error (postgres.js `PostgresError`, PGlite's) or drizzle's `DrizzleQueryError`:
 * their message, `query`, `params`/`parameters`, `detail` and `where` carry the statement's bound
 * values, which are memory text, owner ids and keys.
 */
function isDatabaseError(link: ErrorLike): boolean {
  return (
    link.name === 'PostgresError' ||
    link.name === 'DrizzleQueryError' ||
    'query' in link ||
    'params' in link ||
    'parameters' in link ||
    ('severity' in link && 'code' in link)
  );
}

/**
 * pino's error serializer, except that an error that is or wraps a database error is reduced to
 * its type, the outer message when that one is ours, the SQLSTATE, constraint, table and column,
 * and the stack frames (without the first line, which repeats the message).
 */
export function serializeError(error: unknown): unknown {
  const links = errorChain(error);
  const database = links.find(isDatabaseError);
  if (!database) return stdSerializers.err(error as Error);
  const outer = links[0] as ErrorLike;
  const safe: Record<string, unknown> = {
    type: typeof outer.name === 'string' ? outer.name : 'Error',
    message: isDatabaseError(outer) ? 'database error' : String(outer.message ?? ''),
  };
  for (const [field, names] of Object.entries(DATABASE_ERROR_FIELDS)) {
    const value = links
      .flatMap((link) => names.map((name) => link[name]))
      .find((v) => typeof v === 'string');
    if (value !== undefined) safe[field] = value;
  }
  if (typeof outer.stack === 'string') {
    safe.stack = outer.stack
      .split('\n')
      .filter((line) => line.startsWith('    at '))
      .join('\n');
  }
  return safe;
}
