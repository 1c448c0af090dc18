import postgres from 'postgres';
import { createEmptyPostgresDatabase, type EmptyPostgresDatabase } from '../support/db.js';
import { type Started, startServer, stop } from '../support/server-process.js';

/** `count` real server processes started at the same moment on one database. */
export async function startInstances(
  count: number,
  env: Record<string, string>,
): Promise<Started[]> {
  // Generous: several processes compile and boot at once on a small, shared CI machine.
  const starts = Array.from({ length: count }, () => startServer(env, { timeoutMs: 150_000 }));
  const settled = await Promise.allSettled(starts);
  const started = settled.flatMap((result) =>
    result.status === 'fulfilled' ? [result.value] : [],
  );
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) {
    await stopInstances(started);
    throw (failed as PromiseRejectedResult).reason;
  }
  return started;
}

/** SIGTERM to every instance; their exit codes. */
export function stopInstances(instances: Started[]): Promise<Array<number | null>> {
  return Promise.all(instances.map((instance) => stop(instance.child)));
}

/** A fresh empty database and a client on it for the test's own queries. */
export async function freshDatabase(): Promise<{
  database: EmptyPostgresDatabase;
  sql: postgres.Sql;
  drop(): Promise<void>;
}> {
  const database = await createEmptyPostgresDatabase();
  const sql = postgres(database.databaseUrl, { max: 2, onnotice: () => {} });
  return {
    database,
    sql,
    drop: async () => {
      await sql.end({ timeout: 5 });
      await database.drop();
    },
  };
}
