import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { type SQL, sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { lockDataDir } from './data-dir-lock.js';
import { isConnectionLost } from './faults.js';
import { migratePglite, migratePostgres } from './migrate.js';
import { PGLITE_EXTENSIONS } from './pglite-extensions.js';
import { PlanCaches } from './plan-caches.js';
import * as schema from './schema/index.js';

export type Schema = typeof schema;

/**
 * The database both drivers satisfy. Use the query builder (`select`, `insert`, ...), which
 * behaves the same on both; the shape of `db.execute()` results differs per driver (an array of
 * rows on postgres.js, `{ rows }` on PGlite), so read raw results through {@link executeRows}.
 */
export type Database = PgDatabase<PgQueryResultHKT, Schema>;

/**
 * What a query that only reads takes: selects and raw statements, on the database or inside a
 * transaction. Recall runs on it, so it can point at a replica.
 */
export type Reader = Pick<Database, '_' | 'select' | 'selectDistinct' | 'execute'>;

/** What a query that changes anything takes: the primary, able to open transactions. */
export type Writer = Database;

export type DatabaseDriver = 'pglite' | 'postgres';

export interface DatabaseHandle {
  /** Reads (recall above all). Today the writer's connection; a read URL can point it elsewhere. */
  reader: Reader;
  /** Writes and anything that must see them at once. */
  writer: Writer;
  /** The writer, for callers not split into reads and writes yet. */
  db: Database;
  /** What this handle's queries share beyond the connections (see {@link runtimeOf}). */
  runtime: DatabaseRuntime;
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
  /** PostgreSQL only: statement_timeout and lock_timeout of every session, in ms (0: none). */
  timeouts?: { statementMs: number; lockMs: number };
  /**
   * Apply pending migrations first (the default). False: open as it is, for a process that
   * must not change the schema (a replica's reader, a tool run beside a newer server).
   */
  migrate?: boolean;
  /** PostgreSQL only: connections of each pool (docs/scaling.md); defaults {@link DEFAULT_POOL_SIZES}. */
  pools?: PoolSizes;
  /**
   * In-memory PGlite only: start from this data-directory dump (PGlite's `dumpDataDir`) instead of
   * an empty cluster, which skips initdb; pending migrations still apply on top.
   */
  pgliteDump?: Blob;
}

/** Most connections each of an instance's PostgreSQL pools opens. */
export interface PoolSizes {
  /** Reads and transactions (`DATABASE_POOL_MAX`). */
  main: number;
  /** The write path's generically planned statements (`DATABASE_STATEMENT_POOL_MAX`). */
  statements: number;
  /** Metering's asynchronously committed statements (`DATABASE_METERING_POOL_MAX`). */
  metering: number;
}

/**
 * A few metering connections suffice: a metering statement is short, and most requests meter
 * from memory (services/usage/blocks.ts).
 */
export const DEFAULT_POOL_SIZES: PoolSizes = { main: 10, statements: 10, metering: 3 };

/** The defaults of `MNEMO_DB_STATEMENT_TIMEOUT_MS` and `MNEMO_DB_LOCK_TIMEOUT_MS`. */
export const DEFAULT_DATABASE_TIMEOUTS = { statementMs: 5000, lockMs: 2000 };

/** Sessions name themselves, so operators (and the fault tests) can find their backends. */
export const APPLICATION_NAME = 'mnemo';

/**
 * Pool settings against dead connections: a connection the server closed (restart, terminated
 * backend, a proxy's idle cut) is dropped when postgres.js sees its socket close and replaced on
 * next use; idle ones are closed after IDLE_TIMEOUT_S and every one is replaced within
 * MAX_LIFETIME_S, so none outlives a failover by long. A connect that gets no answer gives up
 * after CONNECT_TIMEOUT_S instead of postgres.js's 30 s.
 */
const IDLE_TIMEOUT_S = 60;
const MAX_LIFETIME_S = 30 * 60;
const CONNECT_TIMEOUT_S = 5;

/**
 * Seconds a closed connection waits before it reconnects. postgres.js's default grows with every
 * failed connect of the pool (3^n / 100 s, up to 20 s), so after an outage of a few seconds a
 * query given to a closed connection waited up to 20 s for it (seen in the fault test as writes
 * hanging long after the database was back). Capped at one second, with jitter.
 */
const reconnectDelaySeconds = (retries: number): number =>
  Math.min(0.05 * 2 ** retries, 1) * (0.5 + Math.random() / 2);

/** The pool of a database's hand-written hot statements (see `Statement`). */
export interface StatementPool {
  db: Database;
  client: postgres.Sql;
  /**
   * Longest a pipelined transaction (`inOneTrip`) waits for its answers. postgres.js leaves the
   * queries queued on a reserved connection unsettled when that connection is lost, so without
   * a bound they (and whoever waits on them) wait forever.
   */
  tripTimeoutMs: number;
  /**
   * Metering's connections (db/queries/usage.ts): their sessions commit without waiting for the
   * WAL flush (`synchronous_commit = off`), so each metering statement is one implicit
   * transaction, one statement on the wire, rather than `begin`, the setting, the statement and
   * `commit` (four statements for PostgreSQL to run, in one trip) on a reserved connection.
   */
  asyncCommit: Database;
}

/**
 * The handle's own state that its queries reach through the database they are given: the
 * statement pool and the plan caches. One object per handle (no module-level maps), attached
 * to the handle's database objects; a transaction carries none, as it runs on its own
 * connection.
 */
export interface DatabaseRuntime {
  statementPool: StatementPool | undefined;
  planCaches: PlanCaches;
}

const RUNTIME = Symbol('mnemo.databaseRuntime');

function attachRuntime(db: Database, runtime: DatabaseRuntime): void {
  Object.defineProperty(db, RUNTIME, { value: runtime, enumerable: false });
}

/** The runtime of a handle's reader or writer; undefined for a transaction. */
export function runtimeOf(db: Reader): DatabaseRuntime | undefined {
  return (db as { [RUNTIME]?: DatabaseRuntime })[RUNTIME];
}

/**
 * On PostgreSQL, a second pool for the write path's hand-written statements, whose sessions plan
 * every prepared statement generically (once per connection, at its first run): their plans do
 * not depend on the values (exact lookups by key or owner, inserts), and left to choose,
 * PostgreSQL re-planned them for every execution (a sixth of its time per write, measured
 * with perf). The main pool keeps custom plans, which recall relies on; the search of an owner
 * known to be small runs here too (`searchPlanFor` in queries/search-recall.ts). Undefined on
 * PGlite.
 */
export function statementPoolOf(db: Reader): StatementPool | undefined {
  return runtimeOf(db)?.statementPool;
}

/**
 * Per-session settings. pgvector 0.8: when a filtered (per-owner) query uses an HNSW index, keep scanning the graph
 * until enough rows pass the filter instead of returning the few of the first ef_search
 * neighbours that happen to belong to the owner. Order is re-established by the caller's sort.
 */
export const SESSION_SETTINGS = {
  'hnsw.iterative_scan': 'relaxed_order',
  // The graph search's breadth: at pgvector's default (40) a 10k-memory owner's vector stage
  // missed about a tenth of its exact top 10; 150 keeps recall@10 at 0.98 or more (bench
  // `recall` phase). Owners small enough for an exact scan never reach the index.
  'hnsw.ef_search': '150',
  // Recall reads one owner's rows: starting parallel workers for such small scans costs more
  // than it saves (seen in the speed bench's plans).
  max_parallel_workers_per_gather: '0',
} as const;

/**
 * Connects to PostgreSQL (when `databaseUrl` is set) or embedded PGlite and, unless `migrate` is
 * false, applies migrations.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const migrate = options.migrate ?? true;
  return options.databaseUrl
    ? openPostgres(
        options.databaseUrl,
        options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS,
        migrate,
        options.pools ?? DEFAULT_POOL_SIZES,
      )
    : openPglite(options.dataDir, migrate, options.pgliteDump);
}

/**
 * Reads sent outside a transaction are sent once more when the connection they ran on was lost
 * (terminated backend, restart, reset socket): a `select` changes nothing, so a second run on a
 * fresh connection cannot double anything. Writes, and anything inside a transaction (those run
 * on a reserved connection, not through `unsafe` of the pool), are never repeated here: a write
 * whose connection died may have committed, so the client decides (its 503 says retry). Timeouts
 * are not retried either: the statement would only time out again.
 */
function retryingReads(client: postgres.Sql): postgres.Sql {
  const unsafe = client.unsafe.bind(client);
  const retrying = (query: string, ...rest: unknown[]) => {
    if (!/^\s*select\b/i.test(query))
      return (unsafe as (...args: unknown[]) => unknown)(query, ...rest);
    const run = <T>(start: () => PromiseLike<T>): Promise<T> =>
      Promise.resolve(start()).catch((error: unknown) => {
        if (!isConnectionLost(error)) throw error;
        return start();
      });
    const pending = () =>
      (unsafe as (...args: unknown[]) => postgres.PendingQuery<postgres.Row[]>)(query, ...rest);
    // drizzle awaits the query itself or its `.values()`: both get the retry.
    return {
      values: () => run(() => pending().values()),
      then: <A, B>(
        onFulfilled?: (value: postgres.Row[]) => A | PromiseLike<A>,
        onRejected?: (reason: unknown) => B | PromiseLike<B>,
      ) => run(() => pending()).then(onFulfilled, onRejected),
    };
  };
  return new Proxy(client, {
    get: (target, property, receiver) =>
      property === 'unsafe' ? retrying : Reflect.get(target, property, receiver),
  });
}

async function openPostgres(
  databaseUrl: string,
  timeouts: { statementMs: number; lockMs: number },
  migrate: boolean,
  pools: PoolSizes,
): Promise<DatabaseHandle> {
  if (migrate) await migratePostgres(databaseUrl);
  // Bound every statement and every lock wait: a fault answers 503 in seconds instead of hanging.
  const faultSettings = {
    application_name: APPLICATION_NAME,
    statement_timeout: timeouts.statementMs,
    lock_timeout: timeouts.lockMs,
  };
  const poolSettings = {
    idle_timeout: IDLE_TIMEOUT_S,
    max_lifetime: MAX_LIFETIME_S,
    connect_timeout: CONNECT_TIMEOUT_S,
    backoff: reconnectDelaySeconds,
    onnotice: () => {},
  };
  const client = postgres(databaseUrl, {
    ...poolSettings,
    max: pools.main,
    // Prepared recall statements are planned for each owner's values (recall.ts prepares them
    // only under this setting): one generic plan for every owner would be a 200 ms plan for a
    // 10k-memory owner, or an exact scan instead of HNSW. Unnamed statements are planned per run
    // anyway.
    connection: { ...SESSION_SETTINGS, ...faultSettings, plan_cache_mode: 'force_custom_plan' },
  });
  const db = drizzlePostgres({ client: retryingReads(client), schema });
  const statementClient = postgres(databaseUrl, {
    ...poolSettings,
    max: pools.statements,
    connection: { ...SESSION_SETTINGS, ...faultSettings, plan_cache_mode: 'force_generic_plan' },
  });
  const meteringClient = postgres(databaseUrl, {
    ...poolSettings,
    max: pools.metering,
    connection: {
      ...faultSettings,
      synchronous_commit: 'off',
      plan_cache_mode: 'force_generic_plan',
    },
  });
  const runtime: DatabaseRuntime = {
    // Through drizzle too, so values are parsed and serialised as on the main pool.
    statementPool: {
      db: drizzlePostgres({ client: retryingReads(statementClient), schema }),
      client: statementClient,
      // Two statements of a trip may each run to the statement timeout; a second for the rest.
      tripTimeoutMs: timeouts.statementMs > 0 ? 2 * timeouts.statementMs + 1000 : 60_000,
      asyncCommit: drizzlePostgres({ client: meteringClient, schema }),
    },
    planCaches: new PlanCaches(),
  };
  attachRuntime(db, runtime);
  return {
    reader: db,
    writer: db,
    db,
    runtime,
    driver: 'postgres',
    ping: async () => {
      await db.execute(sql`select 1`);
    },
    close: async () => {
      await Promise.all(
        [client, statementClient, meteringClient].map((pool) => pool.end({ timeout: 5 })),
      );
    },
  };
}

async function openPglite(
  dataDir: string | undefined,
  migrate: boolean,
  dump: Blob | undefined,
): Promise<DatabaseHandle> {
  const options = { extensions: PGLITE_EXTENSIONS };
  let client: PGlite;
  let unlock = async () => {};
  if (dataDir === undefined) {
    client = await PGlite.create(dump ? { ...options, loadDataDir: dump } : options);
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
    if (migrate) await migratePglite(db);
    for (const [name, value] of Object.entries(SESSION_SETTINGS))
      await client.exec(`SET ${name} = '${value}'`);
  } catch (error) {
    await client.close();
    await unlock();
    throw error;
  }
  const runtime: DatabaseRuntime = { statementPool: undefined, planCaches: new PlanCaches() };
  attachRuntime(db, runtime);
  return {
    reader: db,
    writer: db,
    db,
    runtime,
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
  db: Reader,
  query: SQL,
): Promise<T[]> {
  const result: unknown = await db.execute(query);
  if (Array.isArray(result)) return result as T[];
  return (result as { rows: T[] }).rows;
}
