import { resolve } from 'node:path';
import { ConfigError } from './config.js';
import { DataDirInUseError } from './db/data-dir-lock.js';

/** A start-up failure explained in one line: what failed, its cause, and what to change. */
export class StartupError extends Error {}

/** `postgres://user:***@host:5432/db`: no password, and no query string (it may carry one). */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString();
  } catch {
    return 'DATABASE_URL (not a URL)';
  }
}

type ErrorLike = Record<string, unknown>;

/** The error, its causes and an AggregateError's errors, outermost first. */
function errorLinks(error: unknown): ErrorLike[] {
  const links: ErrorLike[] = [];
  const pending: unknown[] = [error];
  while (pending.length > 0 && links.length < 10) {
    const current = pending.shift();
    if (current === null || typeof current !== 'object') continue;
    const link = current as ErrorLike;
    links.push(link);
    if (link.cause !== undefined) pending.push(link.cause);
    if (Array.isArray(link.errors)) pending.push(...(link.errors as unknown[]));
  }
  return links;
}

const firstLine = (text: unknown) =>
  String(text ?? '')
    .split('\n')[0]!
    .trim();

/** Socket-level causes of an unreachable database server, in words. */
const NETWORK_CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  CONNECT_TIMEOUT: 'connection timed out',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** What to do about an error PostgreSQL itself answered while Mnemo connected or migrated. */
function serverErrorFix(code: string, message: string): string {
  if (/extension "vector"|vector\.control/.test(message))
    return 'install pgvector on that server (the pgvector/pgvector images have it)';
  if (code === '28P01' || code === '28000') return 'check the user and password in DATABASE_URL';
  if (code === '3D000') return 'create that database, or fix its name in DATABASE_URL';
  if (code === '42501') return 'grant the user in DATABASE_URL the rights to create tables there';
  return "check DATABASE_URL and the database server's log";
}

/**
 * Why the database could not be opened at start-up, in one line: where (the URL with its
 * password hidden, or the embedded database's folder), the underlying cause, and the fix.
 */
export function databaseFailure(
  error: unknown,
  config: { databaseUrl: string | undefined; dataDir: string },
): Error {
  if (error instanceof DataDirInUseError) return error;
  const links = errorLinks(error);
  const innermost = links[links.length - 1] ?? {};
  if (config.databaseUrl === undefined) {
    const code = links.map((link) => link.code).find((c) => typeof c === 'string');
    return new StartupError(
      `mnemo: cannot open the embedded database in ${resolve(config.dataDir)} ` +
        `(${code ? `${String(code)}: ` : ''}${firstLine(innermost.message)}): ` +
        'check that the folder is writable and holds a Mnemo database, or set MNEMO_DATA_DIR ' +
        '(or DATABASE_URL for PostgreSQL)',
    );
  }
  const where = redactDatabaseUrl(config.databaseUrl);
  const network = links
    .map((link) => link.code)
    .find((code): code is string => typeof code === 'string' && code in NETWORK_CAUSES);
  if (network) {
    return new StartupError(
      `mnemo: cannot reach the database at ${where} (${network}: ${NETWORK_CAUSES[network]}): ` +
        'start PostgreSQL there, or set DATABASE_URL to one that runs ' +
        '(unset: the embedded database in MNEMO_DATA_DIR)',
    );
  }
  // PostgreSQL's own answer: a SQLSTATE and a severity (postgres.js's PostgresError).
  const answered = links.find(
    (link) => typeof link.severity === 'string' && typeof link.code === 'string',
  );
  if (answered) {
    const code = String(answered.code);
    const message = firstLine(answered.message);
    return new StartupError(
      `mnemo: the database at ${where} refused (${code}: ${message}): ${serverErrorFix(code, message)}`,
    );
  }
  return new StartupError(
    `mnemo: cannot use the database at ${where} (${firstLine(innermost.message)}): check DATABASE_URL`,
  );
}

/** Why the server could not listen, in one line, naming the port or host and the variable. */
export function listenFailure(error: unknown, host: string, port: number): StartupError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? 'unknown';
  switch (code) {
    case 'EADDRINUSE':
      return new StartupError(
        `mnemo: port ${port} on ${host} is already in use (EADDRINUSE): ` +
          'stop the process that holds it, or set PORT to a free port',
      );
    case 'EACCES':
      return new StartupError(
        `mnemo: not allowed to listen on port ${port} (EACCES): ` +
          'ports below 1024 need privileges; set PORT to 1024 or above',
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(
        `mnemo: cannot listen on ${host} (${code}: not an address of this machine): ` +
          'set HOST to one of its addresses, 127.0.0.1 (this machine only) or 0.0.0.0 (all)',
      );
    default:
      return new StartupError(
        `mnemo: cannot listen on ${host}:${port} (${code}: ${firstLine((error as Error | undefined)?.message)}): check HOST and PORT`,
      );
  }
}

/**
 * What `main` prints when start-up fails: one line for every failure it knows (configuration,
 * database, data folder, port); anything else is a bug, printed with its stack.
 */
export function describeStartupFailure(error: unknown): string {
  if (error instanceof StartupError) return error.message;
  if (error instanceof ConfigError) {
    // "Invalid configuration:\n  A: why\n  B: why" → "invalid configuration: A: why; B: why"
    const [heading = '', ...problems] = error.message.split('\n').map((line) => line.trim());
    return `mnemo: ${heading.replace(/^Invalid/, 'invalid')} ${problems.filter(Boolean).join('; ')}`;
  }
  if (error instanceof DataDirInUseError) return `mnemo: ${error.message}`;
  return `mnemo failed to start: ${error instanceof Error ? withoutValues(error) : String(error)}`;
}

/**
 * An unexpected error with its stack, but only the first line of its message and its causes'
 * SQLSTATE: a failed query's message goes on with the statement's parameters (drizzle's
 * "params: ...") and PostgreSQL's detail with the row's values, which may be a key's hash or
 * user content.
 */
function withoutValues(error: Error): string {
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  const codes = errorLinks(error)
    .slice(1)
    .map((link) => link.code)
    .filter((code) => typeof code === 'string');
  const cause = codes.length > 0 ? ` (cause: ${codes.join(', ')})` : '';
  return [`${error.name}: ${firstLine(error.message)}${cause}`, ...frames].join('\n');
}
