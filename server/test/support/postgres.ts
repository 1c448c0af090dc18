/**
 * Settings shared by the PostgreSQL test backend and its global setup. Kept free of vitest's
 * runtime so the global setup (which runs outside the test workers) can import it.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set by postgres-global-setup.ts: false when the server is unreachable and tests must skip. */
    postgresAvailable: boolean;
    /** Set by postgres-global-setup.ts: a migrated database that test databases are copied from. */
    postgresTemplate: string;
    /** Set by pglite-global-setup.ts: a file holding a migrated PGlite data-directory dump. */
    pgliteDumpPath: string;
  }
}

export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** A maintenance database the tests may connect to in order to create and drop their own databases. */
export function adminDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;
}

/** The same URL pointing at another database on the same server. */
export function databaseUrlFor(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** For messages: the URL without its password. */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '<unparseable TEST_DATABASE_URL>';
  }
}
