/**
 * Load and faults: a started server on PostgreSQL under steady writes and searches while its
 * backends are terminated, `memories` is locked past the lock timeout, its link to PostgreSQL is
 * reset and refused (a restart) and then silent (a black hole). Prints writes acknowledged vs
 * rows present, the status histogram, latency per phase and the time to recover after each fault,
 * and writes the report to results/faults-latest.md. Bounded: about 60 s.
 *
 *   pnpm --filter @mnemo/bench bench:faults
 *
 * `BENCH_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/postgres) names the server to
 * create the bench database on. The run and its rules are the fault test's
 * (server/test/faults/scenario.ts); the timeouts are the defaults unless set in the environment.
 */
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import {
  FaultProxy,
  histogram,
  recoveryTimes,
  runFaultScenario,
  type RequestRecord,
  type ScenarioResult,
} from '../server/test/faults/scenario.js';
import { createBenchDatabase } from './lib/database.js';
import { REPO_ROOT, startServer } from './lib/server.js';
import { ms, percentile, table } from './lib/stats.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const API_KEY = 'mnemo_bench_faults_key_0123456789abcdef';
const SETTINGS = {
  MNEMO_DB_STATEMENT_TIMEOUT_MS: process.env.MNEMO_DB_STATEMENT_TIMEOUT_MS ?? '5000',
  MNEMO_DB_LOCK_TIMEOUT_MS: process.env.MNEMO_DB_LOCK_TIMEOUT_MS ?? '2000',
  MNEMO_REQUEST_DEADLINE_MS: process.env.MNEMO_REQUEST_DEADLINE_MS ?? '15000',
};
const CONCURRENCY = 8;
const CALM_MS = 7000;
const FAULT_MS = 5000;

function latencyRow(label: string, records: RequestRecord[]): string[] {
  const sorted = records.map((r) => r.ms).sort((a, b) => a - b);
  const ok = records.filter((r) => r.status === 200).length;
  return [
    label,
    String(records.length),
    String(ok),
    String(records.length - ok),
    ms(percentile(sorted, 50)),
    ms(percentile(sorted, 95)),
    ms(sorted.at(-1) ?? NaN),
  ];
}

function report(result: ScenarioResult, meta: string[]): string {
  const phases: string[][] = [];
  result.windows.forEach((window, i) => {
    const until = result.windows[i + 1]?.start ?? result.durationMs;
    const during = result.records.filter((r) => r.start >= window.start && r.start < window.end);
    const after = result.records.filter((r) => r.start >= window.end && r.start < until);
    phases.push(
      latencyRow(
        `${window.name} (during, ${((window.end - window.start) / 1000).toFixed(1)} s)`,
        during,
      ),
    );
    phases.push(latencyRow(`${window.name} (after)`, after));
  });
  const first = result.windows[0]?.start ?? result.durationMs;
  const calm = result.records.filter((r) => r.start < first);
  const recovery = recoveryTimes(result);
  const lost = result.acknowledged.length - result.present;
  return [
    '# Mnemo: load and database faults',
    '',
    ...meta.map((line) => `- ${line}`),
    '',
    '## Writes',
    '',
    table(
      ['writes acknowledged (200)', 'rows present after', 'lost'],
      [[String(result.acknowledged.length), String(result.present), String(lost)]],
    ),
    '',
    '## Status histogram (all requests)',
    '',
    table(
      ['status', 'requests'],
      [...histogram(result.records).entries()].map(([status, n]) => [status, String(n)]),
    ),
    '',
    '## Latency per phase (ms)',
    '',
    table(
      ['phase', 'requests', '200', 'other', 'p50', 'p95', 'max'],
      [latencyRow('before any fault', calm), ...phases, latencyRow('whole run', result.records)],
    ),
    '',
    '## Time to recover',
    '',
    'From the end of the fault to the first request after which every request succeeded.',
    '',
    table(
      ['fault', 'recovered after (ms)'],
      [...recovery.entries()].map(([name, t]) => [
        name,
        t === undefined ? 'not within the window' : String(t),
      ]),
    ),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const database = await createBenchDatabase(ADMIN_URL, undefined);
  const target = new URL(database.databaseUrl);
  const proxy = await FaultProxy.start({
    host: target.hostname,
    port: Number(target.port || 5432),
  });
  const viaProxy = new URL(database.databaseUrl);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  const server = await startServer({
    DATABASE_URL: viaProxy.toString(),
    MNEMO_BOOTSTRAP_API_KEY: API_KEY,
    ...SETTINGS,
  });
  const loadBefore = loadavg()[0] ?? NaN;
  let result: ScenarioResult;
  try {
    result = await runFaultScenario({
      baseUrl: server.base,
      apiKey: API_KEY,
      controlUrl: database.databaseUrl,
      database: database.name,
      proxy,
      faults: ['terminate', 'lock', 'restart', 'blackhole'],
      concurrency: CONCURRENCY,
      calmMs: CALM_MS,
      faultMs: FAULT_MS,
      clientTimeoutMs: Number(SETTINGS.MNEMO_REQUEST_DEADLINE_MS) + 15_000,
    });
  } finally {
    await server.stop();
    await proxy.close();
  }
  const pg = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const [{ version } = { version: '?' }] = await pg<{ version: string }[]>`select version()`;
  await pg.end({ timeout: 5 });
  await database.drop();
  const meta = [
    `Date: ${new Date().toISOString()}`,
    `Machine: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? '?'}); load average (1 min) ${loadBefore.toFixed(2)} at start, ${(loadavg()[0] ?? NaN).toFixed(2)} at end`,
    `Node ${process.version}, ${version.split(' on ')[0]}`,
    `Server: its own process (\`node --import tsx\`, local embedder), MNEMO_LIMITS=off, statement timeout ${SETTINGS.MNEMO_DB_STATEMENT_TIMEOUT_MS} ms, lock timeout ${SETTINGS.MNEMO_DB_LOCK_TIMEOUT_MS} ms, request deadline ${SETTINGS.MNEMO_REQUEST_DEADLINE_MS} ms; PostgreSQL reached through a loopback TCP proxy the bench controls`,
    `Load: ${CONCURRENCY} clients, each alternating a write (\`POST /v1/memories\`) and a hybrid search (\`POST /v1/search\`), back to back; ${CALM_MS / 1000} s of load before the first fault and after each`,
    `Faults, ${FAULT_MS / 1000} s each, in order: **terminate** (\`pg_terminate_backend\` on the server's backends, three rounds), **lock** (\`ACCESS EXCLUSIVE\` on \`memories\` held from another session), **restart** (every link reset, new ones refused), **blackhole** (links stay open, nothing passes; reset at the end)`,
    `Run time ${(result.durationMs / 1000).toFixed(1)} s, ${result.records.length} requests`,
  ];
  const text = report(result, meta);
  process.stdout.write(text);
  await writeFile(join(REPO_ROOT, 'bench', 'results', 'faults-latest.md'), text);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
