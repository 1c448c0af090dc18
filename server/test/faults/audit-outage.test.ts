import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/client.js';
import { AuditRecorder } from '../../src/services/audit/index.js';
import {
  createEmptyPostgresDatabase,
  isTestDatabaseAvailable,
  testBackend,
  type EmptyPostgresDatabase,
} from '../support/db.js';
import { recordingLogger } from '../support/recording-logger.js';
import { FaultProxy } from './scenario.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const runs = testBackend() === 'postgres' && isTestDatabaseAvailable();

// The recorder reaches PostgreSQL through a proxy the test cuts, as a restarting database does.
describe.runIf(runs)('audit records through a short database outage [postgres]', () => {
  let database: EmptyPostgresDatabase;
  let proxy: FaultProxy;
  let handle: DatabaseHandle;
  let direct: postgres.Sql;

  beforeAll(async () => {
    database = await createEmptyPostgresDatabase();
    const proxied = await FaultProxy.before(database.databaseUrl);
    proxy = proxied.proxy;
    handle = await openDatabase({ databaseUrl: proxied.url });
    direct = postgres(database.databaseUrl, { max: 1, onnotice: () => {} });
  }, 60_000);
  afterAll(async () => {
    await handle?.close();
    await proxy?.close();
    await direct?.end({ timeout: 5 });
    await database?.drop();
  }, 30_000);

  const rowsOf = async (prefix: string) => {
    const [row] = await direct<{ n: string }[]>`
      select count(*)::text as n from audit_log where request_id like ${prefix + '%'}`;
    return Number(row!.n);
  };
  const entry = (requestId: string) => ({
    requestId,
    method: 'GET',
    path: '/v1/memories',
    status: 200,
    durationMs: 1,
  });

  it('keeps the records and writes them once the database is back', async () => {
    const { logger, lines } = recordingLogger();
    const recorder = new AuditRecorder(handle.db, logger, {
      flushIntervalMs: 20,
      maxRetryDelayMs: 500,
    });
    const prefix = `outage-${randomBytes(4).toString('hex')}-`;
    proxy.set('down');
    for (let i = 0; i < 61; i += 1) recorder.record(entry(`${prefix}${i}`));
    await sleep(1_500);
    expect(await rowsOf(prefix)).toBe(0);
    proxy.set('pass');
    // Before, the 61 records were dropped with one log line.
    await expect.poll(() => rowsOf(prefix), { timeout: 10_000, interval: 200 }).toBe(61);
    expect(recorder.dropped).toBe(0);
    expect(lines).toContainEqual(['warn', 'database unavailable; audit records kept for a retry']);
    await recorder.drain();
  });

  it('counts what does not fit while the database is away as dropped', async () => {
    const { logger } = recordingLogger();
    const recorder = new AuditRecorder(handle.db, logger, {
      flushIntervalMs: 20,
      maxBuffered: 10,
      maxRetryDelayMs: 500,
    });
    const prefix = `full-${randomBytes(4).toString('hex')}-`;
    proxy.set('down');
    for (let i = 0; i < 25; i += 1) recorder.record(entry(`${prefix}${i}`));
    await sleep(1_000);
    proxy.set('pass');
    await expect.poll(() => rowsOf(prefix), { timeout: 10_000, interval: 200 }).toBe(10);
    expect(recorder.dropped).toBe(15);
    await recorder.drain();
  });
});
