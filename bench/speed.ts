/**
 * Speed and scale: the server as its own process over HTTP, on PostgreSQL and on PGlite, with the
 * local embedder, at growing data sizes; beside it in the same run the floor (the same hybrid
 * recall as plain SQL, no HTTP) and the peer (mem0's open-source memory on the same data).
 * Prints markdown tables and writes them to bench/results/speed-<date>.md and speed-latest.md.
 *
 *   pnpm bench:speed
 *   BENCH_SIZES=1k,10k BENCH_PGLITE_SIZES=1k BENCH_MEM0_SIZES=1k BENCH_MEM0_PG_SIZES=1k pnpm bench:speed   (shorter)
 *
 * Sizes are regular memories spread over 1,000 owners, loaded cumulatively (10k adds 9k to 1k),
 * plus one heavy owner with 10k memories. A sample of writes goes through HTTP (that is the write
 * throughput figure); the rest is bulk-loaded (see lib/bulk-load.ts).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import {
  SESSION_SETTINGS,
  executeRows,
  openDatabase,
  type Database,
} from '../server/src/db/client.js';
import { PGLITE_EXTENSIONS } from '../server/src/db/pglite-extensions.js';
import { maintainOwnerIndexes } from '../server/src/db/queries/owner-indexes.js';
import { ApiKeyService } from '../server/src/services/api-keys/index.js';
import { ensureBootstrapWorkspace } from '../server/src/services/bootstrap.js';
import { localEmbedder } from './lib/embedder.js';
import { bulkLoader, withIndexesDeferred } from './lib/bulk-load.js';
import { vectorStageRecall, type RecallOutcome } from './lib/vector-recall.js';
import {
  floorSearch,
  keywordParams,
  KEYWORD_SQL,
  SESSION_SETTING,
  vectorParams,
  vectorSql,
  type Execute,
} from './lib/floor.js';
import {
  HEAVY_MEMORIES,
  HEAVY_OWNER,
  LONG_MEMORIES_PER_OWNER,
  REGULAR_OWNERS,
  heavyMemory,
  longMemoryAt,
  longOwnerName,
  ownerName,
  questions,
  regularMemory,
  writerMemory,
  batchConversation,
} from './lib/generator.js';
import { createBenchDatabase, maintenanceDone } from './lib/database.js';
import { REPO_ROOT, startServer, type ServerProcess, postJson } from './lib/server.js';
import { addCost, measured, noCost, readingClient, type Cost, type CostProbe } from './lib/cpu.js';
import {
  ms,
  rate,
  ratio,
  runLoad,
  summarise,
  table,
  timeLoad,
  type Measured,
} from './lib/stats.js';
import type { PeerSize, PeerStore } from './mem0-peer.js';

const SIZE_SUFFIX: Record<string, number> = { k: 1_000, m: 1_000_000 };
const parseSizes = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)
    .map((s) => Math.round(Number(s.replace(/[km]$/, '')) * (SIZE_SUFFIX[s.slice(-1)] ?? 1)));
const label = (n: number) =>
  n >= 1_000_000 && n % 1_000_000 === 0
    ? `${n / 1_000_000}m`
    : n >= 1000 && n % 1000 === 0
      ? `${n / 1000}k`
      : String(n);

const SIZES = parseSizes(process.env.BENCH_SIZES ?? '1k,10k,100k');
const PGLITE_SIZES = parseSizes(process.env.BENCH_PGLITE_SIZES ?? '1k,10k');
const MEM0_SIZES = process.env.BENCH_MEM0_SIZES ?? '1k,10k';
/** mem0 on its pgvector store (HNSW; adds in milliseconds, unlike its SQLite store's searches). */
const MEM0_PG_SIZES = process.env.BENCH_MEM0_PG_SIZES ?? '1k,10k,100k';
const SEED = Number(process.env.BENCH_SEED ?? 42);
const SEARCHES_C1 = Number(process.env.BENCH_SEARCHES ?? 200);
const SEARCHES_C8 = Number(process.env.BENCH_SEARCHES_C8 ?? 400);
const WRITES_C1 = Number(process.env.BENCH_WRITES ?? 150);
const WRITES_C8 = Number(process.env.BENCH_WRITES_C8 ?? 400);
const WRITES_C50 = Number(process.env.BENCH_WRITES_C50 ?? 500);
/** Memories per row of the `batch` phase (requests of BATCH_SIZES items each). */
const BATCH_MEMORIES = Number(process.env.BENCH_BATCH_MEMORIES ?? 4000);
const BATCH_SIZES = [20, 100];
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const API_KEY = `mnemo_bench_${randomBytes(16).toString('hex')}`;
const MODES = ['hybrid', 'vector', 'keyword'] as const;
/** BENCH_PHASES=writes (for example) to profile one phase; default: all. */
const PHASES = new Set(
  (process.env.BENCH_PHASES ?? 'writes,batch,search,floor,explain,recall')
    .split(',')
    .map((s) => s.trim()),
);
/** BENCH_PG_LOG_MS=<ms>: PostgreSQL logs this database's statements slower than that (its server log), for profiling. */
const PG_LOG_MS = process.env.BENCH_PG_LOG_MS;
/**
 * BENCH_AUTO_EXPLAIN_MS=<ms>: PostgreSQL's auto_explain logs the plans (analyzed, with buffers) of
 * the bench database's statements slower than that, the server's own search statement included.
 */
const AUTO_EXPLAIN_MS = process.env.BENCH_AUTO_EXPLAIN_MS;
/** Long memories (session transcripts, 50 per owner), a database of their own: e.g. `10k`. */
const LONG_SIZES = parseSizes(process.env.BENCH_LONG_SIZES ?? '10k');
/**
 * Owners larger than the heavy one (e.g. `100k`), added with the largest PostgreSQL size only, so
 * the smaller sizes keep their shape; each is measured as the scope `heavy <size>`.
 */
const LARGE_OWNER_SIZES = parseSizes(process.env.BENCH_LARGE_OWNERS ?? '');
const largeOwnerScope = (memories: number) => `heavy ${label(memories)}`;

/** The owner a request of `scope` reads: regular owners in turn, or the scope's one owner. */
function ownerOfScope(scope: string, i: number, size: number): string {
  if (scope === 'owner') return ownerOf(i, size);
  if (scope === 'heavy') return HEAVY_OWNER;
  return `${HEAVY_OWNER}-${scope.slice('heavy '.length)}`;
}

type Backend = 'postgres' | 'pglite';

interface Row {
  backend: Backend;
  size: number;
  /** What was measured, e.g. `search hybrid`, `context`, `write extract=off`, `floor hybrid`. */
  op: string;
  /** `owner` (a regular owner), `heavy` (the 10k owner), or `-`. */
  scope: string;
  concurrency: number;
  m: Measured;
  /** What the requests cost in all (divide by m.count); undefined when not measured. */
  cost?: Cost;
  /** Service rows measured beside the floor: the p50 (p95) ratio of each interleaved round. */
  rounds?: { p50: number[]; p95: number[] };
}

interface SizeFacts {
  backend: Backend;
  size: number;
  stored: number;
  loadSeconds: number;
  /** Of loadSeconds, building the indexes again after a load that deferred them. */
  indexSeconds?: number;
  /** Building owners' own HNSW indexes after the load (not part of loadSeconds). */
  ownIndexSeconds?: number;
  coldStartMs: number;
  rssMiB: number;
  peakMiB: number;
  dbMiB: number;
}

const rows: Row[] = [];
/** The 1-minute load average when the run started: other work on this machine skews every figure. */
const LOAD_AT_START = loadavg()[0] ?? NaN;
/** EXPLAIN ANALYZE of the recall statements at the largest PostgreSQL size, for the report. */
const plans: string[] = [];
const facts: SizeFacts[] = [];
/** Vector stage recall@10 against exact search, per PostgreSQL size and owner kind. */
const vectorRecalls: Array<{ size: number; scope: string; owners: number } & RecallOutcome> = [];
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

const post = async (base: string, path: string, body: unknown): Promise<void> => {
  await postJson(base, path, API_KEY, body);
};

async function folderMiB(path: string): Promise<number> {
  let bytes = 0;
  for (const entry of await readdir(path, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return bytes / 2 ** 20;
}

/** The regular owner searched by request i (spread over the owners that have memories). */
const ownerOf = (i: number, size: number) => ownerName((i * 37) % Math.min(size, REGULAR_OWNERS));

/** Rounds of service ÷ floor, each its own interleaved loop; the report gives their median. */
const FLOOR_ROUNDS = 3;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)]!;
};

/** How to read a server's CPU and statements (and its database's backends on PostgreSQL). */
function probeOf(server: ServerProcess, database?: CostProbe['database']): CostProbe {
  return {
    pid: server.pid,
    statements: () => server.statements(),
    ...(database ? { database } : {}),
  };
}

async function measureWrites(
  server: ServerProcess,
  probe: CostProbe,
  backend: Backend,
  size: number,
): Promise<void> {
  let stream = size; // distinct writer owners per size, so no write is a duplicate of an earlier one
  for (const concurrency of [1, 8, 50]) {
    // At 50 only without extraction (the issue's p95 target).
    for (const extract of concurrency === 50 ? [false] : [false, true]) {
      stream += 1;
      const s = stream;
      const count = concurrency === 1 ? WRITES_C1 : concurrency === 8 ? WRITES_C8 : WRITES_C50;
      const [m, cost] = await measured(probe, () =>
        runLoad(count, concurrency, async (i) => {
          const item = writerMemory(SEED, s, i);
          await post(server.base, '/v1/memories', {
            text: item.text,
            user_id: item.ownerId,
            memory_type: item.memoryType,
            ...(extract ? {} : { extract: false }),
          });
        }),
      );
      rows.push({
        backend,
        size,
        op: `write extract=${extract ? 'on' : 'off'}`,
        scope: '-',
        concurrency,
        m,
        cost,
      });
      log(
        `${backend} ${label(size)} write c${concurrency} extract=${extract}: ${rate(m.rate)}/s p50 ${ms(m.p50)}`,
      );
    }
  }
}

/**
 * Batch writes: POST /v1/ingest with a conversation of `size` messages, one memory each
 * (extraction off), at concurrency 1 and 4. Rows count requests; the report divides by `size`.
 */
async function measureBatchWrites(
  server: ServerProcess,
  probe: CostProbe,
  backend: Backend,
  size: number,
): Promise<void> {
  // Streams (owners and texts) of their own per size: a size must not replay an earlier one's.
  let stream = 10 * SIZES.indexOf(size);
  // Warm-up: the batch statements prepared on the pools' connections.
  const warm = stream;
  await runLoad(8, 4, (i) => post(server.base, '/v1/ingest', batchConversation(SEED, warm, i, 20)));
  for (const batch of BATCH_SIZES) {
    for (const concurrency of [1, 4]) {
      stream += 1;
      const s = stream;
      const [m, cost] = await measured(probe, () =>
        runLoad(Math.ceil(BATCH_MEMORIES / batch), concurrency, (i) =>
          post(server.base, '/v1/ingest', batchConversation(SEED, s, i, batch)),
        ),
      );
      rows.push({ backend, size, op: `ingest batch=${batch}`, scope: '-', concurrency, m, cost });
      log(
        `${backend} ${label(size)} ingest batch=${batch} c${concurrency}: ${rate(m.rate * batch)} memories/s p50 ${ms(m.p50)}`,
      );
    }
  }
}

type ScopedOp = (i: number, scope: string) => Promise<void>;

/**
 * The service and the floor in the same loop: FLOOR_ROUNDS rounds of `count` requests each, in
 * alternating blocks of `block` (the first of a pair alternates too), each block bracketed by
 * CPU and statement readings. Latencies of all rounds are pooled; each round also gives its own
 * p50 and p95 ratio, so one burst of other work on the machine moves one round, not the median.
 */
async function besideFloor(
  probe: CostProbe,
  count: number,
  concurrency: number,
  service: (i: number) => Promise<void>,
  floor: (i: number) => Promise<void>,
  block = 25,
): Promise<{
  ours: Row['m'];
  base: Row['m'];
  oursCost: Cost;
  baseCost: Cost;
  rounds: NonNullable<Row['rounds']>;
}> {
  const all = { ours: [] as number[], base: [] as number[], oursS: 0, baseS: 0 };
  const oursCost = noCost();
  const baseCost = noCost();
  const rounds = { p50: [] as number[], p95: [] as number[] };
  let k = 0;
  for (let round = 0; round < FLOOR_ROUNDS; round += 1) {
    const ours: number[] = [];
    const base: number[] = [];
    let oursS = 0;
    let baseS = 0;
    for (let start = 0; start < count; start += block, k += 1) {
      const end = Math.min(count, start + block);
      const pair = [
        { op: service, into: ours, cost: oursCost, service: true },
        { op: floor, into: base, cost: baseCost, service: false },
      ];
      if (k % 2 === 1) pair.reverse();
      for (const part of pair) {
        const [timed, cost] = await measured(probe, () =>
          timeLoad(start, end, concurrency, part.op),
        );
        part.into.push(...timed.latencies);
        addCost(part.cost, cost);
        if (part.service) oursS += timed.seconds;
        else baseS += timed.seconds;
      }
    }
    const a = summarise(ours, oursS);
    const b = summarise(base, baseS);
    rounds.p50.push(a.p50 / b.p50);
    rounds.p95.push(a.p95 / b.p95);
    all.ours.push(...ours);
    all.base.push(...base);
    all.oursS += oursS;
    all.baseS += baseS;
  }
  return {
    ours: summarise(all.ours, all.oursS),
    base: summarise(all.base, all.baseS),
    oursCost,
    baseCost,
    rounds,
  };
}

/**
 * Search (each mode) and context latency per owner scope and concurrency. With `floor` (PostgreSQL,
 * where the floor can run beside the server), hybrid search and the floor are measured in
 * alternating blocks, so their ratio is not skewed by load that came and went between them.
 */
async function measureSearches(
  server: ServerProcess,
  probe: CostProbe,
  backend: Backend,
  size: number,
  floor?: ScopedOp,
  scopes: readonly string[] = ['owner', 'heavy'],
): Promise<void> {
  const qs = questions(SEED, Math.max(SEARCHES_C1, SEARCHES_C8));
  const payload = (i: number, scope: string, mode: string) => ({
    query: qs[i % qs.length]!,
    user_id: ownerOfScope(scope, i, size),
    search_mode: mode,
    top_k: 10,
  });
  // Warm-up: JIT, connection pool, buffer cache.
  await runLoad(100, 4, (i) =>
    post(server.base, '/v1/search', payload(i, scopes[i % scopes.length]!, 'hybrid')),
  );
  if (floor) await runLoad(100, 4, (i) => floor(i, scopes[i % scopes.length]!));
  for (const scope of scopes) {
    for (const concurrency of [1, 8]) {
      const count = concurrency === 1 ? SEARCHES_C1 : SEARCHES_C8;
      for (const mode of MODES) {
        const search = (i: number) => post(server.base, '/v1/search', payload(i, scope, mode));
        if (mode === 'hybrid' && floor) {
          const paired = await besideFloor(probe, count, concurrency, search, (i) =>
            floor(i, scope),
          );
          rows.push({
            backend,
            size,
            op: `search ${mode}`,
            scope,
            concurrency,
            m: paired.ours,
            cost: paired.oursCost,
            rounds: paired.rounds,
          });
          rows.push({
            backend,
            size,
            op: 'floor hybrid',
            scope,
            concurrency,
            m: paired.base,
            // The floor runs in this process: only its database side is the server's to compare.
            cost: {
              ...paired.baseCost,
              serverCpuMs: NaN,
              statements: 2 * paired.base.count,
              deferredStatements: 0,
            },
          });
        } else {
          const [m, cost] = await measured(probe, () => runLoad(count, concurrency, search));
          rows.push({ backend, size, op: `search ${mode}`, scope, concurrency, m, cost });
        }
      }
      const [m, cost] = await measured(probe, () =>
        runLoad(count, concurrency, (i) =>
          post(server.base, '/v1/context', payload(i, scope, 'hybrid')),
        ),
      );
      rows.push({ backend, size, op: 'context', scope, concurrency, m, cost });
      const hybrid = find(backend, size, 'search hybrid', scope, concurrency);
      log(
        `${backend} ${label(size)} ${scope} c${concurrency}: hybrid p50 ${ms(hybrid?.p50 ?? NaN)} context p50 ${ms(m.p50)}`,
      );
    }
  }
}

function floorOp(execute: Execute, workspaceId: string, size: number): ScopedOp {
  const embeddings = localEmbedder();
  const qs = questions(SEED, Math.max(SEARCHES_C1, SEARCHES_C8));
  return (i, scope) =>
    floorSearch(execute, embeddings, {
      workspaceId,
      ownerId: ownerOfScope(scope, i, size),
      query: qs[i % qs.length]!,
      limit: 50,
      topK: 10,
    }).then(() => undefined);
}

/** The floor alone (PGlite: the server must be stopped for this process to open the folder). */
async function measureFloor(
  execute: Execute,
  workspaceId: string,
  backend: Backend,
  size: number,
  scopes: readonly string[] = ['owner', 'heavy'],
): Promise<void> {
  const search = floorOp(execute, workspaceId, size);
  await runLoad(100, 4, (i) => search(i, scopes[i % scopes.length]!));
  for (const scope of scopes) {
    for (const concurrency of [1, 8]) {
      const m = await runLoad(concurrency === 1 ? SEARCHES_C1 : SEARCHES_C8, concurrency, (i) =>
        search(i, scope),
      );
      rows.push({ backend, size, op: 'floor hybrid', scope, concurrency, m });
    }
  }
}

/** Owners sampled for the recall of the vector stage, and questions per owner. */
const RECALL_OWNERS = 10;
const RECALL_QUERIES = { owner: 20, heavy: 100 };

async function measureVectorRecall(
  execute: Execute,
  workspaceId: string,
  size: number,
  scopes: readonly string[] = ['owner', 'heavy'],
) {
  const embeddings = localEmbedder();
  for (const scope of scopes) {
    const owners =
      scope === 'owner'
        ? Array.from({ length: RECALL_OWNERS }, (_, i) => ownerOf(i, size))
        : [ownerOfScope(scope, 0, size)];
    const outcomes: RecallOutcome[] = [];
    for (const [n, ownerId] of owners.entries()) {
      const qs = questions(SEED + 1 + n, RECALL_QUERIES[scope === 'owner' ? 'owner' : 'heavy']);
      outcomes.push(
        await vectorStageRecall(
          execute,
          embeddings,
          { workspaceId, ownerType: 'user', ownerId },
          qs,
        ),
      );
    }
    const queries = outcomes.reduce((a, o) => a + o.queries, 0);
    vectorRecalls.push({
      size,
      scope,
      owners: owners.length,
      queries,
      mean: outcomes.reduce((a, o) => a + o.mean * o.queries, 0) / Math.max(1, queries),
      min: Math.min(...outcomes.map((o) => o.min)),
      chunks: outcomes.reduce((a, o) => a + o.chunks, 0) / outcomes.length,
    });
  }
}

async function explainRecall(
  raw: postgres.Sql,
  workspaceId: string,
  size: number,
  owners: ReadonlyArray<readonly [string, string]> = [
    ['regular owner', ownerOf(0, size)],
    ['heavy owner', HEAVY_OWNER],
  ],
): Promise<void> {
  const embeddings = localEmbedder();
  const query = questions(SEED, 1)[0]!;
  const [vec] = await embeddings.embed([query], 'query');
  const literal = `[${vec!.join(',')}]`;
  for (const [scope, ownerId] of owners) {
    const owner = { workspaceId, ownerType: 'user', ownerId };
    for (const [kind, text, params] of [
      ['vector', vectorSql(vec!.length), vectorParams(owner, literal, 50)],
      ['keyword', KEYWORD_SQL, keywordParams(owner, query, 50)],
    ] as const) {
      const explained = await raw.unsafe(`explain (analyze, buffers) ${text}`, params as never[]);
      const lines = explained.map((row) => String(Object.values(row)[0]));
      plans.push(
        `### ${kind} recall, ${scope} (${label(size)}), query "${query}"\n\n\`\`\`\n${lines.join('\n')}\n\`\`\`\n`,
      );
    }
  }
}

/**
 * A PostgreSQL load adding at least this many memories drops the secondary indexes and builds
 * them again afterwards (lib/bulk-load.ts): cheaper than maintaining HNSW row by row.
 */
const DEFER_INDEXES_FROM = 50_000;
/** Memories per transaction when indexes are deferred (no HNSW upkeep holds a batch long). */
const DEFERRED_BATCH = 2_000;

/** `loadTo`, with the indexes deferred when the load is large (PostgreSQL). */
async function loadPostgresTo(
  loader: ReturnType<typeof bulkLoader>,
  state: LoadState,
  size: number,
  db: Database,
  largeOwners: readonly number[] = [],
): Promise<{ loadSeconds: number; indexSeconds?: number }> {
  const adding = size - state.loaded + largeOwners.reduce((sum, n) => sum + n, 0);
  if (adding < DEFER_INDEXES_FROM)
    return { loadSeconds: await loadTo(loader, state, size, undefined, largeOwners) };
  const t0 = performance.now();
  const { buildSeconds } = await withIndexesDeferred(db, async () => {
    await loadTo(loader, state, size, DEFERRED_BATCH, largeOwners);
  });
  log(`postgres ${label(size)}: indexes built again in ${buildSeconds.toFixed(1)} s`);
  return { loadSeconds: (performance.now() - t0) / 1000, indexSeconds: buildSeconds };
}

interface LoadState {
  /** Regular memories loaded. */
  loaded: number;
  heavy: boolean;
  /** Large owners loaded, by memory count. */
  large?: number[];
}

/**
 * Loads the data set up to `size` regular memories (the heavy owner on the first call), and the
 * large owners not loaded yet (their memories as the heavy owner's, from seeds of their own).
 */
async function loadTo(
  loader: ReturnType<typeof bulkLoader>,
  state: LoadState,
  size: number,
  batch?: number,
  largeOwners: readonly number[] = [],
): Promise<number> {
  const t0 = performance.now();
  if (!state.heavy) {
    await loader.load(
      Array.from({ length: HEAVY_MEMORIES }, (_, i) => heavyMemory(SEED, i)),
      batch,
    );
    state.heavy = true;
  }
  for (const [n, memories] of largeOwners.entries()) {
    if (state.large?.includes(memories)) continue;
    const ownerId = ownerOfScope(largeOwnerScope(memories), 0, size);
    await loader.load(
      (function* () {
        for (let i = 0; i < memories; i += 1) yield { ...heavyMemory(SEED + 1 + n, i), ownerId };
      })(),
      batch,
    );
    state.large = [...(state.large ?? []), memories];
  }
  const from = state.loaded;
  await loader.load(
    (function* () {
      for (let i = from; i < size; i += 1) yield regularMemory(SEED, i);
    })(),
    batch,
  );
  state.loaded = Math.max(from, size);
  return (performance.now() - t0) / 1000;
}

/** A fresh bench database on PostgreSQL, migrated, with the bench's workspace and clients. */
async function openPostgresBench(): Promise<{
  bench: Awaited<ReturnType<typeof createBenchDatabase>>;
  raw: postgres.Sql;
  reading: postgres.Sql;
  handle: Awaited<ReturnType<typeof openDatabase>>;
  workspaceId: string;
  close(): Promise<void>;
}> {
  const bench = await createBenchDatabase(ADMIN_URL, PG_LOG_MS, AUTO_EXPLAIN_MS);
  const { databaseUrl } = bench;
  log(`postgres: database ${bench.name}`);
  const raw = postgres(databaseUrl, {
    max: 10,
    onnotice: () => {},
    // Custom plans for prepared statements too: the floor prepares its statements only when the
    // server's sessions do the same (below); unnamed statements are planned per run anyway.
    connection: { ...SESSION_SETTINGS, plan_cache_mode: 'force_custom_plan' },
  });
  // CPU readings on a connection of their own (the floor runs on `raw`'s ten).
  const reading = readingClient(databaseUrl);
  let handle: Awaited<ReturnType<typeof openDatabase>> | undefined;
  const close = async () => {
    await handle?.close();
    await raw.end({ timeout: 5 });
    await reading.end({ timeout: 5 });
    await bench.drop();
  };
  try {
    // No statement timeout for the bench's own loading: a 500-row batch with its HNSW upkeep
    // passed the server's 5 s default on a busy machine.
    handle = await openDatabase({ databaseUrl, timeouts: { statementMs: 0, lockMs: 0 } });
    const apiKeys = await ApiKeyService.create(handle.db);
    const boot = await ensureBootstrapWorkspace(handle.db, apiKeys, {
      bootstrapApiKey: API_KEY,
      bootstrapWorkspaceName: 'bench',
    });
    return { bench, raw, reading, handle, workspaceId: boot.workspaceId!, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function runPostgres(): Promise<void> {
  if (SIZES.length === 0) return;
  const { bench, raw, reading, handle, workspaceId, close } = await openPostgresBench();
  const { databaseUrl } = bench;
  try {
    const loader = bulkLoader(localEmbedder(), workspaceId);
    // COPY on PostgreSQL: the rows inserts would store (server/test/db/bulk-load-copy.test.ts).
    loader.attach(handle.db, raw);
    const state: LoadState = { loaded: 0, heavy: false };
    for (const size of SIZES) {
      const largest = size === Math.max(...SIZES);
      const largeOwners = largest ? LARGE_OWNER_SIZES : [];
      const scopes = ['owner', 'heavy', ...largeOwners.map(largeOwnerScope)];
      const { loadSeconds, indexSeconds } = await loadPostgresTo(
        loader,
        state,
        size,
        handle.db,
        largeOwners,
      );
      // Vacuumed as well as analysed: autovacuum of the fresh rows would otherwise run during the
      // measurements (minutes at 100k), on the same two cores.
      await raw.unsafe('vacuum analyze');
      log(
        `postgres ${label(size)}: loaded ${loader.stored} memories in ${loadSeconds.toFixed(1)} s (${loader.skipped} duplicates skipped)`,
      );
      // What the hygiene job does on an install (the bench's servers run without it): owners past
      // OWNER_INDEX_POLICY get an HNSW index of their own.
      const ownIndexStarted = performance.now();
      const ownIndexes = await maintainOwnerIndexes(handle.db);
      const ownIndexSeconds = (performance.now() - ownIndexStarted) / 1000;
      if (ownIndexes.created.length > 0) {
        await raw.unsafe('analyze memory_chunks');
        log(
          `postgres ${label(size)}: ${ownIndexes.created.length} owner indexes built in ${ownIndexSeconds.toFixed(1)} s`,
        );
      }
      const server = await startServer({
        DATABASE_URL: databaseUrl,
        MNEMO_BOOTSTRAP_API_KEY: API_KEY,
        MNEMO_BOOTSTRAP_WORKSPACE: 'bench',
      });
      try {
        await maintenanceDone(raw, bench.name);
        const probe = probeOf(server, { raw: reading, name: bench.name });
        if (PHASES.has('writes')) await measureWrites(server, probe, 'postgres', size);
        if (PHASES.has('batch')) await measureBatchWrites(server, probe, 'postgres', size);
        // The statements as the server sends them: prepared only when its sessions plan each run
        // for its values (recall.ts asks the same), unnamed otherwise. Left to choose, PostgreSQL
        // may give a prepared statement one generic plan for every owner after five runs, which is
        // not the plan (nor, for HNSW, the result) the server gets.
        const [plans] = await executeRows<{ mode: string }>(
          handle.db,
          sql`select current_setting('plan_cache_mode') as mode`,
        );
        const prepare = plans?.mode === 'force_custom_plan';
        const execute: Execute = (q, p) => raw.unsafe(q, p as never[], { prepare }) as never;
        if (PHASES.has('search')) {
          await measureSearches(
            server,
            probe,
            'postgres',
            size,
            PHASES.has('floor') ? floorOp(execute, workspaceId, size) : undefined,
            scopes,
          );
        } else if (PHASES.has('floor')) {
          await measureFloor(execute, workspaceId, 'postgres', size, scopes);
        }
        const { rssMiB, peakMiB } = await server.rss();
        if (PHASES.has('recall')) await measureVectorRecall(execute, workspaceId, size, scopes);
        if (PHASES.has('explain') && largest)
          await explainRecall(raw, workspaceId, size, [
            ['regular owner', ownerOf(0, size)],
            ...scopes.slice(1).map((scope) => [scope, ownerOfScope(scope, 0, size)] as const),
          ]);
        const [db] = await raw<
          { bytes: string }[]
        >`select pg_database_size(current_database())::text as bytes`;
        facts.push({
          backend: 'postgres',
          size,
          stored: loader.stored,
          loadSeconds,
          ...(indexSeconds === undefined ? {} : { indexSeconds }),
          ...(ownIndexes.created.length > 0 ? { ownIndexSeconds } : {}),
          coldStartMs: server.coldStartMs,
          rssMiB,
          peakMiB,
          dbMiB: Number(db?.bytes ?? NaN) / 2 ** 20,
        });
      } finally {
        await server.stop();
      }
    }
  } finally {
    await close();
  }
}

interface LongFacts {
  size: number;
  owners: number;
  stored: number;
  chunks: number;
  meanChars: number;
  loadSeconds: number;
  indexSeconds: number;
  rssMiB: number;
  dbMiB: number;
}
const longFacts: LongFacts[] = [];

/**
 * Search latency over long memories: each mode (and context) at concurrency 1 and 8, for owners
 * of LONG_MEMORIES_PER_OWNER session transcripts, with CPU and statements per request.
 */
async function measureLongSearches(
  server: ServerProcess,
  probe: CostProbe,
  size: number,
): Promise<void> {
  const owners = Math.max(1, Math.floor(size / LONG_MEMORIES_PER_OWNER));
  const qs = questions(SEED, Math.max(SEARCHES_C1, SEARCHES_C8));
  const payload = (i: number, mode: string) => ({
    query: qs[i % qs.length]!,
    user_id: longOwnerName((i * 37) % owners),
    search_mode: mode,
    top_k: 10,
  });
  await runLoad(100, 4, (i) => post(server.base, '/v1/search', payload(i, 'hybrid')));
  for (const concurrency of [1, 8]) {
    const count = concurrency === 1 ? SEARCHES_C1 : SEARCHES_C8;
    for (const [op, path, mode] of [
      ...MODES.map((m) => [`search ${m}`, '/v1/search', m] as const),
      ['context', '/v1/context', 'hybrid'] as const,
    ]) {
      const [m, cost] = await measured(probe, () =>
        runLoad(count, concurrency, (i) => post(server.base, path, payload(i, mode))),
      );
      rows.push({ backend: 'postgres', size, op, scope: 'long', concurrency, m, cost });
      log(`postgres long ${label(size)} c${concurrency} ${op}: p50 ${ms(m.p50)} p95 ${ms(m.p95)}`);
    }
  }
}

/** Long memories on PostgreSQL: a database of their own, loaded with indexes deferred. */
async function runLongMemories(): Promise<void> {
  if (LONG_SIZES.length === 0) return;
  const { bench, raw, reading, handle, workspaceId, close } = await openPostgresBench();
  try {
    const loader = bulkLoader(localEmbedder(), workspaceId);
    loader.attach(handle.db, raw);
    let loaded = 0;
    for (const size of LONG_SIZES) {
      const t0 = performance.now();
      const from = loaded;
      const { buildSeconds } = await withIndexesDeferred(handle.db, async () => {
        await loader.load(
          (function* () {
            for (let i = from; i < size; i += 1) yield longMemoryAt(SEED, i);
          })(),
          DEFERRED_BATCH / 4,
        );
      });
      loaded = Math.max(loaded, size);
      const loadSeconds = (performance.now() - t0) / 1000;
      await raw.unsafe('vacuum analyze');
      const [shape] = await raw<{ chunks: number; chars: number }[]>`
        select (select count(*)::int from memory_chunks) as chunks,
          (select avg(length(text))::float8 from memories) as chars`;
      log(
        `postgres long ${label(size)}: ${loader.stored} memories, ${shape?.chunks} chunks in ${loadSeconds.toFixed(1)} s`,
      );
      const server = await startServer({
        DATABASE_URL: bench.databaseUrl,
        MNEMO_BOOTSTRAP_API_KEY: API_KEY,
        MNEMO_BOOTSTRAP_WORKSPACE: 'bench',
      });
      try {
        await maintenanceDone(raw, bench.name);
        const probe = probeOf(server, { raw: reading, name: bench.name });
        if (PHASES.has('search')) await measureLongSearches(server, probe, size);
        const { rssMiB } = await server.rss();
        if (PHASES.has('explain'))
          await explainRecall(raw, workspaceId, size, [['long owner', longOwnerName(0)]]);
        const [db] = await raw<
          { bytes: string }[]
        >`select pg_database_size(current_database())::text as bytes`;
        longFacts.push({
          size,
          owners: Math.ceil(size / LONG_MEMORIES_PER_OWNER),
          stored: loader.stored,
          chunks: shape?.chunks ?? NaN,
          meanChars: shape?.chars ?? NaN,
          loadSeconds,
          indexSeconds: buildSeconds,
          rssMiB,
          dbMiB: Number(db?.bytes ?? NaN) / 2 ** 20,
        });
      } finally {
        await server.stop();
      }
    }
  } finally {
    await close();
  }
}

async function runPglite(): Promise<void> {
  if (PGLITE_SIZES.length === 0) return;
  const dir = await mkdtemp(join(tmpdir(), 'mnemo-bench-pglite-'));
  const dataDir = join(dir, 'data');
  log(`pglite: ${dataDir}`);
  try {
    let workspaceId = '';
    let loader: ReturnType<typeof bulkLoader> | undefined;
    const state = { loaded: 0, heavy: false };
    for (const size of PGLITE_SIZES) {
      // One process owns a PGlite folder: load with the server stopped.
      const handle = await openDatabase({ dataDir });
      let loadSeconds: number;
      try {
        if (!loader) {
          const apiKeys = await ApiKeyService.create(handle.db);
          const boot = await ensureBootstrapWorkspace(handle.db, apiKeys, {
            bootstrapApiKey: API_KEY,
            bootstrapWorkspaceName: 'bench',
          });
          workspaceId = boot.workspaceId!;
          loader = bulkLoader(localEmbedder(), workspaceId);
        }
        loader.attach(handle.db);
        loadSeconds = await loadTo(loader, state, size);
      } finally {
        await handle.close();
      }
      log(`pglite ${label(size)}: loaded ${loader.stored} memories in ${loadSeconds.toFixed(1)} s`);
      const server = await startServer({
        MNEMO_DATA_DIR: dataDir,
        MNEMO_BOOTSTRAP_API_KEY: API_KEY,
        MNEMO_BOOTSTRAP_WORKSPACE: 'bench',
      });
      let rssMiB = NaN;
      let peakMiB = NaN;
      try {
        // PGlite runs inside the server process: its CPU is the server's.
        const probe = probeOf(server);
        if (PHASES.has('writes')) await measureWrites(server, probe, 'pglite', size);
        if (PHASES.has('search')) await measureSearches(server, probe, 'pglite', size);
        ({ rssMiB, peakMiB } = await server.rss());
      } finally {
        await server.stop();
      }
      // The floor on PGlite: the same SQL on the embedded engine, in this process.
      if (PHASES.has('floor')) {
        const client = await PGlite.create(dataDir, { extensions: PGLITE_EXTENSIONS });
        try {
          await client.exec(SESSION_SETTING);
          await measureFloor(
            async (q, p) => (await client.query<Record<string, unknown>>(q, p)).rows,
            workspaceId,
            'pglite',
            size,
          );
        } finally {
          await client.close();
        }
      }
      facts.push({
        backend: 'pglite',
        size,
        stored: loader.stored,
        loadSeconds,
        coldStartMs: server.coldStartMs,
        rssMiB,
        peakMiB,
        dbMiB: await folderMiB(dataDir),
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface PeerOutcome {
  ok: boolean;
  store: PeerStore;
  results?: PeerSize[];
  error?: string;
}

/** mem0 on its SQLite store, then on its pgvector store in a database of its own. */
async function runPeers(): Promise<PeerOutcome[]> {
  const outcomes = [await runPeer('memory')];
  const database = await createBenchDatabase(ADMIN_URL, undefined);
  try {
    outcomes.push(await runPeer('pgvector', database.databaseUrl));
  } finally {
    await database.drop();
  }
  return outcomes;
}

async function runPeer(store: PeerStore, databaseUrl?: string): Promise<PeerOutcome> {
  const sizes = store === 'pgvector' ? MEM0_PG_SIZES : MEM0_SIZES;
  if (!sizes.trim()) {
    const variable = store === 'pgvector' ? 'BENCH_MEM0_PG_SIZES' : 'BENCH_MEM0_SIZES';
    return { ok: false, store, error: `not run (${variable} is empty)` };
  }
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=mnemo-source', 'mem0-peer.ts'],
      {
        cwd: join(REPO_ROOT, 'bench'),
        env: {
          ...process.env,
          BENCH_MEM0_SIZES: sizes,
          BENCH_SEED: String(SEED),
          BENCH_SEARCHES: String(SEARCHES_C1),
          BENCH_MEM0_STORE: store,
          ...(databaseUrl ? { BENCH_MEM0_DATABASE_URL: databaseUrl } : {}),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    child.on('exit', (code, signal) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(line) as PeerOutcome);
      } catch {
        resolve({
          ok: false,
          store,
          error: `mem0 peer exited (${signal ?? code}) without a result: ${err.trim().split('\n').slice(-3).join(' ')}`,
        });
      }
    });
  });
}

function machine(): string {
  const pgVersion = (() => {
    try {
      return execFileSync('psql', [ADMIN_URL, '-tAc', 'show server_version'], {
        encoding: 'utf8',
      }).trim();
    } catch {
      return 'unknown';
    }
  })();
  return [
    `- Date: ${new Date().toISOString()}`,
    `- Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory`,
    `- Node ${process.version}, PostgreSQL ${pgVersion} (pgvector, 127.0.0.1), PGlite (embedded, WASM)`,
    `- Load average (1 min) at start ${LOAD_AT_START.toFixed(2)}, at end ${(loadavg()[0] ?? NaN).toFixed(2)} (${cpus().length} cores: above that, processes queue for CPU)`,
    `- Seed ${SEED}; searches per row: ${SEARCHES_C1} at concurrency 1, ${SEARCHES_C8} at 8; writes per row: ${WRITES_C1} / ${WRITES_C8}`,
  ].join('\n');
}

const COST_HEADER = ['node ms', 'PG ms', 'stmts', 'of which deferred'];

/** CPU ms of the server and of PostgreSQL, and statements (all, deferred batches), per request. */
function costCells(r: Row): string[] {
  if (!r.cost) return ['', '', '', ''];
  const per = (value: number) => value / r.m.count;
  const statements = (value: number) => (Number.isFinite(value) ? per(value).toFixed(2) : 'n/a');
  return [
    ms(per(r.cost.serverCpuMs)),
    r.backend === 'pglite' ? 'n/a' : ms(per(r.cost.dbCpuMs)),
    statements(r.cost.statements),
    statements(r.cost.deferredStatements),
  ];
}

const findRow = (backend: Backend, size: number, op: string, scope: string, concurrency: number) =>
  rows.find(
    (r) =>
      r.backend === backend &&
      r.size === size &&
      r.op === op &&
      r.scope === scope &&
      r.concurrency === concurrency,
  );

const find = (backend: Backend, size: number, op: string, scope: string, concurrency: number) =>
  findRow(backend, size, op, scope, concurrency)?.m;

function report(peers: PeerOutcome[]): string {
  const out: string[] = [];
  out.push('# Mnemo speed and scale\n', machine(), '');
  out.push(
    'Server: its own process (`node --import tsx`, as `pnpm start`), local embedder, local rerank, extraction `local`, ' +
      'over HTTP on loopback. Sizes: regular memories over 1,000 owners, plus one heavy owner with 10k. ' +
      '"owner": a regular owner (size ÷ 1,000 memories each); "heavy": the 10k-memory owner' +
      (LARGE_OWNER_SIZES.length > 0
        ? `; ${LARGE_OWNER_SIZES.map((n) => `"${largeOwnerScope(n)}"`).join(', ')}: an owner of that many memories, added at the largest PostgreSQL size only`
        : '') +
      '. Owners past the own-index policy (5,000 chunks, at most a quarter of the table) get an HNSW index of their own after each load, as the hygiene job builds it on an install. ' +
      'Latencies in ms, throughput in operations/s. Floor: the same two recall statements as plain SQL (postgres.js; ' +
      'PGlite: its own client) plus RRF, no HTTP; on PostgreSQL measured in alternating blocks of 25 with hybrid search, ' +
      'on PGlite after the server stopped (one process owns the folder).\n',
  );
  out.push(
    '**Workspace-wide search:** the API has no cross-owner search (every search resolves one owner; no owner id means the ' +
      'workspace\'s default owner), so the "workspace-wide" figures are the largest owner\'s (the heavy owner, 10k memories).\n',
  );

  out.push('## Data, process and storage\n');
  out.push(
    table(
      [
        'backend',
        'size',
        'memories stored',
        'bulk load s',
        'of which index build s',
        'owner indexes s',
        'cold start ms',
        'server RSS MiB',
        'peak RSS MiB',
        'database MiB',
        'KiB per memory',
      ],
      facts.map((f) => [
        f.backend,
        label(f.size),
        String(f.stored),
        f.loadSeconds.toFixed(1),
        f.indexSeconds === undefined ? '' : f.indexSeconds.toFixed(1),
        f.ownIndexSeconds === undefined ? '' : f.ownIndexSeconds.toFixed(1),
        f.coldStartMs.toFixed(0),
        f.rssMiB.toFixed(0),
        f.peakMiB.toFixed(0),
        f.dbMiB.toFixed(1),
        ((f.dbMiB * 1024) / f.stored).toFixed(2),
      ]),
    ),
    '',
  );

  if (longFacts.length > 0) {
    out.push('## Long memories (PostgreSQL)\n');
    out.push(
      `Session transcripts (\`lib/generator.ts\` \`longMemory\`: dated user and assistant turns, 2,000 to 6,000 characters), ` +
        `${LONG_MEMORIES_PER_OWNER} per owner, split by the server's chunker (\`balanced\`), in a database of their own; ` +
        'their search rows are the `long` rows of the search table.\n',
    );
    out.push(
      table(
        [
          'size',
          'owners',
          'memories',
          'chunks',
          'mean characters',
          'bulk load s',
          'of which index build s',
          'server RSS MiB',
          'database MiB',
        ],
        longFacts.map((f) => [
          label(f.size),
          String(f.owners),
          String(f.stored),
          String(f.chunks),
          f.meanChars.toFixed(0),
          f.loadSeconds.toFixed(1),
          f.indexSeconds.toFixed(1),
          f.rssMiB.toFixed(0),
          f.dbMiB.toFixed(1),
        ]),
      ),
      '',
    );
  }

  if (vectorRecalls.length > 0) {
    out.push('## Vector stage recall@10 against exact search (PostgreSQL)\n');
    out.push(
      "The server's vector recall statement (HNSW over `halfvec` embeddings, iterative scan, 50 candidates, the first 10 " +
        'compared) against a brute-force cosine search in JS over the same chunks embedded again at full precision; a ' +
        "returned chunk counts when its exact distance is within the exact 10th's (templated texts repeat).\n",
    );
    out.push(
      table(
        ['size', 'owner', 'owners', 'queries', 'chunks per owner', 'recall@10 mean', 'min'],
        vectorRecalls.map((r) => [
          label(r.size),
          r.scope,
          String(r.owners),
          String(r.queries),
          r.chunks.toFixed(0),
          r.mean.toFixed(4),
          r.min.toFixed(2),
        ]),
      ),
      '',
    );
  }

  out.push('## Writes over HTTP (POST /v1/memories)\n');
  out.push(
    table(
      [
        'backend',
        'size',
        'extraction',
        'concurrency',
        'writes/s',
        'p50',
        'p95',
        'p99',
        ...COST_HEADER,
      ],
      rows
        .filter((r) => r.op.startsWith('write'))
        .map((r) => [
          r.backend,
          label(r.size),
          r.op.split('=')[1]!,
          String(r.concurrency),
          rate(r.m.rate),
          ms(r.m.p50),
          ms(r.m.p95),
          ms(r.m.p99),
          ...costCells(r),
        ]),
    ),
    '',
  );

  const batchRows = rows.filter((r) => r.op.startsWith('ingest batch='));
  if (batchRows.length > 0) {
    out.push('## Batch writes over HTTP (POST /v1/ingest)\n');
    out.push(
      'A conversation of `batch` user messages per request, one memory each, extraction off, ' +
        'each request in an owner of its own. Latency per request; CPU and statements per memory.\n',
    );
    out.push(
      table(
        [
          'backend',
          'size',
          'batch',
          'concurrency',
          'memories/s',
          'p50',
          'p95',
          'node ms/mem',
          'PG ms/mem',
          'stmts/mem',
        ],
        batchRows.map((r) => {
          const batch = Number(r.op.split('=')[1]);
          const perMemory = (value: number | undefined) =>
            value === undefined ? NaN : value / (r.m.count * batch);
          return [
            r.backend,
            label(r.size),
            String(batch),
            String(r.concurrency),
            rate(r.m.rate * batch),
            ms(r.m.p50),
            ms(r.m.p95),
            ms(perMemory(r.cost?.serverCpuMs)),
            ms(perMemory(r.cost?.dbCpuMs)),
            perMemory(r.cost?.statements).toFixed(3),
          ];
        }),
      ),
      '',
    );
  }

  out.push('## Search and context over HTTP, with the floor\n');
  out.push(
    "`÷ floor`: for hybrid search on PostgreSQL, the median over three rounds of the service's p50 (p95) ÷ the floor's p50 (p95), " +
      "each round its own loop of alternating blocks of 25 (the rounds in brackets); for other rows, the row's p50 (p95) over the floor's " +
      'at the same backend, size, owner and concurrency. ' +
      '`node ms`: CPU of the server process per request (/proc; on PGlite it includes the embedded database); `PG ms`: CPU of the ' +
      "bench database's PostgreSQL backends per request (floor rows: the floor's own statements); `stmts`: statements sent to " +
      "PostgreSQL per request, counted on the server's sockets (background work included; the floor sends 2); `of which deferred`: " +
      'those that wrote the deferred batches (audit rows, learning signals, saved searches: flushed every 50 ms off the response path, ' +
      "one insert for many requests), told by the statement's text.\n",
  );
  const searchRows = rows.filter(
    (r) => r.op.startsWith('search') || r.op === 'context' || r.op.startsWith('floor'),
  );
  out.push(
    table(
      [
        'backend',
        'size',
        'owner',
        'c',
        'operation',
        'p50',
        'p95',
        'p99',
        'req/s',
        '÷ floor p50',
        '÷ floor p95',
        ...COST_HEADER,
      ],
      searchRows.map((r) => {
        const floor = find(r.backend, r.size, 'floor hybrid', r.scope, r.concurrency);
        const versus = (p: 'p50' | 'p95') => {
          if (r.rounds)
            return `${ratio(median(r.rounds[p]))} (${r.rounds[p].map(ratio).join(', ')})`;
          return floor && r.op !== 'floor hybrid' ? ratio(r.m[p] / floor[p]) : '';
        };
        return [
          r.backend,
          label(r.size),
          r.scope,
          String(r.concurrency),
          r.op,
          ms(r.m.p50),
          ms(r.m.p95),
          ms(r.m.p99),
          rate(r.m.rate),
          versus('p50'),
          versus('p95'),
          ...costCells(r),
        ];
      }),
    ),
    '',
  );

  out.push('## Peer: mem0 (`mem0ai/oss`)\n');
  out.push(
    'mem0: in-process calls (no HTTP), `infer: false`, the same local embedder, on its SQLite "memory" vector store and on its ' +
      '`pgvector` store (HNSW index, its own database on the same PostgreSQL); it holds the ' +
      "regular owners' memories only, every one through its public `add()` (no heavy owner: its searches scan fewer rows than Mnemo's data set holds). " +
      'Mnemo: over HTTP on PostgreSQL, `add` = POST /v1/memories at concurrency 1, extraction off; search = hybrid at concurrency 1. ' +
      'Ratios are Mnemo ÷ mem0 (below 1: Mnemo is faster). "mem0 results": mean results per owner search (10 asked).\n',
  );
  const peerRows: string[][] = [];
  for (const peer of peers) {
    if (!peer.ok || !peer.results) {
      out.push(`mem0 on ${peer.store} did not run: ${peer.error ?? 'unknown error'}\n`);
      continue;
    }
    for (const p of peer.results) {
      const pairs: Array<[string, Measured, Measured | undefined]> = [
        ['add', p.add, find('postgres', p.size, 'write extract=off', '-', 1)],
        ['search (owner)', p.searchOwner, find('postgres', p.size, 'search hybrid', 'owner', 1)],
      ];
      for (const [op, theirs, ours] of pairs) {
        peerRows.push([
          peer.store,
          label(p.size),
          op,
          ms(theirs.p50),
          ms(theirs.p95),
          ours ? ms(ours.p50) : 'n/a',
          ours ? ms(ours.p95) : 'n/a',
          ours ? ratio(ours.p50 / theirs.p50) : 'n/a',
          ours ? ratio(ours.p95 / theirs.p95) : 'n/a',
          op === 'add' ? '' : (p.resultsPerSearch?.toFixed(1) ?? 'n/a'),
        ]);
      }
    }
  }
  if (peerRows.length > 0)
    out.push(
      table(
        [
          'mem0 store',
          'size',
          'operation',
          'mem0 p50',
          'mem0 p95',
          'Mnemo p50',
          'Mnemo p95',
          'Mnemo ÷ mem0 p50',
          'Mnemo ÷ mem0 p95',
          'mem0 results',
        ],
        peerRows,
      ),
      '',
    );

  out.push('## Targets\n');
  const pgSize = Math.max(...SIZES, 0);
  const liteSize = PGLITE_SIZES.includes(10_000) ? 10_000 : Math.max(...PGLITE_SIZES, 0);
  const check = (
    name: string,
    value: number | undefined,
    limit: number,
    unit: string,
    atLeast = false,
  ) => {
    const met =
      value !== undefined && Number.isFinite(value) && (atLeast ? value >= limit : value <= limit);
    return [
      name,
      `${atLeast ? '≥' : '≤'} ${limit} ${unit}`,
      value === undefined ? 'n/a' : value.toFixed(2),
      met ? 'met' : 'missed',
    ];
  };
  // Issue 19's targets, at each PostgreSQL size they name (10k and 100k), per-owner hybrid search.
  const targets: string[][] = [];
  const perRequest = (r: Row | undefined, key: keyof Cost) =>
    r?.cost ? r.cost[key] / r.m.count : undefined;
  for (const size of SIZES.filter((n) => n === 10_000 || n === 100_000)) {
    const at = `PG ${label(size)}`;
    const c1 = findRow('postgres', size, 'search hybrid', 'owner', 1);
    const c8 = findRow('postgres', size, 'search hybrid', 'owner', 8);
    targets.push(
      check(
        `${at}: statements per hybrid search on its path (c1; deferred batch writes: ` +
          `${perRequest(c1, 'deferredStatements')?.toFixed(2) ?? 'n/a'} more)`,
        c1?.cost ? (c1.cost.statements - c1.cost.deferredStatements) / c1.m.count : undefined,
        1,
        '',
      ),
      check(
        `${at}: service ÷ floor, p50 (c1, median of ${FLOOR_ROUNDS} rounds)`,
        c1?.rounds ? median(c1.rounds.p50) : undefined,
        2,
        '×',
      ),
      check(`${at}: Node CPU per search (c8)`, perRequest(c8, 'serverCpuMs'), 1, 'ms'),
      check(`${at}: PostgreSQL CPU per search (c8)`, perRequest(c8, 'dbCpuMs'), 2, 'ms'),
      check(`${at}: searches/s at c8`, c8?.m.rate, size === 10_000 ? 650 : 450, '/s', true),
    );
    const search = c1?.m;
    const context = find('postgres', size, 'context', 'owner', 1);
    targets.push(
      check(
        `${at}: context p95 ÷ search p95 (c1)`,
        search && context ? context.p95 / search.p95 : undefined,
        1.2,
        '×',
      ),
    );
  }
  // Issue 37's: a million memories, owners of 100k, long memories.
  const million = facts.find((f) => f.backend === 'postgres' && f.size === 1_000_000);
  if (million) {
    targets.push(
      check(
        'PG 1m: regular owner hybrid p50 (c1)',
        find('postgres', million.size, 'search hybrid', 'owner', 1)?.p50,
        5,
        'ms',
      ),
      check(
        'PG 1m: regular owner searches/s (c8)',
        find('postgres', million.size, 'search hybrid', 'owner', 8)?.rate,
        400,
        '/s',
        true,
      ),
      check('PG 1m: server RSS after the searches', million.rssMiB, 350, 'MiB'),
      check(
        'PG 1m: database KiB per memory (40 % below 5.36)',
        (million.dbMiB * 1024) / million.stored,
        3.22,
        'KiB',
      ),
    );
  }
  for (const memories of LARGE_OWNER_SIZES.filter((n) => n === 100_000))
    targets.push(
      check(
        `PG ${label(pgSize)}: owner with ${label(memories)} memories, hybrid p50 (c1)`,
        find('postgres', pgSize, 'search hybrid', largeOwnerScope(memories), 1)?.p50,
        15,
        'ms',
      ),
    );
  for (const { size } of longFacts)
    targets.push(
      check(
        `PG long ${label(size)}: hybrid p50 (c1)`,
        find('postgres', size, 'search hybrid', 'long', 1)?.p50,
        10,
        'ms',
      ),
    );
  for (const { size, scope, mean } of vectorRecalls.filter((r) => r.size === pgSize))
    targets.push(
      check(`PG ${label(size)}: vector stage recall@10, ${scope}`, mean, 0.98, '', true),
    );
  targets.push(
    check(
      `PG ${label(pgSize)}: owner with 10k memories, hybrid p50 (c1)`,
      find('postgres', pgSize, 'search hybrid', 'heavy', 1)?.p50,
      6,
      'ms',
    ),
    check(
      `PG ${label(pgSize)}: writes/s, c8, extraction on`,
      find('postgres', pgSize, 'write extract=on', '-', 8)?.rate,
      450,
      '/s',
      true,
    ),
    check(
      `PG ${label(pgSize)}: writes/s, c8, extraction off`,
      find('postgres', pgSize, 'write extract=off', '-', 8)?.rate,
      600,
      '/s',
      true,
    ),
    check(
      `PG ${label(pgSize)}: write p95, c50, extraction off`,
      find('postgres', pgSize, 'write extract=off', '-', 50)?.p95,
      150,
      'ms',
    ),
    check(
      `PG ${label(pgSize)}: batch writes, memories/s (ingest of 100, best concurrency)`,
      Math.max(
        ...[1, 4].map(
          (c) => (find('postgres', pgSize, 'ingest batch=100', '-', c)?.rate ?? NaN) * 100,
        ),
      ),
      2000,
      '/s',
      true,
    ),
    check(
      `PGlite ${label(liteSize)}: per-owner hybrid p95, c1`,
      find('pglite', liteSize, 'search hybrid', 'owner', 1)?.p95,
      20,
      'ms',
    ),
  );
  out.push(table(['target', 'limit', 'measured', 'status'], targets), '');
  if (plans.length > 0)
    out.push('## Recall plans (EXPLAIN ANALYZE, PostgreSQL, largest size)\n', ...plans);
  return out.join('\n');
}

async function main(): Promise<void> {
  const started = performance.now();
  await runPostgres();
  await runLongMemories();
  await runPglite();
  log('mem0 peer…');
  const peers = await runPeers();
  for (const peer of peers) if (!peer.ok) log(`mem0 on ${peer.store}: ${peer.error}`);
  const text = report(peers);
  process.stdout.write(text + '\n');
  // Profiling runs (BENCH_RESULTS=off) must not replace the committed tables.
  if (process.env.BENCH_RESULTS === 'off') return;
  const dir = join(REPO_ROOT, 'bench', 'results');
  await mkdir(dir, { recursive: true });
  const date = new Date().toISOString().slice(0, 10);
  await writeFile(join(dir, `speed-${date}.md`), text + '\n');
  await writeFile(join(dir, 'speed-latest.md'), text + '\n');
  await writeFile(
    join(dir, `speed-${date}.json`),
    JSON.stringify({ rows, facts, peers }, null, 1) + '\n',
  );
  log(
    `done in ${((performance.now() - started) / 1000).toFixed(0)} s; wrote bench/results/speed-${date}.md`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
