import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createEmptyPostgresDatabase,
  describeDb,
  testBackend,
  type EmptyPostgresDatabase,
} from '../support/db.js';
import { startServer, stop } from '../support/server-process.js';

describeDb('first run of the server entry point', () => {
  let dataDir: string;
  let postgresDb: EmptyPostgresDatabase | undefined;
  let env: Record<string, string>;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mnemo-first-run-'));
    if (testBackend() === 'postgres') {
      postgresDb = await createEmptyPostgresDatabase();
      env = { DATABASE_URL: postgresDb.databaseUrl };
    } else {
      env = { MNEMO_DATA_DIR: dataDir };
    }
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await postgresDb?.drop();
  });

  it('prints a key once, serves health and auth, stops cleanly and keeps the key across restarts', async () => {
    const first = await startServer(env);
    let apiKey: string;
    try {
      apiKey =
        /API key \(shown once, keep it safe\):\s+(mnemo_[A-Za-z0-9_-]+)/.exec(
          first.stderr(),
        )?.[1] ?? '';
      expect(apiKey).toMatch(/^mnemo_/);
      // The limits in force, stated once at start: the self-hosted default, without retention.
      const limitsLine = first
        .stdout()
        .split('\n')
        .find((line) => line.includes('"msg":"limits: '));
      expect(JSON.parse(limitsLine ?? '{}')).toMatchObject({
        plan: 'scale',
        plan_chosen: false,
        key_rpm: 60,
        writes_per_day: 20_000,
        retention_days: null,
      });

      const health = await fetch(`${first.baseUrl}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok', version: expect.any(String) });
      const keyed = await fetch(`${first.baseUrl}/v1/memories`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(keyed.status).toBe(200);
      expect(await keyed.json()).toMatchObject({ results: [], total: 0 });
      const anonymous = await fetch(`${first.baseUrl}/v1/memories`);
      expect(anonymous.status).toBe(401);
      const body = (await anonymous.json()) as { error: { code: string }; request_id: string };
      expect(body.error.code).toBe('UNAUTHORIZED');
      expect(body.request_id).toBe(anonymous.headers.get('x-request-id'));
    } finally {
      expect(await stop(first.child)).toBe(0);
    }

    const second = await startServer(env);
    try {
      expect(second.stderr()).not.toContain('API key (shown once');
      const keyed = await fetch(`${second.baseUrl}/v1/memories`, {
        headers: { 'x-api-key': apiKey },
      });
      expect(keyed.status).toBe(200);
      await keyed.body?.cancel();
    } finally {
      expect(await stop(second.child)).toBe(0);
    }
  }, 150_000);
});
