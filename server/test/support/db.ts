import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import postgres from 'postgres';
import { describe, inject } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { adminDatabaseUrl, databaseUrlFor } from './postgres.js';

export type TestBackend = 'pglite' | 'postgres';

export interface TestDatabase extends DatabaseHandle {
  /** Which backend and database, for test names and failure messages. */
  label: string;
}

/** The backend of the current vitest project, from MNEMO_TEST_DB (`pglite` unless set). */
export function testBackend(): TestBackend {
  const value = process.env.MNEMO_TEST_DB ?? 'pglite';
  if (value !== 'pglite' && value !== 'postgres') {
    throw new Error(`MNEMO_TEST_DB must be pglite or postgres, got ${value}`);
  }
  return value;
}

/** False only on the postgres backend when its global setup found no server (local runs). */
export function isTestDatabaseAvailable(): boolean {
  return testBackend() === 'pglite' || inject('postgresAvailable') === true;
}

/**
 * `describe` for suites that need a database: the name is tagged with the backend, and the
 * suite is skipped when the backend is unavailable (the global setup already said so loudly).
 */
export function describeDb(name: string, fn: () => void): void {
  const tagged = `${name} [${testBackend()}]`;
  if (isTestDatabaseAvailable()) describe(tagged, fn);
  else describe.skip(tagged, fn);
}

/**
 * A fresh, migrated database for one test file or test: in-memory PGlite, or a new PostgreSQL
 * database `mnemo_test_<hex>` that `close()` drops again. Only databases created here are dropped.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (testBackend() === 'pglite') {
    const handle = await openDatabase({ pgliteDump: await migratedPgliteDump() });
    return { ...handle, label: 'pglite (in-memory)' };
  }
  return createPostgresTestDatabase();
}

let pgliteDump: Promise<Blob> | undefined;

/** The global setup's migrated dump (read once per test file); initdb and migrations are skipped. */
function migratedPgliteDump(): Promise<Blob> {
  pgliteDump ??= readFile(inject('pgliteDumpPath')).then((bytes) => new Blob([bytes]));
  return pgliteDump;
}

async function createPostgresTestDatabase(): Promise<TestDatabase> {
  const empty = await createEmptyPostgresDatabase(inject('postgresTemplate'));
  let handle: DatabaseHandle;
  try {
    handle = await openDatabase({ databaseUrl: empty.databaseUrl });
  } catch (error) {
    await empty.drop();
    throw error;
  }
  return {
    ...handle,
    label: `postgres (${empty.name})`,
    close: async () => {
      try {
        await handle.close();
      } finally {
        await empty.drop();
      }
    },
  };
}

export interface EmptyPostgresDatabase {
  name: string;
  databaseUrl: string;
  /** Drops the database, disconnecting whoever is still connected. */
  drop(): Promise<void>;
}

/**
 * A new PostgreSQL database `mnemo_test_<hex>`: unmigrated (for tests of migrations themselves and
 * servers that migrate on start), or a copy of `template`.
 */
export async function createEmptyPostgresDatabase(
  template?: string,
): Promise<EmptyPostgresDatabase> {
  if (!isTestDatabaseAvailable()) {
    throw new Error(
      'PostgreSQL is not available for tests; wrap the suite in describeDb() so it is skipped',
    );
  }
  const adminUrl = adminDatabaseUrl();
  const name = `mnemo_test_${randomBytes(6).toString('hex')}`;
  const copy = template ? ` template "${template}"` : '';
  await withAdmin(adminUrl, (sql) => sql.unsafe(`create database "${name}"${copy}`));
  return {
    name,
    databaseUrl: databaseUrlFor(adminUrl, name),
    drop: () => dropDatabase(adminUrl, name),
  };
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, (sql) => sql.unsafe(`drop database if exists "${name}" with (force)`));
}

async function withAdmin<T>(adminUrl: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
