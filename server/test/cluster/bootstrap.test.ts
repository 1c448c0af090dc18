import { afterEach, expect, it } from 'vitest';
import { describeDb } from '../support/db.js';
import type { Started } from '../support/server-process.js';
import { freshDatabase, startInstances, stopInstances } from './instances.js';

/** Instances started at the same moment on one empty database. */
const INSTANCES = 4;
const PRINTED_KEY = /API key \(shown once, keep it safe\):\s+(mnemo_[A-Za-z0-9_-]+)/;

async function listMemories(instance: Started, key: string): Promise<number> {
  const response = await fetch(`${instance.baseUrl}/v1/memories`, {
    headers: { authorization: `Bearer ${key}` },
  });
  await response.body?.cancel();
  return response.status;
}

describeDb('bootstrap with instances started together', () => {
  let cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const step of cleanup.reverse()) await step();
    cleanup = [];
  });

  it('creates one workspace and prints one key, which every instance accepts', async () => {
    const { database, sql, drop } = await freshDatabase();
    cleanup.push(drop);
    const instances = await startInstances(INSTANCES, { DATABASE_URL: database.databaseUrl });
    cleanup.push(() => stopInstances(instances));

    const printed = instances.flatMap((instance) => {
      const key = PRINTED_KEY.exec(instance.stderr())?.[1];
      return key ? [key] : [];
    });
    expect(printed).toHaveLength(1);
    const workspaces = await sql`select id, name from workspaces`;
    expect(workspaces).toHaveLength(1);
    expect(await sql`select count(*)::int as n from api_keys`).toEqual([{ n: 1 }]);
    const statuses = await Promise.all(instances.map((i) => listMemories(i, printed[0]!)));
    expect(statuses).toEqual(instances.map(() => 200));
  }, 180_000);

  it('registers MNEMO_BOOTSTRAP_API_KEY once: no crash, no orphan workspace, no key material printed', async () => {
    const { database, sql, drop } = await freshDatabase();
    cleanup.push(drop);
    const key = 'mnemo_cluster_bootstrap_key_0123456789abcdef';
    const instances = await startInstances(INSTANCES, {
      DATABASE_URL: database.databaseUrl,
      MNEMO_BOOTSTRAP_API_KEY: key,
    });
    cleanup.push(() => stopInstances(instances));

    expect(await sql`select count(*)::int as n from workspaces`).toEqual([{ n: 1 }]);
    const [stored] = await sql<{ key_hash: string; key_prefix: string }[]>`
      select key_hash, key_prefix from api_keys`;
    expect(await sql`select count(*)::int as n from api_keys`).toEqual([{ n: 1 }]);
    const statuses = await Promise.all(instances.map((i) => listMemories(i, key)));
    expect(statuses).toEqual(instances.map(() => 200));
    for (const instance of instances) {
      expect(instance.stderr() + instance.stdout()).not.toContain(stored!.key_hash);
      expect(instance.stderr()).not.toContain(key);
    }
  }, 180_000);
});
