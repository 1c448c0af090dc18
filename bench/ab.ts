/**
 * Before/after on the same data at the same time: the server of this tree and the server of
 * another checkout (`BENCH_AB_BASE`, e.g. the commit before a change), both running on one
 * PostgreSQL database, searched and written to in alternating blocks (the order alternating
 * too), so load from
 * other work on the machine falls on both alike. Per server and row: p50/p95, CPU ms per request
 * of the server process and of the database's client backends, statements per request. Waits
 * for the servers' start-up maintenance (ANALYZE, VACUUM) to finish before measuring, so its CPU
 * is not charged to the searches.
 *
 *   BENCH_AB_BASE=/path/to/other/checkout pnpm --filter @mnemo/bench bench:ab
 *
 * Environment: `BENCH_AB_SIZE` (regular memories, 10k; the heavy owner's 10k on top),
 * `BENCH_AB_COUNT` (search and context requests per server and row, 600), `BENCH_AB_WRITES`
 * (writes per server and row, 800), `BENCH_AB_BLOCK` (50; writes at concurrency 50: 200),
 * `BENCH_AB_PHASES` (`search,writes`; `ingest` adds batch writes), `BENCH_AB_INGEST_MEMORIES`
 * (memories per server and ingest row, 2000), `BENCH_SEED`, `BENCH_DATABASE_URL`. `BENCH_AB_DATA=long`:
 * session-length memories instead (`longMemory`, LONG_MEMORIES_PER_OWNER per owner, `BENCH_AB_SIZE`
 * of them in all, no heavy owner), searched as the `long` owner rows. `BENCH_AB_SEPARATE=1`:
 * each server on a database of its own, migrated by its own tree and loaded with the same data
 * (for a change of the schema the base does not hold); PostgreSQL CPU is then each database's.
 * `BENCH_AB_DATABASE=<name>`: a database already loaded by `load-heavy.ts` (kept, not loaded, not
 * dropped; its key `BENCH_AB_API_KEY`, default that script's), e.g. a million memories.
 * `BENCH_AB_SCOPES` (`owner,heavy`): whose searches are measured; any other word is an owner id
 * (`heavy-owner-100000`).
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { openDatabase } from '../server/src/db/client.js';
import { benchWorkspaceLoader, loadDataSet } from './lib/bulk-load.js';
import { addCost, measured, noCost, readingClient, type Cost } from './lib/cpu.js';
import { type BenchDatabase, createBenchDatabase, maintenanceDone } from './lib/database.js';
import {
  HEAVY_OWNER,
  LONG_MEMORIES_PER_OWNER,
  REGULAR_OWNERS,
  longOwnerName,
  ownerName,
  questions,
  writerMemory,
  batchConversation,
} from './lib/generator.js';
import { REPO_ROOT, startServer, type ServerProcess, postJson } from './lib/server.js';
import { ms, summarise, table, timeLoad } from './lib/stats.js';

const BASE = process.env.BENCH_AB_BASE;
const SIZE = Number((process.env.BENCH_AB_SIZE ?? '10k').replace(/k$/i, '000'));
const COUNT = Number(process.env.BENCH_AB_COUNT ?? 600);
const BLOCK = Number(process.env.BENCH_AB_BLOCK ?? 50);
const SEED = Number(process.env.BENCH_SEED ?? 42);
const WRITES = Number(process.env.BENCH_AB_WRITES ?? 800);
/** Memories per server and row of the `ingest` phase (conversations of 20 and 100 messages). */
const INGEST_MEMORIES = Number(process.env.BENCH_AB_INGEST_MEMORIES ?? 2000);
/**
 * `search` (search and context rows), `writes` (POST /v1/memories rows): default both; `ingest`
 * (POST /v1/ingest conversations, one memory per message: rows per request) on request.
 */
const PHASES = new Set(
  (process.env.BENCH_AB_PHASES ?? 'search,writes').split(',').map((phase) => phase.trim()),
);
/** `regular` (regular owners and the heavy owner) or `long` (session-length memories only). */
const DATA = (process.env.BENCH_AB_DATA ?? 'regular') as 'regular' | 'long';
if (DATA !== 'regular' && DATA !== 'long')
  throw new Error(`BENCH_AB_DATA: regular or long, not ${DATA}`);
/** Owners of the long data set. */
const LONG_OWNERS = Math.max(1, Math.floor(SIZE / LONG_MEMORIES_PER_OWNER));
/** Each server on a database of its own (migrated by its own tree): for a change of the schema. */
const SEPARATE = process.env.BENCH_AB_SEPARATE === '1';
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** A database loaded beforehand by load-heavy.ts: searched as it is, kept afterwards. */
const LOADED = process.env.BENCH_AB_DATABASE;
const API_KEY = LOADED
  ? (process.env.BENCH_AB_API_KEY ?? 'mnemo_bench_heavy_owners_key')
  : `mnemo_bench_${randomBytes(16).toString('hex')}`;
/** Whose searches are measured on the regular data: `owner`, `heavy`, or an owner id. */
const SCOPES = (process.env.BENCH_AB_SCOPES ?? 'owner,heavy').split(',').map((s) => s.trim());
const log = (line: string) => process.stderr.write(`[ab] ${line}\n`);

const post = async (base: string, path: string, body: unknown): Promise<void> => {
  await postJson(base, path, API_KEY, body);
};

/** The data set, loaded with this tree's bulk loader (no migration when the base owns the schema). */
async function load(databaseUrl: string, migrate: boolean): Promise<void> {
  const handle = await openDatabase({
    databaseUrl,
    migrate,
    timeouts: { statementMs: 0, lockMs: 0 },
  });
  try {
    const loader = await benchWorkspaceLoader(handle.db, API_KEY);
    await loadDataSet(loader, DATA, SIZE, SEED);
    log(`loaded ${loader.stored} memories`);
  } finally {
    await handle.close();
  }
}

async function main(): Promise<void> {
  if (!BASE) throw new Error('set BENCH_AB_BASE to the checkout to compare with');
  if (LOADED && SEPARATE)
    throw new Error('BENCH_AB_DATABASE and BENCH_AB_SEPARATE exclude each other');
  const bench = LOADED ? loadedDatabase(LOADED) : await createBenchDatabase(ADMIN_URL, undefined);
  const baseBench = SEPARATE ? await createBenchDatabase(ADMIN_URL, undefined) : bench;
  const raw = readingClient(bench.databaseUrl);
  const baseRaw = SEPARATE ? readingClient(baseBench.databaseUrl) : raw;
  const servers: Array<{
    name: string;
    server: ServerProcess;
    database: { raw: typeof raw; name: string };
  }> = [];
  try {
    const env = {
      DATABASE_URL: bench.databaseUrl,
      MNEMO_BOOTSTRAP_API_KEY: API_KEY,
      MNEMO_BOOTSTRAP_WORKSPACE: 'bench',
    };
    const baseEnv = { ...env, DATABASE_URL: baseBench.databaseUrl };
    if (SEPARATE) {
      // The base's schema: its server migrates the empty database on start.
      await (await startServer(baseEnv, 120_000, resolve(BASE))).stop();
      await load(baseBench.databaseUrl, false);
    }
    if (!LOADED) {
      await load(bench.databaseUrl, true);
      await raw.unsafe('vacuum analyze');
    }
    if (SEPARATE) {
      await baseRaw.unsafe('vacuum analyze');
      for (const [name, client] of [
        ['before', baseRaw],
        ['after', raw],
      ] as const) {
        const [size] = await client<
          { bytes: string }[]
        >`select pg_database_size(current_database())::text as bytes`;
        log(`${name}: database ${(Number(size?.bytes) / 2 ** 20).toFixed(1)} MiB`);
      }
    }
    servers.push({
      name: 'before',
      server: await startServer(baseEnv, 120_000, resolve(BASE)),
      database: { raw: baseRaw, name: baseBench.name },
    });
    servers.push({
      name: 'after',
      server: await startServer(env, 120_000, REPO_ROOT),
      database: { raw, name: bench.name },
    });
    await maintenanceDone(raw, bench.name);
    if (SEPARATE) await maintenanceDone(baseRaw, baseBench.name);
    const qs = questions(SEED, COUNT);
    const scopes = DATA === 'long' ? ['long'] : SCOPES;
    const userOf = (i: number, scope: string) =>
      scope === 'heavy'
        ? HEAVY_OWNER
        : scope === 'long'
          ? longOwnerName((i * 37) % LONG_OWNERS)
          : scope === 'owner'
            ? ownerName((i * 37) % Math.min(SIZE, REGULAR_OWNERS))
            : scope;
    const payload = (i: number, scope: string, path: string) => ({
      query: qs[i % qs.length]!,
      user_id: userOf(i, scope),
      ...(path === '/v1/search' ? { search_mode: 'hybrid' } : {}),
      top_k: 10,
    });
    for (const { server } of servers)
      await timeLoad(0, 200, 4, (i) =>
        post(server.base, '/v1/search', payload(i, scopes[i % scopes.length]!, '/v1/search')),
      );
    const out: string[][] = [];
    /**
     * One row per server: `count` requests each, in alternating blocks of `block` (the order
     * alternating too), each block bracketed by readings of the server's CPU, its database
     * backends' CPU and its statements.
     */
    const alternate = async (
      row: { operation: string; owner: string; concurrency: number },
      count: number,
      block: number,
      op: (server: ServerProcess, name: string, i: number) => Promise<void>,
    ): Promise<void> => {
      const series = servers.map(() => ({
        latencies: [] as number[],
        seconds: 0,
        cost: noCost(),
      }));
      for (let start = 0, k = 0; start < count; start += block, k += 1) {
        for (let j = 0; j < servers.length; j += 1) {
          const index = (j + k) % servers.length;
          const { server, name, database } = servers[index]!;
          const s = series[index]!;
          const probe = {
            pid: server.pid,
            statements: () => server.statements(),
            database,
          };
          const [timed, cost] = await measured(probe, () =>
            timeLoad(start, Math.min(count, start + block), row.concurrency, (i) =>
              op(server, name, i),
            ),
          );
          s.latencies.push(...timed.latencies);
          s.seconds += timed.seconds;
          addCost(s.cost, cost);
        }
      }
      series.forEach((s, index) => {
        const m = summarise(s.latencies, s.seconds);
        const per = (c: Cost, key: keyof Cost) => c[key] / m.count;
        out.push([
          row.operation,
          row.owner,
          String(row.concurrency),
          servers[index]!.name,
          ms(m.p50),
          ms(m.p95),
          m.rate.toFixed(0),
          ms(per(s.cost, 'serverCpuMs')),
          ms(per(s.cost, 'dbCpuMs')),
          per(s.cost, 'statements').toFixed(2),
        ]);
      });
      log(`${row.operation} ${row.owner} c${row.concurrency} done`);
    };
    if (PHASES.has('search'))
      for (const path of ['/v1/search', '/v1/context'])
        for (const scope of scopes)
          for (const concurrency of [1, 8])
            await alternate(
              { operation: path.slice(4), owner: scope, concurrency },
              COUNT,
              BLOCK,
              (server, _, i) => post(server.base, path, payload(i, scope, path)),
            );
    if (PHASES.has('writes')) {
      // The same texts for both servers, each under owners of its own (`<server>-writer-…`), so
      // both meet the same dedupe decisions and neither sees the other's memories. At
      // concurrency 50 a block holds four waves, so its p95 is not one wave's tail.
      const write = (
        server: ServerProcess,
        name: string,
        s: number,
        i: number,
        extract: boolean,
      ) => {
        const item = writerMemory(SEED, s, i);
        return post(server.base, '/v1/memories', {
          text: item.text,
          user_id: `${name}-${item.ownerId}`,
          memory_type: item.memoryType,
          ...(extract ? {} : { extract: false }),
        });
      };
      // Warm-up (stream 0): every statement of the write path prepared on the pools' connections.
      for (const { server, name } of servers)
        await timeLoad(0, 100, 8, (i) => write(server, name, 0, i, i % 2 === 0));
      let stream = 0;
      for (const [extract, concurrency] of [
        [false, 1],
        [false, 8],
        [true, 8],
        [false, 50],
      ] as const) {
        stream += 1;
        const s = stream;
        await alternate(
          { operation: `write extract=${extract ? 'on' : 'off'}`, owner: 'writer', concurrency },
          WRITES,
          Math.max(BLOCK, 4 * concurrency),
          (server, name, i) => write(server, name, s, i, extract),
        );
      }
    }
    if (PHASES.has('ingest')) {
      // The same conversations for both servers, in owners of their own (`<server>-batch-…`).
      const ingest = (server: ServerProcess, name: string, s: number, i: number, size: number) => {
        const body = batchConversation(SEED, s, i, size);
        return post(server.base, '/v1/ingest', { ...body, user_id: `${name}-${body.user_id}` });
      };
      for (const { server, name } of servers)
        await timeLoad(0, 8, 4, (i) => ingest(server, name, 0, i, 20));
      let stream = 0;
      for (const size of [20, 100])
        for (const concurrency of [1, 4]) {
          stream += 1;
          const s = stream;
          await alternate(
            { operation: `ingest ×${size}`, owner: 'batch', concurrency },
            Math.ceil(INGEST_MEMORIES / size),
            Math.max(2 * concurrency, Math.ceil(INGEST_MEMORIES / size / 4)),
            (server, name, i) => ingest(server, name, s, i, size),
          );
        }
    }
    process.stdout.write(
      table(
        ['operation', 'owner', 'c', 'server', 'p50', 'p95', 'req/s', 'node ms', 'PG ms', 'stmts'],
        out,
      ) + '\n',
    );
  } finally {
    for (const { server } of servers) await server.stop();
    await raw.end({ timeout: 5 });
    if (SEPARATE) {
      await baseRaw.end({ timeout: 5 });
      await baseBench.drop();
    }
    await bench.drop();
  }
}

/** A database of this PostgreSQL server loaded beforehand: used as it is, never dropped. */
function loadedDatabase(name: string): BenchDatabase {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { name, databaseUrl: url.toString(), drop: async () => {} };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
