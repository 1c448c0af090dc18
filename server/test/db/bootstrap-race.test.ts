import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type DatabaseHandle, executeRows, openDatabase } from '../../src/db/client.js';
import { ApiKeyService } from '../../src/services/api-keys/index.js';
import { ensureBootstrapWorkspace } from '../../src/services/bootstrap.js';
import {
  createEmptyPostgresDatabase,
  describeDb,
  testBackend,
  type EmptyPostgresDatabase,
} from '../support/db.js';

/** Bootstraps as many at once as instances started together would, each on its own pool. */
const RACERS = 8;
/** Simultaneous starts on an empty database, each of which must leave exactly one workspace. */
const TRIALS = 30;

describeDb('bootstrap raced by instances started together', () => {
  let empty: EmptyPostgresDatabase | undefined;
  let handles: DatabaseHandle[] = [];
  beforeAll(async () => {
    if (testBackend() === 'pglite') return;
    empty = await createEmptyPostgresDatabase();
    const first = await openDatabase({ databaseUrl: empty.databaseUrl });
    const rest = await Promise.all(
      Array.from({ length: RACERS - 1 }, () =>
        openDatabase({ databaseUrl: empty!.databaseUrl, migrate: false }),
      ),
    );
    handles = [first, ...rest];
  });
  afterAll(async () => {
    await Promise.all(handles.map((handle) => handle.close()));
    await empty?.drop();
  });

  const race = async (env: Record<string, string>) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
    const services = await Promise.all(
      handles.map((handle) => ApiKeyService.create(handle.db, { salt: 'race-salt-0123456789' })),
    );
    return Promise.all(
      handles.map((handle, i) => ensureBootstrapWorkspace(handle.db, services[i]!, config)),
    );
  };

  it.skipIf(testBackend() === 'pglite')(
    `leaves one workspace and one minted key in each of ${TRIALS} simultaneous starts`,
    async () => {
      const duplicates: number[] = [];
      for (let trial = 0; trial < TRIALS; trial++) {
        await handles[0]!.db.execute(sql`truncate workspaces cascade`);
        const results = await race({});
        const workspaces = new Set(results.map((result) => result.workspaceId)).size;
        const minted = results.filter((result) => result.mintedKey).length;
        if (workspaces !== 1 || minted !== 1) duplicates.push(trial);
      }
      expect(duplicates, 'trials with more than one workspace or key').toEqual([]);
      await handles[0]!.db.execute(sql`truncate workspaces cascade`);
    },
    120_000,
  );

  it.skipIf(testBackend() === 'pglite')(
    'creates one workspace and mints one key; then registers a configured key once',
    async () => {
      const results = await race({});
      expect(results.filter((result) => result.mintedKey)).toHaveLength(1);
      expect(new Set(results.map((result) => result.workspaceId)).size).toBe(1);

      const again = await race({ MNEMO_BOOTSTRAP_API_KEY: 'mnemo_race_configured_key_0123456789' });
      expect(new Set(again.map((result) => result.workspaceId))).toEqual(
        new Set([results[0]!.workspaceId]),
      );
      const counts = await executeRows(
        handles[0]!.db,
        sql`select (select count(*)::int from workspaces) as workspaces,
          (select count(*)::int from api_keys) as keys`,
      );
      expect(counts).toEqual([{ workspaces: 1, keys: 2 }]);
    },
  );
});
