import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEmptyPostgresDatabase,
  isTestDatabaseAvailable,
  testBackend,
} from '../support/db.js';
import type { EmptyPostgresDatabase } from '../support/db.js';
import { UNTHROTTLED } from '../support/app.js';
import { startServer, stop, type Started } from '../support/server-process.js';
import {
  FaultProxy,
  histogram,
  recoveryTimes,
  runFaultScenario,
  type ScenarioResult,
} from './scenario.js';

/** Short timeouts keep the run under a minute; the rules are the same as with the defaults. */
const DEADLINE_MS = 4000;
const SETTINGS = {
  MNEMO_DB_STATEMENT_TIMEOUT_MS: '2000',
  MNEMO_DB_LOCK_TIMEOUT_MS: '1000',
  MNEMO_REQUEST_DEADLINE_MS: String(DEADLINE_MS),
};
/** The server's wait for a write caught mid-commit before it answers "outcome unknown". */
const UNKNOWN_OUTCOME_GRACE_MS = 5000;
/** Scheduling on a shared two-core machine: a request may answer this much after its deadline. */
const MARGIN_MS = 1500;
const API_KEY = 'mnemo_fault_test_key_0123456789abcdef';

// PGlite runs inside the server's process: there is no connection to kill, no pool to restart
// and no second session to hold a lock from, so these faults exist on PostgreSQL only.
const suite = testBackend() === 'postgres' && isTestDatabaseAvailable() ? describe : describe.skip;

suite('database faults answer 503 and recover [postgres]', () => {
  let database: EmptyPostgresDatabase;
  let proxy: FaultProxy;
  let server: Started;
  let logs = '';
  let stopping = false;
  let result: ScenarioResult;

  beforeAll(async () => {
    database = await createEmptyPostgresDatabase();
    const proxied = await FaultProxy.before(database.databaseUrl);
    proxy = proxied.proxy;
    server = await startServer({
      DATABASE_URL: proxied.url,
      MNEMO_BOOTSTRAP_API_KEY: API_KEY,
      ...UNTHROTTLED,
      ...SETTINGS,
    });
    server.child.stdout?.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    // A crash under faults is the worst outcome: say so plainly rather than as failed fetches.
    server.child.once('exit', (code) => {
      if (!stopping)
        process.stderr.write(`server exited (${code}) during the run:\n${server.stderr()}\n`);
    });
    result = await runFaultScenario({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      controlUrl: database.databaseUrl,
      database: database.name,
      proxy,
      faults: ['terminate', 'lock', 'restart', 'blackhole'],
      concurrency: 6,
      calmMs: 7500,
      faultMs: 2500,
      clientTimeoutMs: DEADLINE_MS + 10_000,
    });
  }, 120_000);

  afterAll(async () => {
    stopping = true;
    if (server) await stop(server.child);
    await proxy?.close();
    await database?.drop();
  });

  // Three postgres.js defects once made this fail about one run in four (patches/postgres@3.4.9.patch,
  // driver-patches.test.ts): a result with leading holes after a query failed mid-stream, and a
  // transaction's connection released late or never reserved.
  it('never answers 500 and never leaves a request unanswered', () => {
    const counts = histogram(result.records);
    const unexpected = [...counts].filter(([s]) => s !== '200' && s !== '503 SERVICE_UNAVAILABLE');
    // On failure, the server's error lines (no user content: see the log test below) say why.
    // The 500's own line ("unhandled error") first: background jobs also log at level 50.
    const errors = logs
      .split('\n')
      .filter((line) => /"level":50/.test(line))
      .sort(
        (a, b) => Number(b.includes('unhandled error')) - Number(a.includes('unhandled error')),
      );
    expect(
      unexpected,
      `status histogram ${JSON.stringify([...counts])}\n${errors.slice(0, 5).join('\n')}`,
    ).toEqual([]);
    // Every fault was felt: the run is not vacuous.
    expect(result.records.some((r) => r.status === 503)).toBe(true);
    expect(result.records.every((r) => r.status !== 503 || r.retryAfter !== null)).toBe(true);
  });

  it('answers every request within the deadline, or one grace period after it when a commit was under way', () => {
    const bound = (r: (typeof result.records)[number]) =>
      DEADLINE_MS + (r.outcome === 'unknown' ? UNKNOWN_OUTCOME_GRACE_MS : 0) + MARGIN_MS;
    const late = result.records.filter((r) => r.ms > bound(r));
    expect(
      late.map((r) => `${r.kind} ${r.status} ${r.ms} ms at ${r.start} ${r.requestId}`),
      `${JSON.stringify(result.windows)}\n${logs
        .split('\n')
        .filter((line) => late.some((r) => r.requestId && line.includes(r.requestId)))
        .join('\n')}`,
    ).toEqual([]);
    // "Outcome unknown" is the rare answer for writes caught mid-commit, never for a search.
    const unknown = result.records.filter((r) => r.outcome === 'unknown');
    expect(unknown.every((r) => r.kind === 'write')).toBe(true);
    expect(unknown.length).toBeLessThanOrEqual(6);
  });

  it('loses no acknowledged write', () => {
    expect(result.acknowledged.length).toBeGreaterThan(20);
    expect(result.present).toBe(result.acknowledged.length);
  });

  it('serves every request from 5 s after each fault ends', () => {
    for (const window of result.windows) {
      const next = result.windows.find((w) => w.start > window.start)?.start ?? result.durationMs;
      const late = result.records.filter(
        (r) => r.start >= window.end + 5000 && r.start + r.ms < next,
      );
      expect(late.length, `requests after ${window.name}`).toBeGreaterThan(0);
      expect(
        late.filter((r) => r.status !== 200).map((r) => `${r.kind} ${r.status}`),
        `after ${window.name}`,
      ).toEqual([]);
    }
    expect([...recoveryTimes(result).values()].every((t) => t !== undefined && t <= 5000)).toBe(
      true,
    );
  });

  it('is not ready while the database is unreachable, and ready again after', async () => {
    proxy.set('down');
    try {
      const started = Date.now();
      const down = await fetch(`${server.baseUrl}/ready`);
      expect(down.status).toBe(503);
      expect(Date.now() - started).toBeLessThan(DEADLINE_MS);
    } finally {
      proxy.set('pass');
    }
    let status = 0;
    for (let attempt = 0; attempt < 20 && status !== 200; attempt += 1) {
      status = (await fetch(`${server.baseUrl}/ready`)).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status).toBe(200);
  });

  it('is ready again, and logged no memory text or bound parameters', async () => {
    const ready = await fetch(`${server.baseUrl}/ready`);
    expect(ready.status).toBe(200);
    expect(logs).toContain('database unavailable; answered 503');
    expect(logs).not.toContain(result.marker);
    expect(logs).not.toMatch(/"(params|parameters|query)":/);
  });
});
