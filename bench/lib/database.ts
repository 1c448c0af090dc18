import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

export interface BenchDatabase {
  name: string;
  databaseUrl: string;
  /** Drops the database (disconnecting whoever is left) and closes the admin connection. */
  drop(): Promise<void>;
}

/**
 * A fresh PostgreSQL database `mnemo_bench_<hex>` on the server of `adminUrl`; with `pgLogMs`,
 * PostgreSQL logs its statements slower than that many ms; with `autoExplainMs`, auto_explain
 * logs their plans (EXPLAIN ANALYZE, buffers) to the server log, for sessions opened afterwards.
 */
export async function createBenchDatabase(
  adminUrl: string,
  pgLogMs: string | undefined,
  autoExplainMs?: string,
): Promise<BenchDatabase> {
  const name = `mnemo_bench_${randomBytes(4).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  if (pgLogMs !== undefined)
    await admin.unsafe(
      `alter database ${name} set log_min_duration_statement = ${Number(pgLogMs)}`,
    );
  if (autoExplainMs !== undefined) {
    await admin.unsafe(`alter database ${name} set session_preload_libraries = 'auto_explain'`);
    for (const [setting, value] of [
      ['log_min_duration', String(Number(autoExplainMs))],
      ['log_analyze', 'on'],
      ['log_buffers', 'on'],
    ])
      await admin.unsafe(`alter database ${name} set auto_explain.${setting} = ${value}`);
  }
  return {
    name,
    databaseUrl: url.toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
}

/**
 * Waits until no backend of the database runs VACUUM or ANALYZE (twice in a row, 500 ms apart):
 * a server starting on a freshly loaded database runs both in the background, and their CPU
 * would be charged to the requests measured beside them.
 */
export async function maintenanceDone(raw: postgres.Sql, database: string): Promise<void> {
  let calm = 0;
  while (calm < 2) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const [row] = await raw<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where datname = ${database} and state = 'active' and pid <> pg_backend_pid()
        and (query ilike 'vacuum%' or query ilike 'analyze%')`;
    calm = row?.n === 0 ? calm + 1 : 0;
  }
}
