import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { type SQL, sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { lockDataDir } from './data-dir-lock.js';
import { migratePglite, migratePostgres } from './migrate.js';
import * as schema from './schema/index.js';

export type Schema = typeof schema;

/**
 * The database both drivers satisfy. Use the query builder (`select`, `insert`, ...), which
 * behaves the same on both; the shape of `db.execute()` results differs per driver (an array of
 * rows on postgres.js, `{ rows }` on PGlite), so read raw results through {@link executeRows}.
 */
export type Database = PgDatabase<PgQueryResultHKT, Schema>;

export type DatabaseDriver = 'pglite' | 'postgres';

export interface DatabaseHandle {
  db: Database;
  driver: DatabaseDriver;
  /** Runs a trivial query; rejects when the database cannot answer. */
  ping(): Promise<void>;
  /** Releases the pool or the embedded instance. The handle is unusable afterwards. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL connection string; when set, postgres.js is used and `dataDir` is ignored. */
  databaseUrl?: string;
  /** PGlite only: folder to persist the embedded database in (created if missing); undefined = in-memory. */
  dataDir?: string;
}

const POSTGRES_POOL_SIZE = 10;

/** The pool of a database's hand-written hot statements (see `Statement`). */
export interface StatementPool {
  db: Database;
  client: postgres.Sql;
}

const statementPools = new WeakMap<Database, StatementPool>();

/**
 * On PostgreSQL, a second pool for the write path's hand-written statements, whose sessions plan
 * every prepared statement generically (once per connection, at its first run): their plans do
 * not depend on the values (exact lookups by key or owner, inserts), and left to choose,
 * PostgreSQL re-planned them for every execution (a sixth of its time per write, measured
 * with perf). The main pool keeps custom plans, which recall relies on. Undefined on PGlite.
 */
export function statementPoolOf(db: Database): StatementPool | undefined {
  return statementPools.get(db);
}

/**
 * Per-session settings. pgvector 0.8: when a filtered (per-owner) query uses an HNSW index, keep scanning the graph
 * until enough rows pass the filter instead of returning the few of the first ef_search
 * neighbours that happen to belong to the owner. Order is re-established by the caller's sort.
 */
const SESSION_SETTINGS = {
  'hnsw.iterative_scan': 'relaxed_order',
  // Recall reads one owner's rows: starting parallel workers for such small scans costs more
  // than it saves (seen in the speed bench's plans).
  max_parallel_workers_per_gather: '0',
} as const;

/** Connects to PostgreSQL (when `databaseUrl` is set) or embedded PGlite, then applies migrations. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir);
}

async function openPostgres(databaseUrl: string): Promise<DatabaseHandle> {
  await migratePostgres(databaseUrl);
  const client = postgres(databaseUrl, {
    max: POSTGRES_POOL_SIZE,
    onnotice: () => {},
    // Prepared recall statements are planned for each owner's values (recall.ts prepares them
    // only under this setting): one generic plan for every owner would be a 200 ms plan for a
    // 10k-memory owner, or an exact scan instead of HNSW. Unnamed statements are planned per run
    // anyway.
    connection: { ...SESSION_SETTINGS, plan_cache_mode: 'force_custom_plan' },
  });
  const db = drizzlePostgres({ client, schema });
  const statementClient = postgres(databaseUrl, {
    max: POSTGRES_POOL_SIZE,
    onnotice: () => {},
    connection: { ...SESSION_SETTINGS, plan_cache_mode: 'force_generic_plan' },
  });
  // Through drizzle too, so values are parsed and serialised as on the main pool.
  statementPools.set(db, {
    db: drizzlePostgres({ client: statementClient, schema }),
    client: statementClient,
  });
  return {
    db,
    driver: 'postgres',
    ping: async () => {
      await db.execute(sql`select 1`);
    },
    close: async () => {
      await Promise.all([client.end({ timeout: 5 }), statementClient.end({ timeout: 5 })]);
    },
  };
}

async function openPglite(dataDir: string | undefined): Promise<DatabaseHandle> {
  const options = { extensions: { vector } };
  let client: PGlite;
  let unlock = async () => {};
  if (dataDir === undefined) {
    client = await PGlite.create(options);
  } else {
    const path = resolve(dataDir);
    await mkdir(path, { recursive: true });
    unlock = await lockDataDir(path);
    try {
      client = await PGlite.create(path, options);
    } catch (error) {
      await unlock();
      throw error;
    }
  }
  const db = drizzlePglite({ client, schema });
  try {
    await migratePglite(db);
    for (const [name, value] of Object.entries(SESSION_SETTINGS))
      await client.exec(`SET ${name} = '${value}'`);
  } catch (error) {
    await client.close();
    await unlock();
    throw error;
  }
  return {
    db,
    driver: 'pglite',
    ping: async () => {
      await db.execute(sql`select 1`);
    },
    close: async () => {
      if (!client.closed) await client.close();
      await unlock();
    },
  };
}

/** Runs raw SQL and returns its rows, whichever driver is behind `db`. Values are not mapped by column types. */
export async function executeRows<T extends Record<string, unknown>>(
  db: Database,
  query: SQL,
): Promise<T[]> {
  const result: unknown = await db.execute(query);
  if (Array.isArray(result)) return result as T[];
  return (result as { rows: T[] }).rows;
}
