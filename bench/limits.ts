/**
 * What limits cost: the same server (its own process, PostgreSQL) with `MNEMO_LIMITS=off` (twice:
 * the second, `off2`, is the A/A control), with limits on (plan caps and metering in PostgreSQL,
 * rate counters and in-flight leases in memory), and with limits on and `REDIS_URL` (rate counters
 * and leases on Redis), all started at once on one database and measured in the same run in
 * alternating blocks (the order rotating block by block), so load that comes and goes on this
 * shared machine falls on all alike.
 * Rates are raised so that nothing is refused: this measures the cost of counting, not of refusing.
 *
 * Per configuration: per-owner hybrid search and writes (extraction off), p50/p95 at concurrency
 * 1 and 8, CPU per request of the server process and of its PostgreSQL backends
 * (/proc/<pid>/stat), and the added cost (on − off). Then, in this process, where the metering
 * time goes: one round trip, the plan lookup, the reservation and its settlement, the rate
 * counters and the in-flight lease (memory and Redis).
 *
 *   pnpm bench:limits
 *
 * Environment: BENCH_DATABASE_URL (maintenance database; a fresh `mnemo_bench_<random>` is
 * created and dropped), BENCH_LIMITS_SIZE (regular memories loaded, default 10k over 1,000
 * owners), BENCH_LIMITS_SEARCHES / _SEARCHES_C8 / _WRITES / _WRITES_C8 (requests per
 * configuration: 1200 / 1200 / 800 / 1000), BENCH_LIMITS_BLOCK (requests per block at
 * concurrency 1, default 50; at 8: 8 × that ÷ 4), BENCH_REDIS_URL (default
 * redis://127.0.0.1:6379; empty skips the Redis configuration), BENCH_LIMITS_PLAN (the internal
 * grant, default scale), BENCH_SEED (42), BENCH_RESULTS=off (leave results/ alone). Profiling:
 * BENCH_LIMITS_PHASES (search-c1,search-c8,write-c1,write-c8), BENCH_LIMITS_WARMUP_SEARCHES /
 * _WARMUP_WRITES (1000 / 400 per server), BENCH_PG_LOG_MS, BENCH_CPU_PROF,
 * BENCH_SERVER_LOG (lib/server.ts).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type postgres from 'postgres';
import { PLANS, PLAN_CODES, planCaps, type PlanCode } from '../contract/src/schemas/usage.js';
import { executeRows, openDatabase, type Database } from '../server/src/db/client.js';
import { createLimitBackend, type LimitBackend } from '../server/src/limits/backend.js';
import { ApiKeyService } from '../server/src/services/api-keys/index.js';
import { ensureBootstrapWorkspace } from '../server/src/services/bootstrap.js';
import { PlanService } from '../server/src/services/plans.js';
import { createMeteredQuota } from '../server/src/services/usage/index.js';
import { loadConfig } from '../server/src/config.js';
import { estimateTokens } from '../server/src/services/ai-cost.js';
import { localEmbedder } from './lib/embedder.js';
import { bulkLoader } from './lib/bulk-load.js';
import {
  REGULAR_OWNERS,
  ownerName,
  questions,
  regularMemory,
  writerMemory,
} from './lib/generator.js';
import { createBenchDatabase, maintenanceDone } from './lib/database.js';
import { backendCpuOf, backendDelta, cpuMs, readingClient } from './lib/cpu.js';
import { REPO_ROOT, startServer, type ServerProcess, postJson } from './lib/server.js';
import {
  ms,
  percentile,
  rate,
  ratio,
  summarise,
  table,
  timeLoad,
  type Measured,
} from './lib/stats.js';

const int = (name: string, fallback: number) => {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : Number(value);
};
const parseSize = (s: string) =>
  Math.round(Number(s.trim().toLowerCase().replace(/k$/, '')) * (/k$/i.test(s.trim()) ? 1000 : 1));
const label = (n: number) => (n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n));

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SIZE = parseSize(process.env.BENCH_LIMITS_SIZE ?? '10k');
const SEED = int('BENCH_SEED', 42);
const SEARCHES_C1 = int('BENCH_LIMITS_SEARCHES', 1200);
const SEARCHES_C8 = int('BENCH_LIMITS_SEARCHES_C8', 1200);
const WRITES_C1 = int('BENCH_LIMITS_WRITES', 800);
const WRITES_C8 = int('BENCH_LIMITS_WRITES_C8', 1000);
const BLOCK = int('BENCH_LIMITS_BLOCK', 50);
const PLAN = (process.env.BENCH_LIMITS_PLAN ?? 'scale') as PlanCode;
/**
 * Warm-up requests per server before anything is measured. The limit path runs once per request
 * in small functions the JIT optimises late: after 150 warm-up searches a CPU profile of the
 * server still charged it about 0.2 ms per search, against 0.03 ms in the bench process once
 * warm (below). A server in service has long since warmed, which is what the run measures.
 */
const WARMUP_SEARCHES = int('BENCH_LIMITS_WARMUP_SEARCHES', 1000);
/** Pause after each block, longer than the server's 50 ms background flush interval. */
const SETTLE_MS = 150;
const WARMUP_WRITES = int('BENCH_LIMITS_WARMUP_WRITES', 400);
const PROFILE_ROUNDS = 400;
/** BENCH_LIMITS_PHASES=search-c1,write-c1 (for example) to measure some phases; default: all. */
const PHASES = new Set(
  (process.env.BENCH_LIMITS_PHASES ?? 'search-c1,search-c8,write-c1,write-c8')
    .split(',')
    .map((s) => s.trim()),
);
/** BENCH_PG_LOG_MS=<ms>: PostgreSQL logs the bench database's statements slower than that. */
const PG_LOG_MS = process.env.BENCH_PG_LOG_MS;
const API_KEY = `mnemo_bench_${randomBytes(16).toString('hex')}`;
const LOAD_AT_START = loadavg()[0] ?? NaN;
const log = (line: string) => process.stderr.write(`[limits] ${line}\n`);

if (!(PLAN_CODES as readonly string[]).includes(PLAN)) {
  throw new Error(`BENCH_LIMITS_PLAN must be one of ${PLAN_CODES.join(', ')}`);
}

/** Rates so high nothing is refused: the run measures counting, not refusing. */
const RAISED_RATES = {
  MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '1000000',
  MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: '1000000',
  MNEMO_INFLIGHT_PER_WORKSPACE: '1000',
};

interface Config {
  /** Short name used in tables and as the writers' owner prefix. */
  name: 'off' | 'off2' | 'on' | 'on+redis';
  env: Record<string, string>;
}

/** The server's sessions name themselves so, so its backends' CPU is told from the others'. */
const applicationName = (config: Config) => `mnemo-bench-${config.name}`;
const databaseUrlFor = (databaseUrl: string, config: Config) => {
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', applicationName(config));
  return url.toString();
};

const ALL_CONFIGS: Config[] = [
  { name: 'off', env: { MNEMO_LIMITS: 'off' } },
  // The A/A control: a second limits-off server. Its difference from `off` is what the estimators
  // read when nothing differs (process placement, noise), the floor under every other row.
  { name: 'off2', env: { MNEMO_LIMITS: 'off' } },
  {
    name: 'on',
    env: { MNEMO_LIMITS: 'on', MNEMO_INTERNAL_GRANT_PLAN: PLAN, ...RAISED_RATES },
  },
  ...(REDIS_URL
    ? [
        {
          name: 'on+redis' as const,
          env: {
            MNEMO_LIMITS: 'on',
            MNEMO_INTERNAL_GRANT_PLAN: PLAN,
            REDIS_URL,
            ...RAISED_RATES,
          },
        },
      ]
    : []),
];
/** BENCH_LIMITS_CONFIGS=on (for example): run only these servers (diagnosis); default: all. */
const CONFIGS = process.env.BENCH_LIMITS_CONFIGS
  ? ALL_CONFIGS.filter((c) => process.env.BENCH_LIMITS_CONFIGS!.split(',').includes(c.name))
  : ALL_CONFIGS;
if (CONFIGS[0]?.name !== 'off' && CONFIGS.length > 1) {
  // The report compares every configuration with the first, which must be `off`.
  throw new Error('BENCH_LIMITS_CONFIGS: name `off` among several configurations');
}

// ---------------------------------------------------------------------------------------------
// CPU of a process and of the database's backends: lib/cpu.ts

// ---------------------------------------------------------------------------------------------
// Load, in alternating blocks

interface Series {
  latencies: number[];
  /** Latencies per block (bootstrap over blocks). */
  blocks: number[][];
  seconds: number;
  serverCpuMs: number;
  dbCpuMs: number;
  /**
   * CPU of the database's other client backends (the other servers' background work, e.g. a
   * VACUUM) during this configuration's blocks: not charged to it, but it competes for the cores.
   */
  otherDbCpuMs: number;
  /** Statements the server sent to PostgreSQL (socket counter, lib/count-statements.mjs). */
  statements: number;
}

const emptySeries = (): Series => ({
  latencies: [],
  blocks: [],
  seconds: 0,
  serverCpuMs: 0,
  dbCpuMs: 0,
  otherDbCpuMs: 0,
  statements: 0,
});

/**
 * `count` requests per configuration, in blocks of `block`: block k runs on every configuration
 * in turn, starting with configuration k mod n, so none is always first or last after a switch.
 * Each block is bracketed by CPU readings of the server measured, of its own PostgreSQL backends
 * (found by the `application_name` its DATABASE_URL gives it) and of the database's others.
 */
async function interleave(
  servers: Array<{ config: Config; server: ServerProcess }>,
  count: number,
  concurrency: number,
  block: number,
  op: (server: ServerProcess, config: Config, i: number) => Promise<void>,
  cpu: { raw: postgres.Sql; database: string },
): Promise<Series[]> {
  const series = servers.map(emptySeries);
  let k = 0;
  for (let start = 0; start < count; start += block, k += 1) {
    for (let j = 0; j < servers.length; j += 1) {
      const index = (j + k) % servers.length;
      const { config, server } = servers[index]!;
      const s = series[index]!;
      const [cpu0, db0, st0] = await Promise.all([
        cpuMs(server.pid),
        backendCpuOf(cpu.raw, cpu.database, applicationName(config)),
        server.statements(),
      ]);
      const part = await timeLoad(start, Math.min(count, start + block), concurrency, (i) =>
        op(server, config, i),
      );
      // The block's deferred writes (learning signals and audit rows, flushed every 50 ms) land
      // before the next block starts and are charged to this block.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const [cpu1, db1, st1] = await Promise.all([
        cpuMs(server.pid),
        backendCpuOf(cpu.raw, cpu.database, applicationName(config)),
        server.statements(),
      ]);
      s.latencies.push(...part.latencies);
      s.blocks.push(part.latencies);
      s.seconds += part.seconds;
      s.serverCpuMs += cpu1 - cpu0;
      s.dbCpuMs += backendDelta(db0.own, db1.own);
      s.otherDbCpuMs += backendDelta(db0.others, db1.others);
      s.statements += st1.all - st0.all;
    }
  }
  return series;
}

/** The median of unsorted values. */
const p50 = (values: number[]) =>
  percentile(
    [...values].sort((x, y) => x - y),
    50,
  );

/**
 * The median over block rounds of (p50 of b's block − p50 of a's block). Block k of every
 * configuration runs back to back, so each pair saw the same machine; a burst of background work
 * that lands on a few blocks moves a few pairs, not the median. The pooled p50 difference
 * ({@link p50Difference}) has no such protection.
 */
function pairedBlockDifference(a: Series, b: Series): number {
  const n = Math.min(a.blocks.length, b.blocks.length);
  const diffs = Array.from({ length: n }, (_, k) => p50(b.blocks[k]!) - p50(a.blocks[k]!));
  return p50(diffs);
}

/** p50 of b − p50 of a, with a 95 % bootstrap interval over paired blocks. */
function p50Difference(
  a: Series,
  b: Series,
  rounds = 1000,
): { diff: number; lo: number; hi: number } {
  const diff = p50(b.latencies) - p50(a.latencies);
  const n = Math.min(a.blocks.length, b.blocks.length);
  let state = 12345;
  const random = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  const diffs: number[] = [];
  for (let r = 0; r < rounds; r += 1) {
    const xa: number[] = [];
    const xb: number[] = [];
    for (let i = 0; i < n; i += 1) {
      const pick = Math.floor(random() * n);
      xa.push(...a.blocks[pick]!);
      xb.push(...b.blocks[pick]!);
    }
    diffs.push(p50(xb) - p50(xa));
  }
  diffs.sort((x, y) => x - y);
  return { diff, lo: percentile(diffs, 2.5), hi: percentile(diffs, 97.5) };
}

// ---------------------------------------------------------------------------------------------
// Requests

const post = (base: string, path: string, body: unknown) => postJson(base, path, API_KEY, body);

const ownerOf = (i: number) => ownerName((i * 37) % Math.min(SIZE, REGULAR_OWNERS));
const QUESTIONS = questions(SEED, 512);

const search = async (server: ServerProcess, _config: Config, i: number): Promise<void> => {
  await post(server.base, '/v1/search', {
    query: QUESTIONS[i % QUESTIONS.length]!,
    user_id: ownerOf(i),
    search_mode: 'hybrid',
    top_k: 10,
  });
};

/** Writes answered `deduped` (nothing stored; the reservation is released, not committed), by configuration. */
const deduped = new Map<string, number>();

/**
 * Write i of a stream: the same text on every configuration (the same dedupe decisions, the same
 * work), under owners of the configuration's own, so none dedupes against another's writes.
 */
const writer =
  (stream: number) =>
  async (server: ServerProcess, config: Config, i: number): Promise<void> => {
    const item = writerMemory(SEED, stream, i);
    const text = await post(server.base, '/v1/memories', {
      text: item.text,
      user_id: `${config.name}-${item.ownerId}`,
      memory_type: item.memoryType,
      extract: false,
    });
    if (stream !== WARMUP_STREAM && (JSON.parse(text) as { deduped?: boolean }).deduped)
      deduped.set(config.name, (deduped.get(config.name) ?? 0) + 1);
  };
const WARMUP_STREAM = 99;

// ---------------------------------------------------------------------------------------------
// Where the metering time goes (in this process, against the same database)

interface Piece {
  name: string;
  m: Measured;
}

async function timeEach(rounds: number, op: () => Promise<unknown>): Promise<Measured> {
  for (let i = 0; i < 50; i += 1) await op();
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < rounds; i += 1) {
    const t0 = performance.now();
    await op();
    latencies.push(performance.now() - t0);
  }
  return summarise(latencies, (performance.now() - started) / 1000);
}

async function profilePieces(db: Database, workspaceId: string): Promise<Piece[]> {
  const pieces: Piece[] = [];
  const plans = new PlanService(db, { internalGrantPlan: PLAN });
  const quota = createMeteredQuota({ db, plans });
  const query = QUESTIONS[0]!;
  const searchUsage = { workspaceId, reads: 1, embeds: 1, embedTokens: estimateTokens(query) };
  const writeUsage = { workspaceId, writes: 1, embeds: 1 };
  pieces.push({
    name: 'one round trip (`select 1`, Drizzle + postgres.js)',
    m: await timeEach(PROFILE_ROUNDS, () => executeRows(db, sql`select 1`)),
  });
  pieces.push({
    name: 'plan lookup, cached (PlanService.resolve)',
    m: await timeEach(PROFILE_ROUNDS * 10, () => plans.resolve(workspaceId)),
  });
  pieces.push({
    name: 'plan lookup, uncached (entitlement read)',
    m: await timeEach(
      PROFILE_ROUNDS,
      () => (plans.invalidate(workspaceId), plans.resolve(workspaceId)),
    ),
  });
  for (const [shape, usage] of [
    ['search', searchUsage],
    ['write', writeUsage],
  ] as const) {
    let held: Awaited<ReturnType<typeof quota.reserve>>[] = [];
    const reserve = await timeEach(PROFILE_ROUNDS, async () =>
      held.push(await quota.reserve(usage)),
    );
    // Settle what the warm-up and the timed rounds reserved, timing the timed ones.
    const warm = held.splice(0, held.length - PROFILE_ROUNDS);
    for (const r of warm) await r.commit();
    let next = 0;
    const commit = await timeEach(PROFILE_ROUNDS - 50, () => held[next++]!.commit());
    for (const r of held.slice(next)) await r.commit();
    held = [];
    pieces.push({ name: `reserve, ${shape} shape (plan cached + 1 trip)`, m: reserve });
    pieces.push({ name: `commit, ${shape} shape (1 trip)`, m: commit });
  }
  pieces.push({
    name: 'reserve + commit back to back, search shape',
    m: await timeEach(PROFILE_ROUNDS, async () => (await quota.reserve(searchUsage)).commit()),
  });
  // The server's default: blocks of the configured size, settled with what was used.
  const config = loadConfig({});
  const blockQuota = createMeteredQuota({ db, plans, blocks: config.limits.blocks });
  for (const [shape, usage] of [
    ['search', searchUsage],
    ['write', writeUsage],
  ] as const) {
    pieces.push({
      name: `reserve + commit back to back, ${shape} shape, block metering (${config.limits.blocks.requestsPerBlock} per block)`,
      m: await timeEach(PROFILE_ROUNDS, async () => (await blockQuota.reserve(usage)).commit()),
    });
  }
  await blockQuota.drain?.();

  const backends: Array<[string, LimitBackend]> = [
    ['memory', await createLimitBackend({ keyPrefix: `bench-${randomBytes(4).toString('hex')}` })],
  ];
  if (REDIS_URL) {
    backends.push([
      'redis',
      await createLimitBackend({
        redisUrl: REDIS_URL,
        keyPrefix: `bench-${randomBytes(4).toString('hex')}`,
      }),
    ]);
  }
  try {
    for (const [kind, backend] of backends) {
      const counter = backend.counter({ name: 'rpm', points: 1e9, durationSeconds: 60 });
      pieces.push({
        name: `rate counters (key + workspace: 2 consumes), ${kind}`,
        m: await timeEach(PROFILE_ROUNDS, async () => {
          await counter.consume('key', 1);
          await counter.consume('workspace', 1);
        }),
      });
      pieces.push({
        name: `in-flight lease acquire + release, ${kind}`,
        m: await timeEach(PROFILE_ROUNDS, async () => {
          const lease = await backend.leases.acquire('inflight:bench', 1000, 30_000);
          await lease.release();
        }),
      });
    }
  } finally {
    for (const [, backend] of backends) await backend.close();
  }
  return pieces;
}

// ---------------------------------------------------------------------------------------------

interface Phase {
  op: 'search hybrid' | 'write extract=off';
  concurrency: number;
  count: number;
  series: Series[];
}

function machine(): string {
  const version = (url: string, args: string[]) => {
    try {
      return execFileSync(url, args, { encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  };
  return [
    `- Date: ${new Date().toISOString()}`,
    `- Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory`,
    `- Node ${process.version}, PostgreSQL ${version('psql', [ADMIN_URL, '-tAc', 'show server_version'])} (pgvector, 127.0.0.1)` +
      (REDIS_URL
        ? `, Redis ${version('redis-cli', ['-u', REDIS_URL, 'info', 'server']).match(/redis_version:(\S+)/)?.[1] ?? 'unknown'} (${REDIS_URL})`
        : ''),
    `- Load average (1 min) at start ${LOAD_AT_START.toFixed(2)}, at end ${(loadavg()[0] ?? NaN).toFixed(2)} (${cpus().length} cores: above that, processes queue for CPU)`,
    `- Seed ${SEED}; data: ${label(SIZE)} memories over ${Math.min(SIZE, REGULAR_OWNERS)} owners; per configuration: ${SEARCHES_C1} / ${SEARCHES_C8} searches, ${WRITES_C1} / ${WRITES_C8} writes at concurrency 1 / 8; blocks of ${BLOCK} (concurrency 8: ${blockFor(8)})`,
  ].join('\n');
}

const blockFor = (concurrency: number) => (concurrency === 1 ? BLOCK : Math.round((BLOCK * 8) / 4));

function report(phases: Phase[], pieces: Piece[]): string {
  const out: string[] = ['# Mnemo: what limits cost\n', machine(), ''];
  out.push(
    'Four servers, each its own process (`node --import tsx`, as `pnpm start`, local embedder and rerank) on one PostgreSQL ' +
      `database, all started at once: **off** \`MNEMO_LIMITS=off\`; **off2** the same again, the A/A control (its difference from off is what ' +
      'the estimators read when nothing differs); **on** limits on (internal grant \`${PLAN}\`: plan caps and ` +
      'metering in PostgreSQL, rate counters and in-flight leases in memory); **on+redis** the same with `REDIS_URL` (rate counters and ' +
      'leases on Redis; metering stays in PostgreSQL). Per-key and per-workspace rates raised to 10^6 per minute and in-flight to 1000, so ' +
      'nothing is refused: this is the cost of counting. Requests alternate between the servers block by block (the order rotating), so drift ' +
      'and other work on this shared machine fall on all alike. Searches: hybrid, a regular owner, `top_k` 10. Writes: ' +
      '`extract: false`, the same texts on every configuration under owners of its own. Latencies in ms. CPU: utime + stime from ' +
      '`/proc/<pid>/stat` over the blocks of that configuration ÷ its requests, for the server process and for its own ' +
      'PostgreSQL backends (each server\'s DATABASE_URL names its sessions `mnemo-bench-<configuration>`); "other backends" is what ' +
      "the database's other client backends (the other servers' background work) used meanwhile, competing for the same cores. Each block ends with a " +
      `${SETTLE_MS} ms pause, so its deferred writes (learning signals and audit rows, flushed every 50 ms) are charged to it and do not run beside the next block.\n`,
  );
  out.push('## Latency and CPU per request\n');
  const rows: string[][] = [];
  for (const phase of phases) {
    phase.series.forEach((s, index) => {
      const m = summarise(s.latencies, s.seconds);
      rows.push([
        phase.op,
        String(phase.concurrency),
        CONFIGS[index]!.name,
        String(m.count),
        ms(m.p50),
        ms(m.p95),
        ms(m.p99),
        rate(m.rate),
        ms(s.serverCpuMs / m.count),
        ms(s.dbCpuMs / m.count),
        ms(s.otherDbCpuMs / m.count),
        (s.statements / m.count).toFixed(2),
      ]);
    });
  }
  out.push(
    table(
      [
        'operation',
        'c',
        'limits',
        'requests',
        'p50',
        'p95',
        'p99',
        'req/s',
        'server CPU ms/req',
        'PG CPU ms/req',
        'other backends CPU ms/req',
        'statements/req',
      ],
      rows,
    ),
    '',
  );

  out.push('## Added cost (versus off)\n');
  out.push(
    '`Δ p50`: p50 of the configuration − p50 of off, with a 95 % bootstrap interval over paired blocks; "median of paired blocks": ' +
      'the median over block rounds of (block p50 − off block p50), each pair run back to back, which a burst of background work ' +
      'on a few blocks does not move; ratios are configuration ÷ off.\n',
  );
  const added: string[][] = [];
  for (const phase of phases) {
    const off = phase.series[0]!;
    const offM = summarise(off.latencies, off.seconds);
    phase.series.forEach((s, index) => {
      if (index === 0) return;
      const m = summarise(s.latencies, s.seconds);
      const d = p50Difference(off, s);
      added.push([
        phase.op,
        String(phase.concurrency),
        CONFIGS[index]!.name,
        `${ms(d.diff)} [${ms(d.lo)}, ${ms(d.hi)}]`,
        ms(pairedBlockDifference(off, s)),
        ratio(m.p50 / offM.p50),
        ms(m.p95 - offM.p95),
        ratio(m.p95 / offM.p95),
        ms(s.serverCpuMs / m.count - off.serverCpuMs / offM.count),
        ms(s.dbCpuMs / m.count - off.dbCpuMs / offM.count),
        (s.statements / m.count - off.statements / offM.count).toFixed(2),
      ]);
    });
  }
  out.push(
    table(
      [
        'operation',
        'c',
        'limits',
        'Δ p50 ms [95 %]',
        'Δ p50, median of paired blocks',
        '÷ off p50',
        'Δ p95 ms',
        '÷ off p95',
        'Δ server CPU ms/req',
        'Δ PG CPU ms/req',
        'Δ statements/req',
      ],
      added,
    ),
    '',
  );

  out.push('## Target\n');
  const targets: string[][] = [];
  // Limits on PostgreSQL (`on`) against `off`; a run of a subset without both has no target rows.
  const [offAt, off2At, onAt] = ['off', 'off2', 'on'].map((name) =>
    CONFIGS.findIndex((c) => c.name === name),
  );
  for (const phase of phases.filter((p) => p.concurrency === 1)) {
    if (offAt! < 0 || onAt! < 0) break;
    const d = p50Difference(phase.series[offAt!]!, phase.series[onAt!]!);
    const paired = pairedBlockDifference(phase.series[offAt!]!, phase.series[onAt!]!);
    const control =
      off2At! < 0
        ? 'not run'
        : `${ms(p50Difference(phase.series[offAt!]!, phase.series[off2At!]!).diff)} / ` +
          ms(pairedBlockDifference(phase.series[offAt!]!, phase.series[off2At!]!));
    // Met only when both estimates of the added p50 are within the target.
    targets.push([
      `${phase.op}, c1: added p50, limits on vs off (PostgreSQL)`,
      '≤ 0.3 ms',
      `${ms(d.diff)} [${ms(d.lo)}, ${ms(d.hi)}]`,
      ms(paired),
      control,
      d.diff <= 0.3 && paired <= 0.3
        ? d.hi <= 0.3
          ? 'met'
          : 'met (interval reaches past 0.3)'
        : 'missed',
    ]);
  }
  out.push(
    table(
      [
        'target',
        'limit',
        'pooled Δ p50 [95 %]',
        'median of paired blocks',
        'A/A control off2 − off (pooled / paired)',
        'status',
      ],
      targets,
    ),
    '',
  );
  out.push(
    '(Concurrency 1 is the per-request cost. At concurrency 8 two cores are saturated, so latency there grows with CPU per request ' +
      "rather than with the work on one request's path; see the CPU columns.)\n",
  );

  out.push('## Where the metering time goes\n');
  out.push(
    `Measured in the bench process against the same database (sequential, ${PROFILE_ROUNDS} rounds each after 50 warm-up), with ` +
      "the server's own code: `createMeteredQuota` (`services/usage/index.ts`), `PlanService` (`services/plans.ts`), `createLimitBackend` " +
      '(`limits/backend.ts`). An exact reservation and a settlement are each one statement, on connections that commit ' +
      'without waiting for the WAL flush (`synchronous_commit` off). The server meters in blocks by default (`services/usage/blocks.ts`, docs/limits.md): one such reservation ' +
      'serves a run of similar requests from memory, so most requests make no metering round trip; near a cap it reserves exactly.\n',
  );
  out.push(
    table(
      ['piece', 'p50 ms', 'p95 ms', 'p99 ms'],
      pieces.map((p) => [p.name, p.m.p50.toFixed(3), p.m.p95.toFixed(3), p.m.p99.toFixed(3)]),
    ),
    '',
  );
  return out.join('\n');
}

function checkCaps(): void {
  const caps = planCaps(PLANS[PLAN]);
  const onServers = CONFIGS.filter((c) => c.env.MNEMO_LIMITS === 'on').length;
  // One workspace for all: the metered configurations share its counters.
  const reads = onServers * (SEARCHES_C1 + SEARCHES_C8 + WARMUP_SEARCHES) + 3 * PROFILE_ROUNDS;
  const writes = onServers * (WRITES_C1 + WRITES_C8 + WARMUP_WRITES) + PROFILE_ROUNDS + 50;
  const embeds = reads + writes * 2;
  const tokens = reads * 40;
  const over = [
    ['reads', reads, caps.reads],
    ['writes', writes, caps.writes],
    ['embeds', embeds, caps.embeds],
    ['embed_tokens', tokens, caps.embed_tokens],
  ].filter(([, need, cap]) => (need as number) > (cap as number));
  if (over.length > 0) {
    throw new Error(
      `the ${PLAN} plan's caps are too small for this run (${over.map(([r, n, c]) => `${r} ${n} > ${c}`).join(', ')}); ` +
        'use fewer requests or a bigger BENCH_LIMITS_PLAN',
    );
  }
  log(
    `caps of ${PLAN} suffice: reads ${reads}/${caps.reads}, writes ${writes}/${caps.writes}, embeds ≤${embeds}/${caps.embeds}`,
  );
}

async function main(): Promise<void> {
  const started = performance.now();
  checkCaps();
  const bench = await createBenchDatabase(ADMIN_URL, PG_LOG_MS);
  const { databaseUrl } = bench;
  log(`postgres: database ${bench.name}`);
  const raw = readingClient(databaseUrl);
  let handle: Awaited<ReturnType<typeof openDatabase>> | undefined;
  const servers: Array<{ config: Config; server: ServerProcess }> = [];
  try {
    handle = await openDatabase({ databaseUrl });
    const apiKeys = await ApiKeyService.create(handle.db);
    const boot = await ensureBootstrapWorkspace(handle.db, apiKeys, {
      bootstrapApiKey: API_KEY,
      bootstrapWorkspaceName: 'bench',
    });
    const workspaceId = boot.workspaceId!;
    const loader = bulkLoader(localEmbedder(), workspaceId);
    loader.attach(handle.db);
    const t0 = performance.now();
    await loader.load(
      (function* () {
        for (let i = 0; i < SIZE; i += 1) yield regularMemory(SEED, i);
      })(),
    );
    await raw.unsafe('analyze');
    log(`loaded ${loader.stored} memories in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    for (const config of CONFIGS) {
      const server = await startServer({
        DATABASE_URL: databaseUrlFor(databaseUrl, config),
        MNEMO_BOOTSTRAP_API_KEY: API_KEY,
        MNEMO_BOOTSTRAP_WORKSPACE: 'bench',
        ...config.env,
      });
      servers.push({ config, server });
      log(
        `server ${config.name}: pid ${server.pid}, ${server.coldStartMs.toFixed(0)} ms to /healthz`,
      );
    }
    // Warm-up on each: JIT, pools, buffer cache, the metered ones' counter rows and entitlement.
    for (const { config, server } of servers) {
      for (let i = 0; i < WARMUP_SEARCHES; i += 1) await search(server, config, 10_000 + i);
      for (let i = 0; i < WARMUP_WRITES; i += 1) await writer(WARMUP_STREAM)(server, config, i);
    }
    // The servers' start-up VACUUM (ANALYZE) runs in the background on their own connections:
    // measured, its CPU would fall on whichever server's requests ran beside it.
    await maintenanceDone(raw, bench.name);
    const cpu = { raw, database: bench.name };
    const phases: Phase[] = [];
    const plan: Array<[Phase['op'], number, number]> = [
      ['search hybrid', 1, SEARCHES_C1],
      ['search hybrid', 8, SEARCHES_C8],
      ['write extract=off', 1, WRITES_C1],
      ['write extract=off', 8, WRITES_C8],
    ];
    let stream = 0;
    for (const [op, concurrency, count] of plan) {
      stream += 1;
      if (!PHASES.has(`${op.split(' ')[0]}-c${concurrency}`)) continue;
      const run = op === 'search hybrid' ? search : writer(stream);
      const series = await interleave(servers, count, concurrency, blockFor(concurrency), run, cpu);
      phases.push({ op, concurrency, count, series });
      log(
        `${op} c${concurrency}: ` +
          series
            .map(
              (s, i) =>
                `${CONFIGS[i]!.name} p50 ${ms(
                  percentile(
                    [...s.latencies].sort((a, b) => a - b),
                    50,
                  ),
                )}`,
            )
            .join(', '),
      );
    }
    for (const { server } of servers.splice(0)) await server.stop();
    log('profiling the pieces…');
    const pieces = await profilePieces(handle.db, workspaceId);

    const text = report(phases, pieces);
    process.stdout.write(text + '\n');
    if (process.env.BENCH_RESULTS !== 'off') {
      const dir = join(REPO_ROOT, 'bench', 'results');
      await mkdir(dir, { recursive: true });
      const date = new Date().toISOString().slice(0, 10);
      await writeFile(join(dir, `limits-${date}.md`), text + '\n');
      await writeFile(join(dir, 'limits-latest.md'), text + '\n');
      log(`wrote bench/results/limits-${date}.md`);
    }
    log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    for (const { server } of servers) await server.stop();
    await handle?.close();
    await raw.end({ timeout: 5 });
    await bench.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
