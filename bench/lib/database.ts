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
 * PostgreSQL logs its statements slower than that many ms.
 */
export async function createBenchDatabase(
  adminUrl: string,
  pgLogMs: string | undefined,
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
  return {
    name,
    databaseUrl: url.toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
}
