import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEmptyPostgresDatabase,
  isTestDatabaseAvailable,
  testBackend,
  type EmptyPostgresDatabase,
} from '../support/db.js';

/**
 * The postgres.js fixes in patches/postgres@3.4.9.patch, each driven on a real PostgreSQL. Each
 * was found by the fault test (db-faults.test.ts) as a rare 500 under terminated backends, lock
 * timeouts or a black-holed link: a result with leading holes, a transaction whose BEGIN found
 * its connection unreserved.
 */
const suite = testBackend() === 'postgres' && isTestDatabaseAvailable() ? describe : describe.skip;

suite('postgres.js patches [postgres]', () => {
  let database: EmptyPostgresDatabase;
  const clients: postgres.Sql[] = [];
  const client = (options: postgres.Options<Record<string, postgres.PostgresType>> = {}) => {
    const sql = postgres(database.databaseUrl, { onnotice: () => {}, ...options });
    clients.push(sql);
    return sql;
  };

  beforeAll(async () => {
    database = await createEmptyPostgresDatabase();
  });

  afterAll(async () => {
    await Promise.all(clients.map((sql) => sql.end({ timeout: 1 })));
    await database?.drop();
  });

  it('a query after one that failed mid-stream gets its own rows from index 0 (#1181)', async () => {
    const sql = client({ max: 1 });
    // Three rows stream, then the fourth divides by zero.
    const failing = sql`select i, 1 / (4 - i) as boom from generate_series(1, 10) i`.catch(
      (error: Error) => error,
    );
    const next = sql`select x from generate_series(1, 5) x`;
    expect(await failing).toBeInstanceOf(Error);
    const rows = await next;
    expect(rows.length).toBe(5);
    expect(rows.map((row) => row.x)).toEqual([1, 2, 3, 4, 5]);
  });

  it('a BEGIN that fills the pipeline still reserves its connection (#1189)', async () => {
    // With max_pipeline 0 every BEGIN is past its connection's pipeline limit (#1210): unpatched,
    // each failed with UNSAFE_TRANSACTION.
    // `max_pipeline` is a runtime option postgres.js's types do not list.
    const sql = client({ max: 2, max_pipeline: 0 } as postgres.Options<Record<string, never>>);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        sql.begin(async (tx) => {
          const [row] = await tx`select ${i}::int as n`;
          return row?.n;
        }),
      ),
    );
    expect(results).toEqual([0, 1, 2, 3, 4, 5]);
  });
});
