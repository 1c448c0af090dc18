import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { migrate as migratePgliteDb } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgresDb } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';

/**
 * `server/drizzle`, one level above both `src/` (tsx) and `dist/` (tsc build), so the same
 * relative path works from `src/db/migrate.ts` and `dist/db/migrate.js`.
 */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle/', import.meta.url));

/** Key of the session-level advisory lock that serialises migrations across server instances. */
export const MIGRATION_LOCK_KEY = 7_311_628_351; // arbitrary; only needs to be stable across releases

/** Applies pending migrations to an embedded PGlite database (single process, no lock needed). */
export async function migratePglite(db: PgliteDatabase<Record<string, unknown>>): Promise<void> {
  await migratePgliteDb(db, { migrationsFolder: MIGRATIONS_FOLDER });
}

/**
 * Applies pending migrations to PostgreSQL. Several instances may start at once, so the
 * migrator runs on its own single-connection client holding `pg_advisory_lock`: the others wait,
 * then find nothing left to apply. The client is closed afterwards, which also drops the lock.
 */
export async function migratePostgres(databaseUrl: string): Promise<void> {
  const client = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const db = drizzlePostgres({ client });
    await db.execute(sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY}::bigint)`);
    try {
      await migratePostgresDb(db, { migrationsFolder: MIGRATIONS_FOLDER });
    } finally {
      await db.execute(sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY}::bigint)`);
    }
  } finally {
    await client.end({ timeout: 5 });
  }
}
