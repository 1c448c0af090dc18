import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { listJobRuns } from '../../src/db/queries/job-runs.js';
import { type JobRunner, pgBossRunner } from '../../src/jobs/runner.js';
import { createLogger } from '../../src/logger.js';
import {
  createEmptyPostgresDatabase,
  type EmptyPostgresDatabase,
  isTestDatabaseAvailable,
  testBackend,
} from '../support/db.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// pg-boss runs on PostgreSQL only (PGlite uses the in-process runner, which does not retry).
const runs = testBackend() === 'postgres' && isTestDatabaseAvailable();

describe.runIf(runs)('a failing pg-boss job [postgres]', () => {
  let empty: EmptyPostgresDatabase;
  let handle: DatabaseHandle;
  let runner: JobRunner | undefined;
  const logger = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));

  beforeAll(async () => {
    empty = await createEmptyPostgresDatabase();
    handle = await openDatabase({ databaseUrl: empty.databaseUrl });
  });
  afterAll(async () => {
    await runner?.stop();
    await handle?.close();
    await empty?.drop();
  });

  it('is tried again after its failure, and the retry is recorded as a later attempt', async () => {
    let attempts = 0;
    runner = pgBossRunner(
      handle.db,
      logger,
      [
        {
          name: 'flaky-test-job',
          intervalMs: 0,
          atStart: true,
          run: async () => {
            attempts += 1;
            if (attempts === 1) throw new Error('first attempt fails');
          },
        },
      ],
      { databaseUrl: empty.databaseUrl, poolMax: 2, retryDelaySeconds: 1 },
    );
    await runner.start();
    const started = Date.now();
    while (attempts < 2 && Date.now() - started < 20_000) await sleep(200);
    expect(attempts).toBe(2);
    let [record] = await listJobRuns(handle.db);
    while (record?.status !== 'succeeded' && Date.now() - started < 20_000) {
      await sleep(100);
      [record] = await listJobRuns(handle.db);
    }
    expect(record).toMatchObject({
      name: 'flaky-test-job',
      status: 'succeeded',
      attempt: 2,
      runs: 2,
      failures: 1,
    });
  }, 40_000);
});
