import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeDb } from '../support/db.js';
import { TEST_REDIS_URL } from '../support/redis.js';
import type { Started } from '../support/server-process.js';
import { freshDatabase, startInstances, stopInstances } from './instances.js';

const ADMIN_TOKEN = 'cluster-admin-token-0123456789';
const KEY = 'mnemo_cluster_revocation_key_0123456789';
const DRAIN_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function status(url: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(url, { headers });
  await response.body?.cancel();
  return response.status;
}

describeDb('two instances sharing Redis', () => {
  let instances: Started[] = [];
  let fresh: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    fresh = await freshDatabase();
    instances = await startInstances(2, {
      DATABASE_URL: fresh.database.databaseUrl,
      REDIS_URL: TEST_REDIS_URL,
      MNEMO_ADMIN_TOKEN: ADMIN_TOKEN,
      MNEMO_BOOTSTRAP_API_KEY: KEY,
      MNEMO_SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
    });
  }, 200_000);
  afterAll(async () => {
    await stopInstances(instances);
    await fresh?.drop();
  });

  it('stops accepting a key on every instance within a second of its revocation', async () => {
    const [first, second] = instances as [Started, Started];
    const auth = { authorization: `Bearer ${KEY}` };
    // The second instance has verified (and cached) the key.
    expect(await status(`${second.baseUrl}/v1/memories`, auth)).toBe(200);
    const [key] = await fresh.sql<{ id: string }[]>`select id from api_keys`;
    const revoked = await fetch(`${first.baseUrl}/v1/api-keys/${key!.id}/revoke`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN_TOKEN },
    });
    expect(revoked.status).toBe(200);
    const at = Date.now();
    let answer = 200;
    while (answer === 200 && Date.now() - at < 5_000) {
      answer = await status(`${second.baseUrl}/v1/memories`, auth);
      if (answer === 200) await sleep(50);
    }
    expect(answer).toBe(401);
    expect(Date.now() - at).toBeLessThan(1_000);
  });

  it('answers /ready 503 from SIGTERM on, while it still serves, for the drain time', async () => {
    const stopping = instances[0]!;
    const ready = await fetch(`${stopping.baseUrl}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { database: 'ok', key_salt: 'ok', redis: 'ok' },
    });
    const exited = new Promise<number | null>((resolve) => stopping.child.once('exit', resolve));
    const signalled = Date.now();
    stopping.child.kill('SIGTERM');
    await sleep(300);
    const draining = await fetch(`${stopping.baseUrl}/ready`);
    expect(draining.status).toBe(503);
    expect(await draining.json()).toMatchObject({ status: 'not_ready', draining: true });
    // Still serving meanwhile: the balancer takes it out before its connections close.
    expect(await status(`${stopping.baseUrl}/healthz`)).toBe(200);
    expect(await exited).toBe(0);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(DRAIN_MS);
    instances = instances.slice(1);
  });
});
