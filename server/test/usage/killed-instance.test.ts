import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { reconcileUsage } from '../../src/services/usage/index.js';
import {
  createEmptyPostgresDatabase,
  type EmptyPostgresDatabase,
  isTestDatabaseAvailable,
  testBackend,
} from '../support/db.js';
import { startServer, type Started } from '../support/server-process.js';

const WRITES = 12;
/** The shortest reservation TTL the config takes: the killed instance's blocks expire soon. */
const RESERVATION_TTL_MS = 1_000;

// A real server process on the local PostgreSQL: PGlite is one process's own database.
const runs = testBackend() === 'postgres' && isTestDatabaseAvailable();

describe.runIf(runs)('usage of an instance killed with kill -9 [postgres]', () => {
  let database: EmptyPostgresDatabase;
  let server: Started | undefined;
  const apiKey = `mnemo_${randomBytes(24).toString('base64url')}`;

  beforeAll(async () => {
    database = await createEmptyPostgresDatabase();
    server = await startServer({
      DATABASE_URL: database.databaseUrl,
      MNEMO_BOOTSTRAP_API_KEY: apiKey,
      MNEMO_LIMITS: 'on',
      MNEMO_USAGE_RESERVATION_TTL_MS: String(RESERVATION_TTL_MS),
      // Blocks would settle only after a minute: anything they hold dies with the process.
      MNEMO_USAGE_BLOCK_MAX_AGE_MS: '60000',
      MNEMO_USAGE_RECONCILE_INTERVAL_MS: '0',
      MNEMO_HYGIENE_INTERVAL_MS: '0',
    });
  }, 60_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await database?.drop();
  }, 30_000);

  it('counts every acknowledged write once its reservations expire', async () => {
    const running = server!;
    let acknowledged = 0;
    for (let i = 0; i < WRITES; i++) {
      const res = await fetch(`${running.baseUrl}/v1/memories`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: `note ${i}: the deploy window is Tuesday ${i}` }),
      });
      await res.body?.cancel();
      expect(res.status, running.stderr()).toBeLessThan(300);
      acknowledged += 1;
    }
    const exited = new Promise((resolve) => running.child.once('exit', resolve));
    running.child.kill('SIGKILL');
    await exited;

    await new Promise((resolve) => setTimeout(resolve, RESERVATION_TTL_MS + 200));
    const handle = await openDatabase({ databaseUrl: database.databaseUrl });
    const sql = postgres(database.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      // Whatever the dead process still held is refunded, as reconciliation does on any instance.
      await reconcileUsage(handle.db);
      const rows = await sql<{ used: string; reserved: string }[]>`
        select used, reserved from usage_counters
        where resource = 'writes' and window_kind = 'day'`;
      expect(rows).toHaveLength(1);
      expect(Number(rows[0]!.used)).toBe(acknowledged);
      expect(Number(rows[0]!.reserved)).toBe(0);
    } finally {
      await sql.end({ timeout: 5 });
      await handle.close();
    }
  }, 30_000);
});
