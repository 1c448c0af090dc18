import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEmptyPostgresDatabase,
  isTestDatabaseAvailable,
  testBackend,
  type EmptyPostgresDatabase,
} from '../support/db.js';
import { startServer, stop, type Started } from '../support/server-process.js';
import { TEST_REDIS_URL } from '../support/redis.js';

const KEY_RATE = 10;

// Two instances share one database and one Redis, as a deployment behind a load balancer does.
// PGlite is one process's own database, so this runs on the PostgreSQL project only.
const runs = testBackend() === 'postgres' && isTestDatabaseAvailable();

describe.runIf(runs)('two server processes sharing one Redis [postgres]', () => {
  let database: EmptyPostgresDatabase;
  const servers: Started[] = [];
  const apiKey = `mnemo_${randomBytes(24).toString('base64url')}`;

  beforeAll(async () => {
    database = await createEmptyPostgresDatabase();
    const env = {
      DATABASE_URL: database.databaseUrl,
      REDIS_URL: TEST_REDIS_URL,
      MNEMO_BOOTSTRAP_API_KEY: apiKey,
      MNEMO_KEY_RATE_LIMIT_PER_MINUTE: String(KEY_RATE),
      // Only the key's rate is under test: 30 requests at once must not meet the in-flight limit.
      MNEMO_INFLIGHT_PER_WORKSPACE: '1000',
      MNEMO_HYGIENE_INTERVAL_MS: '0',
    };
    // One after the other: the first applies the migrations.
    servers.push(await startServer(env));
    servers.push(await startServer(env));
  }, 60_000);

  afterAll(async () => {
    for (const server of servers) await stop(server.child);
    await database?.drop();
  }, 30_000);

  it('admit exactly the key’s rate between them', async () => {
    const attempts = 3 * KEY_RATE;
    const statuses = await Promise.all(
      Array.from({ length: attempts }, async (_, i) => {
        const server = servers[i % 2]!;
        const res = await fetch(`${server.baseUrl}/v1/memories`, {
          headers: { authorization: `Bearer ${apiKey}` },
        });
        const body = (await res.json()) as { error?: { message: string } };
        return { status: res.status, message: body.error?.message };
      }),
    );
    const admitted = statuses.filter((s) => s.status === 200);
    expect(admitted).toHaveLength(KEY_RATE);
    const refused = statuses.filter((s) => s.status === 429);
    expect(refused).toHaveLength(attempts - KEY_RATE);
    for (const r of refused) expect(r.message).toMatch(/per API key/);
    // Each instance counting alone would have admitted the rate twice over.
  });
});
